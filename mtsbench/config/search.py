"""Where the configs are found: the packaged ``configs/``, a user's folders and installed
plug-ins' folders, in Hydra's search path; the groups and options they hold.

A user's config folders (``--config-dir DIR``, repeatable; ``compose(..., extra_dirs)``)
come *before* the packaged ``configs/`` in Hydra's search path (``searching``): a file
there adds an option or experiment (``DIR/long_decay/my_decay.yaml``) or replaces the
packaged one of the same name (``DIR/long_decay/power_law.yaml``); the first folder given
wins over the next. A ``DIR/config.yaml`` replaces the packaged primary config as a whole
(Hydra's rule for a primary config: the first found is used, nothing is merged); without
one the packaged ``config.yaml`` is used. Hydra's own groups (``hydra/...``) keep Hydra's
order: its built-in options are found before any folder's.

An installed plug-in package adds its config folder through an entry point in the group
``mtsbench.configs`` (``plugin_dirs``): in its ``pyproject.toml``,
``[project.entry-points."mtsbench.configs"] NAME = "PACKAGE.configs"`` names a package
(or a package's sub-folder) holding group folders (``PACKAGE/configs/system/NAME.yaml``).
Those folders come *after* the packaged ``configs/`` (a plug-in adds options, it does not
replace bundled ones; a user's ``--config-dir`` still comes first), so ``system=NAME``
works once the package is installed, without ``PYTHONPATH`` or ``--config-dir``.

Hydra is used through its public API only: a ``SearchPathPlugin`` and the config loader's
``get_group_options``.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..errors import ConfigError
from ..core.resources import CONFIG_DIR

COMPOSITE_GROUPS = ("preset", "ablate", "experiment")   # set many groups at once; not mechanisms

PLUGIN_GROUP = "mtsbench.configs"          # the entry-point group of plug-in packages' config folders
PLUGIN_PROVIDER = "mtsbench plug-in"        # the provider name Hydra shows for them
SEARCH_PROVIDER = "mtsbench --config-dir"   # the provider name Hydra shows (--info searchpath, config_sources)


@functools.lru_cache(maxsize=None)
def plugin_dirs() -> tuple[str, ...]:
    """The config folders of installed plug-in packages: each entry point of the group
    ``mtsbench.configs`` names a package (``NAME = "PACKAGE.configs"``) whose folder holds
    group folders (``system/NAME.yaml``); ordered by entry-point name, duplicates dropped.
    The package is located, not imported (its parent packages are). An entry point whose
    package cannot be found is skipped with a one-line warning on stderr."""
    import importlib.metadata
    import importlib.util
    import sys

    out: list[str] = []
    for ep in sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda e: (e.name, e.value)):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        try:
            spec = importlib.util.find_spec(ep.module)
            locations = list(spec.submodule_search_locations or []) if spec else []
        except Exception as e:  # noqa: BLE001 - a broken plug-in must not stop every run
            locations, spec = [], f"{type(e).__name__}: {e}"
        folder = next((str(Path(d).resolve()) for d in locations if Path(d).is_dir()), None)
        if folder is None:
            print(f"mtsbench: plug-in entry point '{ep.name} = {ep.value}' ({PLUGIN_GROUP}, distribution {dist}): "
                  f"no package folder '{ep.module}' found; skipped", file=sys.stderr)
        elif folder not in out:
            out.append(folder)
    return tuple(out)


def groups(extra: Sequence[str | Path] = ()) -> dict[str, list[str]]:
    """Every config group and its options, read from the packaged ``configs/`` folder,
    installed plug-ins' (``plugin_dirs``) and the ``extra`` ones (a user's ``--config-dir``;
    ``hydra/`` holds Hydra's own groups)."""
    found: dict[str, set[str]] = {}
    for root in (CONFIG_DIR, *map(Path, plugin_dirs()), *map(Path, extra)):
        for d in (sorted(root.iterdir()) if root.is_dir() else []):
            if d.is_dir() and not d.name.startswith("_") and d.name != "hydra":
                found.setdefault(d.name, set()).update(p.stem for p in d.glob("*.yaml"))
    return {g: sorted(found[g]) for g in sorted(found)}


def options_with_key(group: str, key: str, extra: Sequence[str | Path] = ()) -> list[str]:
    """The options of config group ``group`` whose file sets ``key`` at its top (the packaged,
    plug-in and ``extra`` folders, as ``groups``): where a key a chosen option lacks lives.

    >>> options_with_key("depth", "n")
    ['fixed']
    """
    import yaml

    found = set()
    for root in (CONFIG_DIR, *map(Path, plugin_dirs()), *map(Path, extra)):
        for path in sorted((Path(root) / group).glob("*.yaml")) if (Path(root) / group).is_dir() else []:
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                continue
            if isinstance(data, dict) and key in data:
                found.add(path.stem)
    return sorted(found)


