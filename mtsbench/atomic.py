"""Output files written atomically: a temporary name in the same folder, then a rename.

A reader (``mtsbench report``, ``evaluate``, a person) sees either the previous file or the
complete new one, never a truncated one — whether the writer was killed, interrupted or
the disk filled up. Any ``OSError`` (an unwritable place, a full disk) becomes an
``OutputError`` whose str is one line naming the file; the temporary file is removed.

- ``open_atomic(path)``: a context manager giving a file object; renamed into place when
  the block ends without an exception;
- ``write_atomic(path, data)``: the same for a ``str`` or ``bytes`` value;
- ``append_lines(path, lines)``: append to a stream file (``*.partial``) and flush, for
  what is streamed while a run runs (``mtsbench.outputs.RunWriter``).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, TextIO

from .errors import OutputError


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


@contextmanager
def open_atomic(path: str | os.PathLike, mode: str = "w") -> Iterator[TextIO]:
    """Write ``path`` through a temporary file renamed into place on success (``mode``
    ``w`` or ``wb``); ``OutputError`` (one line) if it cannot be written."""
    path = Path(path)
    tmp = _temporary(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        os.replace(tmp, path)
    except OSError as e:
        _remove(tmp)
        raise OutputError(path, e) from None
    except BaseException:
        _remove(tmp)
        raise


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (text or bytes) to ``path`` atomically (see ``open_atomic``)."""
    with open_atomic(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def append_lines(path: str | os.PathLike, lines: Iterable[str]) -> None:
    """Append ``lines`` (each ending in a newline) to ``path`` and flush; OutputError if not."""
    path = Path(path)
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(lines)
    except OSError as e:
        raise OutputError(path, e) from None


def finish_stream(partial: str | os.PathLike, path: str | os.PathLike) -> None:
    """Rename a stream file (``trace.jsonl.partial``) to its final name (an empty file if
    nothing was streamed); OutputError if not."""
    partial, path = Path(partial), Path(path)
    try:
        if not partial.exists():
            partial.touch()
        os.replace(partial, path)
    except OSError as e:
        raise OutputError(path, e) from None


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
