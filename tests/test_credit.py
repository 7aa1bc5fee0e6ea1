"""Evidence credit a memory's text earns (mtsbench.evaluation.credit) and the chance baseline, on hand-made cases."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from mtsbench.evaluation import evidence
from mtsbench.evaluation.answer import tokens
from mtsbench.evaluation.credit import EvidenceCredit, carried, content_words

TURN = ("Ana: I joined a chess club downtown yesterday and it was really exciting. "
        "The old players taught me clever openings. I plan to enter the spring tournament.")
SHORT = "Ben: Congrats on the new job!"
TEXTS = {"D1:3": TURN, "D1:4": SHORT, "D1:5": "Ben: We took the kids fishing near the lake last weekend."}


def test_verbatim_turn_earns_all_of_it():
    credit = EvidenceCredit(TEXTS)
    assert carried(content_words(TURN), content_words(TURN)) == 1.0
    assert credit.earned(TURN, ("D1:3",)) == ("D1:3",)


def test_first_sentence_summary_earns_one_sentence_turns_only():
    # the mock summarizer's text: the first sentence of each summarized turn, joined
    summary = "Ana: I joined a chess club downtown yesterday and it was really exciting. " \
              "Ben: Congrats on the new job! Ben: We took the kids fishing near the lake last weekend."
    credit = EvidenceCredit(TEXTS)
    # TURN's content words: 17; the first sentence holds 8 of them (ana joined chess club downtown
    # yesterday really exciting) = 0.47 < 0.5; the one-sentence turns are carried whole
    assert round(carried(content_words(summary), content_words(TURN)), 2) == 0.47
    assert credit.earned(summary, ("D1:3", "D1:4", "D1:5")) == ("D1:4", "D1:5")


def test_extracted_fact_earns_the_turn_when_it_restates_half_its_content():
    credit = EvidenceCredit({"t": "Ana: I joined a chess club downtown yesterday, so exciting."})
    # turn words: ana joined chess club downtown yesterday exciting (7); the fact holds 4 -> 0.57
    assert credit.earned("Ana is a member of a chess club downtown.", ("t",)) == ("t",)
    # a terse fact holds 2 of 7 -> 0.29: no credit
    assert credit.earned("Ana: chess.", ("t",)) == ()
    # the share is a parameter
    assert EvidenceCredit(credit.texts, share=0.25).earned("Ana: chess.", ("t",)) == ("t",)


def test_unrelated_memory_with_the_turn_in_its_provenance_earns_nothing():
    credit = EvidenceCredit(TEXTS)
    assert credit.earned("Jon: my dance studio opens next month.", ("D1:3", "D1:4")) == ()


def test_steps_outside_the_scenario_and_steps_without_content():
    credit = EvidenceCredit({"empty": "", "ok": "Ha! Yes."})
    assert credit.earned("anything", ("preload", "empty")) == ("empty",)
    assert credit.earned("yes indeed", ("ok",)) == ("ok",)          # 'ha' missing, 'yes' held: 1/2
    assert credit.ranking(["x", "yes ha"], [("ok",), ("ok", "preload")]) == [(), ("ok",)]


def _probe(recall):
    expect = SimpleNamespace(recall=tuple(recall), recall_sessions=(), recall_roles=())
    return SimpleNamespace(category="single-hop", abstain=False, expect=expect)


def test_probe_fields_split_earned_provenance_and_chance():
    # rank 1: a summary naming a and b whose text carries only b; rank 2: the turn a verbatim
    provenance = [("a", "b"), ("a",)]
    earned = [("b",), ("a",)]
    got = evidence.probe_fields(_probe(["a"]), provenance, (1, 2), tokens=[10, 10], budgets=(10,),
                                earned=earned, pool=("a", "b", "c", "d"), seed=3)
    assert (got["recall@1"], got["recall@2"], got["recall@10t"]) == (0.0, 1.0, 0.0)
    assert (got["prov_recall@1"], got["prov_recall@2"], got["prov_recall@10t"]) == (1.0, 1.0, 1.0)
    # one evidence step drawn from 4: found at depth 1 only if b (1/4 in expectation), at 2 if a or b
    assert 0.0 < got["chance_recall@1"] < 0.6 and got["chance_recall@1"] <= got["chance_recall@2"] <= 1.0
    again = evidence.probe_fields(_probe(["a"]), provenance, (1, 2), tokens=[10, 10], budgets=(10,),
                                  earned=earned, pool=("a", "b", "c", "d"), seed=3)
    assert again == got                                   # seeded: same inputs, same chance


def test_no_texts_means_no_earned_figure():
    got = evidence.probe_fields(_probe(["a"]), [("a",)], (5,), earned=None, pool=("a",))
    assert got["recall@5"] is None and got["chance_recall@5"] is None and got["prov_recall@5"] == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=3), max_size=12), st.data())
def test_earned_never_exceeds_provenance(provenance, data):
    provenance = [tuple(p) for p in provenance]
    earned = [tuple(s for s in p if data.draw(st.booleans())) for p in provenance]
    recall = data.draw(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=4, unique=True))
    got = evidence.probe_fields(_probe(recall), provenance, (1, 3, 12), earned=earned, pool=tuple("abcdefgh"))
    for d in (1, 3, 12):
        assert got[f"recall@{d}"] <= got[f"prov_recall@{d}"]
        assert 0.0 <= got[f"chance_recall@{d}"] <= 1.0
    assert got["chance_recall@1"] <= got["chance_recall@3"] <= got["chance_recall@12"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60),
       st.lists(st.text(max_size=30), max_size=4))
def test_credit_is_the_same_memoised_and_the_tokenizer_drops_exactly_the_punctuation(text, others):
    """The SQuAD rule by its definition: a character is dropped when it is ASCII punctuation or
    in a Unicode punctuation category (P*), whatever table or cache computes it; and a credit
    object that has seen other memory texts first earns exactly what a fresh one does."""
    import string
    import unicodedata

    kept = "".join(c for c in text.lower() if c not in string.punctuation
                   and not unicodedata.category(c).startswith("P"))
    assert "".join(tokens(text)) == "".join(tokens(kept))
    assert not any(c in string.punctuation or unicodedata.category(c).startswith("P") for t in tokens(text) for c in t)
    steps = {f"s{i}": t for i, t in enumerate([text, *others])}
    warm = EvidenceCredit(steps)
    for other in others:
        warm.earned(other, tuple(steps))
    assert warm.earned(text, tuple(steps)) == EvidenceCredit(steps).earned(text, tuple(steps))
