"""A process's lease on the embedded servers (`core.services.leases`) is shared by every `Services` of the
process: a program's closed Workbench gives its share up, and the file goes with the last share, so
closing one Workbench never leaves another of the same process using the servers without a lease (a
command exiting meanwhile would have stopped the servers it started under it)."""

from __future__ import annotations

import os

from core.services.leases import Leases


def test_the_lease_file_goes_with_the_last_share_of_the_process(tmp_path):
    data = tmp_path / "data"
    first, second = Leases(data), Leases(data)
    first.take()
    second.take()
    assert first.holders() == [os.getpid()]
    first.drop()
    assert first.mine.exists() and second.holders() == [os.getpid()]  # the second still uses the servers
    first.drop()  # dropping again changes nothing
    assert first.mine.exists()
    second.drop()
    assert not second.mine.exists() and second.holders() == []


def test_a_share_never_taken_drops_the_file_only_when_no_share_holds_it(tmp_path):
    """`workbench services stop` drops its process's lease whether or not it took one."""
    data = tmp_path / "data"
    holder, stopper = Leases(data), Leases(data)
    holder.take()
    stopper.drop()
    assert holder.mine.exists()
    holder.drop()
    holder.take()
    del holder  # a share nobody drops counts no longer once it is gone: the next drop takes the file
    Leases(data).drop()
    assert not (data / "leases" / str(os.getpid())).exists()


def test_a_commands_exit_drops_every_share_of_its_process(tmp_path):
    """`workbench api` serves the API in its own process: the API's Workbench takes a share beside the
    command's, and the command's exit must still leave no lease, so the servers it started stop."""
    data = tmp_path / "data"
    command, api = Leases(data), Leases(data)
    command.take()
    api.take()
    command.drop(every_share=True)
    assert not command.mine.exists() and command.holders() == []
    api.drop()  # the API's close afterwards changes nothing
    assert not api.mine.exists()
