"""Caches key on exactly the resources their consumer reads (``Resources.digest``): a query or
scoring table edit keeps the cached annotations, an extractor or matcher table edit does not;
the bench components follow annotation and scoring tables, not the query tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ebm.annotation_cache import AnnotationCache, annotation_version
from ebm.resources import Resources, shipped_rules_dir
from ebm.rules.registry import ANNOTATION, QUERY, SCORER
from tests import scoring_pool
from tests.shipped import resources


def edited(tmp_path: Path, table: str, line: str) -> Resources:
    """The shipped rules with ``line`` added to ``table`` (or, for "OLD => NEW", a text replaced)."""
    d = tmp_path / table
    shutil.copytree(shipped_rules_dir(), d, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    p = d / table
    text = p.read_text(encoding="utf-8")
    if " => " in line:
        old, new = line.split(" => ")
        assert old in text
        p.write_text(text.replace(old, new), encoding="utf-8")
    else:
        p.write_text(text + line + "\n", encoding="utf-8")
    r = resources()
    return Resources.load(d, vocabulary=r.vocabulary, index_dir=r.index_dir)


EDITS = {
    "clinical_queries.tsv": (
        "(specificity[Title/Abstract]) => (specificity[Title/Abstract] OR specific[Title/Abstract])",
        QUERY,
    ),
    "task_indicators.tsv": ("therapy\tdescriptor\tFever\t2\t1", SCORER),
    "journals.tsv": ("Some Journal\tSome J\t0.6", SCORER),
    "intervention_cues.tsv": ("were given\t1.5\tbefore", ANNOTATION),
    "concept_synonyms.tsv": ("feverishness\tD005334", ANNOTATION),
    "negation_triggers.tsv": ("devoid of\tpre", ANNOTATION),
    "study_types.tsv": ("mh\tPilot Projects\tclinical trial\t0.2\tB", ANNOTATION),  # the grade
}


@pytest.mark.parametrize("table", sorted(EDITS))
def test_annotation_cache_key_follows_only_what_annotations_read(
    table: str, tmp_path: Path, concept_index: Path
) -> None:
    line, consumer = EDITS[table]
    shipped, copy = resources(), edited(tmp_path, table, line)
    same = annotation_version(shipped) == annotation_version(copy)
    assert same == (consumer != ANNOTATION), table


def test_cached_annotations_survive_a_query_table_edit(tmp_path: Path, concept_index: Path) -> None:
    cit = scoring_pool.ischemia_pool()["rct"]
    ann = scoring_pool.annotator().annotate(cit)
    path = tmp_path / "annotations.sqlite"
    cache = AnnotationCache(path, annotation_version(resources()))
    cache.put_many([ann])
    cache.close()
    queries = edited(tmp_path, "clinical_queries.tsv", EDITS["clinical_queries.tsv"][0])
    again = AnnotationCache(path, annotation_version(queries))
    assert set(again.get_many([cit])) == {cit.pmid}
    again.close()
    cues = edited(tmp_path, "intervention_cues.tsv", EDITS["intervention_cues.tsv"][0])
    other = AnnotationCache(path, annotation_version(cues))
    assert other.get_many([cit]) == {}
    other.close()


def test_bench_components_follow_annotation_and_scoring_tables(tmp_path: Path, concept_index: Path) -> None:
    from ebm.evaluation.components import fingerprint

    def digest(r: Resources) -> str:
        return fingerprint({}, [], {}, r, 2024, "question")

    base = digest(resources())
    assert digest(edited(tmp_path, "clinical_queries.tsv", EDITS["clinical_queries.tsv"][0])) == base
    assert digest(edited(tmp_path, "task_indicators.tsv", EDITS["task_indicators.tsv"][0])) != base
    assert digest(edited(tmp_path, "intervention_cues.tsv", EDITS["intervention_cues.tsv"][0])) != base