def mechanism_groups() -> dict[str, list[str]]:
    """The groups that each choose one mechanism (every group but presets and experiments)."""
    return {g: opts for g, opts in groups().items() if g not in COMPOSITE_GROUPS}


_user_dirs: tuple[str, ...] = ()            # the folders ``searching`` puts first; read by the plugin below
_PLUGIN = None                              # the plugin class, once registered with Hydra


def _search_plugin():
    """The Hydra ``SearchPathPlugin`` putting ``_user_dirs`` before the packaged configs
    (Hydra's ``main`` entry) and installed plug-ins' folders (``plugin_dirs``) after them,
    registered with Hydra once; Hydra asks it whenever it builds a search path
    (``hydra.main``, ``initialize_config_dir``)."""
    global _PLUGIN
    if _PLUGIN is None:
        from hydra.core.config_search_path import ConfigSearchPath, SearchPathQuery
        from hydra.core.plugins import Plugins
        from hydra.plugins.search_path_plugin import SearchPathPlugin

        class UserConfigDirs(SearchPathPlugin):
            """``mtsbench.config.search._user_dirs``, in order, before the packaged configs;
            ``plugin_dirs()``, in order, after them."""

            def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
                for d in _user_dirs:
                    search_path.prepend(SEARCH_PROVIDER, f"file://{d}", anchor=SearchPathQuery(provider="main"))
                for d in reversed(plugin_dirs()):    # each appended right after main: reversed keeps their order
                    search_path.append(PLUGIN_PROVIDER, f"file://{d}", anchor=SearchPathQuery(provider="main"))

        Plugins.instance().register(UserConfigDirs)
        _PLUGIN = UserConfigDirs
    return _PLUGIN


def user_dirs(dirs: Sequence[str | Path]) -> tuple[str, ...]:
    """``dirs`` as absolute paths, in order, duplicates dropped; ``ConfigError`` (one line)
    for one that is not a folder."""
    out: list[str] = []
    for d in dirs:
        path = Path(d).expanduser()
        if not path.is_dir():
            raise ConfigError(f"--config-dir {d}: no such folder (a folder with the configs' group layout, "
                              f"e.g. DIR/long_decay/NAME.yaml)")
        if str(path.resolve()) not in out:
            out.append(str(path.resolve()))
    return tuple(out)


@contextmanager
def searching(dirs: Sequence[str | Path] = ()) -> Iterator[tuple[str, ...]]:
    """While inside, every config Hydra composes (``compose``, the ``mtsbench run`` app, a
    sweep's jobs) searches ``dirs`` first, then the packaged configs (see the module
    docstring); yields the folders as absolute paths. ``ConfigError`` for a missing folder."""
    global _user_dirs
    resolved = user_dirs(dirs)
    previous = _user_dirs
    if resolved or plugin_dirs():
        _search_plugin()
    _user_dirs = resolved
    try:
        yield resolved
    finally:
        _user_dirs = previous


def split_config_dirs(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The folders named by ``--config-dir DIR``, ``--config-dir=DIR`` or ``-cd DIR`` in ``argv``,
    and ``argv`` without those flags (``mtsbench run`` gives the folders to Hydra through
    ``searching``, not the flag: Hydra's own ``--config-dir`` puts the folder after the
    packaged configs).

    >>> split_config_dirs(["--config-dir", "a", "x=1", "-cd", "b", "--config-dir=c", "-m"])
    (['a', 'b', 'c'], ['x=1', '-m'])
    """
    dirs, rest, skip = [], [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
        elif a in ("--config-dir", "-cd"):
            skip = True
            dirs.extend(argv[i + 1:i + 2])
        elif a.startswith("--config-dir="):
            dirs.append(a.partition("=")[2])
        else:
            rest.append(a)
    return dirs, rest


def hydra_group_options(group: str, extra_dirs: Sequence[str | Path] = ()) -> list[str]:
    """The options of one of Hydra's own groups (``hydra/launcher``), as Hydra's config
    loader lists them (its built-in ones, the packaged ones, ``extra_dirs``' ones)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.object_type import ObjectType

    with searching(extra_dirs), \
            initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3", job_name="mtsbench"):
        return GlobalHydra.instance().config_loader().get_group_options(group, results_filter=ObjectType.CONFIG)
