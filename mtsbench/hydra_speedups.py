"""Hydra's config composition, cheaper and with the same result (``install``, ``keep_files``).

Hydra (1.3) builds, for every config of a defaults tree, an OmegaConf map of the group
choices known so far (``defaults_list._create_interpolation_map``), used only to resolve
an entry of that config's defaults list that is an interpolation (``db: ${db_type}``).
mtsbench's configs have none: the map was made about 30 times per composition and never
read, 30% of composing a job's config. ``install`` makes it only for a defaults list that
has an interpolation (each entry asked as Hydra asks it); otherwise it stands for it with
None, which nothing reads. Composition is otherwise Hydra's own.

``keep_files(loader)``: the loader parses each config file once, not once per composition
(a sweep composes its first job, its own config, then every job in the workers: each
reading the same files). Each composition is handed its own copy, as Hydra's composing
changes what it is given. And it keeps a few merged configs (``KeptMerges``): Hydra merges
a job's configs one by one in its defaults list's order; jobs of a sweep share the start of
that list (``ablate=summarize`` and ``ablate=ttl`` differ from their ``ablate`` entry on),
so a job starts from a copy of the configs merged up to where its list leaves the ones
kept, and merges only the rest (``MERGES_KEPT`` of them, where one job's list left the
previous one's).
"""

from __future__ import annotations

import copy
import pickle
import sys

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.config_repository import ConfigRepository
from hydra.errors import ConfigCompositionException
from omegaconf import DictConfig, OmegaConf, flag_override
from omegaconf.errors import OmegaConfBaseException

MERGES_KEPT = 16


def install() -> None:
    """Patch Hydra's ``_create_interpolation_map`` as described above (idempotent; Hydra's
    own stays as the patch's ``original``)."""
    from hydra._internal import defaults_list

    original = defaults_list._create_interpolation_map
    if hasattr(original, "original"):
        return

    def _create_interpolation_map(overrides, defaults, self_added):
        if not any(d.is_interpolation() for d in defaults):
            return None
        return original(overrides, defaults, self_added)

    _create_interpolation_map.original = original
    defaults_list._create_interpolation_map = _create_interpolation_map


class KeptFiles(ConfigRepository):
    """Hydra's ``ConfigRepository`` keeping each config file it loads (``kept``: by search
    path and name). Hydra copies its repository for every composition only to re-point its
    sources (``initialize_sources`` makes a new list): a copy shares ``kept``."""

    kept: dict

    def load_config(self, config_path: str):
        key = (tuple((s.provider, s.path) for s in self.sources), config_path)
        if key not in self.kept:
            self.kept[key] = _Copies(super().load_config(config_path))
        return self.kept[key].copy()

    def __deepcopy__(self, memo):
        return copy.copy(self)


class KeptMerges(ConfigLoaderImpl):
    """Hydra's ``ConfigLoaderImpl`` starting a composition from a copy of the configs merged
    for an earlier one whose defaults list began the same (``merged``: by the list's
    entries so far; ``last``: the previous composition's entries)."""

    merged: dict
    last: tuple

    def _compose_config_from_defaults_list(self, defaults, repo) -> DictConfig:
        # Hydra's own (1.3), but for its start and the copies kept
        entries = tuple((d.config_path, d.package, d.primary) for d in defaults)
        start = next((n for n in range(len(entries), 0, -1) if entries[:n] in self.merged), 0)
        shared = next((n for n, (a, b) in enumerate(zip(entries, self.last)) if a != b), min(len(entries), len(self.last)))
        self.last = entries
        cfg = self.merged[entries[:start]].copy() if start else OmegaConf.create()
        with flag_override(cfg, "no_deepcopy_set_nodes", True):
            for n in range(start, len(defaults)):
                default = defaults[n]
                loaded = self._load_single_config(default=default, repo=repo)
                try:
                    cfg.merge_with(loaded.config)
                except OmegaConfBaseException as e:
                    raise ConfigCompositionException(
                        f"In '{default.config_path}': {type(e).__name__} raised while composing config:\n{e}"
                    ).with_traceback(sys.exc_info()[2])
                if n + 1 == shared and entries[:shared] not in self.merged:
                    self._keep(entries[:shared], cfg)
        _strip_defaults(cfg)
        return cfg

    def _keep(self, entries: tuple, cfg: DictConfig) -> None:
        if len(self.merged) >= MERGES_KEPT:
            del self.merged[next(iter(self.merged))]
        kept = copy.deepcopy(cfg)
        kept._set_flag("no_deepcopy_set_nodes", None)      # as a config Hydra starts from
        self.merged[entries] = _Copies(kept)


class _Copies:
    """Deep copies of one object that has no parent (a file Hydra loaded, a config merged):
    unpickled from its pickle, made once (twice as fast as ``copy.deepcopy`` of an
    OmegaConf config); by ``copy.deepcopy`` if it cannot be pickled."""

    def __init__(self, obj):
        try:
            self.pickled, self.obj = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL), None
        except Exception:  # noqa: BLE001 - e.g. a structured config holding a lambda
            self.pickled, self.obj = None, obj

    def copy(self):
        return pickle.loads(self.pickled) if self.pickled is not None else copy.deepcopy(self.obj)


def _strip_defaults(cfg) -> None:
    """Hydra's ``strip_defaults`` (in ``_compose_config_from_defaults_list``): the defaults
    lists left in the merged config removed."""
    if isinstance(cfg, DictConfig):
        if cfg._is_missing() or cfg._is_none():
            return
        with flag_override(cfg, ["readonly", "struct"], False):
            if cfg._get_flag("HYDRA_REMOVE_TOP_LEVEL_DEFAULTS"):
                cfg._set_flag("HYDRA_REMOVE_TOP_LEVEL_DEFAULTS", None)
                cfg.pop("defaults", None)
        for _key, value in cfg.items_ex(resolve=False):
            _strip_defaults(value)


def keep_files(loader) -> None:
    """Make Hydra's config ``loader`` (a ``ConfigLoaderImpl``) keep the files it parses
    (``KeptFiles``) and some configs it merged (``KeptMerges``); a loader doing so already
    is left as it is."""
    repository = getattr(loader, "repository", None)
    if type(repository) is ConfigRepository:
        repository.__class__ = KeptFiles
        repository.kept = {}
    if type(loader) is ConfigLoaderImpl:
        loader.__class__ = KeptMerges
        loader.merged, loader.last = {}, ()
