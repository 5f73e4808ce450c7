"""The XML reader on damaged real records (issue 12): odd digits in dates, records without a PMID
or with a PMID that is not a number, huge titles and abstracts, and a seeded fuzz of the real
files in ../shared/data/medline where only the project's own error may escape."""

from __future__ import annotations

import gzip
import random
import re
import time
from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.errors import EbmError, InputError
from ebm.medline.reader import MAX_ABSTRACT, MAX_TITLE, Deletion, Notice, read_records

SAMPLE = "medline/medsamp2006.xml"  # 88 MedlineCitation records, MEDLINE 2006 DTD


def split_records(xml: str) -> tuple[str, list[str], str]:
    """(text before the first record, the records, text after the last)."""
    starts = [m.start() for m in re.finditer(r"<MedlineCitation ", xml)]
    end = xml.rindex("</MedlineCitation>") + len("</MedlineCitation>")
    bounds = [*starts, end]
    return xml[: starts[0]], [xml[a:b] for a, b in zip(bounds, bounds[1:], strict=False)], xml[end:]


@pytest.fixture(scope="module")
def sample(shared: Path) -> tuple[str, list[str], str]:
    head, records, tail = split_records((shared / SAMPLE).read_text(encoding="utf-8"))
    assert len(records) == 88
    return head, records, tail


def read_all(data: str | bytes, name: str = "sample.xml") -> list[Citation | Deletion | Notice]:
    return list(read_records(data.encode() if isinstance(data, str) else data, name=name))


def test_superscript_digits_in_dates_are_not_numbers(sample: tuple[str, list[str], str]) -> None:
    head, records, tail = sample
    first = records[0].replace("<Year>1999</Year>\n<Month>Oct</Month>", "<Year>1²</Year>\n<Month>1²</Month>")
    assert first != records[0]
    second = re.sub(r"(<PubDate>\s*<Year>\d+</Year>\s*<Month>)\w+", r"\g<1>٣", records[1])  # Arabic-Indic 3
    (c, d, *_) = [r for r in read_all(head + first + second + tail) if isinstance(r, Citation)]
    assert (c.pmid, c.year, c.pub_date) == ("10540283", None, "1² 1²")
    assert (d.year, d.pub_date) == (2000, "2000 ٣")  # kept as written, not read as March


def test_a_record_without_a_pmid_is_skipped_and_reported(sample: tuple[str, list[str], str]) -> None:
    head, records, tail = sample
    broken = re.sub(r"<PMID>\d+</PMID>", "", records[2], count=1)
    got = read_all(head + records[0] + records[1] + broken + records[3] + tail)
    notices = [r for r in got if isinstance(r, Notice)]
    assert [c.pmid for c in got if isinstance(c, Citation)] == [
        re.search(r"<PMID>(\d+)</PMID>", r).group(1)  # type: ignore[union-attr]
        for r in (records[0], records[1], records[3])
    ]
    (n,) = notices
    assert n.skipped and n.record == 3
    assert re.fullmatch(r"sample\.xml: record 3 \(line \d+\): no PMID: skipped", n.message)


def test_a_pmid_that_is_not_a_number_is_refused_with_its_position(
    sample: tuple[str, list[str], str],
) -> None:
    head, records, tail = sample
    bad = re.sub(r"<PMID>\d+</PMID>", "<PMID>not-a-number</PMID>", records[4], count=1)
    got: list[object] = []
    with pytest.raises(InputError) as err:
        for r in read_records((head + "".join(records[:4]) + bad + tail).encode(), name="sample.xml"):
            got.append(r)
    assert len(got) == 4  # the records before it are read (an ingest stores them)
    assert re.fullmatch(
        r"sample\.xml: record 5: PMID 'not-a-number' \(line \d+\) is not a number", str(err.value)
    )


