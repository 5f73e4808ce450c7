"""S_PICO on real citations of the bundled corpus: each rule of the paper's section 6.1."""

from __future__ import annotations

import pytest

from ebm.citation import AbstractSection, Citation
from ebm.frame import frame_from_args
from ebm.frame_concepts import frame_concepts
from ebm.scoring.pico import (
    CO_PROBLEM_ELSEWHERE,
    CO_PROBLEM_TITLE,
    PROBLEM_NO_OVERLAP,
    PROBLEM_NOT_FOUND,
    PROBLEM_PARTIAL,
    PROBLEM_SAME,
    content_words,
    score_pico,
)
from ebm.text.words import Words
from extractors.annotate import Annotation, Annotator
from tests import tiny
from tests.tiny import vocabulary


def _words() -> Words:
    from ebm.concepts.index import load_stopwords
    from ebm.resources import shipped_rules_dir

    return Words(load_stopwords(shipped_rules_dir() / "stopwords_en.txt"))


WORDS = _words()  # the shipped stop words


def words(text: str) -> list[str]:
    return WORDS.words(text)


@pytest.fixture(scope="module")
def annotator(tiny_resources: object) -> Annotator:
    return tiny.annotator()


@pytest.fixture(scope="module")
def pool(annotator: Annotator) -> dict[str, Annotation]:
    return {k: annotator.annotate(c) for k, c in tiny.ischemia_pool().items()}


def pico(annotator: Annotator, ann: Annotation, task: str = "therapy", **slots):
    frame = frame_from_args(task, **slots)
    return score_pico(frame_concepts(frame, annotator.matcher, vocabulary()), ann, WORDS)


def test_problem_same_concept(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    rct = pool["rct"]
    assert rct.primary_problem is not None and rct.primary_problem.names == ("Myocardial Ischemia",)
    s = pico(annotator, rct, problem="myocardial ischemia")
    assert s.problem == PROBLEM_SAME
    (c,) = [c for c in s.contributions if c.component == "problem"]
    assert "same concept" in c.reason and "D017202" in c.reason


def test_problem_partial_string_match(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    rct = pool["rct"]
    frame = frame_from_args("therapy", problem="brain ischemia")
    fc = frame_concepts(frame, annotator.matcher, vocabulary())
    # A different concept from the trial's primary problem, sharing the word "ischemia".
    assert fc.problem is not None and fc.problem.concepts
    assert not {c.cui for c in fc.problem.concepts} & set(rct.primary_problem.concepts)
    s = score_pico(fc, rct, WORDS)
    assert s.problem == PROBLEM_PARTIAL
    assert "'ischemia'" in next(c.reason for c in s.contributions if c.component == "problem")


def test_problem_no_overlap(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    s = pico(annotator, pool["rct"], problem="asthma")
    assert s.problem == PROBLEM_NO_OVERLAP


def test_problem_not_found_in_abstract(annotator: Annotator) -> None:
    cit = Citation(
        pmid="1",
        title="Annual budgets of twelve hospitals",
        abstract=(AbstractSection("We compared the annual budgets of twelve hospitals over ten years."),),
    )
    ann = annotator.annotate(cit)
    assert ann.problems == []
    assert pico(annotator, ann, problem="asthma").problem == PROBLEM_NOT_FOUND
    # No problem in the frame: nothing to match, nothing scored.
    assert pico(annotator, ann, intervention="aspirin").problem == 0.0


def test_co_problems_title_elsewhere_and_task(annotator: Annotator) -> None:
    pool = tiny.pool_citations()  # cough in the title; cough in the abstract, indexed with GERD
    a_title = annotator.annotate(pool["cough_title"])
    a_else = annotator.annotate(pool["cough_elsewhere"])
    slots = {"problem": "gastroesophageal reflux disease", "co_problems": ["cough"]}
    assert pico(annotator, a_title, "differential diagnosis", **slots).co_problems == CO_PROBLEM_TITLE
    assert pico(annotator, a_else, "etiology", **slots).co_problems == CO_PROBLEM_ELSEWHERE
    # Therapy does not score co-occurring problems, and says so.
    t = pico(annotator, a_title, "therapy", **slots)
    assert t.co_problems == 0.0
    assert any("not therapy" in c.reason for c in t.contributions if c.component == "co-problem")
    # A co-problem the citation never mentions adds nothing.
    none = pico(annotator, a_title, "differential diagnosis", problem="gout", co_problems=["hypomagnesemia"])
    assert none.co_problems == 0.0


def test_population_and_intervention_points(annotator: Annotator) -> None:
    ann = annotator.annotate(tiny.pool_citations()["fever"])  # antipyretic, ibuprofen, acetaminophen
    pop = ann.population[0]
    assert "child" in pop.text.casefold()
    got = pico(
        annotator,
        ann,
        problem="fever",
        population=["children"],
        intervention=["ibuprofen"],
        comparison=["acetaminophen"],
    )
    assert got.population == 1.0
    assert got.intervention == 2.0  # the intervention and the comparison, one point each
    reasons = [c.reason for c in got.contributions if c.component == "intervention"]
    assert any("comparison Acetaminophen (D000082)" in r for r in reasons)
    miss = pico(annotator, ann, problem="fever", population=["pregnant women"], intervention=["quinine"])
    assert miss.population == 0.0 and miss.intervention == 0.0
    assert {c.component for c in miss.contributions} >= {"population", "intervention"}


def test_outcome_is_best_sentence_probability(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    for ann in pool.values():
        body = [o for o in ann.outcomes if ann.document.sentences[o.sentence].position != "title"]
        s = pico(annotator, ann, problem="myocardial ischemia")
        assert s.outcome == pytest.approx(max(o.probability for o in body))
        assert 0.0 <= s.outcome <= 1.0
        assert s.total == pytest.approx(s.problem + s.co_problems + s.population + s.intervention + s.outcome)
        assert s.total == pytest.approx(sum(c.points for c in s.contributions))


def test_content_words_normalise_and_drop_generic_words() -> None:
    assert content_words("Leg cramps", WORDS) == {"leg", "cramp"}
    assert content_words("acute febrile illness", WORDS) == {"febrile"}
    assert content_words("Myocardial ischaemia", WORDS) == content_words("myocardial ischemia", WORDS)


def test_frame_concepts_keep_slot_groups_and_drop_generic_concepts(annotator: Annotator) -> None:
    frame = frame_from_args(
        "diagnostic test",
        problem="leg cramps",
        population=["elderly patients"],
        intervention=["diagnosis with echocardiography"],
    )
    fc = frame_concepts(frame, annotator.matcher, vocabulary())
    assert fc.problem is not None
    assert [c.name for c in fc.problem.concepts] == ["Muscle Cramp"]  # the disorder, not "Leg"
    (pop,) = fc.population
    assert [c.name for c in pop.concepts] == ["Aged"] and [c.name for c in pop.dropped] == ["Patients"]
    (inter,) = fc.intervention
    assert [c.name for c in inter.concepts] == ["Echocardiography"]
    assert [c.name for c in inter.dropped] == ["Diagnosis"]  # a MeSH category root (E01)
    assert fc.to_dict()["population"][0]["dropped"][0]["cui"] == "D010361"
