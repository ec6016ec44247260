"""The feedback frame as CSV and back (the CLI's `feedback export` and the page's download).

Tags are written as a JSON list in one cell, so a tag with a comma or a "|" survives the round trip;
times as ISO 8601 in UTC ("…Z"). The file starts with the UTF-8 byte order mark: Excel reads a CSV without
one in the machine's legacy code page, so "Zoë" became "ZoÃ«" and an emoji four letters of noise in the
rating comments; Python's csv module (encoding "utf-8-sig"), pandas and LibreOffice read it as UTF-8 either
way. A text cell that a spreadsheet would run as a formula (it starts with "=", "+", "-", "@", a tab or a
carriage return: what a user wrote, as a correction or a rating comment) is written after an apostrophe, as
is one that starts with an apostrophe, and read back without it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

from core.analytics.load import FRAME_COLUMNS

_BOOLS = ("corrected", "final", "pending")
_INTS = ("continued", "abandoned")
_TEXT = ("answer_id", "chain_id", "correction", "rating_comment", "model", "model_used", "synthesis",
         "profile", "source", "key", "user_id", "metrics_id")
# Opened in Excel, LibreOffice or Google Sheets, a cell starting with one of these is a formula: a user's
# message "=HYPERLINK(…)" read as a correction became a live link in the engineer's spreadsheet.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_QUOTE = "'"


def _inert(text: str) -> str:
    return _QUOTE + text if text.startswith((*_FORMULA_START, _QUOTE)) else text


def _as_written(text: str) -> str:
    return text[1:] if text.startswith(_QUOTE) else text


def to_csv(frame: pd.DataFrame, path: str | Path | None = None) -> bytes:
    """Write the frame as CSV (UTF-8, with its byte order mark) to `path` if given; returns the bytes either
    way."""
    out = frame[FRAME_COLUMNS].copy()
    out["tags"] = out["tags"].map(lambda tags: json.dumps(list(tags), ensure_ascii=False))
    for col in _TEXT:
        out[col] = out[col].map(_inert)
    for col in ("answered_at", "day"):
        out[col] = out[col].dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    data = out.to_csv(index=False).encode("utf-8-sig")
    if path is not None:
        Path(path).write_bytes(data)
    return data


def read_csv(source: str | Path | bytes) -> pd.DataFrame:
    """Read a file written by `to_csv` back into the analytics frame (same columns and types)."""
    buf = io.BytesIO(source) if isinstance(source, bytes) else source
    raw = pd.read_csv(buf, encoding="utf-8-sig", dtype={c: str for c in _TEXT}, keep_default_na=False, na_values={
        c: [""] for c in FRAME_COLUMNS if c not in _TEXT})
    frame = pd.DataFrame(index=raw.index)
    for col in FRAME_COLUMNS:
        if col in ("answered_at", "day"):
            frame[col] = pd.to_datetime(raw[col], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
        elif col == "tags":
            frame[col] = pd.Series([json.loads(t) for t in raw[col]], index=raw.index, dtype=object)
        elif col in _BOOLS:
            frame[col] = raw[col].astype(bool)
        elif col in _INTS:
            frame[col] = raw[col].astype("int64")
        elif col in _TEXT:
            frame[col] = raw[col].astype(str).map(_as_written)
        else:
            frame[col] = raw[col].astype("float64")
    return frame
