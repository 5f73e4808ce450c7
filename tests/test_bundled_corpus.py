"""The bundled demo corpus against the ../shared sources it was built from."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ebm.citation import Citation, Qualifier
from ebm.errors import DataError
from ebm.medline import bundled_corpus_path, iter_bundled, read_citations
from tests.conftest import load_script

build = load_script("build_corpus")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus() -> dict[str, Citation]:
    return {c.pmid: c for c in iter_bundled()}


def _tar_pmids(path: Path, prefix: str) -> set[str]:
    with tarfile.open(path, "r:gz") as tar:
        return {
            Path(n).stem
            for n in tar.getnames()
            if n.startswith(prefix) and n.count("/") == 1 and n.endswith(".txt")
        }


def _source_pmids(shared: Path) -> dict[str, set[str]]:
    """PMIDs per source, read straight from the shared files."""
    with gzip.open(shared / "pubmedqa/ori_pqal.json.gz", "rt") as f:
        pqa = set(json.load(f))
    bc5 = set()
    for split in ("Training", "Development"):
        with gzip.open(shared / f"concepts/bc5cdr/CDR_{split}Set.PubTator.txt.gz", "rt") as f:
            bc5 |= {line.split("|")[0] for line in f if "|t|" in line}
    return {
        "medline": {c.pmid for p in build.medline_files(shared) for c in read_citations(p)},
        "pubmedqa": pqa,
        "bc5cdr": bc5,
        "evidence-outcomes": _tar_pmids(shared / "pico/evidence-outcomes/consensus.tar.gz", "consensus/"),
        "pico-data": _tar_pmids(
            shared / "pico/pico-data-nguyen2017/pico-data-docs-and-annotations.tar.gz", "docs/"
        ),
    }


def test_done_when_counts(corpus: dict[str, Citation]) -> None:
    assert len(corpus) >= 8000
    assert sum(c.mesh_headings is not None for c in corpus.values()) >= 1100
    assert sum(c.publication_types is not None for c in corpus.values()) >= 650
    assert bundled_corpus_path().stat().st_size <= 15_000_000


def test_exactly_the_source_pmids(shared: Path, corpus: dict[str, Citation]) -> None:
    sources = _source_pmids(shared)
    assert set(corpus) == set().union(*sources.values())
    for name, pmids in sources.items():
        assert all(name in corpus[p].source or name == "medline" for p in pmids), name
    assert list(corpus) == sorted(corpus, key=int)  # shipped in PMID order


def test_every_benchmark_pool_pmid_is_bundled(shared: Path, corpus: dict[str, Citation]) -> None:
    pool = {line.split()[2] for line in (shared / "bench/pools.run").read_text().splitlines() if line.strip()}
    assert len(pool) == 860
    assert sorted(pool - set(corpus)) == []


def test_medline_records_are_the_reader_records(shared: Path, corpus: dict[str, Citation]) -> None:
    n = 0
    for path in build.medline_files(shared):
        for c in read_citations(path):
            b = corpus[c.pmid]
            assert b.source == path.name
            assert (b.title, b.abstract, b.publication_types, b.journal) == (
                c.title,
                c.abstract,
                c.publication_types,
                c.journal,
            )
            assert (b.year, b.pub_date, b.language, b.extra) == (c.year, c.pub_date, c.language, c.extra)
            if c.mesh_headings is None:
                assert b.mesh_headings is None
            else:
                # Same headings; 2006-format headings get their descriptor UI from MeSH 2024.
                assert [(h.descriptor_name, h.major) for h in b.mesh_headings] == [
                    (h.descriptor_name, h.major) for h in c.mesh_headings
                ]
                for hb, hc in zip(b.mesh_headings, c.mesh_headings, strict=True):
                    if hc.descriptor_ui:
                        assert hb == hc
            n += 1
    assert n == 697
    osteo = corpus["10188493"]  # 2006 format: names only in the XML
    assert [(h.descriptor_ui, h.descriptor_name) for h in osteo.mesh_headings] == [
        ("D005260", "Female"),
        ("D006113", "Great Britain"),
        ("D006801", "Humans"),
        ("D010021", "Osteopathic Medicine"),
        ("D013222", "State Medicine"),
        ("D016387", "Women's Health"),
    ]
    assert osteo.mesh_headings[3].qualifiers == (Qualifier("Q000379", "methods", True),)


def test_pubmedqa_record(shared: Path, corpus: dict[str, Citation]) -> None:
    with gzip.open(shared / "pubmedqa/ori_pqal.json.gz", "rt") as f:
        raw = json.load(f)["21645374"]
    c = corpus["21645374"]
    assert c.source == "pubmedqa"
    assert c.title is None  # the question is not the title
    assert raw["QUESTION"] not in json.dumps(c.to_dict())
    assert [s.label for s in c.abstract] == ["BACKGROUND", "RESULTS", "CONCLUSIONS"]
    assert c.abstract[0].text.startswith("Programmed cell death (PCD) is the regulated death")
    assert c.abstract[-1].text == raw["LONG_ANSWER"]
    assert [(h.descriptor_ui, h.descriptor_name) for h in c.mesh_headings] == [
        ("D034901", "Alismataceae"),
        ("D017209", "Apoptosis"),
        ("D002454", "Cell Differentiation"),
        ("D008928", "Mitochondria"),
        ("D018515", "Plant Leaves"),
    ]
    assert c.extra["mesh_major_unknown"] is True
    assert (c.year, c.pub_date, c.publication_types, c.journal, c.language) == (2011, None, None, None, None)
    assert sum(1 for x in corpus.values() if "pubmedqa" in (x.source or "") and x.year is None) == 58


def test_bc5cdr_record(shared: Path, corpus: dict[str, Citation]) -> None:
    c = corpus["227508"]
    assert c.source == "bc5cdr-train"
    assert c.title == "Naloxone reverses the antihypertensive effect of clonidine."
    assert len(c.abstract) == 1 and c.abstract[0].label is None
    assert c.abstract[0].text.startswith("In unanesthetized, spontaneously hypertensive rats")
    assert c.abstract[0].text.endswith("in the central control of sympathetic tone.")
    assert (c.mesh_headings, c.publication_types, c.year, c.journal) == (None, None, None, None)
    assert corpus["8494478"].source == "bc5cdr-dev"


def test_evidence_outcomes_record_merged_with_pico_data(corpus: dict[str, Citation]) -> None:
    c = corpus["18606932"]
    assert c.source == "evidence-outcomes+pico-data"
    assert c.title == (
        "Complementary feeding with fortified spread and incidence of severe stunting in 6- to "
        "18-month-old rural Malawians."
    )
    assert [s.label for s in c.abstract] == [
        "OBJECTIVE",
        "DESIGN",
        "SETTING",
        "PARTICIPANTS",
        "INTERVENTION",
        "OUTCOME MEASURES",
        "RESULTS",
        "CONCLUSION",
    ]
    assert c.abstract[3].text == "A total of 182 six-month-old infants."
    assert c.extra["field_sources"] == {
        "title": "evidence-outcomes",
        "abstract": "evidence-outcomes",
        "mesh_headings": "pico-data",
    }
    growth = next(h for h in c.mesh_headings if h.descriptor_name == "Growth Disorders")
    assert growth.qualifiers[-1] == Qualifier("Q000517", "prevention & control", True)
    pro = corpus["16214598"]
    assert [s.label for s in pro.abstract] == ["BACKGROUND", "METHODS", "FINDINGS", "INTERPRETATION"]
    assert corpus["35075109"].source == "evidence-outcomes"
    assert corpus["35075109"].mesh_headings is None


def test_pico_data_records(corpus: dict[str, Citation]) -> None:
    burn = corpus["3370523"]
    assert burn.source == "pico-data"
    assert burn.title == "Moisture-vapour-permeable film as an outpatient burn dressing."
    assert len(burn.abstract) == 1 and burn.abstract[0].label is None
    assert burn.abstract[0].text.startswith("This study compares a moisture-vapour-permeable film (MVPF)")
    assert {h.descriptor_name for h in burn.mesh_headings if h.is_major} == {
        "Bandages",
        "Burns",
        "Polyurethanes",
    }
    steroids = corpus["19817753"]
    assert [s.label for s in steroids.abstract] == ["BACKGROUND", "AIM", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert steroids.abstract[1].text.startswith("The aim of our study was to assess")
    hp = corpus["10036953"]
    infections = next(h for h in hp.mesh_headings if h.descriptor_name == "Helicobacter Infections")
    assert infections.descriptor_ui == "D016481" and not infections.major
    assert infections.qualifiers == (
        Qualifier("Q000188", "drug therapy", True),
        Qualifier("Q000382", "microbiology", False),
    )
    assert next(h for h in hp.mesh_headings if h.descriptor_name == "Helicobacter pylori").major


def test_unknown_fields_stay_unknown(corpus: dict[str, Citation]) -> None:
    for c in corpus.values():
        assert c.title is None or c.title.strip()
        assert c.abstract is None or all(s.text.strip() for s in c.abstract)
        if "xml" not in (c.source or ""):
            assert (c.publication_types, c.journal, c.pub_date, c.language) == (None, None, None, None)


def test_build_is_reproducible(shared: Path, tmp_path: Path) -> None:
    """The shipped file is what the committed script builds from ../shared, byte for byte."""
    out = tmp_path / "citations.jsonl.gz"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/build_corpus.py"),
            "--shared",
            str(shared.parent),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "missing from the corpus: 0" in proc.stdout
    assert out.read_bytes() == bundled_corpus_path().read_bytes()


def test_missing_or_corrupt_corpus_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        list(iter_bundled(tmp_path / "none.jsonl.gz"))
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"pmid": "1"}\n{"pmid": \n'))
    with pytest.raises(DataError, match="bad record at line 2"):
        list(iter_bundled(bad))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(bundled_corpus_path().read_bytes()[:20000])
    with pytest.raises(DataError, match="corrupt bundled corpus"):
        list(iter_bundled(cut))
