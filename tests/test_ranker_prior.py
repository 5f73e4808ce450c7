"""EBM-prior (ebm.scoring.ranker_prior), question kinds and the question-aware evidence values."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ebm.errors import InputError
from ebm.evaluation.kinds import FEW, MANY, kinds_by_query, question_kind
from ebm.evaluation.trec import read_qrels
from ebm.scoring.question_evidence import recency_value, sample_size_value
from ebm.scoring.ranker_prior import (
    MAX_BONUS,
    PairQuestion,
    PriorWeights,
    fit_prior,
    nested_prior,
    pair_question,
    prior_matrix,
    prior_parts,
    prior_scores,
)
from ebm.scoring.rankers import REGISTRY, RankerSettings, rank_columns

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
BENCH = SHARED / "bench"


def cols(retrieval, lexical, problem, intervention):  # type: ignore[no-untyped-def]
    n = len(retrieval)
    return {
        "retrieval": retrieval,
        "lexical": lexical,
        "match.problem": problem,
        "match.intervention": intervention,
        "match.co_problems": [0.0] * n,
    }


def test_matrix_scales_retrieval_and_multiplies_both() -> None:
    c = cols([10.0, 6.0, 2.0], [3.0, 1.0, 2.0], [1.0, 0.5, 0.0], [0.8, 1.0, 1.0])
    m = prior_matrix(c, ["lexical", "problem", "both"])
    assert m[:, 0].tolist() == [1.0, 0.5, 0.0]  # retrieval min-max
    assert m[:, 1].tolist() == [1.0, 0.0, 0.5]  # lexical min-max
    assert m[:, 2].tolist() == [1.0, 0.5, 0.0]  # problem as it is
    assert m[:, 3].tolist() == pytest.approx([0.8, 0.5, 0.0])  # problem x intervention
    with pytest.raises(InputError, match="findings"):
        prior_matrix(c, ["findings"])


def _question(qid: str, relevant_at: int, n: int = 6) -> PairQuestion:
    # retrieval puts the relevant one at ``relevant_at``; feature 1 flags it, feature 2 is noise
    retrieval = np.linspace(1.0, 0.0, n)
    flag = np.zeros(n)
    flag[relevant_at] = 1.0
    noise = np.array([(i * 7 + len(qid)) % 3 / 2 for i in range(n)])
    docnos = [f"{qid}-{i}" for i in range(n)]
    return pair_question(
        qid, docnos, np.column_stack([retrieval, flag, noise]), {docnos[relevant_at]: 3}, threshold=2
    )


def test_fit_rewards_a_separating_feature_and_shrinks_to_retrieval() -> None:
    # relevant at positions 2-5 of 6; the last (retrieval 0) could not pass the first with a
    # bonus of at most the retrieval range: the bound is the point
    qs = [_question(f"q{i}", relevant_at=i % 4 + 1) for i in range(10)]
    w = fit_prior(qs, penalty=1e-4)
    assert w[0] == pytest.approx(MAX_BONUS)  # the flag separates perfectly: capped at the bound
    assert w[1] < w[0]
    # every relevant citation first with the fitted bonuses
    assert all(int(np.argmax(prior_scores(q, w))) == int(np.flatnonzero(q.relevant)[0]) for q in qs)
    strong = fit_prior(qs, penalty=100.0)  # a strong prior: (almost) the retrieval order itself
    assert np.all(strong < 0.02)
    with pytest.raises(InputError):
        fit_prior([_question("q", 0, n=1)], 1e-3)


def test_nested_chooses_without_the_scored_question() -> None:
    qs = [_question(f"q{i}", relevant_at=i % 5 + 1) for i in range(8)]
    only_noise = [PairQuestion(q.qid, q.docnos, q.matrix[:, [0, 2]], q.relevant) for q in qs]
    sets = {"noise": only_noise, "flag + noise": qs}
    n_rel = {q.qid: 1 for q in qs}
    r = nested_prior(sets, (1e-4, 1.0), n_rel, inner_folds=4)
    assert set(r.held_out_scores) == {q.qid for q in qs}
    assert all(name == "flag + noise" for name, _ in r.chosen.values())


def test_weights_file_round_trip_and_errors(tmp_path: Path) -> None:
    w = PriorWeights({"lexical": 0.5, "both": 0.25}, "x")
    path = tmp_path / "w.toml"
    path.write_text(w.to_toml("a note"), encoding="utf-8")
    back = PriorWeights.read(path)
    assert dict(back.weights) == {"lexical": 0.5, "both": 0.25} and back.active() == ["lexical", "both"]
    path.write_text("[bonus]\nlexical = 1.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="must be in"):
        PriorWeights.read(path)
    path.write_text("[bonus]\nnope = 0.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown ebm-prior feature 'nope'"):
        PriorWeights.read(path)


def test_registered_ranker_ranks_by_retrieval_plus_bonuses() -> None:
    assert "ebm-prior" in REGISTRY
    c = cols([10.0, 9.0, 2.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0])
    settings = RankerSettings(prior=PriorWeights({"problem": 0.1, "both": 0.5}, "test"))
    r = rank_columns("ebm-prior", c, [1, 2, 3], settings)
    # 1 + 0; 0.875 + 0.1 + 0.5; 0 + 0.6: the second passes the first, the third stays last
    assert r.scores == pytest.approx([1.0, 1.475, 0.6])
    assert r.order == [1, 0, 2]
    assert r.parts == prior_parts(c, settings.prior_weights())
    assert "EBM-prior = retrieval" in r.description


def test_question_kinds_on_the_development_qrels() -> None:
    qrels = read_qrels(BENCH / "qrels.txt")
    assert question_kind(qrels, "D04") == FEW and question_kind(qrels, "E06") == MANY
    kinds = kinds_by_query(qrels, sorted(qrels))
    assert sum(k == FEW for k in kinds.values()) == 11 and sum(k == MANY for k in kinds.values()) == 12


def test_evidence_values_on_real_abstracts() -> None:
    with gzip.open(SHARED / "pubmedqa" / "ori_pqal.json.gz", "rt", encoding="utf-8") as f:
        records = json.load(f)
    rec = records["21645374"]  # the lace plant study: no participants
    plant = SimpleNamespace(citation=SimpleNamespace(abstract_text=" ".join(rec["CONTEXTS"]), year=2011))
    assert sample_size_value(plant) == 0.0
    assert recency_value(plant) == pytest.approx((2011 - 1975) / 50)
    assert recency_value(SimpleNamespace(citation=SimpleNamespace(year=None))) == 0.5
    sized = [
        v
        for r in list(records.values())[:200]
        if (
            v := sample_size_value(
                SimpleNamespace(citation=SimpleNamespace(abstract_text=" ".join(r["CONTEXTS"])))
            )
        )
    ]
    assert sized and all(0.0 < v <= 1.0 for v in sized)
