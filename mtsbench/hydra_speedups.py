"""Hydra's config composition, cheaper and with the same result (``install``).

Hydra (1.3) builds, for every config of a defaults tree, an OmegaConf map of the group
choices known so far (``defaults_list._create_interpolation_map``), used only to resolve
an entry of that config's defaults list that is an interpolation (``db: ${db_type}``).
mtsbench's configs have none: the map was made about 30 times per composition and never
read, 30% of composing a job's config. ``install`` makes it only for a defaults list that
has an interpolation (each entry asked as Hydra asks it); otherwise it stands for it with
None, which nothing reads. Composition is otherwise Hydra's own.
"""

from __future__ import annotations


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
