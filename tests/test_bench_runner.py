"""``ebm bench`` end to end on a tiny hand-checked collection of real bundled citations, and the
runner's pieces on hand-made components.

The collection: two real bench frames (P01 prognosis, E01 etiology) with pools of real bundled
PMIDs chosen for their years (some known, some not) and qrels written for this test. Pool and
date orders and their measures are computed by hand below; the scored systems (BM25, term, EBM,
combination) are checked against independent paths: ``ebm ask``'s own ranking and the store's
unrestricted BM25.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from ebm.cli import main
from ebm.errors import DataError, InputError
from ebm.evaluation.bench import Settings, load_frames_dir, read_pools, retrieve_pools, run_bench, system_runs
from ebm.evaluation.components import (
    Candidate,
    Components,
    Pool,
    QuestionComponents,
    bm25_query,
    bm25_words,
    fetch_pool_citations,
)
from ebm.evaluation.trec import read_run
from ebm.mesh import mesh as shipped_mesh

YEAR = 2024
# pool order, with the years of the bundled records
POOLS = {
    "P01": [
        ("23806388", 2013),
        ("25913389", 2016),
        ("17999404", None),
        ("22818151", None),
        ("25432493", None),
        ("15708048", 2005),
    ],
    "E01": [
        ("23283159", 2012),
        ("16266387", 2005),
        ("12055323", None),
        ("19615731", 2009),
        ("18607272", 2008),
    ],
}
# grades written for this test
QRELS = {
    "P01": {"23806388": 3, "25913389": 1, "17999404": 2, "22818151": 0, "25432493": 0, "15708048": 0},
    "E01": {"23283159": 3, "16266387": 1, "12055323": 0, "19615731": 2, "18607272": 0},
}
# date order: newest year first, unknown years last in pool order
DATE = {
    "P01": ["25913389", "23806388", "15708048", "17999404", "22818151", "25432493"],
    "E01": ["23283159", "19615731", "18607272", "16266387", "12055323"],
}
# (P@10, MAP, MRR, TDRR) by hand, per level, means over P01 and E01:
# pool lenient: P01 relevant at 1, 3 -> AP (1 + 2/3)/2, TDRR 1 + 1/3; E01 at 1, 4 -> AP (1 + 2/4)/2,
#   TDRR 1.25; strict: both relevant at 1.
# date lenient: P01 at 2, 4 -> AP (1/2 + 2/4)/2 = 0.5, RR 0.5, TDRR 0.75; E01 at 1, 2 -> AP 1,
#   TDRR 1.5; strict: P01 at 2 (AP, RR, TDRR 0.5), E01 at 1.
EXPECTED = {
    ("pool", "lenient"): (0.2, ((1 + 2 / 3) / 2 + 0.75) / 2, 1.0, (1 + 1 / 3 + 1.25) / 2),
    ("pool", "strict"): (0.1, 1.0, 1.0, 1.0),
    ("date", "lenient"): (0.2, 0.75, 0.75, 1.125),
    ("date", "strict"): (0.1, 0.75, 0.75, 0.75),
}
MEASURES = ("P@10", "MAP", "MRR", "TDRR")


def write_collection(root: Path, shared: Path) -> dict[str, Path]:
    frames = root / "frames"
    frames.mkdir(parents=True)
    for qid in POOLS:
        shutil.copy(shared / "bench" / "frames" / f"{qid}.json", frames)
    pools = root / "pools.run"
    pools.write_text(
        "".join(
            f"{qid} Q0 {pmid} {i + 1} {len(docs) - i}.5 tiny\n"
            for qid, docs in POOLS.items()
            for i, (pmid, _) in enumerate(docs)
        )
    )
    qrels = root / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {p} {g}\n" for q, judged in QRELS.items() for p, g in judged.items()))
    return {"frames": frames, "pools": pools, "qrels": qrels, "out": root / "out"}


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def home(concept_index: Path) -> Path:
    return Path(os.environ["EBM_TEST_HOME"])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, shared: Path, home: Path) -> dict:
    paths = write_collection(tmp_path_factory.mktemp("tiny"), shared)
    args = ["bench", "--frames", str(paths["frames"]), "--qrels", str(paths["qrels"])]
    args += ["--pools", str(paths["pools"]), "--out", str(paths["out"]), "--year", str(YEAR), "--quiet"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EBM_HOME", str(home))
        start = time.perf_counter()
        code, out, err = run_cli(args)
        first = time.perf_counter() - start
        assert code == 0, err
        start = time.perf_counter()
        again = run_cli(args)
        second = time.perf_counter() - start
    return {**paths, "args": args, "stdout": out, "stderr": err, "again": again, "seconds": (first, second)}


def report(tiny: dict) -> dict:
    return json.loads((tiny["out"] / "report.json").read_text())


def test_pool_and_date_orders_score_as_computed_by_hand(tiny: dict) -> None:
    data = report(tiny)
    for level in ("lenient", "strict"):
        summary = data["reports"][level]["summary"][0]
        assert summary["task"] == "all" and summary["queries"] == 2
        for run in ("pool", "date"):
            got = tuple(summary["runs"][run][m]["mean"] for m in MEASURES)
            assert got == pytest.approx(EXPECTED[run, level], abs=1e-12), (run, level)
    date = read_run(tiny["out"] / "runs" / "date.run")
    pool = read_run(tiny["out"] / "runs" / "pool.run")
    for qid, docs in POOLS.items():
        assert date.ranking(qid) == DATE[qid]
        assert pool.ranking(qid) == [p for p, _ in docs]


def test_every_system_reranks_the_same_pools(tiny: dict) -> None:
    runs = sorted(p.stem for p in (tiny["out"] / "runs").glob("*.run"))
    assert runs == ["bm25", "combination", "date", "ebm", "ebm-plus", "ebm-prior", "pool", "term"]
    for name in runs:
        run = read_run(tiny["out"] / "runs" / f"{name}.run")
        assert {q: sorted(run.ranking(q)) for q in POOLS} == {
            q: sorted(p for p, _ in d) for q, d in POOLS.items()
        }


def test_every_ranker_of_ebm_ask_is_benched() -> None:
    from ebm.evaluation.bench import SYSTEMS
    from ebm.scoring.rankers import REGISTRY

    assert {r.bench_run for r in REGISTRY.values()} <= set(SYSTEMS)
    assert len({r.bench_run for r in REGISTRY.values()}) == len(REGISTRY)


def test_scored_systems_rank_as_ebm_ask_does(tiny: dict, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ranker's run is ``ebm ask``'s ranking of the same candidates (the pool, its scores as
    the retrieval scores) by that ranker: the same order, ties included, and the same scores."""
    from ebm.ask import AskConfig, Pipeline
    from ebm.frame import load_frame
    from ebm.scoring.rankers import REGISTRY
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    pools = {p.qid: p for p in read_pools(tiny["pools"])}
    with open_store(vocabulary=shipped_mesh) as store:
        for name, ranker in REGISTRY.items():
            run = read_run(tiny["out"] / "runs" / f"{ranker.bench_run}.run")
            with Pipeline(AskConfig(year=YEAR, ranker=name), source=store) as pipeline:
                for qid, pool in pools.items():
                    frame = load_frame(tiny["frames"] / f"{qid}.json")
                    annotations, _ = pipeline.annotate(store.fetch(pool.pmids))
                    retrieval = [c.pool_score for c in pool.candidates]
                    answers = pipeline.rank(frame, annotations, retrieval=retrieval)
                    assert run.ranking(qid) == [a.pmid for a in answers], (name, qid)
                    scores = [a.score for a in answers]
                    by_doc = {d.docno: d.score for d in run.results[qid]}
                    assert [by_doc[a.pmid] for a in answers] == pytest.approx(scores, abs=1e-12)


