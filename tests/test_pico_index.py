"""The PICO index over stored annotations (issue 17): ``ebm corpus search`` fields [problem]
[intervention] [population] (MeSH exploded as [mh]), [design] and [grade], combined with the
rest of the PubMed syntax, select exactly the citations whose stored annotations say so."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.test_store_annotations import sample_citations


@pytest.fixture(scope="module")
def indexed(resources, tmp_path_factory):  # -> (store path, {pmid: (annotation, design)})
    from ebm.annotation_cache import annotation_version
    from ebm.store.annotations import compact
    from ebm.store.sqlite import MedlineStore
    from extractors.annotate import Annotator
    from extractors.design import design_json, design_model_path, load_design_model

    path = tmp_path_factory.mktemp("pico") / "s.sqlite"
    annotator = Annotator(resources)
    model = load_design_model(design_model_path())
    with MedlineStore(path, vocabulary=resources.vocabulary) as store:
        store.ingest(sample_citations())
        fetched = store.fetch([c.pmid for c in sample_citations()])
        truth = {}
        rows = []
        for c in fetched:
            a = annotator.annotate(c)
            design = design_json(c, model)["design"]["label"]
            truth[c.pmid] = (a, design)
            rows.append(compact(a, design, None))
        store.write_annotations(annotation_version(resources), rows)
    return path, truth


def _search(path: Path, resources, query: str) -> set[str]:
    from ebm.store.sqlite import MedlineStore

    with MedlineStore(path, vocabulary=resources.vocabulary) as store:
        return set(store.search(query, limit=1000).pmids)


def _with(truth, element: str, uis: set[str]) -> set[str]:
    def cands(a):
        by = {"problem": a.problems, "intervention": a.interventions, "population": a.population[:3]}
        return by[element]

    return {p for p, (a, _) in truth.items() if any(set(c.concepts) & uis for c in cands(a))}


def test_element_fields_explode_like_mh(indexed, resources) -> None:
    path, truth = indexed
    voc = resources.vocabulary
    hyper = voc.by_name("Hypertension")
    expected = _with(truth, "problem", voc.explode(hyper.ui))
    assert expected and _search(path, resources, "hypertension[problem]") == expected
    assert _search(path, resources, "hypertension[problem:noexp]") == _with(truth, "problem", {hyper.ui})
    # the most frequent intervention and population concepts, each by its MeSH name
    for element in ("intervention", "population"):
        counts = Counter(
            ui
            for a, _ in truth.values()
            for c in (a.interventions if element == "intervention" else a.population[:3])
            for ui in c.concepts
        )
        ui = counts.most_common(1)[0][0]
        name = voc.descriptors[ui].name
        assert _search(path, resources, f'"{name}"[{element}]') == _with(truth, element, voc.explode(ui))
    child = _search(path, resources, "children[population]")
    assert child == _with(truth, "population", voc.explode(voc.by_name("Child").ui))


def test_design_and_grade_and_the_rest_of_the_syntax(indexed, resources) -> None:
    path, truth = indexed
    rct = {p for p, (_, d) in truth.items() if d == "randomized_controlled_trial"}
    grade_a = {p for p, (a, _) in truth.items() if a.evidence.grade == "A"}
    assert rct and grade_a
    assert _search(path, resources, "rct[design]") == rct
    assert _search(path, resources, "randomized controlled trial[design]") == rct
    assert _search(path, resources, "A[grade]") == grade_a
    assert _search(path, resources, "rct[design] AND A[grade]") == rct & grade_a
    assert _search(path, resources, "A[grade] NOT rct[design]") == grade_a - rct
    words = _search(path, resources, "patients[tiab]")
    assert _search(path, resources, "(rct[design] OR A[grade]) AND patients[tiab]") == (rct | grade_a) & words


def test_errors_name_the_term(indexed, resources, tmp_path) -> None:
    from ebm.errors import InputError
    from ebm.store.sqlite import MedlineStore

    path, _ = indexed
    for query, message in (
        ("rct[design] AND Z[grade]", "'Z'[grade] at position 17: a grade is A, B or C"),
        ("cohrt[design]", "'cohrt'[design] at position 1 is not a design"),
        ("Xyzzy[problem]", "'Xyzzy'[problem] at position 1 is not a MeSH heading"),
    ):
        with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
            _search(path, resources, query)
    with MedlineStore(tmp_path / "empty.sqlite", vocabulary=resources.vocabulary) as empty:
        with pytest.raises(InputError, match="no annotations"):
            empty.search("fever[problem]")


def test_cli_search_with_a_pico_field(indexed, resources) -> None:
    path, truth = indexed
    run = subprocess.run(
        [sys.executable, "-m", "ebm", "corpus", "search", "--db", str(path), "--json", "--limit", "100",
         "rct[design] AND A[grade]"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    rct = "randomized_controlled_trial"
    expected = {p for p, (a, d) in truth.items() if d == rct and a.evidence.grade == "A"}
    assert doc["count"] == len(expected) and {r["pmid"] for r in doc["results"]} == expected
    assert doc["translation"] == "randomized_controlled_trial[design] AND A[grade]"


def test_ask_retrieves_by_stored_pico_elements(indexed, resources) -> None:
    from ebm.ask import AskConfig, Pipeline
    from ebm.frame import frame_from_args
    from ebm.store.sqlite import MedlineStore

    path, truth = indexed
    voc = resources.vocabulary
    hypertensive = _with(truth, "problem", voc.explode(voc.by_name("Hypertension").ui))
    frame = frame_from_args("therapy", problem="hypertension", intervention=["labetalol"])
    config = AskConfig(db=path, cache=False, deadline_s=None, retrieval="pico", candidates=20)
    with MedlineStore(path, vocabulary=resources.vocabulary) as store:
        with Pipeline(config, source=store, resources=resources) as pipeline:
            result = pipeline.ask(frame)
            assert pipeline._annotator is None  # candidates come with their stored annotations
    got = {a.pmid for a in result.answers}
    assert got and got <= hypertensive and result.cached == len(got)
    assert "D006973[problem]" in result.retrieval.query  # Hypertension's UI, exploded
    # the strictest query (with the intervention) is tried first and relaxed when it finds too few
    first = result.retrieval.attempts[0]
    assert "[intervention]" in first.query
    labetalol = _with(truth, "intervention", voc.explode(voc.by_name("Labetalol").ui))
    assert first.count == len(hypertensive & labetalol)


def test_bench_pools_from_the_pico_index(indexed, resources) -> None:
    from ebm.evaluation.bench import retrieve_pools
    from ebm.frame import frame_from_args
    from ebm.store.sqlite import MedlineStore

    path, truth = indexed
    voc = resources.vocabulary
    frames = {
        "htn": frame_from_args("therapy", problem="hypertension", intervention=["labetalol"]),
        "none": frame_from_args("therapy", problem="zzzz qqqq"),  # no concept: an empty pool
    }
    with MedlineStore(path, vocabulary=resources.vocabulary) as store:
        pools, queries = retrieve_pools(frames, store, 10, resources, retrieval="pico")
        bm25, _ = retrieve_pools(frames, store, 10, resources)
    by = {p.qid: p for p in pools}
    hypertensive = _with(truth, "problem", voc.explode(voc.by_name("Hypertension").ui))
    assert by["htn"].pmids and set(by["htn"].pmids) <= hypertensive and "[problem]" in queries["htn"]
    assert by["none"].pmids == [] and queries["none"] == ""
    assert {p.qid for p in bm25} == {"htn", "none"}  # the default stays the BM25 query
