"""The learned primary-problem ranker: model file and its choice with evidence (unit tests, on the
tiny MeSH subset; training and the held-out question pools on the real index:
tests/test_extractors_integration.py)."""

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
    load_problem_ranker,
)
from tests.conftest import load_script
from tests.tiny import annotate, default_pipeline, default_problem_ranker, primary

corpus = load_script("problem_corpus")
trainer = load_script("train_problem_ranker")


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


def test_primary_comes_with_its_evidence(tiny_resources: object) -> None:
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
