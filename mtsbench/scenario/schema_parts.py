"""The mappings inside a step of a scenario file: hints, expectations, checks (pydantic).

Their docstrings and their fields' docstrings are the JSON Schema's descriptions; their
defaults (fact belief 0.7, k 5, present true) the schema's defaults. Used by the step
models of ``schema_models``.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Optional, Union

from pydantic import BeforeValidator, ConfigDict, Discriminator, Field, Tag, create_model, model_validator

from ..core.costs import STEP_COSTS

from .model import CHECK_NAMES
from .schema_base import Strict
from .schema_types import (Bool, Count, Duration, K, NonNegative, OrderList, Ref, RefList, RefOrRefs, Salience,
                           Scalar, Sessions, Text, TrueOnly, Unit, fail, list_of)

EXPECT_KEYS = ("attention", "event", "recall", "absent", "k", "order", "recall_sessions", "recall_roles", "cost")


class Fact(Strict):
    """A fact about the user that the step states, as a perfect LLM would extract it."""

    key: Optional[Text] = None
    """What it is about, e.g. user.allergy.milk: same key and equal value = the same fact, another
    value = a contradiction (without a key, identity is found by memory search)."""
    text: Text
    """The fact as a sentence."""
    value: Scalar
    """What holds: text, a number or true/false."""
    belief: Optional[Unit] = 0.7
    """The LLM's confidence, 0-1."""


class EventHint(Strict):
    """The major event the step tells of."""

    category: Optional[Text] = None
    """E.g. trip.disneyland: a tag joins the latest event of its category unless that event is stale."""
    text: Optional[Text] = None
    """The event as a sentence (default: the step's first sentence)."""
    valid: Optional[Duration] = None
    """How long after its last update the event stays current (default: the category's, else 30d)."""


class Impression(Strict):
    """An impression the step gives (not a stated fact); enough of one key make a conjecture."""

    key: Optional[Text] = None
    """What it is about, e.g. user.illness.cold."""
    text: Text
    """The impression as a sentence."""
    belief: Unit
    """Its strength, 0-1."""
    ttl: Duration
    """How long it stays valid."""


class Hints(Strict):
    """What a perfect LLM would output for the step; only the mock LLM reads them."""

    _what: ClassVar[str] = "a mapping"
    salience: Optional[Salience] = None
    """Common-sense importance of the item alone, 0-10."""
    facts: Optional[Annotated[list[Fact], BeforeValidator(list_of("a list of {key, text, value}"))]] = None
    """Facts about the user the step states."""
    event: Optional[EventHint] = None
    """The major event the step tells of."""
    infer: Optional[Annotated[list[Impression], BeforeValidator(list_of("a list of {key, text, belief, ttl}"))]] = None
    """Impressions the step gives."""


def _ordered(model):
    """Refuse a range whose ``min`` exceeds its ``max`` (run once both are valid)."""
    if model.min is not None and model.max is not None and model.min > model.max:
        raise fail(f"expected min <= max, got min {model.min:g} above max {model.max:g}")
    return model


class AttentionRange(Strict):
    """The step's labelled attention must lie in [min, max] (0-10; a side not given is open)."""

    min: Optional[Salience] = None
    """Lowest attention that passes, 0-10."""
    max: Optional[Salience] = None
    """Highest attention that passes, 0-10."""
    _order = model_validator(mode="after")(_ordered)


_MIN_OR_MAX = {"anyOf": [{"required": ["max"]}, {"required": ["min"]}]}   # the JSON Schema of _min_or_max


def _min_or_max(expected: str):
    """A bounds model's ``_more``: at least one of min and max (``expected`` words the refusal)."""
    def more(cls, data: dict) -> None:
        if "max" not in data and "min" not in data:
            raise fail(expected)
    return classmethod(more)


class CostBounds(Strict):
    """The step's own count of one kind of work must lie in [min, max] (a side not given is open)."""

    model_config = ConfigDict(json_schema_extra=_MIN_OR_MAX)
    min: Optional[Count] = None
    """Lowest count that passes (an integer >= 0)."""
    max: Optional[Count] = None
    """Highest count that passes (an integer >= 0)."""
    _order = model_validator(mode="after")(_ordered)
    _more = _min_or_max("expected 'min: N', 'max: N' or both")


_CostKinds = create_model("_CostKinds", __base__=Strict,     # a kind named must have bounds: null is refused
                          **{name: (CostBounds, Field(None, description=what)) for name, what in STEP_COSTS.items()})


