"""Vectors of the model embedders kept on disk, so a text is encoded once per model, across
runs and processes (the hashing embedder is not cached: it is cheaper than a file read).

Layout, under ``embedder.cache_dir`` or else ``<user cache>/embeddings`` (``$MTSBENCH_CACHE``,
else ``$XDG_CACHE_HOME/mtsbench``, else ``~/.cache/mtsbench``: ``mtsbench.resources``)::

    embeddings/<name>-<key>/about.json         what the folder holds: the namespace, the dimension
    embeddings/<name>-<key>/ab/cdef....f32     one text's vector: dim little-endian float32s

``<key>`` is the SHA-256 (first 16 hex digits) of the namespace, which names the embedder
class, the model, the dimension (or, where the dimension needs the model loaded, the
library and model versions that fix it) and whatever else changes the vectors (device,
prefix); a vector's file name is the SHA-256 of the text's UTF-8 bytes. Stable hashes only
(never ``hash()``), so every process finds the same files.

Safe under parallel jobs: each file is written whole to a temporary file in its folder and
then renamed over its name (``os.replace``, atomic), so a reader sees the whole vector or no
file; a file of the wrong size (a partial write left by a crash on a file system without
ordered renames) counts as missing and is written again. Two jobs encoding the same text
both write it; the last rename wins and both vectors are the model's vector of that text.
A cache that cannot be written (read-only folder, full disk) is skipped with one warning.

Plain files rather than a database (``diskcache``: SQLite): one file per vector needs no
index to load, no lock and no dependency; a run reads only the vectors of its own texts.
Clear the cache with ``rm -rf ~/.cache/mtsbench/embeddings`` (or the folder set above).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..resources import user_cache_dir

CHUNK = 16          # a model embedder encodes (and stores) CHUNK * batch_size texts at a time


def text_key(text: str) -> str:
    """The stable key of ``text``: SHA-256 of its UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embeddings_dir(configured: str | None = None) -> Path:
    """``configured`` if set, else ``<user cache>/embeddings``."""
    return Path(configured).expanduser() if configured else user_cache_dir() / "embeddings"


class DiskCache:
    """One namespace's vectors on disk (see the module docstring). ``namespace``: a JSON-able
    dict naming everything that fixes the vectors; ``name``: a readable folder prefix."""

    def __init__(self, root: Path, name: str, namespace: dict):
        digest = hashlib.sha256(json.dumps(namespace, sort_keys=True).encode("utf-8")).hexdigest()[:16]
        self.folder = Path(root) / f"{name}-{digest}"
        self.namespace = namespace
        self.broken = False             # a write failed: stop writing (reads go on)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key[2:]}.f32"

    def _write(self, path: Path, data: bytes) -> None:
        """``data`` to ``path`` atomically: a temporary file in the same folder, then renamed."""
        if self.broken:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
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
            self._write(self.folder / "about.json", about.encode("utf-8"))

    def get(self, keys: Iterable[str], dim: int) -> dict[str, np.ndarray]:
        """The stored vectors of ``keys`` (those present, of the right size), as float32."""
        found, size = {}, dim * 4
        for key in keys:
            try:
                data = self._path(key).read_bytes()
            except OSError:
                continue
            if len(data) == size:
                found[key] = np.frombuffer(data, dtype="<f4").astype(np.float32)
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Store each key's vector (float32, little-endian), one file each, atomically."""
        for key, vector in vectors.items():
            self._write(self._path(key), np.ascontiguousarray(vector, dtype="<f4").tobytes())


class CachedModelEmbedder:
    """Base of the model embedders: batches, a per-text memory cache and the disk cache.

    A subclass stores ``batch_size``, ``cache`` (bool) and ``cache_dir`` (text or None) and
    gives ``_encode(texts) -> (n, dim)`` unit rows for non-empty texts, ``_model_dim()``
    (may load the model) and ``_namespace()`` (what fixes its vectors, see
    ``DiskCache``). ``embed`` returns, per text: the vector in memory, else on disk, else
    encoded (in chunks of ``CHUNK * batch_size`` texts, each chunk stored as it is done);
    an empty text gives a zero row. A cached vector is the one encoded the first time, so
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
