"""Hypothesis strategies for bad input, and the check that a rejection explains itself.

Hostile values are the ones that broke similar products: empty and 1 MB texts, control characters,
NUL, right-to-left marks and other scripts, ids that would break a Redis key ("{", "}", ":", "*",
spaces, newlines) or a query ("'; DROP TABLE", tsquery operators), NaN and infinite numbers, huge
and negative integers, and values of the wrong type.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from core.errors import InvalidInput, explain_validation
from core.ids import ID_PATTERN

# Fast examples: model validation only. Many of them, so thousands of inputs run in seconds.
FAST = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
# Examples that reach Redis, Postgres or the CLI: fewer, each costs milliseconds.
SERVICE = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

ATTACKS = [
    "", " ", "\n", "\t", "\r\n", "\x00", "a\x00b", "\x1b[31mred", "\u202eevil", "\u200b", "\ufeff",
    "{", "}", "{chain}", "a:b", "*", "?", "[a]", "a b", "a\nb", "..", ".", "-a", "_a", "a" * 128, "a" * 129,
    "'; DROP TABLE memory; --", "Robert'); DROP TABLE past_task_execution;--", "1 OR 1=1", "%s", "%(q)s",
    "{0}", "$1", "\\", "\\x00", "a & b | !c", "foo:*", "a <-> b", "!(a|b)", "'quoted'", '"double"',
    "<script>window.__xss=1</script>", '<img src=x onerror="window.__xss=1">', "[l](javascript:alert(1))",
    ":red[colour]", "😀🧠", "ß", "中文字符", "العربية", "עברית", "🏳️‍🌈", "Ａ", "İ", "ǅ",
]
BIG = ["x" * 100_000, "x" * 100_001, "é" * 1_000_000]


def texts(max_size: int = 300, *, big: bool = True) -> st.SearchStrategy[str]:
    """Any text: generated (all of Unicode, control characters included), known attacks, or huge."""
    return st.one_of(st.text(max_size=max_size), st.sampled_from(ATTACKS),
                     *([st.sampled_from(BIG)] if big else []),
                     st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs", "Mn", "Lo"]), max_size=50))


def ids() -> st.SearchStrategy[str]:
    """Strings offered as ids: valid ones, key- and query-breaking ones, and random text."""
    valid = st.from_regex(ID_PATTERN, fullmatch=True)
    return st.one_of(valid, st.sampled_from(ATTACKS), st.text(max_size=140))


def numbers() -> st.SearchStrategy[object]:
    return st.one_of(st.integers(), st.sampled_from([0, -1, 1, 2**63, -(2**63), 10**100]),
                     st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["5", "abc", "", "nan"]))


def maybe(strategy: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), strategy)


def wrong_type() -> st.SearchStrategy[object]:
    return st.one_of(st.none(), st.booleans(), st.lists(st.integers(), max_size=2),
                     st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def fields(model: type[BaseModel], **strategies: st.SearchStrategy) -> st.SearchStrategy[dict]:
    """A dict for `model`: some of the given fields, sometimes a value of the wrong type, sometimes an
    unknown field."""
    parts = {name: st.one_of(s, wrong_type()) if name != "_" else s for name, s in strategies.items()}
    return st.fixed_dictionaries({}, optional={**parts, "unknown_field": st.integers()})


_ALLOWED = re.compile(r"should|must|allowed|permitted|expected|at most|at least|only|one of|required|"
                      r"valid|finite|sum|contain|needs?|like", re.IGNORECASE)


def check_rejection(exc: BaseException, model: type[BaseModel] | None = None) -> str:
    """A rejection is a ValidationError or InvalidInput whose one-line message names the field and
    says what is allowed, without echoing a huge input. Returns the message."""
    assert isinstance(exc, ValidationError | InvalidInput), f"unexpected {type(exc).__name__}: {exc}"
    message = explain_validation(exc) if isinstance(exc, ValidationError) else str(exc)
    assert "\n" not in message.strip() or isinstance(exc, InvalidInput), message
    assert len(message) < 2_000, f"message of {len(message)} characters echoes the input"
    assert _ALLOWED.search(message), f"does not say what is allowed: {message}"
    if isinstance(exc, ValidationError) and model is not None:
        known = set(model.model_fields) | {"unknown_field"}
        for err in exc.errors(include_input=False):
            loc = [str(p) for p in err["loc"]]
            if loc:
                assert loc[0] in known, loc
                assert loc[0] in message
            else:  # a rule over several fields: its message names them
                assert any(name in err["msg"] for name in model.model_fields), err["msg"]
    return message
