"""Output files written atomically: a temporary name in the same folder, then a rename.

A reader (``mtsbench report``, ``evaluate``, a person) sees either the previous file or the
complete new one, never a truncated one — whether the writer was killed, interrupted or
the disk filled up. Any ``OSError`` (an unwritable place, a full disk) becomes an
``OutputError`` whose str is one line naming the file; the temporary file is removed.

- ``open_atomic(path)``: a context manager giving a file object; renamed into place when
  the block ends without an exception;
- ``write_atomic(path, data)``: the same for a ``str`` or ``bytes`` value (the parquet
  parts a run streams, ``mtsbench.outputs.stream.RunWriter``, are written so, each a complete file).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TextIO

from ..errors import OutputError


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


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
