"""Vectors of the model embedders kept on disk, so a text is encoded once per model, across
runs and processes (the hashing embedder is not cached: it is cheaper than a file read).

Layout, under ``embedder.cache_dir`` or else ``<user cache>/embeddings`` (``$MTSBENCH_CACHE``,
else ``$XDG_CACHE_HOME/mtsbench``, else ``~/.cache/mtsbench``: ``mtsbench.core.resources``)::

    embeddings/<name>-<key>/about.json         what the folder holds: the namespace, the dimension
    embeddings/<name>-<key>/ab/cdef....f32     one text's vector: an 8-byte header, dim float32s

``<key>`` is the SHA-256 (first 16 hex digits) of the namespace, which names the embedder
class, the model, the dimension (or, where the dimension needs the model loaded, the
library and model versions that fix it) and whatever else changes the vectors (device,
prefix); a vector's file name is the SHA-256 of the text's UTF-8 bytes (its text key).
Stable hashes only (never ``hash()``), so every process finds the same files.

A vector file is ``MAGIC`` (``b"mtv1"``), then the checksum as a little-endian uint32,
then the vector as ``dim`` little-endian float32s: ``8 + 4 * dim`` bytes. The checksum is
the CRC32 (``zlib.crc32``) of ``"<key>/<text key>"`` (UTF-8) followed by the vector's
bytes. Every file read is verified, and used only if it has that size, that magic, that
checksum and finite values (no NaN, no inf).

Why this checksum. The damage to catch is accidental: a write cut short, a bad disk block,
a tool or a model that wrote NaN, a file copied or renamed under another text's name or
into another model's folder. It is not an adversary: whoever can write the cache can write a
matching checksum of any kind, so a cryptographic digest would buy nothing here. CRC32
detects every change confined to 32 consecutive bits, so every single-byte change of a file
(tested exhaustively over a file and as a hypothesis property), and any other change but for
one in 2**32; checking a file takes about 3 µs. Seeding it with the text key and the
namespace key makes a vector moved under another text's name, or into another namespace's
folder, fail the check though its own bytes are intact.

A file that fails (wrong size, unknown magic, bad checksum, non-finite values, unreadable)
counts as missing: its text is encoded again and the file rewritten. It is reported on the
logger ``mtsbench.embed.cache`` at WARNING (under ``mtsbench run``: on the console and in
the job's ``mtsbench.log``), one line a message, and never more than once by a ``DiskCache``
(one per embedder, so per run). The first ``FEW`` damaged files it meets are named one line
each, with what was wrong; the rest are counted: at the end of a read (one ``get``: the
texts one ``embed`` or ``warm`` call finds neither in memory nor encoded before) one line
gives how many so far, by what was wrong, written when that count is new and the total has
at least doubled since the last such line. A run that finds all of N files damaged thus
writes at most ``FEW + 1 + log2(N / FEW)`` lines (19 for 50,000), not N: usually ``FEW + 1``
or a few more, as ``warm`` reads a scenario's texts at once and later reads are of single
texts; the last count is at least half the run's. Files of the older format without a header
(exactly ``4 * dim`` bytes) are not trusted: nothing tells an intact one from one damaged in
place (the NaN-filled files that once gave a run with every association gone were such
files), so they count as damaged ("written without a checksum") and are rewritten in this
format; the first run after the change encodes its texts once more. ``put`` never writes a
vector with NaN or inf values (a read would reject it): it skips them with one warning and
the caller keeps what the model gave.

Safe under parallel jobs: each file is written whole to a temporary file in its folder and
then renamed over its name (``os.replace``, atomic), so a reader sees the whole old file,
the whole new one or none. Two jobs encoding the same text (or both finding its file
damaged) both write it; the last rename wins and both vectors are the model's vector of
that text. A cache that cannot be written (read-only folder, full disk) is skipped with one
warning; reads go on, and a damaged file it cannot rewrite is named again by the next run.

Plain files rather than a database (``diskcache``: SQLite): one file per vector needs no
index to load, no lock and no dependency; a run reads only the vectors of its own texts.
Clear the cache with ``rm -rf ~/.cache/mtsbench/embeddings`` (or the folder set above).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import warnings
import zlib
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..core.resources import user_cache_dir

CHUNK = 16          # a model embedder encodes (and stores) CHUNK * batch_size texts at a time
MAGIC = b"mtv1"     # a vector file's first bytes: this format, version 1
HEADER = 8          # MAGIC and the CRC32
FEW = 5             # damaged files named one line each by a cache; the rest are counted

LOG = logging.getLogger(__name__)


def text_key(text: str) -> str:
    """The stable key of ``text``: SHA-256 of its UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embeddings_dir(configured: str | None = None) -> Path:
    """``configured`` if set, else ``<user cache>/embeddings``."""
    return Path(configured).expanduser() if configured else user_cache_dir() / "embeddings"


