"""Bring your own data (`workbench import`, the Import page): one module per format, each a reader that
streams its file into the records of `records.py`; `detect.py` tells the format from the file's first
bytes, and `runner.py` runs the validation pass and the write pass."""
