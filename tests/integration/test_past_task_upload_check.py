"""An upload of several files: a file that is empty or not text (random bytes named .txt) is named with
its reason, and the others are still stored."""

from __future__ import annotations

import os

import pytest

from core import usecases as uc
from core.errors import InvalidInput


def upload(workbench, instance, files: dict[str, bytes]) -> uc.IngestFiles:
    return uc.IngestFiles(instance=instance, user_id="u1", task="note",
                          files=[uc.TextFile(path=name, content=data) for name, data in files.items()])


def test_empty_and_binary_files_are_named_and_the_others_kept(workbench, instance):
    files = {"minutes.md": b"# Minutes\nThe budget is 48,000 euros.", "empty.txt": b"  \n",
             "noise.txt": os.urandom(4096), "zeros.txt": b"abc\x00\x00\x00def" * 50}
    checked = uc.check_text_files(workbench, upload(workbench, instance, files))
    assert [t.title for t in checked.texts] == ["Minutes"]
    assert checked.refused[0] == "empty.txt: the file is empty"
    assert checked.refused[1].startswith("noise.txt: this is not text")
    assert checked.refused[2].startswith("zeros.txt: this is not text")
    stored = uc.ingest_texts(workbench, uc.IngestTexts(items=checked.texts))
    assert [s.title for s in stored] == ["Minutes"]


def test_read_text_files_still_refuses_the_whole_batch_naming_the_file(workbench, instance):
    with pytest.raises(InvalidInput, match="noise.txt: this is not text"):
        uc.read_text_files(workbench, upload(workbench, instance, {"noise.txt": b"\xff\xfe\x00\x81" * 100}))