def read_upto(path: str, limit: int) -> bytes:
    """The first ``limit`` bytes of the file ``path`` (all of it if shorter). ``os.open`` and
    ``os.read`` on a text path: a quarter of ``Path.read_bytes``'s time for a 1.5 KB file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        data = os.read(fd, limit)
        while len(data) < limit:            # a short read (network file systems): read on to the end
            more = os.read(fd, limit - len(data))
            if not more:
                break
            data += more
        return data
    finally:
        os.close(fd)


class DiskCache:
    """One namespace's vectors on disk, verified on every read (see the module docstring).
    ``namespace``: a JSON-able dict naming everything that fixes the vectors; ``name``: a
    readable folder prefix.

    >>> import tempfile
    >>> disk = DiskCache(Path(tempfile.mkdtemp()), "demo", {"model": "demo"})
    >>> disk.put({"milk": np.array([0.6, 0.8], dtype=np.float32)})
    >>> disk.get(["milk", "tea"], dim=2)
    {'milk': array([0.6, 0.8], dtype=float32)}
    >>> os.path.getsize(disk.path("milk"))           # the header, then 2 float32s
    16
    """

    def __init__(self, root: Path, name: str, namespace: dict):
        self.namespace_key = hashlib.sha256(json.dumps(namespace, sort_keys=True).encode("utf-8")).hexdigest()[:16]
        self.folder = Path(root) / f"{name}-{self.namespace_key}"
        self.namespace = namespace
        self.broken = False             # a write failed: stop writing (reads go on)
        self.reported_: set[str] = set()    # damaged files met, named or counted
        self.counted_: Counter = Counter()  # those past the first FEW, by what was wrong
        self.counted_at_ = 0                # how many were met when the last count line was written

    def path(self, key: str) -> str:
        """The file of ``key``'s vector, ``<folder>/ab/cdef....f32`` (a text path: ``get``
        builds tens of thousands, and pathlib's joins cost more than the read)."""
        return f"{self.folder}{os.sep}{key[:2]}{os.sep}{key[2:]}.f32"

    def checksum(self, key: str, vector: bytes) -> int:
        """The CRC32 of ``"<namespace key>/<key>"`` (UTF-8) followed by ``vector``'s bytes."""
        return zlib.crc32(vector, zlib.crc32(f"{self.namespace_key}/{key}".encode("utf-8")))

    def _write(self, path: str, data: bytes) -> None:
        """``data`` to ``path`` atomically: a temporary file in the same folder, then renamed."""
        if self.broken:
            return
        try:
            folder = os.path.dirname(path)
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as e:
            self.broken = True
            warnings.warn(f"embedding cache {self.folder} is not writable ({e.strerror or e}); "
                          "going on without storing vectors", RuntimeWarning, stacklevel=3)

    @property
    def dim(self) -> int | None:
        """The dimension recorded in ``about.json`` (None before a first vector is stored)."""
        try:
            return int(json.loads((self.folder / "about.json").read_text("utf-8"))["dim"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def record_dim(self, dim: int) -> None:
        """Write ``about.json`` (the namespace and ``dim``) unless it already says so."""
        if self.dim != dim:
            about = json.dumps({"namespace": self.namespace, "dim": dim}, indent=1, sort_keys=True)
            self._write(str(self.folder / "about.json"), about.encode("utf-8"))

    def _fault(self, key: str, data: bytes, dim: int) -> tuple[str, str] | None:
        """What is wrong with ``data`` as ``key``'s file (a kind, and the kind with details),
        or None; the values' finiteness is checked by ``get``, for all files at once."""
        size = HEADER + 4 * dim
        if len(data) != size:
            if len(data) == 4 * dim:
                return "no checksum", "written without a checksum (the older format)"
            return "wrong size", f"wrong size ({len(data)} bytes, expected {size})"
        if data[:4] != MAGIC:
            return "unknown header", f"unknown header {bytes(data[:4])!r} (expected {MAGIC!r})"
        if int.from_bytes(data[4:HEADER], "little") != self.checksum(key, memoryview(data)[HEADER:]):
            return "bad checksum", "bad checksum (damaged, or another text's or model's vector)"
        return None

    def get(self, keys: Iterable[str], dim: int) -> dict[str, np.ndarray]:
        """The stored vectors of ``keys``, float32, of those whose files pass every check; a
        damaged file is left out (a miss) and named in a warning (see the module docstring)."""
        good: list[tuple[str, str, bytes]] = []
        damaged: list[tuple[str, str, str]] = []
        size = HEADER + 4 * dim
        for key in keys:
            path = self.path(key)
            try:
                data = read_upto(path, size + 1)
            except FileNotFoundError:
                continue
            except OSError as e:
                damaged.append((path, "unreadable", f"unreadable ({e.strerror or e})"))
                continue
            fault = self._fault(key, data, dim)
            if fault is None:
                good.append((key, path, data))
            else:
                damaged.append((path, *fault))
        vectors = np.frombuffer(b"".join(memoryview(data)[HEADER:] for _, _, data in good), dtype="<f4")
        vectors = vectors.reshape(len(good), dim).astype(np.float32)
        finite = np.isfinite(vectors).all(axis=1)
        found = {}
        for (key, path, _), row, ok in zip(good, vectors, finite):
            if ok:
                found[key] = row
            else:
                bad = int(np.count_nonzero(~np.isfinite(row)))
                damaged.append((path, "non-finite", f"non-finite values ({bad} of {dim} are NaN or inf)"))
        self._report(damaged)
        return found

    def _report(self, damaged: list[tuple[str, str, str]]) -> None:
        """Name the first ``FEW`` damaged files this cache meets, one line each; count the rest,
        in one line at the end of a read when their total has at least doubled since the last."""
        for path, kind, what in damaged:
            if path in self.reported_:
                continue
            self.reported_.add(path)
            if len(self.reported_) <= FEW:
                LOG.warning("embedding cache: %s: %s; encoding its text again", path, what)
            else:
                self.counted_[kind] += 1
        more = sum(self.counted_.values())
        if more and len(self.reported_) >= 2 * self.counted_at_:
            self.counted_at_ = len(self.reported_)
            LOG.warning("embedding cache: %d more damaged files under %s (%s), %d in all so far; encoding their "
                        "texts again", more, self.folder,
                        ", ".join(f"{n} {kind}" for kind, n in self.counted_.most_common()), self.counted_at_)

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Store each key's vector in its file (the header, then float32 little-endian),
        atomically; a vector with NaN or inf values is not stored (one warning for all)."""
        skipped = 0
        for key, vector in vectors.items():
            values = np.ascontiguousarray(vector, dtype="<f4")
            if not np.isfinite(values).all():
                skipped += 1
                continue
            data = values.tobytes()
            self._write(self.path(key), MAGIC + self.checksum(key, data).to_bytes(4, "little") + data)
        if skipped:
            LOG.warning("embedding cache: %d vectors with NaN or inf values not stored under %s "
                        "(the model gave them)", skipped, self.folder)


class CachedModelEmbedder:
    """Base of the model embedders: batches, a per-text memory cache and the disk cache.

    A subclass stores ``batch_size``, ``cache`` (bool) and ``cache_dir`` (text or None) and
    gives ``_encode(texts) -> (n, dim)`` unit rows for non-empty texts, ``_model_dim()``
    (may load the model) and ``_namespace()`` (what fixes its vectors, see
    ``DiskCache``). ``embed`` returns, per text: the vector in memory, else on disk (a file
    that fails a check counts as missing, see ``DiskCache``), else encoded (in chunks of
    ``CHUNK * batch_size`` texts, each chunk stored as it is done); an empty text gives a
    zero row. A cached vector is the one encoded the first time, so
    a run with the cache gives bit for bit the vectors of the run that filled it.
    ``dim`` comes from the disk cache when it knows it, so a run whose texts are all
    cached never loads the model.
    """

    batch_size: int
    cache: bool
    cache_dir: str | None

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _model_dim(self) -> int:
        raise NotImplementedError

    def _namespace(self) -> dict:
        raise NotImplementedError

    def _disk(self) -> DiskCache | None:
        """The disk cache (None when ``cache`` is off), made on first use (``disk_``)."""
        if not self.cache:
            return None
        if "disk_" not in self.__dict__:
            self.disk_ = DiskCache(embeddings_dir(self.cache_dir), type(self).__name__.lower(), self._namespace())
        return self.disk_

    @property
    def dim(self) -> int:
        if "dim_" not in self.__dict__:
            disk = self._disk()
            dim = disk.dim if disk is not None else None
            if dim is None:
                dim = self._model_dim()
                if disk is not None:
                    disk.record_dim(dim)
            self.dim_ = dim
        return self.dim_

    def warm(self, texts: Sequence[str]) -> None:
        """Encode ``texts`` in batches into the caches (the same vectors ``embed`` would give)."""
        self.embed(texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        memory = self.__dict__.setdefault("cache_", {})
        keys = [text_key(t) for t in texts]
        todo = {k: t for k, t in zip(keys, texts) if k not in memory and t.strip()}
        if todo:
            dim, disk = self.dim, self._disk()
            if disk is not None:
                memory.update(disk.get(todo, dim))
                todo = {k: t for k, t in todo.items() if k not in memory}
            items = list(todo.items())
            step = CHUNK * self.batch_size
            for start in range(0, len(items), step):
                chunk = items[start:start + step]
                vectors = np.asarray(self._encode([t for _, t in chunk]), dtype=np.float32)
                if vectors.shape != (len(chunk), dim):
                    raise ValueError(f"{type(self).__name__}: the model gave {vectors.shape[-1]}-dimensional "
                                     f"vectors, the cache says {dim} (clear {disk.folder if disk else 'it'})")
                new = {k: v.copy() for (k, _), v in zip(chunk, vectors)}
                memory.update(new)
                if disk is not None:
                    disk.put(new)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, (key, text) in enumerate(zip(keys, texts)):
            if text.strip():
                out[row] = memory[key]
        return out