def test_huge_title_and_abstract_are_cut_to_the_declared_caps(sample: tuple[str, list[str], str]) -> None:
    head, records, tail = sample
    rec = records[0]
    big = rec.replace("<ArticleTitle>", "<ArticleTitle>" + "long " * 400_000, 1)  # a 2 MB title
    big = big.replace("<AbstractText>", "<AbstractText>" + "word " * 400_000, 1)  # and abstract
    got = read_all(head + big + records[1] + tail)
    notice, c, nxt = got
    assert isinstance(notice, Notice) and isinstance(c, Citation) and isinstance(nxt, Citation)
    assert c.pmid == "10540283" and len(c.title or "") == MAX_TITLE
    assert sum(len(s.text) for s in c.abstract or ()) == MAX_ABSTRACT
    (orig,) = read_all(head + rec + tail)
    assert isinstance(orig, Citation) and orig.title and orig.abstract
    title, abstract = 2_000_000 + len(orig.title), 2_000_000 + sum(len(s.text) for s in orig.abstract)
    assert notice.message == (
        f"sample.xml: record 1: PMID 10540283: title of {title:,} characters cut to 5,000; "
        f"abstract of {abstract:,} characters cut to 100,000 (declared caps)"
    )
    assert not notice.skipped


# --- fuzzing ------------------------------------------------------------------------------

FUZZ_FILES = ("medline/medsamp2006.xml", "medline/pubmed-29768149.xml", "medline/test_current_medline.xml.gz")
FUZZ_RUNS = 300  # about 3 s
# Replacements that reach the reader's field conversions, not only the XML parser.
ODD_TEXT = [
    "1²",
    "٣",
    "",
    " ",
    "0",
    "-1",
    "99999999999999999999",
    "not-a-number",
    "&amp;",
    "\u0000",
    "x" * 5000,
]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    kind = rng.randrange(6)
    n = len(data)
    i, j = sorted((rng.randrange(n), rng.randrange(n)))
    j = min(j, i + 4096)
    if kind == 0:  # delete a span
        return data[:i] + data[j:]
    if kind == 1:  # duplicate a span
        return data[:j] + data[i:j] + data[j:]
    if kind == 2:  # random bytes
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16))) + data[i:]
    if kind == 3:  # flip bytes
        out = bytearray(data)
        for _ in range(rng.randrange(1, 8)):
            out[rng.randrange(n)] = rng.randrange(256)
        return bytes(out)
    # kind 4: the text of any element replaced; kind 5: of one the reader reads as a number
    pattern = rb">([^<>]{0,80})</" if kind == 4 else rb"<(?:Year|Month|Day|PMID)[^>]*>([^<>]*)</"
    spans = [m.span(1) for m in re.finditer(pattern, data)]
    if not spans:
        return data
    a, b = spans[rng.randrange(len(spans))]
    return data[:a] + rng.choice(ODD_TEXT).encode() + data[b:]


def test_fuzzed_real_files_raise_only_the_projects_error(shared: Path) -> None:
    rng = random.Random(20261125)
    originals = []
    for rel in FUZZ_FILES:
        raw = (shared / rel).read_bytes()
        originals.append(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    refused = 0
    start = time.monotonic()
    for _ in range(FUZZ_RUNS):
        data = rng.choice(originals)
        for _ in range(rng.randrange(1, 4)):
            data = _mutate(rng, data)
        if rng.random() < 0.2:
            data = gzip.compress(data)[: rng.randrange(20, 10_000_000)]  # possibly truncated gzip
        try:
            for record in read_records(data, name="fuzz.xml"):
                if isinstance(record, Citation):
                    assert record.pmid.isascii() and record.pmid.isdigit()
                    assert len(record.title or "") <= MAX_TITLE
        except EbmError as exc:
            assert "\n" not in str(exc).strip() or "fuzz.xml" in str(exc)
            refused += 1
    assert 0 < refused < FUZZ_RUNS
    assert time.monotonic() - start < 30  # bounded: a few seconds on this machine
