"""Stored annotations (ebm.store.annotations, issue 17): the compact form round-trips the real
annotator's output exactly, lives in the store keyed by (citation, version), goes with a
replaced or deleted citation, and ``ebm ask`` reads it instead of annotating."""

from __future__ import annotations

from pathlib import Path

import pytest

N = 40  # bundled citations: real titles, abstracts, MeSH and publication types


def sample_citations() -> list:
    """The first 20 bundled citations (old, undated) and 20 spread over the rest (dated)."""
    from ebm.medline.bundled import iter_bundled

    every = list(iter_bundled())
    return every[:20] + every[400::400][:20]


@pytest.fixture(scope="module")
def citations() -> list:
    return sample_citations()


@pytest.fixture(scope="module")
def annotated(resources, citations) -> list:
    from extractors.annotate import Annotator

    annotator = Annotator(resources)
    return [annotator.annotate(c) for c in citations]


def _store(tmp_path: Path, citations: list, resources):  # -> MedlineStore
    from ebm.store.sqlite import MedlineStore

    store = MedlineStore(tmp_path / "s.sqlite", vocabulary=resources.vocabulary)
    store.ingest(citations)
    return store


def _compacts(annotated: list) -> list:
    from ebm.store.annotations import compact

    return [compact(a, None, None) for a in annotated]


def test_round_trip_equals_the_annotator_output(annotated) -> None:
    from ebm.store.annotations import decode, encode

    for a in annotated:
        blob = encode(a)
        back = decode(blob, a.citation)
        assert back == a, a.citation.pmid
        assert back.to_dict(concepts=True) == a.to_dict(concepts=True)
        assert back.primary_problem == a.primary_problem and back.top_outcomes() == a.top_outcomes()
    sizes = [len(encode(a)) for a in annotated]
    assert sum(sizes) / len(sizes) < 8_000  # compact: a few KB per citation


def test_a_foreign_class_is_refused(annotated) -> None:
    import json
    import zlib

    from ebm.errors import DataError
    from ebm.store.annotations import decode, encode

    a = annotated[0]
    body = json.loads(zlib.decompress(encode(a)))
    body["evidence"]["@"] = "os.system"
    with pytest.raises(DataError, match="foreign class 'os.system'"):
        decode(zlib.compress(json.dumps(body).encode()), a.citation)


def test_store_keeps_them_by_version_and_drops_them_with_the_citation(
    tmp_path, resources, citations, annotated
) -> None:
    from ebm.annotation_cache import annotation_version
    from ebm.store.annotations import stored_for

    version = annotation_version(resources)
    with _store(tmp_path, citations, resources) as store:
        assert len(store.unannotated(version)) == N
        assert store.write_annotations(version, _compacts(annotated)) == N
        assert store.unannotated(version) == [] and store.annotated_count(version) == N
        assert store.unannotated("another version") != []  # another digest misses
        got = stored_for(store, resources, citations)
        assert [got[c.pmid] for c in citations] == annotated
        # a newer record of a PMID replaces the old one and its annotation
        first = citations[0]
        from dataclasses import replace

        store.ingest([replace(first, title=first.title + " (corrected)")])
        assert store.unannotated(version) == [first.pmid]
        store.delete([citations[1].pmid])
        assert store.annotated_count(version) == N - 2
        # --since: only citations published on or after the date
        years = sorted(c.year for c in citations[2:] if c.year)
        later = store.unannotated("v2", since=f"{years[-1]}")
        assert later and all(store.get(p).year >= years[-1] for p in later)
        assert len(later) < N - 1


def test_ask_reads_stored_annotations_without_annotating(tmp_path, resources, citations, annotated) -> None:
    from ebm.annotation_cache import annotation_version
    from ebm.ask import AskConfig, Pipeline
    from ebm.frame import frame_from_args

    frame = frame_from_args("therapy", problem="hypertension", intervention=["labetalol"])
    config = AskConfig(db=tmp_path / "s.sqlite", cache=False, deadline_s=None)
    with _store(tmp_path, citations, resources) as store:
        with Pipeline(config, source=store, resources=resources) as fresh:
            expected = fresh.ask(frame)
        assert expected.answers and expected.cached == 0
        store.write_annotations(annotation_version(resources), _compacts(annotated))
        with Pipeline(config, source=store, resources=resources) as pipeline:
            got = pipeline.ask(frame)
            assert pipeline._annotator is None  # no citation was annotated at question time
        assert got.cached == len(got.answers) == len(expected.answers)
        assert [(a.pmid, a.score) for a in got.answers] == [(a.pmid, a.score) for a in expected.answers]
