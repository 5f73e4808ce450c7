"""The PubMed/MEDLINE XML reader on every real record in ../shared/data/medline and ../shared/data/eutils."""

from __future__ import annotations

import gc
import gzip
import io
import json
import warnings
from pathlib import Path

import pytest
from lxml import etree

from ebm.citation import Citation, PublicationType, Qualifier
from ebm.errors import InputError
from ebm.medline import Deletion, read_citations, read_records

# Every PubMed XML file in the shared folders, with the number of records it holds.
PUBMED_XML = {
    "medline/medline16n0902.xml.gz": 604,
    "medline/medsamp2006.xml": 88,
    "medline/pubmed-29768149.xml": 1,
    "medline/test_current_medline.xml.gz": 4,
    "medline/pmparser-samples/pubmed20n1016-sample.xml.gz": 26,
    "medline/pmparser-samples/pubmed26n1334-sample.xml.gz": 30,
    "medline/pmparser-samples/pubmed26n1335-update-sample.xml.gz": 30,
    "eutils/biopython/pubmed1.xml": 2,
    "eutils/biopython/pubmed2.xml": 2,
    "eutils/biopython/pubmed4.xml": 1,
    "eutils/biopython/pubmed5.xml": 1,
    "eutils/biopython/pubmed6.xml": 1,
    "eutils/biopython/pubmed7.xml": 1,
    "eutils/ncbi-samples/efetch.pubmed.xml": 2,
    "eutils/ncbi-samples/efetch.pubmedexample.xml": 2,  # one article, one book
    "eutils/one-pmid-all-formats/20000000.xml": 1,
}

# Everything else in those folders, and why the reader must refuse it.
NOT_PUBMED_XML = {
    "eutils/biopython/LICENSE.rst": "licence text",
    "eutils/biopython/efetch_pmc.xml": "PMC full text (pmc-articleset)",
    "eutils/biopython/efetch_schemas.xml": "protein IPG report",
    "eutils/biopython/journals.xml": "NLM catalog serials (SerialsSet)",
    "eutils/biopython/pubmed3.html": "HTML page",
    "eutils/biopython/pubmed_result1.txt": "MEDLINE text format",
    "eutils/biopython/pubmed_result2.txt": "MEDLINE text format",
    "eutils/biopython/pubmed_result3.txt": "MEDLINE text format",
    "eutils/one-pmid-all-formats/20000000.abstract": "plain-text abstract",
    "eutils/one-pmid-all-formats/20000000.asn.1": "ASN.1",
    "eutils/one-pmid-all-formats/20000000.docsum": "esummary DocumentSummarySet",
    "eutils/one-pmid-all-formats/20000000.json": "JSON",
    "eutils/one-pmid-all-formats/20000000.medline": "MEDLINE text format",
    "eutils/one-pmid-all-formats/20000000.url": "URL",
    "medline/metapub-efetch/pmid_xml.tar.gz": "tar archive of efetch files (unpack it, ingest the files)",
}
E_UTILITY_REPLIES = ("einfo", "elink", "epost", "esearch", "espell", "esummary")


def _all_files(shared: Path) -> list[str]:
    return sorted(
        str(p.relative_to(shared))
        for folder in ("medline", "eutils")
        for p in (shared / folder).rglob("*")
        if p.is_file()
    )


@pytest.fixture(scope="module")
def records(shared: Path) -> dict[str, list[Citation]]:
    return {rel: list(read_citations(shared / rel)) for rel in PUBMED_XML}


@pytest.fixture(scope="module")
def by_pmid(records: dict[str, list[Citation]]) -> dict[str, Citation]:
    return {c.pmid: c for cs in records.values() for c in cs}


def test_every_file_is_read_or_refused_with_a_reason(shared: Path) -> None:
    for rel in _all_files(shared):
        name = Path(rel).name
        if rel in PUBMED_XML:
            continue
        reason = NOT_PUBMED_XML.get(rel) or (
            "E-utilities reply" if name.startswith(E_UTILITY_REPLIES) else None
        )
        assert reason, f"{rel} is neither known PubMed XML nor skipped with a reason"
        with pytest.raises(InputError, match="not PubMed XML") as err:
            list(read_citations(shared / rel))
        assert str(shared / rel) in str(err.value)


