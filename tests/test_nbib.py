"""The MEDLINE text-format reader (ebm.medline.nbib) on the real exports in ../shared/data/eutils."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import pytest

from ebm.citation import AbstractSection, Qualifier
from ebm.errors import InputError
from ebm.medline.nbib import is_nbib, read_nbib
from ebm.medline.reader import read_citations
from ebm.mesh import MeshVocabulary


@pytest.fixture(scope="module")
def ui_of() -> object:
    vocab = MeshVocabulary()

    def lookup(name: str) -> str | None:
        d = vocab.by_name(name)
        return d.ui if d else None

    return lookup


def test_nbib_record_equals_xml_record_field_by_field(shared: Path, ui_of) -> None:
    folder = shared / "eutils" / "one-pmid-all-formats"
    (text,) = read_nbib(folder / "20000000.medline", descriptor_ui=ui_of)
    (xml,) = read_citations(folder / "20000000.xml")
    checked = 0
    for f in dataclasses.fields(xml):
        ours, theirs = getattr(text, f.name), getattr(xml, f.name)
        if f.name == "source":
            assert (ours, theirs) == ("20000000.medline", "20000000.xml")
        elif f.name == "mesh_headings":
            # the text format names qualifiers without their UIs: everything else is equal
            assert [dataclasses.replace(h, qualifiers=()) for h in ours] == [
                dataclasses.replace(h, qualifiers=()) for h in theirs
            ]
            assert [[(q.name, q.major) for q in h.qualifiers] for h in ours] == [
                [(q.name, q.major) for q in h.qualifiers] for h in theirs
            ]
            assert all(q.ui is None for h in ours for q in h.qualifiers)
        elif f.name == "journal":
            # no ISO abbreviation in the text format
            assert ours == dataclasses.replace(theirs, iso_abbreviation=None)
        else:
            assert ours == theirs, f.name
        checked += 1
    assert checked == 11
    assert text.extra == xml.extra == {"status": "MEDLINE"}
    robinia = text.mesh_headings[3]
    assert robinia.descriptor_name == "Robinia" and robinia.descriptor_ui == "D031301"
    assert [(q.name, q.major) for q in robinia.qualifiers] == [
        ("drug effects", True), ("growth & development", False), ("metabolism", True)]  # fmt: skip


def test_biopython_exports(shared: Path) -> None:
    folder = shared / "eutils" / "biopython"
    records = [c for f in ("pubmed_result1.txt", "pubmed_result2.txt", "pubmed_result3.txt")
               for c in read_nbib(folder / f)]  # fmt: skip
    assert [c.pmid for c in records] == [
        "12230038", "16403221", "16377612", "14871861", "14630660", "23039619"]  # fmt: skip
    first = records[0]
    assert first.title == "The Bio* toolkits--a brief overview."
    assert first.pub_date == "2002 Sep" and first.year == 2002 and first.language == "eng"
    assert first.abstract_text.startswith("Bioinformatics research is often difficult to do with commercial")
    assert "software. The Open Source BioPerl, BioPython" in first.abstract_text
    assert [(h.descriptor_name, h.major) for h in first.mesh_headings][:2] == [
        ("Computational Biology", True), ("Computer Systems", False)]  # fmt: skip
    assert first.journal.medline_ta == "Brief Bioinform" and first.journal.nlm_unique_id == "100912837"
    assert [p.name for p in first.publication_types] == ["Journal Article"]
    hifu = records[-1]
    assert [s.label for s in hifu.abstract] == ["PURPOSE", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert hifu.abstract[1].text.startswith("Two transducers, six scanning paths")
    assert hifu.abstract[0].text.endswith("at different blood perfusion levels.")
    # a heading continued on the next line, with two qualifiers and a starred one
    heading = next(h for h in hifu.mesh_headings if h.descriptor_name.startswith("High-Intensity"))
    assert heading.qualifiers == (
        Qualifier(None, "adverse effects"),
        Qualifier(None, "instrumentation"),
        Qualifier(None, "methods", True),
    )
    assert heading.is_major and not heading.major
    assert all(c.source and c.source.startswith("pubmed_result") for c in records)


def test_gzip_bytes_and_detection(shared: Path) -> None:
    raw = (shared / "eutils" / "biopython" / "pubmed_result2.txt").read_bytes()
    assert is_nbib(raw[:64]) and not is_nbib(b"<?xml version='1.0'?><PubmedArticleSet>")
    plain = list(read_nbib(raw, name="x.nbib"))
    packed = list(read_nbib(gzip.compress(raw), name="x.nbib"))
    assert plain == packed and len(plain) == 4


def test_unstructured_abstract_is_one_section() -> None:
    (c,) = read_nbib(b"PMID- 1\nTI  - T.\nAB  - No labels: here. Just text.\n")
    assert c.abstract == (AbstractSection("No labels: here. Just text."),)
    assert c.mesh_headings is None and c.publication_types is None and c.journal is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"PMID- 1\nTI  - ok\n\nthis is not a tag line\n", "x.nbib:4: not MEDLINE text format"),
        (b"TI  - no pmid first\n", "x.nbib:1: record starts with 'TI'"),
        (b"PMID- 12a\nTI  - t\n", "x.nbib:1: PMID '12a' is not a PubMed identifier"),
        (b"PMID- 1\n\n      continued without a tag\n", "x.nbib:3: not MEDLINE text format: a continuation"),
        (b"", "x.nbib: empty input"),
        (b"PMID- 1\nTI  - \xff\n", "x.nbib:2: not UTF-8 text"),
    ],
)
def test_errors_name_file_and_line(text: bytes, message: str) -> None:
    with pytest.raises(InputError) as err:
        list(read_nbib(text, name="x.nbib"))
    assert str(err.value).startswith(message)


def test_records_before_an_error_are_yielded() -> None:
    got = []
    with pytest.raises(InputError, match="x.nbib:5"):
        for c in read_nbib(b"PMID- 7\nTI  - seven\n\nPMID- 8\nbroken\n", name="x.nbib"):
            got.append(c.pmid)
    assert got == ["7"]
