"""A study's search space: ``hydra.sweeper.params`` and ``conditions`` read into parameters.

Each entry of ``hydra.sweeper.params`` (and each sweep override on the command line, which
wins over an entry of the same key) is Hydra's override syntax, as for hydra-optuna-sweeper:

- ``choice(a, b, c)`` or ``a,b,c``: one of the values (categorical; each value is kept as the
  text Hydra would put in an override, so ``choice([5,2],[3])`` picks a list and
  ``choice('null', english)`` picks null or a word);
- ``range(low, stop[, step])``: an integer (or a multiple of a float step) from ``low`` up
  to, not including, ``stop`` (Hydra's range; hydra-optuna-sweeper includes ``stop``);
- ``interval(low, high)``: a float in [low, high];
- ``tag(log, interval(...))`` / ``tag(log, range(...))``: the same, drawn on a log scale;
- a plain value (``k=5``): fixed, given to every trial (as a plain value on the command
  line fixes a key the params would search).

``hydra.sweeper.conditions`` makes a parameter conditional: ``{arousal.r: arousal=radius}``
draws ``arousal.r`` only in trials whose ``arousal`` is ``radius`` (``KEY=V1,V2``: any of
the values; a list of such strings: all must hold). ``KEY`` is a parameter listed before it
or a fixed value. A trial's overrides are the fixed ones, then each parameter whose
conditions hold, in the order listed (``draw``), so a parameter a configuration ignores is
never drawn and never set. Optuna's define-by-run samplers take such spaces as they come.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import ConfigError


@dataclass(frozen=True)
class Param:
    """One searched parameter: its override key, its domain, and when it is drawn."""

    name: str
    kind: str                                  # categorical, int or float
    choices: tuple[str, ...] = ()
    low: float | int | None = None
    high: float | int | None = None
    step: float | int | None = None
    log: bool = False
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()    # (key, allowed values): all must hold

    def active(self, chosen: Mapping[str, str]) -> bool:
        """Do this parameter's conditions hold for the values ``chosen`` so far (key -> text)?

        >>> p = Param("arousal.r", "float", low=0.0, high=1.0, when=(("arousal", ("radius",)),))
        >>> p.active({"arousal": "radius"}), p.active({"arousal": "none"}), p.active({})
        (True, False, False)
        """
        return all(chosen.get(key) in values for key, values in self.when)

    def suggest(self, trial) -> str:
        """The value a trial draws (Optuna's public ``suggest_*``), as override text."""
        if self.kind == "categorical":
            return str(trial.suggest_categorical(self.name, list(self.choices)))
        if self.kind == "int":
            return str(trial.suggest_int(self.name, int(self.low), int(self.high), step=int(self.step or 1),
                                         log=self.log))
        return repr(float(trial.suggest_float(self.name, float(self.low), float(self.high), step=self.step,
                                              log=self.log)))

    def extremes(self) -> list[str]:
        """The values checked before a study starts: every choice, or both bounds."""
        if self.kind == "categorical":
            return list(self.choices)
        if self.kind == "int":
            return [str(int(self.low)), str(int(self.high))]
        return [repr(float(self.low)), repr(float(self.high))]

    def describe(self) -> str:
        """The domain in a few words, for reports.

        >>> Param("a", "float", low=0.1, high=10.0, log=True).describe()
        'float in [0.1, 10], log'
        >>> Param("b", "categorical", choices=("x", "y"), when=(("a", ("1", "2")),)).describe()
        'one of x, y; when a=1,2'
        """
        if self.kind == "categorical":
            text = "one of " + ", ".join(self.choices)
        else:
            text = f"{self.kind} in [{self.low:g}, {self.high:g}]" + (f" step {self.step:g}" if self.step else "")
            text += ", log" if self.log else ""
        if self.when:
            text += "; when " + " and ".join(f"{k}={','.join(v)}" for k, v in self.when)
        return text


@dataclass(frozen=True)
class Space:
    """The searched parameters, in order, and the fixed overrides every trial gets."""

    params: tuple[Param, ...]
    fixed: tuple[str, ...] = ()
    fixed_values: Mapping[str, str] = field(default_factory=dict)

    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def signature(self) -> str:
        """The space as canonical JSON: a resumed study must search the same one."""
        return json.dumps([[p.name, p.kind, list(p.choices), p.low, p.high, p.step, p.log,
                            [[k, list(v)] for k, v in p.when]] for p in self.params], sort_keys=True)


def draw(space: Space, trial) -> list[str]:
    """A trial's parameter overrides (``KEY=VALUE``): each parameter whose conditions hold,
    drawn in order by ``trial`` (an ``optuna.trial.Trial``)."""
    chosen = dict(space.fixed_values)
    out = []
    for p in space.params:
        if p.active(chosen):
            value = p.suggest(trial)
            chosen[p.name] = value
            out.append(f"{p.name}={value}")
    return out


def parse(params: Mapping[str, Any] | None, arguments: Sequence[str] = (),
          conditions: Mapping[str, Any] | None = None, where: str = "hydra.sweeper.params") -> Space:
    """The space of ``params`` (``hydra.sweeper.params``) and the command line's
    ``arguments`` (sweeps there search, plain values there are fixed and win over params),
    with ``conditions`` (``hydra.sweeper.conditions``); ``ConfigError`` (one line) for an
    entry that is not a search domain Optuna can draw from.

    >>> s = parse({"arousal": "choice(radius,none)", "arousal.r": "tag(log, interval(0.05, 0.5))", "k": "3"},
    ...           ["seed=1"], {"arousal.r": "arousal=radius"})
    >>> [(p.name, p.kind, p.choices or (p.low, p.high), p.log) for p in s.params]
    [('arousal', 'categorical', ('radius', 'none'), False), ('arousal.r', 'float', (0.05, 0.5), True)]
    >>> s.fixed
    ('k=3', 'seed=1')
    >>> parse({"n": "range(1,5)"}).params[0].high
    4
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    searched: dict[str, Param] = {}
    fixed: dict[str, str] = {}
    values: dict[str, str] = {}
    entries = [(f"{where}.{k}", f"{k}={v}") for k, v in (params or {}).items()]
    entries += [("the command line", a) for a in arguments]
    for origin, text in entries:
        try:
            override = parser.parse_override(text)
        except Exception as e:  # noqa: BLE001 - Hydra's parse errors are multi-line
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise ConfigError(f"{origin}: '{text}' is not a valid override ({first})") from None
        key = override.get_key_element()
        if override.is_sweep_override():
            fixed.pop(key, None)
            values.pop(key, None)
            searched[key] = _param(key, override, origin)
        else:
            searched.pop(key, None)
            fixed[key] = text
            values[key] = override.get_value_element_as_str()
    ordered = _conditioned(list(searched.values()), values, conditions or {})
    return Space(params=tuple(ordered), fixed=tuple(fixed.values()), fixed_values=values)


def _param(key: str, override, origin: str) -> Param:
    """The parameter one sweep override searches (module docstring)."""
    from hydra.core.override_parser.types import ChoiceSweep, IntervalSweep, RangeSweep

    value = override.value()
    log = "log" in (getattr(value, "tags", None) or set())
    if isinstance(value, ChoiceSweep):
        choices = tuple(override.sweep_string_iterator())
        if len(set(choices)) != len(choices):
            raise ConfigError(f"{origin}: {key}: a value is listed twice in {', '.join(choices)}")
        return Param(key, "categorical", choices=choices)
    if isinstance(value, IntervalSweep):
        low, high = float(value.start), float(value.end)
        if not low < high or (log and low <= 0):
            raise ConfigError(f"{origin}: {key}: expected interval(low, high) with low < high"
                              + (" and low > 0 on a log scale" if log else "") + f", got [{low:g}, {high:g}]")
        return Param(key, "float", low=low, high=high, log=log)
    if isinstance(value, RangeSweep):
        start, stop, step = value.start, value.stop, value.step
        count = math.ceil((stop - start) / step) if step else 0
        if count < 1 or step <= 0:
            raise ConfigError(f"{origin}: {key}: range({start}, {stop}, {step}) has no values; expected "
                              f"range(low, stop[, step]) with low < stop and a step > 0")
        integer = all(isinstance(x, int) and not isinstance(x, bool) for x in (start, stop, step))
        high = start + (count - 1) * step
        if log and (start <= 0 or step != 1):
            raise ConfigError(f"{origin}: {key}: a log-scale range needs low > 0 and step 1")
        if integer:
            return Param(key, "int", low=int(start), high=int(high), step=int(step), log=log)
        return Param(key, "float", low=float(start), high=round(float(high), 12), step=float(step), log=log)
    raise ConfigError(f"{origin}: {key}: {type(value).__name__} cannot be searched; expected choice(...), "
                      f"range(...) or interval(...) (tag(log, ...) for a log scale)")


def _conditioned(params: list[Param], fixed: Mapping[str, str], conditions: Mapping[str, Any]) -> list[Param]:
    """``params`` with their ``conditions`` attached, each checked: on a parameter listed
    before it (or a fixed value), with values that parameter can take."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    names = [p.name for p in params]
    out: list[Param] = []
    for name in conditions:
        if name not in names and name not in fixed:
            raise ConfigError(f"hydra.sweeper.conditions.{name}: not a parameter of the search space "
                              f"(hydra.sweeper.params has: {', '.join(names) or 'none'})")
    for p in params:
        spec = conditions.get(p.name)
        texts = [] if spec is None else [spec] if isinstance(spec, str) else list(spec)
        when = []
        for text in texts:
            where = f"hydra.sweeper.conditions.{p.name}"
            try:
                o = parser.parse_override(str(text))
            except Exception:  # noqa: BLE001 - Hydra's parse errors are multi-line
                raise ConfigError(f"{where}: '{text}' is not KEY=VALUE or KEY=V1,V2") from None
            key = o.get_key_element()
            allowed = tuple(o.sweep_string_iterator()) if o.is_discrete_sweep() else (o.get_value_element_as_str(),)
            parent = next((q for q in out if q.name == key), None)
            if parent is None and key not in fixed:
                raise ConfigError(f"{where}: '{text}' depends on {key}, which is neither a parameter listed "
                                  f"before {p.name} nor a fixed value")
            if parent is not None and parent.kind == "categorical" and set(allowed) - set(parent.choices):
                raise ConfigError(f"{where}: {key} never takes {', '.join(sorted(set(allowed) - set(parent.choices)))} "
                                  f"(its choices: {', '.join(parent.choices)})")
            when.append((key, allowed))
        out.append(Param(**{**p.__dict__, "when": tuple(when)}))
    return out