def test_bench_runs_keep_asks_tie_order(tmp_path: Path) -> None:
    """Tied scores keep the pool order (``ebm ask``'s retrieval order), read back from the file."""
    from ebm.evaluation.trec import format_run

    values = {
        "pico": np.asarray([0.0, 1.0, 1.0, 0.0]),
        "soe": np.zeros(4),
        "task": np.zeros(4),
        "term": np.asarray([1.0, 0.0, 1.0, 0.0]),
        "bm25": np.zeros(4),
    }
    q = QuestionComponents("Q", "therapy", ["5", "2", "9", "1"], [4.0, 3.0, 2.0, 1.0], [None] * 4, values)
    runs = {r.name: r for r in system_runs(Components([q], "hand", {}), Settings(1.0, 0.0, 0.0, 0.8))}
    assert set(runs) == {"pool", "date", "bm25", "term", "ebm", "combination"}  # no EBM+ columns
    path = tmp_path / "ties.run"
    expected = {"term": ["5", "9", "2", "1"], "ebm": ["2", "9", "5", "1"], "pool": ["5", "2", "9", "1"]}
    for name, order in expected.items():  # trec_eval's docno order alone: term 9 5 2 1, ebm 9 2 5 1
        path.write_text(format_run(runs[name]), encoding="utf-8")
        assert read_run(path).ranking("Q") == order, name


