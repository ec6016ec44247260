"""A server reads one date ahead of its first turn (`uc.warm_up_in_background`): dateparser loads and builds
its patterns at its first reading, 0.2-0.6 s of the first turn that names a date ("yesterday")."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
from core import usecases as uc
assert "dateparser" not in sys.modules  # the use cases load it on first use only
uc.warm_up_in_background().join(timeout=60)
from core.retrieval.timeparse import _parser_class
assert "dateparser.date" in sys.modules and _parser_class.cache_info().currsize == 1
"""


def test_the_warm_up_thread_reads_a_date_so_the_first_turn_does_not():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