class StepCost(_CostKinds):
    """The work the step itself did, by kind (its row's cost columns, mtsbench.core.costs.STEP_COSTS): each
    kind named maps to its bounds, e.g. {tiers_searched: {max: 2}, arousal_scored: {min: 100, max: 100}}."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})

    @classmethod
    def _more(cls, data: dict) -> None:
        if not data:
            raise fail(f"expected one or more of {', '.join(STEP_COSTS)}")


class EventExpect(Strict):
    """Exactly one of {same_as: STEP} (the step's event is the one of STEP) or {new: true} (it starts one)."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1, "maxProperties": 1})
    _what: ClassVar[str] = "{same_as: STEP} or {new: true}"
    same_as: Ref = None
    """An earlier say, reply, perceive or probe step whose event this step joins."""
    new: TrueOnly = None
    """true: no earlier step is part of this step's event."""

    @classmethod
    def _more(cls, data: dict) -> None:
        if "same_as" in data and "new" in data:
            raise fail("give either 'same_as: STEP' or 'new: true', not both")
        if not data:
            raise fail("expected 'same_as: STEP' or 'new: true', got {}")


class ObservedExpect(Strict):
    """Expectations of a say, reply or perceive step."""

    _what: ClassVar[str] = "a mapping"
    _family: ClassVar[tuple] = EXPECT_KEYS
    attention: Optional[AttentionRange] = None
    """Where the step's labelled attention must lie, e.g. {min: 6}."""
    event: Optional[EventExpect] = None
    """Which event the step's event tag must join."""
    cost: Optional[StepCost] = None
    """Bounds on the work the step itself did (its labelling, the arousal it caused), by kind."""


class ProbeExpect(Strict):
    """Expectations of a probe step, judged on the first k memories it uses."""

    _what: ClassVar[str] = "a mapping"
    _family: ClassVar[tuple] = EXPECT_KEYS
    recall: RefList = ()
    """Earlier steps each of which must be named by one of the top k memories."""
    absent: RefList = ()
    """Earlier steps none of which may be named by the top k memories."""
    k: K = 5
    """How many memories the probe uses and is judged on (1-10,000)."""
    order: OrderList = ()
    """Two or more earlier steps, best first: the probe's ranking (evaluation.rank_to deep) must name each
    above the next (by the first memory naming it; a step no ranked memory names ranks below every one)."""
    recall_sessions: Sessions = Field(default_factory=dict)
    """{SESSION: [STEP, ...]}: session recall for imported benchmarks (not pass/fail)."""
    recall_roles: Sessions = Field(default_factory=dict)
    """{ROLE: [STEP, ...]}: what each part of the evidence is, in the data set's order (BEAM's original_info
    then updated_info); every step also in recall; read by later_above@Bt / later_wins@Bt (not pass/fail)."""
    cost: Optional[StepCost] = None
    """Bounds on the work the probe itself did (its search, the arousal its recall caused), by kind."""


class NoExpect(Strict):
    """An idle or check step expects nothing (an empty expect is tolerated, left out of the schema)."""

    _what: ClassVar[str] = "a mapping"
    _family: ClassVar[tuple] = EXPECT_KEYS


def _subject(named: str, by_provenance: str, what: str):
    """A check's ``_more``: exactly one of ``named`` (a key or category, as the LLM names it) and
    ``by_provenance`` (step ids); ``what`` words the two for the refusal of neither."""
    def more(cls, data: dict) -> None:
        if data.get(named) is not None and data.get(by_provenance) is not None:   # a null: its field refuses it
            raise fail(f"give either '{named}' or '{by_provenance}', not both")
        if named not in data and by_provenance not in data:
            raise fail(f"expected {what}")
    return classmethod(more)


def _either(named: str, by_provenance: str) -> dict:
    """The JSON Schema of "exactly one of the two keys"."""
    return {"oneOf": [{"required": [named]}, {"required": [by_provenance]}]}


class BeliefCheck(Strict):
    """Passes when the highest belief among the live facts it names (and of those with value, if given)
    is in [min, max]; without min and max, when such a fact exists. The facts are named by key, or by
    from: the facts derived from that step. Give exactly one of key and from."""

    model_config = ConfigDict(json_schema_extra=_either("key", "from"))
    key: Text = None
    """The facts with this key, e.g. user.allergy.milk (the key the LLM gave them)."""
    from_: Ref = Field(None, alias="from")
    """The facts derived from this earlier say, reply or perceive step: those whose provenance (the
    turns the summary says state them, with the steps of the restatements merged into them) includes
    it. Several such facts: the highest belief is judged, as for a key (min holds for at least one,
    max for every one; value singles one out); none: the check fails."""
    value: Optional[Scalar] = None
    """Only facts with this value (compared exactly)."""
    min: Optional[Unit] = None
    """Lowest belief that passes, 0-1."""
    max: Optional[Unit] = None
    """Highest belief that passes, 0-1."""
    _order = model_validator(mode="after")(_ordered)
    _more = _subject("key", "from", "'key: KEY' (the facts' key) or 'from: STEP' (the step that stated the fact)")


class ConjectureCheck(Strict):
    """Passes when a live conjecture it names exists (present: true) or none does (present: false).
    The conjecture is named by key, or by from: one formed from impressions of every listed step.
    Give exactly one of key and from."""

    model_config = ConfigDict(json_schema_extra=_either("key", "from"))
    key: Text = None
    """The conjecture's key (the key of the impressions that form it)."""
    from_: RefOrRefs = Field(None, alias="from")
    """An earlier say, reply or perceive step, or a list of them: a conjecture whose supporting
    impressions (its provenance: the steps of the impressions it was formed from or later joined by)
    include one from every listed step."""
    present: Optional[Bool] = True
    """Whether the conjecture must exist."""
    _more = _subject("key", "from", "'key: KEY' (the conjecture's key) or 'from: [STEP, ...]' "
                                    "(the steps whose impressions formed it)")


class AttentionCheck(Strict):
    """Passes when the current attention (long + short) of an earlier step's own memory is in [min, max]
    and, with above, exceeds the current attention of that other step's memory; or, with from instead of
    step, when the highest current attention among the facts derived from that step is. Give exactly one
    of step and from."""

    model_config = ConfigDict(json_schema_extra={**_either("step", "from"), "not": {"required": ["from", "above"]}})
    step: Ref = None
    """An earlier say, reply, perceive or probe step: its own memory."""
    from_: Ref = Field(None, alias="from")
    """An earlier say, reply or perceive step: the live facts derived from it (as belief's from); several:
    the highest attention is judged (min holds for at least one, max for every one); none: the check fails."""
    min: Optional[NonNegative] = None
    """Lowest attention that passes (>= 0)."""
    max: Optional[NonNegative] = None
    """Highest attention that passes (>= 0)."""
    above: Ref = None
    """An earlier step whose memory's current attention this one's must exceed (with step only)."""
    _order = model_validator(mode="after")(_ordered)
    _more = _subject("step", "from", "'step: STEP' (that step's own memory) or 'from: STEP' (the facts derived "
                                     "from it)")


class TierCheck(Strict):
    """Passes when an earlier step's own memory sits in tier max or higher and in tier min or lower
    (0 = the top tier); give max, min or both."""

    model_config = ConfigDict(json_schema_extra=_MIN_OR_MAX)
    step: Ref
    """An earlier say, reply, perceive or probe step."""
    max: Optional[Count] = None
    """The lowest tier that passes (an integer >= 0): the memory sits in this tier or above."""
    min: Optional[Count] = None
    """The highest tier that passes (an integer >= 0): the memory has sunk to this tier or below."""
    _order = model_validator(mode="after")(_ordered)
    _more = _min_or_max("expected 'max: N' (sits in tier N or above) or 'min: N' (has sunk to tier N or below), "
                        "or both")


class ArousalCheck(Strict):
    """Passes when the arousal an earlier step's own memory received (the amounts regional arousal gave
    it, summed, before the attention cap) since step since began -- or since it was stored -- is in
    [min, max] and, with above, exceeds what that other step's memory received over the same span."""

    step: Ref
    """An earlier say, reply, perceive or probe step."""
    since: Ref = None
    """An earlier step of any kind: count the arousal received from the moment it began (default: all of it)."""
    min: Optional[NonNegative] = None
    """Least arousal that passes (>= 0)."""
    max: Optional[NonNegative] = None
    """Most arousal that passes (>= 0; 0: none at all)."""
    above: Ref = None
    """An earlier step whose memory must have received less arousal over the same span."""
    _order = model_validator(mode="after")(_ordered)


class EventCountCheck(Strict):
    """Passes when the number of live events it counts equals the number given: the events of a
    category, or (containing) the events that contain a step. Give exactly one of category and containing."""

    model_config = ConfigDict(json_schema_extra=_either("category", "containing"))
    category: Text = None
    """The events of this category, e.g. trip.disneyland (the category the LLM gave them)."""
    containing: RefOrRefs = None
    """An earlier say, reply or perceive step, or a list of them: the events whose provenance (the turns
    their tags name, of the tag that created each and of those that joined it) includes at least one of
    them, each event counted once."""
    equals: Count
    """The expected number of live events (an integer >= 0)."""
    _more = _subject("category", "containing", "'category: CATEGORY' or 'containing: STEP' "
                                               "(a step that told of the events)")


def _one_or_many(model):
    """A mapping, or a non-empty list of them (several checks of one kind)."""
    many = Annotated[list[model], Field(min_length=1), BeforeValidator(
        list_of("a list", "expected a mapping or a non-empty list of mappings, got []"))]
    return Annotated[Union[Annotated[model, Tag("~one")], Annotated[many, Tag("~many")]],
                     Discriminator(lambda v: "~many" if isinstance(v, list) else "~one")]


class Checks(Strict):
    """Assertions on the memory's state at the step's time: one or more of the six check names, each a
    mapping or a non-empty list of mappings."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})
    _what: ClassVar[str] = f"a mapping with one or more of {', '.join(CHECK_NAMES)}"
    belief: _one_or_many(BeliefCheck) = None
    """The belief of a fact."""
    conjecture: _one_or_many(ConjectureCheck) = None
    """Whether a conjecture exists."""
    attention: _one_or_many(AttentionCheck) = None
    """The current attention of a step's memory."""
    tier: _one_or_many(TierCheck) = None
    """The tier of a step's memory."""
    event_count: _one_or_many(EventCountCheck) = None
    """How many live events a category has."""
    arousal: _one_or_many(ArousalCheck) = None
    """How much arousal a step's memory received."""

    @classmethod
    def _more(cls, data: dict) -> None:
        if not data:
            raise fail(f"expected one or more of {', '.join(CHECK_NAMES)}")
