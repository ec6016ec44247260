"""What a `workbench` command imports before it does anything: the CLI, the use cases and the runtime, but
not pandas and scipy (0.8 s of every command's 1.8 s), which only the feedback analytics need. Each probe
runs in a process of its own: this one may have imported them already."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "scipy")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_the_cli_use_cases_and_runtime_import_neither_pandas_nor_scipy():
    assert loaded_after("import core.cli\nimport core.runtime\nfrom core import usecases as uc\n"
                        "uc.chains, uc.remember, uc.services, uc.InstanceRequest") == []


def test_the_feedback_analytics_names_are_still_there_and_bring_pandas():
    assert loaded_after("from core import usecases as uc\n"
                        "from core.usecases import FeedbackFilter\n"
                        "from core.analytics.aggregate import FeedbackFilter as Original\n"
                        "assert FeedbackFilter is Original and uc.FeedbackFilter is Original\n"
                        "assert uc.feedback_summary.__module__ == 'core.usecases.analytics'") == ["pandas"]


def test_an_unknown_name_is_still_an_attribute_error():
    assert loaded_after("from core import usecases as uc\n"
                        "try:\n    uc.no_such_use_case\nexcept AttributeError:\n    pass\n"
                        "else:\n    raise SystemExit('found')") == []
