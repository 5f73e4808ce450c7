"""Integration test of the outcome model on the real MeSH concept index (the unit tests need no
index: tests/test_outcome.py): the semantic classifier reads real concepts of a held-out
EvidenceOutcomes abstract."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.text.pipeline import TextPipeline
from extractors.outcome import OutcomeModel
from extractors.outcome_features import semantic_features
from tests.conftest import load_script
from tests.shipped import default_cues, default_model, default_pipeline

oc = load_script("outcome_corpus")


@pytest.fixture(scope="module")
def eo(shared: Path) -> list:
    return oc.read_evidence_outcomes(shared)


@pytest.fixture(scope="module")
def pipeline() -> TextPipeline:
    return default_pipeline()


def test_semantic_classifier_uses_real_concepts(
    concept_index: Path, eo: list, pipeline: TextPipeline
) -> None:
    from tests.shipped import annotate, resources

    model: OutcomeModel = default_model()
    if model.semantic is None:
        pytest.skip("shipped model trained without concepts")
    r = {x.pmid: x for x in eo}["35075109"]
    doc = oc.process(r, pipeline).document
    concepts = annotate(doc)
    ctx = oc.semantic_context(doc, resources())
    feats = semantic_features(doc, concepts, ctx.primary_problem, ctx.interventions)
    assert any(f.startswith("G:") for fs in feats for f in fs)
    with_sem = model.score(doc, default_cues(), concepts, ctx.primary_problem, ctx.interventions)
    assert all("semantic" in c.evidence.scores for c in with_sem)
    assert set(with_sem[0].evidence.weights) == {"intercept", *model.stack_semantic.weights}
    without = model.score(doc, default_cues())
    assert all("semantic" not in c.evidence.scores for c in without)
    # a sentence naming the intervention gets the marker
    if ctx.interventions:
        marked = [i for i, fs in enumerate(feats) if "@intervention" in fs]
        assert marked
