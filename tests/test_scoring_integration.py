"""Integration tests of scoring on the real MeSH concept index and the store of the bundled
corpus (the unit tests run on the tiny MeSH subset: tests/test_scoring_*.py): ``ebm ask`` ranks
with the store's retrieval scores, explains a stored citation, answers a warm question from the
annotation cache; the store's query engine still selects the pool tests/tiny.py fixes by PMID."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.ask import AskConfig, Pipeline
from ebm.frame import frame_from_args, load_frame
from ebm.scoring.rankers import FEATURES
from extractors.annotate import Annotation
from tests import scoring_pool, tiny

ROOT = Path(__file__).resolve().parents[1]
YEAR = 2024
THERAPY = frame_from_args("therapy", problem="myocardial ischemia", intervention=["tracheal extubation"])


@pytest.fixture(scope="module")
def pipeline(concept_index: Path) -> Pipeline:
    return Pipeline(
        AskConfig(cache=False, year=YEAR), source=scoring_pool.store(), annotator=scoring_pool.annotator()
    )


@pytest.fixture(scope="module")
def pool(pipeline: Pipeline) -> dict[str, Annotation]:
    cits = scoring_pool.ischemia_pool()
    anns, _ = pipeline.annotate(list(cits.values()))
    return dict(zip(cits, anns, strict=True))


def test_the_store_selects_the_pool_the_unit_tests_fix(concept_index: Path) -> None:
    assert {k: c.pmid for k, c in scoring_pool.ischemia_pool().items()} == tiny.ISCHEMIA_PMIDS


def test_full_and_tiny_vocabularies_annotate_the_pool_alike(pool: dict[str, Annotation]) -> None:
    """The tiny subset keeps what the unit tests read: the same problems and interventions."""
    small = tiny.annotator()
    for name, a in pool.items():
        b = small.annotate(a.citation)
        assert [c.concepts for c in b.problems[:3]] == [c.concepts for c in a.problems[:3]], name
        assert [c.text for c in b.interventions[:3]] == [c.text for c in a.interventions[:3]], name
        assert b.evidence.grade == a.evidence.grade, name


def test_ask_ranks_with_the_stores_retrieval_scores(pipeline: Pipeline) -> None:
    frame = load_frame(ROOT / "questions" / "cough_gerd.yaml")
    config = AskConfig(cache=False, year=YEAR, candidates=20)
    with Pipeline(config, source=scoring_pool.store(), annotator=scoring_pool.annotator()) as p:
        result = p.ask(frame)
    answers = result.answers
    assert answers and all(a.ranker == "ebm-plus" for a in answers)
    hits = scoring_pool.store().search_hits(result.retrieval.query, limit=20)
    bm25 = {h.pmid: h.score or 0.0 for h in hits.hits}
    assert {a.pmid: a.retrieval for a in answers} == pytest.approx(bm25)
    for a in answers:
        assert sum(a.ranking.values()) == pytest.approx(a.score)
        assert a.match is not None and a.lexical is not None
    d = result.to_dict(top=3, explanation=True)
    r0 = d["results"][0]
    assert set(r0["ranking"]) == set(FEATURES) and r0["retrieval_score"] is not None
    assert any(c["component"].startswith("match.") for c in r0["explanation"])


def test_explain_shows_the_match_and_the_weights(pipeline: Pipeline, pool: dict[str, Annotation]) -> None:
    rct = pool["rct"].citation.pmid
    x = pipeline.explain(rct, THERAPY)
    assert x.match is not None and x.match.problem == 1.0 and x.match.intervention == 1.0
    assert x.plus is not None and x.plus.weights["retrieval"] == 1.0
    d = x.to_dict()
    assert d["answer"]["match"]["problem"] == 1.0 and d["ebm_plus_weights"]["retrieval"] == 1.0


def test_a_warm_question_never_loads_the_annotator(tmp_path: Path, concept_index: Path) -> None:
    frame = load_frame(ROOT / "questions" / "hypomagnesemia_causes.yaml")
    config = AskConfig(cache_path=tmp_path / "annotations.sqlite", year=YEAR, candidates=10)
    kw = {"source": scoring_pool.store(), "resources": scoring_pool.resources()}
    with Pipeline(config, annotator=scoring_pool.annotator(), **kw) as cold:
        first = cold.ask(frame)
    with Pipeline(config, **kw) as warm:
        second = warm.ask(frame)
        assert warm._annotator is None  # every candidate came from the cache
    assert [(a.pmid, a.score) for a in second.answers] == [(a.pmid, a.score) for a in first.answers]
