"""SYNTHETIC MEDLINE for timing only: citations made from the bundled corpus, written as PubMed XML.

Citation i (seeded) takes a bundled record's MeSH headings, publication types, journal, date and
language (real MeSH: [mh] explosion and [pt] filters hit realistic sets), a title from a second
record and an abstract of the first record's sentences shuffled with a few of a third's, under the
new PMID ``BASE_PMID + i`` (above every real PMID). The texts are not real abstracts and no
figure computed on them means anything but speed and size.

Each record carries the ``AuthorList`` and ``PubmedData`` (history, article ids, references) of a
real record of the 2020 and 2026 baseline slices (../shared/data/medline/pmparser-samples), so the
XML parsed per citation is as large as in the real distribution files (see ``real_bytes``).
Imported from the benchmark scripts' folder (``python benchmarks/x.py``).
"""

from __future__ import annotations

import gzip
import random
import re
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from ebm.citation import AbstractSection, Citation
from ebm.medline.bundled import iter_bundled

BASE_PMID = 90_000_000
ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "data" / "medline" / "pmparser-samples"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_ARTICLE = re.compile(rb"<PubmedArticle>.*?</PubmedArticle>", re.DOTALL)
_AUTHORS = re.compile(rb"<AuthorList.*?</AuthorList>", re.DOTALL)
_PUBMED_DATA = re.compile(rb"<PubmedData>.*?</PubmedData>", re.DOTALL)


def real_fillers() -> list[tuple[str, str]]:
    """(AuthorList, PubmedData) XML of the real baseline-slice records."""
    out = []
    for name in ("pubmed20n1016-sample.xml.gz", "pubmed26n1334-sample.xml.gz"):
        for art in _ARTICLE.findall(gzip.decompress((SAMPLES / name).read_bytes())):
            authors, data = _AUTHORS.search(art), _PUBMED_DATA.search(art)
            out.append((authors.group(0).decode() if authors else "", data.group(0).decode() if data else ""))
    return out


def real_bytes() -> float:
    """Mean XML bytes per record of the real 2026 baseline slice."""
    data = gzip.decompress((SAMPLES / "pubmed26n1334-sample.xml.gz").read_bytes())
    arts = _ARTICLE.findall(data)
    return sum(map(len, arts)) / len(arts)


def synthetic(n: int, seed: int = 17) -> Iterator[Citation]:
    rng = random.Random(seed)
    base = [c for c in iter_bundled() if c.title]
    split = [[s for sec in c.abstract or () for s in _SENTENCE.split(sec.text) if s] for c in base]
    for i in range(n):
        ai, bi, ci = rng.randrange(len(base)), rng.randrange(len(base)), rng.randrange(len(base))
        a, b = base[ai], base[bi]
        sentences = split[ai] + rng.sample(split[ci], k=min(2, len(split[ci])))
        rng.shuffle(sentences)
        text = " ".join(sentences)
        yield Citation(
            pmid=str(BASE_PMID + i),
            title=b.title,
            abstract=(AbstractSection(text),) if text else None,
            mesh_headings=a.mesh_headings,
            publication_types=a.publication_types,
            journal=a.journal,
            year=a.year,
            pub_date=a.pub_date,
            language=a.language,
        )


def to_xml(c: Citation, authors: str, pubmed_data: str) -> str:
    """A ``PubmedArticle`` the reader turns back into ``c`` (with ``source`` set by the reader)."""
    j = c.journal
    parts = ['<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">']
    parts.append(f'<PMID Version="1">{c.pmid}</PMID><Article PubModel="Print"><Journal>')
    date = f"<MedlineDate>{escape(c.pub_date)}</MedlineDate>" if c.pub_date else ""
    parts.append(f"<JournalIssue><PubDate>{date}</PubDate></JournalIssue>")
    if j and j.title:
        parts.append(f"<Title>{escape(j.title)}</Title>")
    if j and j.iso_abbreviation:
        parts.append(f"<ISOAbbreviation>{escape(j.iso_abbreviation)}</ISOAbbreviation>")
    parts.append(f"</Journal><ArticleTitle>{escape(c.title or '')}</ArticleTitle>")
    if c.abstract:
        parts.append("<Abstract>")
        for s in c.abstract:
            label = f" Label={quoteattr(s.label)}" if s.label else ""
            parts.append(f"<AbstractText{label}>{escape(s.text)}</AbstractText>")
        parts.append("</Abstract>")
    parts.append(authors)
    if c.language:
        parts.append(f"<Language>{c.language}</Language>")
    if c.publication_types:
        parts.append("<PublicationTypeList>")
        for p in c.publication_types:
            ui = f" UI={quoteattr(p.ui)}" if p.ui else ""
            parts.append(f"<PublicationType{ui}>{escape(p.name)}</PublicationType>")
        parts.append("</PublicationTypeList>")
    parts.append("</Article>")
    if j and (j.medline_ta or j.nlm_unique_id):
        parts.append("<MedlineJournalInfo>")
        if j.medline_ta:
            parts.append(f"<MedlineTA>{escape(j.medline_ta)}</MedlineTA>")
        if j.nlm_unique_id:
            parts.append(f"<NlmUniqueID>{escape(j.nlm_unique_id)}</NlmUniqueID>")
        parts.append("</MedlineJournalInfo>")
    if c.mesh_headings is not None:
        parts.append("<MeshHeadingList>")
        for h in c.mesh_headings:
            ui = f" UI={quoteattr(h.descriptor_ui)}" if h.descriptor_ui else ""
            major = "Y" if h.major else "N"
            parts.append(f'<MeshHeading><DescriptorName{ui} MajorTopicYN="{major}">')
            parts.append(f"{escape(h.descriptor_name)}</DescriptorName>")
            for q in h.qualifiers:
                qui = f" UI={quoteattr(q.ui)}" if q.ui else ""
                qmajor = "Y" if q.major else "N"
                parts.append(f'<QualifierName{qui} MajorTopicYN="{qmajor}">{escape(q.name)}</QualifierName>')
            parts.append("</MeshHeading>")
        parts.append("</MeshHeadingList>")
    parts.append("</MedlineCitation>")
    parts.append(pubmed_data)
    parts.append("</PubmedArticle>\n")
    return "".join(parts)


def write_files(out: Path, n: int, per_file: int = 30_000, seed: int = 17) -> list[Path]:
    """``n`` synthetic citations as gzip PubMed XML files of ``per_file`` (a baseline file's size)."""
    fillers = real_fillers()
    files: list[Path] = []
    handle = None
    for i, c in enumerate(synthetic(n, seed)):
        if i % per_file == 0:
            if handle:
                handle.write("</PubmedArticleSet>\n")
                handle.close()
            files.append(out / f"synthetic{len(files) + 1:04d}.xml.gz")
            handle = gzip.open(files[-1], "wt", encoding="utf-8", compresslevel=1)
            handle.write('<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n')
        handle.write(to_xml(c, *fillers[i % len(fillers)]))  # type: ignore[union-attr]
    if handle:
        handle.write("</PubmedArticleSet>\n")
        handle.close()
    return files
