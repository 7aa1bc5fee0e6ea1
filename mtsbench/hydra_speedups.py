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
changes what it is given.
"""

from __future__ import annotations

import copy

from hydra._internal.config_repository import ConfigRepository


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
            self.kept[key] = super().load_config(config_path)
        return copy.deepcopy(self.kept[key])

    def __deepcopy__(self, memo):
        return copy.copy(self)


def keep_files(loader) -> None:
    """Make Hydra's config ``loader`` (a ``ConfigLoaderImpl``) keep the files it parses
    (``KeptFiles``); a loader doing so already keeps its files."""
    repository = getattr(loader, "repository", None)
    if type(repository) is ConfigRepository:
        repository.__class__ = KeptFiles
        repository.kept = {}
