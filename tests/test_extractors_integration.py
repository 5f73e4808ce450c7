"""Integration tests of the extractors on the real MeSH concept index (the unit tests run on the
tiny MeSH subset: tests/test_extractors_*.py): the learned problem ranker on the held-out
question pools, and its training procedure on real features."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.mesh import mesh
from extractors.problem_ranker import ProblemRanker, problem_features
from tests.conftest import load_script
from tests.shipped import (
    annotate,
    default_matcher,
    default_pipeline,
    default_problem_kinds,
    default_problem_ranker,
)

corpus = load_script("problem_corpus")
trainer = load_script("train_problem_ranker")


@pytest.fixture(scope="module")
def held_out_pools(concept_index: Path, shared: Path) -> list[tuple[str, object, set[str]]]:
    """Odd-PMID citations of the bench question pools (never trained on), with their features."""
    pooled = corpus.pool_pmids(shared / "bench" / "pools.run")
    matcher, pipeline = default_matcher(), default_pipeline()
    out = []
    for c, gold in corpus.problem_citations():
        if c.pmid in pooled and int(c.pmid) % 2:
            doc = pipeline.process(c)
            out.append(
                (
                    c.pmid,
                    problem_features(
                        doc, annotate(doc, matcher), vocabulary=mesh(), kinds=default_problem_kinds()
                    ),
                    gold,
                )
            )
    return out


def test_ranker_beats_the_rules_on_held_out_question_pools(held_out_pools: list) -> None:
    # The paper's selection (abstracts retrieved for clinical questions), odd PMIDs only.
    ranker = default_problem_ranker()
    assert len(held_out_pools) >= 200
    rules = sum(
        bool(ranked.candidates) and ranked.candidates[0].concepts[0] in gold
        for _, ranked, gold in held_out_pools
    )
    learned = 0
    for _, ranked, gold in held_out_pools:
        chosen = ranker.choose(ranked)
        learned += chosen is not None and ranked.candidates[chosen[0]].concepts[0] in gold
    assert learned >= rules + 0.03 * len(held_out_pools)


def test_training_is_reproducible_and_priors_come_from_other_folds(held_out_pools: list) -> None:
    # A small real training set (held-out citations are fine here: this checks the procedure).
    examples = held_out_pools[:120]
    one = trainer.train(examples, seed=7, c=1.0, smoothing=5.0)
    two = trainer.train(examples, seed=7, c=1.0, smoothing=5.0)
    assert one == two and isinstance(one, ProblemRanker)
    assert one.meta["citations"] == 120
    assert one.prior == trainer.count_priors(examples)
    # out of fold: a descriptor found in one abstract only has no prior of its own there
    single = [e for e in examples if any(one.prior[c.concepts[0]][0] == 1 for c in e[1].candidates)]
    assert single
    pmid, ranked, gold = single[0]
    k = trainer.fold_of(pmid, 7)
    others = trainer.count_priors([e for e in examples if trainer.fold_of(e[0], 7) != k])
    ui = next(c.concepts[0] for c in ranked.candidates if one.prior[c.concepts[0]][0] == 1)
    assert ui not in others
