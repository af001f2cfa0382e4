"""Files another process writes, read only once they are whole."""

from __future__ import annotations

import time
from pathlib import Path


def whole_file(path: Path, bound: float = 30.0) -> str:
    """The text of ``path`` once it ends in a newline. A writer creates the file before it
    writes, so a read in between finds it empty or cut; ``bound`` is as long as a busy machine
    may take to start the writer."""
    deadline = time.monotonic() + bound
    while True:
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n"):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} was not written within {bound:g} s")
        time.sleep(0.01)
