"""Deleting what is not there leaves no note in the deletion journal (`deleting:<instance>`).

Found by a soak of `workbench api`: an assistant's `forget` of a chain that did not exist (a retry, a
mistyped id) wrote the deletion's note of what it must still erase, then found nothing and returned
without dropping it. A note is taken over only once its process is gone, so the API kept one per such
call for as long as it ran (46 in ten minutes), every later deletion read them all, and after a restart
the next deletion reported each as a deletion "interrupted" midway, with a warning naming the chain.
"""

from __future__ import annotations

import pytest

from core import usecases as uc
from core.conversation.keys import deletion_journal_key
from core.errors import NotFound
from core.usecases.memories import NOTHING_THERE

TIMES = 5


def notes(wb, instance: str) -> int:
    return wb.redis().hlen(deletion_journal_key(instance))


def test_forgetting_what_is_absent_leaves_no_note(workbench, instance):
    for n in range(TIMES):
        for target, ident in (("chain", f"absent-chain-{n}"), ("memory", f"absent-memory-{n}"),
                              ("bank", f"absent-bank-{n}")):
            report = uc.forget(workbench, uc.Forget(instance=instance, target=target, id=ident))
            assert not report.removed_anything and NOTHING_THERE in report.notes[0]
        uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=f"absent-{n}",
                                       chain_id=f"absent-chain-{n}"))

    assert notes(workbench, instance) == 0


def test_deleting_an_absent_chain_or_memory_leaves_no_note(workbench, instance):
    for n in range(TIMES):
        with pytest.raises(NotFound):
            uc.chain_delete(workbench, uc.ChainRef(instance=instance, chain_id=f"absent-{n}"))
        with pytest.raises(NotFound):
            uc.memory_delete(workbench, uc.MemoryRef(instance=instance, memory_id=f"absent-{n}"))

    assert notes(workbench, instance) == 0


def test_a_real_deletion_after_absent_ones_reports_nothing_interrupted(workbench, instance):
    for n in range(TIMES):
        uc.forget(workbench, uc.Forget(instance=instance, target="chain", id=f"absent-{n}"))
    turn = uc.remember(workbench, uc.UiRememberParams(instance=instance, thought="Zanzibar plans for May"))

    report = uc.chain_delete(workbench, uc.ChainRef(instance=instance, chain_id=turn.chain_id))

    assert report.thoughts > 0 and notes(workbench, instance) == 0
    assert not any("interrupted" in note for note in report.notes), report.notes
