"""Checks over a whole job config, beyond each component's declared parameters.

Each parameter's type and range is declared by its component (``mtsbench.core.params``);
``validate(cfg, overrides, files)`` checks a composed job config against those
declarations (``config_check.check_config``), then what no one component owns:

- secrets never enter a config (``secret_problem``, checked on every override before Hydra
  sees it, and on ``llm.api_key_env``): a key such as ``llm.api_key`` or any
  ``*token``/``*secret``/``*password`` is refused, as is a value that looks like an API key
  (``sk-...``) and an ``llm.api_key_env`` that is not a variable's name — one line that
  names the key, never the value, and says to use ``llm.api_key_env``; nor is the key read
  into it (``refuse_key_reads``);
- ``preload.memories`` fits this machine's memory at ``embedder.dim`` (``_preload_fits``);
- ``system=bm25`` is not given a hybrid retrieval it would ignore (``_system_relevance``);
- Hydra's output folders and the local launcher's ``n_jobs`` (``check_hydra``).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from ..errors import ConfigError
from ..core.params import brief


def override_key(override: str) -> str:
    """The key path an override sets: ``+llm.noise=0.1`` -> ``llm.noise``."""
    return override.partition("=")[0].lstrip("+~").strip()


def _value(cfg, path: str, default=None):
    from omegaconf import OmegaConf

    return OmegaConf.select(cfg, path, default=default)


def validate(cfg, overrides: Sequence[str] = (), files: Mapping[str, str] | None = None) -> None:
    """Check the job config ``cfg`` (see the module docstring); ``ConfigError`` with one line
    for the first problem. ``files``: top-level node -> the user's option file it came from.

    >>> from omegaconf import OmegaConf
    >>> validate(OmegaConf.create({"llm": {"_target_": "mtsbench.llm.mock.MockLLM", "noise": -1}}))
    Traceback (most recent call last):
    mtsbench.errors.ConfigError: llm.noise: expected a number from 0 to 1, got -1
    """
    from .check import check_config

    check_config(cfg, files, {override_key(o) for o in overrides if "=" in o})
    api_key_env = _value(cfg, "llm.api_key_env")
    message = secret_problem("llm.api_key_env", api_key_env) if api_key_env is not None else None
    if message:
        raise ConfigError(message)
    _preload_fits(cfg)
    _system_relevance(cfg)


_SECRET_KEY = re.compile(r"(?i)(^|[._])(api_?key|secret|token|password|passwd)$")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
USE_ENV = ("put the key in an environment variable and give its name: llm.api_key_env=NAME "
           "(default OPENAI_API_KEY); keys are never taken from the command line or a config, "
           "which Hydra saves in .hydra/")


def secret_problem(key: str, value) -> str | None:
    """One line (without the value) when setting ``key`` to ``value`` would put a secret in
    the config, else None.

    >>> secret_problem("llm.api_key", "x")[:39]
    'llm.api_key: an API key is refused here'
    >>> secret_problem("llm.api_key_env", "sk-abc123456789")[:59]
    'llm.api_key_env: expected the name of an environment variab'
    >>> secret_problem("llm.api_key_env", "MY_KEY") is None, secret_problem("llm.noise", "0.1") is None
    (True, True)
    """
    from ..errors import redact

    if _SECRET_KEY.search(key):
        return f"{key}: an API key is refused here; {USE_ENV}"
    text = "" if value is None else str(value)
    if key.endswith("api_key_env") and text and not _ENV_NAME.fullmatch(text):
        return (f"{key}: expected the name of an environment variable (letters, digits, _), got a value "
                f"that looks like a key itself; {USE_ENV}")
    if redact(text) != text:
        return f"{key}: the value looks like an API key; {USE_ENV}"
    return None


def refuse_secrets(overrides: Sequence[str]) -> None:
    """``ConfigError`` (one line, the value left out) for the first override that would put a
    secret in the config (``secret_problem``), or read the API key's variable into it
    (``${oc.env:OPENAI_API_KEY}``: ``key_interpolation``)."""
    for o in overrides:
        key, sep, value = o.partition("=")
        message = secret_problem(key.strip().lstrip("+~"), value if sep else None)
        if message:
            raise ConfigError(f"override '{key}=<redacted>': {message}")
    names = key_variables(next((o.partition("=")[2] for o in overrides if override_key(o) == "llm.api_key_env"), None))
    for o in overrides:
        key, sep, value = o.partition("=")
        name = key_interpolation(value, names) if sep and override_key(o) != "llm.api_key_env" else None
        if name:
            raise ConfigError(f"override '{o}': {_reads_key(override_key(o), name)}")


DEFAULT_KEY_ENV = "OPENAI_API_KEY"      # llm.api_key_env's default (mtsbench.llm.openai_backend)
_ENV_READ = re.compile(r"oc\.env\s*:\s*(\$\{[^}]*\}|['\"]?[A-Za-z_][A-Za-z0-9_]*)")


def key_variables(api_key_env=None) -> set[str]:
    """The environment variables whose value is an API key the run reads: ``llm.api_key_env``
    (given) and its default ``OPENAI_API_KEY``."""
    names = {DEFAULT_KEY_ENV}
    if isinstance(api_key_env, str) and _ENV_NAME.fullmatch(api_key_env.strip()):
        names.add(api_key_env.strip())
    return names


def key_interpolation(text, names: set[str]) -> str | None:
    """The variable of an ``${oc.env:NAME}`` in ``text`` that reads a key into the config: one
    of ``names``, a name that says it holds a secret (``*_API_KEY``, ``*_TOKEN``, ...), or a
    name given by an interpolation of ``llm.api_key_env``; else None.

    >>> key_interpolation("out_${oc.env:OPENAI_API_KEY}", {"OPENAI_API_KEY"})
    'OPENAI_API_KEY'
    >>> key_interpolation("${oc.env:HF_TOKEN,x}", set()), key_interpolation("${oc.env:HOME}", {"OPENAI_API_KEY"})
    ('HF_TOKEN', None)
    """
    if not isinstance(text, str) or "oc.env" not in text:
        return None
    for m in _ENV_READ.finditer(text):
        name = m.group(1).strip("'\"")
        if name.startswith("${"):
            if "api_key_env" in name:
                return name
        elif name in names or _SECRET_KEY.search(name.lower()):
            return name
    return None


def _reads_key(where: str, name: str) -> str:
    return (f"{where}: ${{oc.env:{name}}} would write the API key into the config, which is saved with the run "
            f"(.hydra/, results.parquet, folder names); refused: the key is read only through llm.api_key_env")


def refuse_key_reads(cfg, overrides: Sequence[str] = ()) -> None:
    """``ConfigError`` (one line, never the key) when the composed ``cfg`` (its ``hydra`` node
    too) would hold the value of the API key's variable: a value reading it (``${oc.env:...}``,
    ``key_interpolation``) anywhere but ``llm.api_key_env``, or an interpolation resolving to
    text that holds the key (whatever route: ``${oc.env:${llm.api_key_env}}``). The key's value
    is registered with ``errors.register_secret``: no message shows it."""
    import os

    from omegaconf import DictConfig, ListConfig, OmegaConf

    from ..errors import register_secret

    by_key = {override_key(o): o for o in overrides if "=" in o}
    raw = OmegaConf.to_container(cfg, resolve=False)
    api_key_env = (raw.get("llm") or {}).get("api_key_env") if isinstance(raw.get("llm"), dict) else None
    names = key_variables(api_key_env)
    secrets = [os.environ[n] for n in sorted(names) if len(os.environ.get(n) or "") >= 8]
    for value in secrets:
        register_secret(value)

    def walk(node, text_node, path: str) -> None:
        items = text_node.items() if isinstance(text_node, dict) else enumerate(text_node)
        for key, text in items:
            where = f"{path}.{key}" if path else str(key)
            if isinstance(text, (dict, list)):
                try:
                    child = node[key] if node is not None else None
                except Exception:  # noqa: BLE001 - its text is still checked
                    child = None
                walk(child, text, where)
                continue
            if not isinstance(text, str) or "${" not in text or where == "llm.api_key_env":
                continue
            name = key_interpolation(text, names)
            if name:
                raise ConfigError(_where(where, by_key) + _reads_key(where, name))
            if secrets and node is not None:
                try:
                    resolved = node[key]
                except Exception:  # noqa: BLE001 - resolved only in the job (hydra.runtime...), or not at all
                    continue
                if not isinstance(resolved, (DictConfig, ListConfig)) and any(v in str(resolved) for v in secrets):
                    raise ConfigError(_where(where, by_key) + f"{where}: resolves to text that holds the API key "
                                      f"(of {', '.join(sorted(names))}); refused: the key is read only through "
                                      f"llm.api_key_env and is never written with the run")

    walk(cfg, raw, "")


def _where(path: str, by_key: dict[str, str]) -> str:
    o = by_key.get(path)
    return f"override '{o}': " if o else ""


# bytes a pre-loaded memory takes while a run holds it, beyond 4 bytes per embedding
# dimension counted PRELOAD_COPIES times (the embedded batch, the store, the index):
# measured 19.7 KiB a memory at embedder.dim=1024 with 40,000 memories (max RSS)
PRELOAD_COPIES = 4
PRELOAD_OVERHEAD = 4096
DEFAULT_DIM = 1024          # an embedder whose config has no dim (a model's own size)


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (None if the system does not say)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _preload_fits(cfg) -> None:
    """``preload.memories`` must fit in this machine's memory, estimated before anything is
    allocated: memories x (dim x 4 bytes x ``PRELOAD_COPIES`` + ``PRELOAD_OVERHEAD``)."""
    memories = _value(cfg, "preload.memories")
    if not isinstance(memories, int) or isinstance(memories, bool) or memories <= 0:
        return
    dim = _value(cfg, "embedder.dim")
    dim = dim if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 else DEFAULT_DIM
    each = dim * 4 * PRELOAD_COPIES + PRELOAD_OVERHEAD
    total = physical_memory()
    if total is not None and memories * each > total:
        raise ConfigError(f"preload.memories: expected at most {total // each:,} on this machine "
                          f"({_bytes(total)} of memory, about {_bytes(each)} a memory at embedder.dim={dim}), "
                          f"got {memories:,} (about {_bytes(memories * each)})")


def _bytes(n: float) -> str:
    """``1.5 GiB``.

    >>> _bytes(20480), _bytes(3 * 2**30)
    ('20 KiB', '3 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.3g} TiB"


def check_hydra(cfg, overrides: Sequence[str] = ()) -> None:
    """The Hydra settings a run's outputs depend on (``cfg`` with its ``hydra`` node):
    ``hydra.run.dir``, ``hydra.sweep.dir`` and ``hydra.sweep.subdir`` not empty (empty: the
    outputs would go into the current folder, or every job into the sweep's), and the local
    launcher's ``n_jobs`` a number of jobs at once (``>= 1``; ``-1`` one per core, as joblib
    counts: ``-2`` all but one, down to minus the cores). ``ConfigError``, one line."""
    import os

    from omegaconf import OmegaConf

    by_key = {override_key(o): o for o in overrides if "=" in o}
    for key in ("hydra.run.dir", "hydra.sweep.dir", "hydra.sweep.subdir"):
        try:
            value = OmegaConf.select(cfg, key, default=None)
        except Exception:  # noqa: BLE001 - resolved only in the job (${hydra.job.num}, ${now:...})
            continue
        if value is not None and not str(value).strip():
            raise ConfigError(_where(key, by_key) + f"{key}: expected a folder for the outputs, got an empty "
                              f"value (the outputs would go into {'the sweep folder' if 'sub' in key else 'the current folder'})")
    try:
        n_jobs = OmegaConf.select(cfg, "hydra.launcher.n_jobs", default=None)
    except Exception:  # noqa: BLE001 - an interpolation Hydra resolves in the sweep
        return
    cores = os.cpu_count() or 1
    if n_jobs is not None and not (isinstance(n_jobs, int) and not isinstance(n_jobs, bool)
                                   and (n_jobs >= 1 or -cores <= n_jobs <= -1)):
        raise ConfigError(_where("hydra.launcher.n_jobs", by_key) + f"hydra.launcher.n_jobs: expected an integer "
                          f">= 1 (jobs at once) or -1 (one per core; -2 all but one, down to -{cores} on this "
                          f"machine), got {brief(n_jobs)}")


def _system_relevance(cfg) -> None:
    """``system=bm25`` ranks by its own BM25 and reads no ``retrieval`` node: a hybrid
    relevance cannot apply to it (``retrieval=dense``, the default, and ``bm25`` are ignored)."""
    target = _value(cfg, "system._target_")
    relevance = _value(cfg, "retrieval.relevance._target_")
    if isinstance(target, str) and target.endswith("Bm25System") and isinstance(relevance, str) \
            and relevance.endswith(".Hybrid"):
        raise ConfigError("retrieval=hybrid: system=bm25 ranks by BM25 alone and reads no retrieval node; "
                          "hybrid retrieval applies to system=mts and its presets "
                          "(e.g. preset=flat_rag retrieval=hybrid)")
