"""S_EBM (equation 8), the term-based reranker and the combination, on bundled citations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ebm.errors import InputError
from ebm.evaluation.sweep import CombinationScores, combined_scores
from ebm.frame import frame_from_args, load_frame
from ebm.frame_concepts import frame_concepts
from ebm.scoring import (
    EQUAL,
    THERAPY_TUNED,
    ScoringConfig,
    Weights,
    combine,
    minmax,
    question_terms,
    score_citation,
    term_score,
)
from ebm.text.words import Words
from extractors.annotate import Annotation, Annotator
from tests import tiny
from tests.tiny import load_rules, vocabulary


def _words() -> Words:
    from ebm.concepts.index import load_stopwords
    from ebm.resources import shipped_rules_dir

    return Words(load_stopwords(shipped_rules_dir() / "stopwords_en.txt"))


WORDS = _words()  # the shipped stop words


def words(text: str) -> list[str]:
    return WORDS.words(text)


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def annotator(tiny_resources: object) -> Annotator:
    return tiny.annotator()


@pytest.fixture(scope="module")
def pool(annotator: Annotator) -> dict[str, Annotation]:
    return {k: annotator.annotate(c) for k, c in tiny.ischemia_pool().items()}


def test_ebm_score_is_the_weighted_sum(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    frame = frame_from_args("therapy", problem="myocardial ischemia", intervention=["tracheal extubation"])
    fc = frame_concepts(frame, annotator.matcher, vocabulary())
    rules, v = load_rules(), vocabulary()
    for weights in (Weights(), Weights(*THERAPY_TUNED), Weights(1.0, 0.0), Weights(0.0, 0.0)):
        for ann in pool.values():
            e = score_citation(fc, ann, rules, v, ScoringConfig(weights, 2024), words=WORDS)
            expected = weights.l1 * e.pico.total + weights.l2 * e.soe.total + weights.l3 * e.task.total
            assert e.total == pytest.approx(expected)
            assert e.weights == weights
            comps = e.components()
            assert set(comps) == {"pico", "soe", "task"}
            assert comps["pico"]["total"] == pytest.approx(e.pico.total, abs=1e-6)
            # Every point of every component is accounted for by a contribution.
            assert sum(c.points for c in e.contributions) == pytest.approx(
                e.pico.total + e.soe.total + e.task.total
            )
    e = score_citation(fc, pool["rct"], rules, v, ScoringConfig(Weights(), 2024), words=WORDS)
    assert f"= {e.total:.3f}" in e.formula()


def test_equal_weights_rank_as_the_unweighted_sum(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    """The default l1 = l2 = 1/3 is equation 3 (S_PICO + S_SoE + S_task) scaled: the same order."""
    frame = frame_from_args("therapy", problem="myocardial ischemia")
    fc = frame_concepts(frame, annotator.matcher, vocabulary())
    scores = [
        score_citation(fc, a, load_rules(), vocabulary(), ScoringConfig(Weights(), 2024), words=WORDS)
        for a in pool.values()
    ]
    for e in scores:
        assert e.total * 3 == pytest.approx(e.pico.total + e.soe.total + e.task.total)
    assert Weights().l1 == EQUAL[0] and Weights().l3 == pytest.approx(1 / 3)


def test_weights_parse_and_validate() -> None:
    assert Weights.parse("0.38,0.34") == Weights(0.38, 0.34)
    assert Weights.parse("therapy") == Weights(*THERAPY_TUNED)
    assert Weights.parse("equal") == Weights()
    assert Weights(0.5, 0.5).l3 == 0.0
    for bad in ("0.8,0.5", "-0.1,0.2", "0.3", "a,b"):
        with pytest.raises(InputError, match="weight"):
            Weights.parse(bad)


def test_question_terms_from_question_or_slots() -> None:
    frame = load_frame(ROOT / "questions" / "quinine_leg_cramps.yaml")
    assert frame.question
    terms = question_terms(frame, WORDS)
    assert {"quinine", "leg", "cramp", "young", "athlete"} <= set(terms)
    assert not {"does", "for", "?"} & set(terms)
    no_question = frame_from_args("therapy", problem="Leg cramps", intervention=["quinine"])
    assert question_terms(no_question, WORDS) == ("leg", "cramp", "quinine")


def test_term_score_weights_each_term_by_its_best_outcome_sentence(pool: dict[str, Annotation]) -> None:
    ann = pool["rct"]
    terms = tuple(words("extubation ischaemia bypass zebrafish"))
    assert terms == ("extubation", "ischemia", "bypass", "zebrafish")  # normalised as the concept layer does
    got = term_score(terms, ann, WORDS)
    prob = {o.sentence: o.probability for o in ann.outcomes}
    expected = 0.0
    for t in terms:
        expected += max((prob[s.index] for s in ann.document.sentences if t in words(s.text)), default=0.0)
    assert got.score == pytest.approx(expected) and got.score > 0
    assert {m.term for m in got.matches} == {"extubation", "ischemia", "bypass"}
    for m in got.matches:
        assert m.probability == pytest.approx(prob[m.sentence])


def test_combination_matches_the_evaluation_sweep() -> None:
    rng = np.random.default_rng(7)
    ebm = rng.normal(size=30).tolist()
    term = rng.uniform(0, 5, size=30).tolist()
    ours = combine(ebm, term, 0.8)
    theirs = combined_scores(
        CombinationScores("q", [str(i) for i in range(30)], np.array(ebm), np.array(term)), 0.8
    )
    assert ours == pytest.approx(theirs.tolist())
    assert minmax([2.0, 2.0]) == [0.0, 0.0]
    assert minmax([1.0, 3.0, 2.0]) == [0.0, 1.0, 0.5]
    with pytest.raises(ValueError):
        combine([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        combine([1.0], [1.0], alpha=1.5)
