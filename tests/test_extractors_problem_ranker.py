"""The learned primary-problem ranker: model file, training, and its choice on held-out citations."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ebm.errors import DataError
from ebm.mesh import mesh
from ebm.paths import package_data
from extractors.problem import is_disorder
from extractors.problem_ranker import (
    MODEL_FILE,
    ProblemRanker,
    load_problem_ranker,
    problem_features,
)
from tests.conftest import load_script
from tests.shipped import annotate, default_pipeline, default_problem_kinds, default_problem_ranker, primary

corpus = load_script("problem_corpus")
trainer = load_script("train_problem_ranker")


@pytest.fixture(scope="module")
def held_out_pools(concept_index: Path, shared: Path) -> list[tuple[str, object, set[str]]]:
    """Odd-PMID citations of the bench question pools (never trained on), with their features."""
    pooled = corpus.pool_pmids(shared / "bench" / "pools.run")
    matcher, pipeline = __import__('tests.shipped').shipped.default_matcher(), default_pipeline()
    out = []
    for c, gold in corpus.problem_citations():
        if c.pmid in pooled and int(c.pmid) % 2:
            doc = pipeline.process(c)
            out.append((c.pmid, problem_features(doc, annotate(doc, matcher), vocabulary=mesh(), kinds=default_problem_kinds()), gold))
    return out


def test_shipped_ranker_is_small_and_trained_on_even_pmids() -> None:
    r = default_problem_ranker()
    assert package_data(MODEL_FILE).stat().st_size < 20_000
    assert "even PMIDs" in r.meta["trained_on"] and r.meta["citations"] > 1500
    assert 0 < r.base_rate < 1 and r.smoothing > 0
    voc = mesh()
    assert all(is_disorder(ui, voc) and 0 <= major <= found for ui, (found, major) in r.prior.items())
    # what the weights say: prominence by the rules, an early first mention and a high prior
    # all speak for a candidate
    assert r.weights["score_ratio"] > 0 and r.weights["prior_log_odds"] > 0
    assert r.weights["first_sentence"] < 0


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


def test_primary_comes_with_its_evidence(concept_index: Path) -> None:
    from tests.conftest import bundled_citations

    c = bundled_citations({"16691061"})["16691061"]  # cellulose sulfate gel in HIV-infected women
    doc = default_pipeline().process(c)
    problems, chosen = primary(default_problem_ranker(), doc, annotate(doc))
    assert chosen is not None and chosen.names == ("HIV Infections",)
    assert chosen.concepts in [p.concepts for p in problems]
    assert chosen.evidence[-1].startswith("learned ranker: primary problem (p 0.")
    assert "training abstracts naming it" in chosen.evidence[-1]


def test_model_file_round_trip_is_byte_identical(tmp_path: Path) -> None:
    r = default_problem_ranker()
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    r.save(a)
    load_problem_ranker(a).save(b)
    assert load_problem_ranker(a) == r
    assert a.read_bytes() == b.read_bytes() == package_data(MODEL_FILE).read_bytes()


def test_bad_ranker_files_are_data_errors(tmp_path: Path) -> None:
    good = default_problem_ranker().to_json()
    path = tmp_path / "r.json.gz"
    cases = [
        ({**good, "format": "ebm-outcome-model"}, "not a problem ranker"),
        ({**good, "version": 99}, "ranker version 99"),
        ({**good, "weights": {**good["weights"], "colour": 1.0}}, "unknown features \\['colour'\\]"),
        ({**good, "prior": {"D003866": ["x", 1]}}, "malformed problem ranker"),
    ]
    for data, message in cases:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(data, f)
        with pytest.raises(DataError, match=f"{path}: .*{message}"):
            load_problem_ranker(path)
    path.write_bytes(b"not gzip")
    with pytest.raises(DataError, match="unreadable problem ranker"):
        load_problem_ranker(path)
    with pytest.raises(DataError, match="problem ranker missing: .*train_problem_ranker.py"):
        load_problem_ranker(tmp_path / "none.json.gz")


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