def test_record_counts(records: dict[str, list[Citation]]) -> None:
    assert {rel: len(cs) for rel, cs in records.items()} == PUBMED_XML


def _tree_view(path: Path) -> list[tuple[str, str | None, list[str]]]:
    """(PMID, title, MeSH descriptor names) per record, from a whole-tree parse: an independent path."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(data, parser)
    out = []
    for rec in root.xpath("MedlineCitation | PubmedArticle/MedlineCitation | PubmedBookArticle/BookDocument"):
        title = rec.xpath("string(Article/ArticleTitle | Book/BookTitle)")
        names = [" ".join(d.xpath("string()").split()) for d in rec.xpath("MeshHeadingList/*/DescriptorName")]
        out.append((rec.findtext("PMID"), " ".join(title.split()) or None, names))  # no title: None
    return out


def test_pmids_titles_and_headings_agree_with_a_whole_tree_parse(
    shared: Path, records: dict[str, list[Citation]]
) -> None:
    for rel, cs in records.items():
        mine = [(c.pmid, c.title, [h.descriptor_name for h in c.mesh_headings or ()]) for c in cs]
        assert mine == _tree_view(shared / rel), rel


def test_round_trip_every_record(records: dict[str, list[Citation]]) -> None:
    n = 0
    for cs in records.values():
        for c in cs:
            back = Citation.from_dict(json.loads(json.dumps(c.to_dict())))
            assert back == c
            assert back.extra == c.extra
            n += 1
    assert n == sum(PUBMED_XML.values())


def test_2016_structured_abstract_and_mesh(by_pmid: dict[str, Citation]) -> None:
    c = by_pmid["17942999"]
    assert c.title == (
        "Neuroplasticity in the processing of pitch dimensions: a multidimensional scaling "
        "analysis of the mismatch negativity."
    )
    assert [(s.label, s.nlm_category) for s in c.abstract] == [
        ("PURPOSE", "OBJECTIVE"),
        ("METHODS", "METHODS"),
        ("RESULTS", "RESULTS"),
        ("CONCLUSIONS", "CONCLUSIONS"),
    ]
    assert c.abstract[0].text.startswith("An auditory electrophysiological study")
    heads = {h.descriptor_name: h for h in c.mesh_headings}
    assert heads["Neuronal Plasticity"].descriptor_ui == "D009473"
    assert heads["Neuronal Plasticity"].qualifiers == (Qualifier("Q000502", "physiology", True),)
    assert heads["Neuronal Plasticity"].is_major and not heads["Neuronal Plasticity"].major
    assert heads["Evoked Potentials, Auditory"].is_major is False
    assert sorted(h.descriptor_name for h in c.mesh_headings if h.is_major) == [
        "Neuronal Plasticity",
        "Pitch Perception",
    ]
    assert c.publication_types == (
        PublicationType("D016428", "Journal Article"),
        PublicationType("D013485", "Research Support, Non-U.S. Gov't"),
    )
    assert c.journal.medline_ta == "Restor Neurol Neurosci"
    assert c.journal.nlm_unique_id == "9005499"
    assert c.journal.iso_abbreviation == "Restor. Neurol. Neurosci."
    assert (c.year, c.pub_date, c.language, c.source) == (2007, "2007", "eng", "medline16n0902.xml.gz")


def test_2016_in_process_records_have_unknown_mesh(records: dict[str, list[Citation]]) -> None:
    cs = records["medline/medline16n0902.xml.gz"]
    with_mesh = [c for c in cs if c.mesh_headings is not None]
    assert len(with_mesh) == 94
    assert {c.extra["status"] for c in with_mesh} == {"MEDLINE"}
    assert all(c.mesh_headings is None for c in cs if c.extra["status"] != "MEDLINE")
    assert sum(c.abstract is None for c in cs) == 78
    assert all(c.publication_types for c in cs)


def test_2006_format_without_uis_and_medline_date(by_pmid: dict[str, Citation]) -> None:
    c = by_pmid["10188493"]
    assert c.title == "Women's health osteopathy: an alternative view."
    assert (c.pub_date, c.year) == ("1998 Dec-1999 Jan", 1998)
    assert c.abstract is None
    heads = {h.descriptor_name: h for h in c.mesh_headings}
    assert heads["Women's Health"].major and heads["Women's Health"].descriptor_ui is None
    assert heads["Osteopathic Medicine"].qualifiers == (Qualifier(None, "methods", True),)
    assert c.publication_types == (PublicationType(None, "Journal Article"),)
    assert c.journal.iso_abbreviation is None  # not in this record
    assert c.journal.medline_ta == "Nurs Manag (Harrow)"
    assert by_pmid["11525160"].language == "eng"
    assert by_pmid["11525160"].extra["languages"] == ["eng", "fre", "ger"]


def test_current_format_records(by_pmid: dict[str, Citation]) -> None:
    c = by_pmid["29768149"]
    assert c.title == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    # <sub> inside pretty-printed text: the indentation is not part of the word
    assert c.abstract[0].text == (
        "In patients with mild asthma, as-needed use of an inhaled glucocorticoid plus a fast-acting "
        "β2-agonist may be an alternative to conventional treatment strategies."
    )
    assert [s.label for s in c.abstract] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert all(s.nlm_category is None for s in c.abstract)
    assert PublicationType("D016449", "Randomized Controlled Trial") in c.publication_types
    asthma = next(h for h in c.mesh_headings if h.descriptor_ui == "D001249")
    assert asthma.qualifiers == (Qualifier("Q000188", "drug therapy", True),)
    assert (c.pub_date, c.year) == ("2018 May 17", 2018)

    back = by_pmid["36400559"]
    low = next(h for h in back.mesh_headings if h.descriptor_name == "Low Back Pain")
    assert low.major and low.descriptor_ui == "D017116"
    assert [q.ui for q in low.qualifiers] == ["Q000175", "Q000209", "Q000628"]
    assert back.abstract_text.endswith("imaging and a specialist referral may be indicated.")
    assert "Copyright" not in back.abstract_text

    acute = by_pmid["11446611"]  # no abstract, a season for a month
    assert acute.abstract is None and acute.has_abstract is False
    assert (acute.title, acute.pub_date, acute.year) == ("Acute back pain.", "2001 May-Jun", 2001)
    assert PublicationType("D000078182", "Systematic Review") in by_pmid["28786991"].publication_types


def test_inline_markup_text(by_pmid: dict[str, Citation]) -> None:
    tert = by_pmid["27797938"]
    assert tert.title == (
        "Leucocyte telomere length, genetic variants at the TERT gene region and risk of pancreatic cancer."
    )
    assert "95% CI 1.07 to 2.78; ptrend=0.048)" in tert.abstract[2].text
    assert "(linkage disequilibrium r2<0.25)" in tert.abstract[2].text
    lactate = by_pmid["30108519"]
    assert lactate.title.startswith('A "Blood Relationship" Between the Overlooked')
    text = lactate.abstract[0].text
    assert '"Minimum Lactate Equivalent" (LEmin)' in text
    assert "km·h-1; maximal oxygen uptake ( V.O2max ) 67.6" in text  # MathML flattened
    assert "  " not in text and "\n" not in text
    assert "(0.4-<4.5 mIU/L)" in by_pmid["28775130"].abstract[1].text  # <u>&lt;</u>


def test_contrived_example_and_book_article(
    by_pmid: dict[str, Citation], records: dict[str, list[Citation]]
) -> None:
    book = by_pmid["20301295"]
    assert book.title == "GeneReviews™"
    assert book.extra["record_type"] == "book"
    assert (book.journal, book.mesh_headings, book.publication_types) == (None, None, None)
    assert (book.year, book.language) == (1993, "eng")
    assert book.abstract_text == "Lorem ipsum ...."
    article, book_again = records["eutils/ncbi-samples/efetch.pubmedexample.xml"]
    assert book_again is book or book_again == book
    contrived = [article]
    assert article.pmid == "17284678"
    assert contrived[0].abstract[0].text == "Lorem ipsum and ipsum lorem."
    assert contrived[0].abstract[0].label == "dummy-label"
    names = [h.descriptor_name for h in contrived[0].mesh_headings]
    assert "Polymorphism, Restriction Fragment Length" in names


def test_delete_citation_blocks(shared: Path) -> None:
    body = (shared / "medline/pubmed-29768149.xml").read_bytes()
    doc = body.replace(
        b"</PubmedArticleSet>",
        b"<DeleteCitation><PMID Version='1'>111</PMID><PMID Version='1'>222</PMID></DeleteCitation>"
        b"</PubmedArticleSet>",
    )
    out = list(read_records(doc))
    assert [type(r).__name__ for r in out] == ["Citation", "Deletion"]
    assert out[1] == Deletion(("111", "222"))
    assert [c.pmid for c in read_citations(doc)] == ["29768149"]


def test_gzip_bytes_and_streams_give_the_same_records(shared: Path) -> None:
    path = shared / "medline/medsamp2006.xml"
    expected = list(read_citations(path))
    raw = path.read_bytes()
    packed = gzip.compress(raw)
    assert list(read_citations(raw, name="medsamp2006.xml")) == expected
    assert list(read_citations(packed, name="medsamp2006.xml")) == expected
    assert list(read_citations(io.BytesIO(packed), name="medsamp2006.xml")) == expected
    with open(shared / "medline/medline16n0902.xml.gz", "rb") as fh:
        assert len(list(read_citations(fh))) == 604
    assert [c.source for c in read_citations(raw)][:1] == [None]  # bytes without a name


def _consume(source: bytes, name: str) -> tuple[list[Citation], InputError]:
    got: list[Citation] = []
    with pytest.raises(InputError) as err:
        for c in read_citations(source, name=name):
            got.append(c)
    return got, err.value


def test_truncated_plain_file_yields_records_then_a_clear_error(shared: Path) -> None:
    full = gzip.decompress((shared / "medline/medline16n0902.xml.gz").read_bytes())
    expected = list(read_citations(full, name="half.xml"))
    cut = full[: len(full) // 2]
    complete = cut.count(b"</MedlineCitation>")
    got, err = _consume(cut, "half.xml")
    assert len(got) == complete > 100
    assert got == expected[:complete]
    msg = str(err)
    assert msg.startswith("half.xml: truncated or malformed XML")
    assert f"last PMID read {got[-1].pmid}" in msg and "line " in msg and "column " in msg


def test_truncated_gzip_yields_records_then_a_clear_error(shared: Path) -> None:
    packed = (shared / "medline/medline16n0902.xml.gz").read_bytes()
    expected = list(read_citations(packed, name="cut.xml.gz"))
    got, err = _consume(packed[: len(packed) // 2], "cut.xml.gz")
    assert 100 < len(got) < len(expected)
    assert got == expected[: len(got)]
    assert str(err).startswith("cut.xml.gz: corrupt or truncated compressed data at byte ")
    assert f"last PMID read {got[-1].pmid}" in str(err)


def test_malformed_markup_yields_records_then_names_the_line(shared: Path) -> None:
    full = (shared / "medline/medsamp2006.xml").read_bytes()
    expected = list(read_citations(full, name="medsamp-broken.xml"))
    at = full.index(b"<PMID>", len(full) // 2)
    bad = full[:at] + b"<PMID>oops</Foo>" + full[at:]
    line = bad[:at].count(b"\n") + 1
    got, err = _consume(bad, "medsamp-broken.xml")
    assert got == expected[: len(got)] and len(got) >= 40
    assert got[-1].pmid == expected[len(got) - 1].pmid
    assert f"medsamp-broken.xml: malformed XML at line {line}, column" in str(err)
    assert f"last PMID read {got[-1].pmid}" in str(err)


def test_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="missing.xml: cannot open"):
        list(read_citations(tmp_path / "missing.xml"))
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"empty.xml: not PubMed XML \(empty input\)"):
        list(read_citations(empty))


def test_no_external_dtd_or_entity_is_loaded(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    doc = (
        f'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet SYSTEM "http://192.0.2.1/pubmed.dtd" '
        f'[<!ENTITY leak SYSTEM "file://{secret}">]>\n'
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>"
        "<ArticleTitle>Title &leak; end</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
        "</PubmedArticleSet>"
    ).encode()
    (c,) = read_citations(doc)
    assert c.title == "Title end"
    assert (c.abstract, c.mesh_headings, c.publication_types, c.journal, c.year, c.language) == (None,) * 6


def test_file_handles_are_closed(shared: Path) -> None:
    """Read to the end or stopped early, plain or gzip: every file the reader opens is closed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for rel in ("medline/medline16n0902.xml.gz", "medline/medsamp2006.xml"):
            assert len(list(read_citations(shared / rel))) == PUBMED_XML[rel]
            partial = read_citations(shared / rel)
            next(partial)
            partial.close()
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