def test_ebm_plus_run_is_ebm_asks_order(tiny: dict, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ebm-plus run is ``ebm ask``'s default ranking (EBM+, shipped weights) of each pool, the
    pool's scores passed as the retrieval scores: the same order, ties included, and the same
    scores."""
    from ebm.ask import AskConfig, Pipeline
    from ebm.frame import load_frame
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    run = read_run(tiny["out"] / "runs" / "ebm-plus.run")
    pools = {p.qid: p for p in read_pools(tiny["pools"])}
    with (
        open_store(vocabulary=shipped_mesh) as store,
        Pipeline(AskConfig(year=YEAR), source=store) as pipeline,
    ):
        assert pipeline.config.ranker == "ebm-plus"
        for qid, pool in pools.items():
            frame = load_frame(tiny["frames"] / f"{qid}.json")
            annotations, _ = pipeline.annotate(store.fetch(pool.pmids))
            answers = pipeline.rank(frame, annotations, retrieval=[c.pool_score for c in pool.candidates])
            assert run.ranking(qid) == [a.pmid for a in answers], qid
            by_doc = {d.docno: d.score for d in run.results[qid]}
            assert [by_doc[a.pmid] for a in answers] == pytest.approx([a.score for a in answers], abs=1e-12)
            # the retrieval feature is the pool score, min-max scaled (weight 1): 6.5 ... 1.5 -> 1 ... 0
            n = len(pool.candidates)
            scaled = [(c.pool_score - 1.5) / (n - 1) for c in pool.candidates]
            assert [a.ranking["retrieval"] for a in answers] == pytest.approx(
                [scaled[a.retrieval_rank - 1] for a in answers], abs=1e-12
            )
    md = (tiny["out"] / "bench.md").read_text()
    by_task, by_kind = md.split("By question kind", 1)
    assert by_task.count("| EBM+ (weights fitted on the dev set) | ") == 6
    # then one table per question kind present (1-2 lenient-relevant or more), both levels
    kinds = by_kind.count("**Few relevant (") + by_kind.count("**Many relevant (")
    assert kinds >= 1 and by_kind.count("| EBM+ (weights fitted on the dev set) | ") == 2 * kinds
    assert "training figure" in md and "scripts/eval_rankers.py" in md
    data = report(tiny)
    assert any("leave-one-question-out" in n for n in data["notes"])


def test_bm25_ranks_by_the_question_words_with_the_stores_scores(tiny: dict, home: Path, monkeypatch) -> None:
    from ebm.frame import load_frame
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    frame = load_frame(tiny["frames"] / "E01.json")
    # "Is obesity a risk factor for wheezing (asthma symptoms) in adolescents?"
    from tests.shipped import resources

    stop = resources().stopwords
    words = ["obesity", "risk", "factor", "wheezing", "asthma", "symptoms", "adolescents"]
    assert bm25_words(frame, stop) == words
    run = read_run(tiny["out"] / "runs" / "bm25.run")
    pool = {p for p, _ in POOLS["E01"]}
    with open_store(vocabulary=shipped_mesh) as store:
        # the same query on the whole store, unrestricted: the pool's scores are the same
        hits = store.search_hits(bm25_query(frame, stop), limit=len(store))
    expected = {h.pmid: h.score for h in hits.hits if h.pmid in pool}
    got = {d.docno: d.score for d in run.results["E01"]}
    assert got == pytest.approx({p: expected.get(p, 0.0) for p in pool}, abs=1e-9)
    assert run.ranking("E01")[0] == max(expected, key=expected.get)


def test_outputs_tables_and_diagnosis(tiny: dict) -> None:
    out = tiny["out"]
    md = (out / "bench.md").read_text()
    assert "**All tasks (2 questions)**" in md and "**Prognosis (1 questions)**" in md
    assert "**Etiology (1 questions)**" in md
    by_task, by_kind = md.split("By question kind", 1)
    kinds = by_kind.count("**Few relevant (") + by_kind.count("**Many relevant (")
    assert kinds >= 1
    for label in ("pool order", "date order (newest first)", "BM25 (question words)", "term-based", "EBM"):
        assert by_task.count(f"| {label} | ") == 6  # lenient and strict, in all three tables
        assert by_kind.count(f"| {label} | ") == 2 * kinds  # and in each question kind's
    assert (out / "report-kind-lenient.txt").is_file()
    assert "| pool order | strict | 0.100 | 1.000 | 1.000 | 1.000 |" in md
    text = (out / "report-lenient.txt").read_text()
    assert "Per query" in text and "E01" in text and "P01" in text
    diagnosis = (out / "diagnosis-strict.txt").read_text()
    for name in (
        "by-pico",
        "by-soe",
        "by-task",
        "by-term",
        "by-pico.outcome",
        "by-soe.date",
        "by-known.mesh",
        "by-ebm-plus",
        "by-match.problem",
        "by-lexical",
    ):
        assert f"\n{name} " in diagnosis
    assert "by-ebm-plus.rank" not in diagnosis
    assert "Across all tasks (2 queries)" in tiny["stdout"]
    assert "Components: 11 candidates of 2 questions" in tiny["stdout"]


def test_components_are_cached_and_reused(tiny: dict) -> None:
    code, out, err = tiny["again"]
    assert code == 0
    assert "components from the cache" in err
    assert "Components: from the cache" in out
    comp = Components.load(tiny["out"] / "components.json.gz")
    assert comp.qids == ["E01", "P01"] and comp.meta["year"] == YEAR
    assert {"pico", "soe", "task", "term", "bm25", "pico.outcome", "soe.date", "known.year"} <= set(
        comp.columns
    )
    years = {q.qid: dict(zip(q.docnos, q.years, strict=True)) for q in comp.questions}
    assert years == {q: dict(d) for q, d in POOLS.items()}


def test_another_year_is_another_fingerprint(tiny: dict, home: Path, monkeypatch) -> None:
    from ebm.evaluation.components import fingerprint
    from ebm.frame import load_frame
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    frames = {q: load_frame(tiny["frames"] / f"{q}.json") for q in POOLS}
    pools = read_pools(tiny["pools"])
    with open_store(vocabulary=shipped_mesh) as store:
        citations = fetch_pool_citations(store, pools)
    comp = Components.load(tiny["out"] / "components.json.gz")
    from tests.shipped import resources

    r = resources()
    assert fingerprint(frames, pools, citations, r, YEAR, "question") == comp.fingerprint
    assert fingerprint(frames, pools, citations, r, YEAR + 1, "question") != comp.fingerprint
    assert fingerprint(frames, pools[:1], citations, r, YEAR, "question") != comp.fingerprint


def test_missing_pmids_are_an_error_naming_them(tiny: dict, tmp_path: Path, home: Path, monkeypatch) -> None:
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    pools = tmp_path / "pools.run"
    pools.write_text(tiny["pools"].read_text() + "E01 Q0 99999999999 9 0.1 tiny\n")
    args = ["bench", "--frames", str(tiny["frames"]), "--qrels", str(tiny["qrels"]), "--pools", str(pools)]
    code, _, err = run_cli([*args, "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and "99999999999" in err and "--skip-missing" in err
    with open_store(vocabulary=shipped_mesh) as store:
        found = fetch_pool_citations(store, read_pools(pools), skip_missing=True)
    assert "99999999999" not in found and len(found) == 11


def test_retrieved_pools_are_the_ask_retrieval(tiny: dict, home: Path, monkeypatch) -> None:
    from ebm.query import retrieve
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    frames = load_frames_dir(tiny["frames"])
    with open_store(vocabulary=shipped_mesh) as store:
        from tests.shipped import resources

        r = resources()
        pools, queries = retrieve_pools(frames, store, 7, r)
        for pool in pools:
            expected = retrieve(
                frames[pool.qid], store, min_hits=7, limit=7, rules=r.rules, vocabulary=r.vocabulary
            )
            assert pool.pmids == list(expected.result.pmids)
            assert queries[pool.qid] == expected.query
            assert [c.pool_score for c in pool.candidates] == sorted(
                (c.pool_score for c in pool.candidates), reverse=True
            )
            # the scores ebm ask gives EBM+ as its retrieval feature: the store's BM25 of the query
            hits = store.search_hits(expected.query, limit=7).hits
            assert [c.pool_score for c in pool.candidates] == [h.score or 0.0 for h in hits]


# -- on hand-made components (no scorer) --------------------------------------------------------


def hand_question() -> QuestionComponents:
    # S_EBM at equal weights: a 1/3 (0.5 + 0.5), b 1/3 (1 + 0.5 - 0.5), c 1/3 (0 + 0.2 + 0), d 1/3 (-1)
    values = {
        "pico": np.array([0.5, 1.0, 0.0, -1.0]),
        "soe": np.array([0.5, 0.5, 0.2, 0.0]),
        "task": np.array([0.5, -0.5, 0.0, 0.0]),
        "term": np.array([0.0, 1.0, 3.0, 2.0]),
        "bm25": np.array([5.0, 0.0, 7.0, 6.0]),
    }
    return QuestionComponents(
        "Q", "therapy", ["11", "12", "13", "14"], [4.0, 3.0, 2.0, 1.0], [2001, None, 2010, 2001], values
    )


def test_system_runs_on_hand_components() -> None:
    comp = Components([hand_question()], "hand")
    runs = {r.name: r for r in system_runs(comp, Settings(1 / 3, 1 / 3, 1 / 3, 0.8))}
    assert runs["pool"].ranking("Q") == ["11", "12", "13", "14"]
    assert runs["date"].ranking("Q") == ["13", "11", "14", "12"]  # 2010, 2001 (pool order), unknown
    assert runs["bm25"].ranking("Q") == ["13", "14", "11", "12"]
    assert runs["term"].ranking("Q") == ["13", "14", "12", "11"]
    # S_EBM: 11 = 0.5, 12 = 1/3, 13 = 0.2/3, 14 = -1/3
    assert runs["ebm"].ranking("Q") == ["11", "12", "13", "14"]
    # min-max EBM over [-1/3, 0.5]: 11 1, 12 (2/3) / (5/6) = 0.8, 13 0.4 / (5/6) = 0.48, 14 0;
    # term / 3: 0, 1/3, 1, 2/3; 0.8 EBM + 0.2 term: 11 0.8, 12 0.7067, 13 0.584, 14 0.1333
    assert runs["combination"].ranking("Q") == ["11", "12", "13", "14"]
    combined = {d.docno: d.score for d in runs["combination"].results["Q"]}
    assert combined["12"] == pytest.approx(0.8 * 0.8 + 0.2 / 3)
    assert combined["13"] == pytest.approx(0.8 * 0.48 + 0.2)
    # alpha 0: the term score alone
    only_term = {r.name: r for r in system_runs(comp, Settings(1 / 3, 1 / 3, 1 / 3, 0.0))}
    assert only_term["combination"].ranking("Q") == runs["term"].ranking("Q")


def test_run_bench_notes_and_errors() -> None:
    comp = Components([hand_question()], "hand")
    qrels = {"Q": {"11": 3, "13": 2}, "OTHER": {"1": 3}}
    result = run_bench(comp, qrels, Settings.default(), ["lenient"])
    assert result.reports["lenient"].qids == ["Q"]  # the qrels' other question is not averaged in
    assert any("OTHER" in n for n in result.notes)
    with pytest.raises(InputError, match="none of the benched questions"):
        run_bench(comp, {"OTHER": {"1": 3}}, Settings.default(), ["lenient"])


def test_frames_directory_errors(tmp_path: Path, shared: Path) -> None:
    with pytest.raises(InputError, match="no frames"):
        load_frames_dir(tmp_path)
    src = shared / "bench" / "frames" / "E01.json"
    shutil.copy(src, tmp_path / "a.json")
    shutil.copy(src, tmp_path / "b.json")
    with pytest.raises(InputError, match="question id 'E01' also in"):
        load_frames_dir(tmp_path)
    (tmp_path / "b.json").unlink()
    (tmp_path / "c.yaml").write_text("task: therapy\nproblem: asthma\n")
    assert sorted(load_frames_dir(tmp_path)) == ["E01", "c"]


def test_a_pool_without_a_frame_is_an_error() -> None:
    pools = [Pool("A", [Candidate("1", 1.0)])]
    from ebm.evaluation.components import compute_components

    with pytest.raises(InputError, match="no frame for question"):
        compute_components({}, pools, store=None, resources=None)  # type: ignore[arg-type]


def test_unknown_store_pmids_error_is_data_error() -> None:
    class Empty:
        path = "empty.sqlite"

        def fetch(self, pmids):
            return []

    with pytest.raises(DataError, match="2 pooled PMIDs are not in the store empty.sqlite: 1, 2"):
        fetch_pool_citations(Empty(), [Pool("A", [Candidate("1", 2.0), Candidate("2", 1.0)])])


def test_a_pool_left_empty_by_skip_missing_is_left_out(tiny: dict, home: Path, monkeypatch) -> None:
    from ebm.evaluation.components import compute_components
    from ebm.store import open_store

    monkeypatch.setenv("EBM_HOME", str(home))
    frames = load_frames_dir(tiny["frames"])
    with (
        open_store(vocabulary=shipped_mesh) as store,
        pytest.raises(DataError, match="no pooled citation is in the store"),
    ):
        compute_components(
            frames, [Pool("E01", [Candidate("99999999999", 1.0)])], store, skip_missing=True, resources=None
        )
