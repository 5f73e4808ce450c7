"""Streaming reader for PubMed/MEDLINE XML (``PubmedArticleSet`` and ``MedlineCitationSet``).

One reader for every format ebm meets: efetch responses and current baseline files
(``PubmedArticleSet``), older baselines such as 2016 and 2006 (``MedlineCitationSet``),
plain or gzip (detected by magic bytes), from a path, a binary stream or bytes.

Memory stays constant on large files: the document is fed to lxml's pull parser in
chunks and each record is cleared (with its already-seen siblings) once converted.
No DTD is ever loaded and no entity is resolved from outside the document, so reading
never touches the network.

A malformed or truncated document raises ``InputError`` naming the file, the position
reached (line, column, byte offset of the decompressed stream) and the last PMID read,
*after* the records before the fault have been yielded.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from lxml import etree

from ebm.citation import (
    AbstractSection,
    Citation,
    Journal,
    MeshHeading,
    PublicationType,
    Qualifier,
)
from ebm.errors import InputError

Source = str | os.PathLike[str] | bytes | bytearray | BinaryIO

CHUNK = 1 << 20  # bytes fed to the parser at a time
_GZIP_MAGIC = b"\x1f\x8b"
_SET_TAGS = ("PubmedArticleSet", "MedlineCitationSet")
_RECORD_TAGS = ("PubmedArticle", "PubmedBookArticle", "MedlineCitation", "DeleteCitation")
_MATHML = "{http://www.w3.org/1998/Math/MathML}"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")
_WS = re.compile(r"\s+")
# Prolog before the root element: XML declaration, processing instructions, comments,
# the DOCTYPE (with an optional internal subset) and whitespace.
_PROLOG = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)*",
    re.DOTALL,
)
_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)")


@dataclass(frozen=True)
class Deletion:
    """A ``DeleteCitation`` block of an update file: PMIDs withdrawn from PubMed."""

    pmids: tuple[str, ...]


@dataclass(frozen=True)
class Notice:
    """Something the reader did to a record that the user must hear about: a record skipped
    (no PMID: ``skipped`` is True) or a text cut to ``MAX_TITLE``/``MAX_ABSTRACT``.
    ``record`` is the record's number in the file (1-based; for a part of a file, in that
    part); ``message`` names the file, the record number and the PMID when there is one."""

    text: str
    skipped: bool = False
    record: int = 0
    label: str = ""
    line: int | None = None  # of the record in the text read

    @property
    def message(self) -> str:
        where = f"{self.label}: " if self.label else ""
        if self.record:
            where += f"record {self.record}{f' (line {self.line})' if self.line else ''}: "
        return where + self.text


# Declared caps (characters): the longest titles and abstracts in MEDLINE are a few thousand
# characters; a larger one is cut at ingest, so no step downstream (spaCy takes at most
# 1,000,000) chokes on it, and the cut is reported by PMID.
MAX_TITLE = 5_000
MAX_ABSTRACT = 100_000


def read_citations(source: Source, *, name: str | None = None) -> Iterator[Citation]:
    """Yield the citations of a PubMed/MEDLINE XML document, in document order.

    ``source`` is a path (plain or gzip), a binary stream or the document's bytes.
    ``name`` is used in error messages and as ``Citation.source`` (default: the file
    name for paths, the stream's name if it has one, else ``None``).
    ``DeleteCitation`` blocks are skipped: use ``read_records`` to see them.
    """
    for record in read_records(source, name=name):
        if isinstance(record, Citation):
            yield record


def read_records(source: Source, *, name: str | None = None) -> Iterator[Citation | Deletion | Notice]:
    """Like ``read_citations`` but also yields ``Deletion`` records of update files and
    ``Notice`` records (a record skipped for want of a PMID, a text cut to its cap).

    A PMID that is not a number is an ``InputError`` naming the file and record number."""
    label, stream, owned = _open(source, name)
    try:
        yield from _parse(stream, label, name if name is not None else _default_source(source))
    finally:
        if owned:
            stream.close()


# --- input handling ----------------------------------------------------------------------


def _default_source(source: Source) -> str | None:
    if isinstance(source, str | os.PathLike):
        return Path(source).name
    if isinstance(source, bytes | bytearray):
        return None
    stream_name = getattr(source, "name", None)
    return Path(stream_name).name if isinstance(stream_name, str) else None


def _open(source: Source, name: str | None) -> tuple[str, BinaryIO, bool]:
    """(label for messages, decompressed binary stream, whether we must close it)."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        label = name or str(path)
        try:
            raw: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by the caller
        except OSError as exc:
            raise InputError(f"{label}: cannot open: {exc.strerror or exc}") from exc
        owned = True
    elif isinstance(source, bytes | bytearray):
        label = name or "<bytes>"
        raw = io.BytesIO(bytes(source))
        owned = True
    else:
        label = name or str(getattr(source, "name", "<stream>"))
        raw = source
        owned = False
    if _peek(raw, 2) != _GZIP_MAGIC:
        return label, raw, owned
    if owned and not isinstance(raw, io.BytesIO):
        # Our own file handle: let gzip own it so that closing the reader closes the file.
        raw.close()
        return label, gzip.open(Path(source), "rb"), True  # type: ignore[arg-type,return-value]
    return label, gzip.GzipFile(fileobj=raw, mode="rb"), True  # type: ignore[return-value]


def _peek(stream: BinaryIO, n: int) -> bytes:
    """The first ``n`` bytes, leaving the stream where it was."""
    if hasattr(stream, "peek"):
        return stream.peek(n)[:n]  # type: ignore[attr-defined]
    pos = stream.tell()
    head = stream.read(n)
    stream.seek(pos)
    return head


# --- parsing -----------------------------------------------------------------------------


def _parse(stream: BinaryIO, label: str, source_name: str | None) -> Iterator[Citation | Deletion | Notice]:
    parser = etree.XMLPullParser(
        events=("end",),
        tag=_RECORD_TAGS,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=True,
        remove_comments=True,
    )
    fed = 0
    count = 0
    last_pmid: str | None = None
    root_checked = False
    head = b""
    read = getattr(stream, "read1", stream.read)

    def where(line: int | None = None, column: int | None = None) -> str:
        pos = f"line {line}, column {column}" if line is not None else f"byte {fed} of the XML"
        last = f"last PMID read {last_pmid}" if last_pmid else "no record read"
        return f"{pos} (after {count} record{'s' if count != 1 else ''}; {last})"

    def drained() -> Iterator[Citation | Deletion | Notice]:
        """The records parsed so far, counted for ``where``; notices get the position."""
        nonlocal count, last_pmid
        try:
            for record in _drain(parser, source_name):
                if isinstance(record, Notice):
                    count += record.skipped
                    yield replace(record, record=count + (not record.skipped), label=label)
                    continue
                count += 1
                last_pmid = _pmid_of(record) or last_pmid
                yield record
        except _BadRecord as exc:
            raise InputError(f"{label}: record {count + 1}: {exc}") from None

    while True:
        try:
            # read1: a truncated gzip member still gives up what it decompressed before the end.
            chunk = read(CHUNK)
        except (EOFError, OSError, zlib.error) as exc:
            # gzip raises EOFError on a truncated member, BadGzipFile (OSError) on corruption.
            yield from drained()
            raise InputError(f"{label}: corrupt or truncated compressed data at {where()}: {exc}") from exc
        if not root_checked:
            head += chunk
            if chunk and len(head) < 65536 and not _ROOT.search(_PROLOG.sub(b"", head, count=1)):
                continue  # keep reading until the root element's name is in view
            _check_root(head, label)
            root_checked = True
            chunk, head = head, b""
        if not chunk:
            break
        try:
            parser.feed(chunk)
        except etree.XMLSyntaxError as exc:
            yield from drained()
            line, column = exc.position
            raise InputError(f"{label}: malformed XML at {where(line, column)}: {exc.msg}") from exc
        fed += len(chunk)
        yield from drained()
    try:
        parser.close()
    except etree.XMLSyntaxError as exc:
        yield from drained()
        line, column = exc.position
        raise InputError(
            f"{label}: truncated or malformed XML, document ends at {where(line, column)}: {exc.msg}"
        ) from exc
    yield from drained()


def _check_root(head: bytes, label: str) -> None:
    body = _PROLOG.sub(b"", head, count=1)
    match = _ROOT.match(body.lstrip())
    if not match:
        what = "empty input" if not head.strip() else "no XML root element found"
        raise InputError(f"{label}: not PubMed XML ({what})")
    root = match.group(1).decode("ascii", "replace")
    if root not in _SET_TAGS:
        raise InputError(
            f"{label}: not PubMed XML: root element <{root}>, expected <PubmedArticleSet> "
            "or <MedlineCitationSet>"
        )


def _pmid_of(record: Citation | Deletion) -> str | None:
    return record.pmid if isinstance(record, Citation) else None


class _BadRecord(Exception):
    """A record that cannot be stored (``_parse`` adds the file and record number)."""


def _drain(parser: etree.XMLPullParser, source_name: str | None) -> Iterator[Citation | Deletion | Notice]:
    for _event, elem in parser.read_events():
        tag = elem.tag
        if tag == "MedlineCitation":
            parent = elem.getparent()
            if parent is not None and parent.tag == "PubmedArticle":
                continue  # converted with its PubmedArticle
            record: Citation | Deletion | Notice | None = _citation(elem, source_name)
        elif tag == "PubmedArticle":
            citation = elem.find("MedlineCitation")
            record = None if citation is None else _citation(citation, source_name)
        elif tag == "PubmedBookArticle":
            record = _book(elem, source_name)
        else:  # DeleteCitation
            record = Deletion(tuple(_text(p) or "" for p in elem.iterfind("PMID")))
        # Free the record and everything before it: constant memory on baseline files.
        elem.clear(keep_tail=False)
        parent = elem.getparent()
        if parent is not None and parent.tag in _SET_TAGS:
            while elem.getprevious() is not None:
                del parent[0]
        if isinstance(record, Citation):
            record, cut = cap_text(record)
            if cut:
                yield Notice(cut)
        if record is not None:
            yield record


# --- element -> record -------------------------------------------------------------------


def _checked_pmid(el: etree._Element) -> str | Notice:
    """The record's PMID, or a notice that the record is skipped (it has none);
    ``_BadRecord`` for a PMID that is not a number (it would be stored and never found)."""
    pmid = _text(el.find("PMID"))
    if not pmid:
        return Notice("no PMID: skipped", skipped=True, line=el.sourceline)
    if not (pmid.isascii() and pmid.isdigit()):
        raise _BadRecord(f"PMID {pmid[:40]!r} (line {el.sourceline}) is not a number")
    return pmid


def cap_text(c: Citation) -> tuple[Citation, str | None]:
    """``c`` with its title and abstract within the declared caps, and what was cut."""
    cuts: list[str] = []
    title = c.title
    if title is not None and len(title) > MAX_TITLE:
        cuts.append(f"title of {len(title):,} characters cut to {MAX_TITLE:,}")
        title = title[:MAX_TITLE]
    abstract = c.abstract
    total = sum(len(s.text) for s in abstract or ())
    if abstract and total > MAX_ABSTRACT:
        cuts.append(f"abstract of {total:,} characters cut to {MAX_ABSTRACT:,}")
        kept: list[AbstractSection] = []
        room = MAX_ABSTRACT
        for s in abstract:
            if room <= 0:
                break
            kept.append(replace(s, text=s.text[:room]))
            room -= len(s.text)
        abstract = tuple(kept)
    if not cuts:
        return c, None
    return replace(c, title=title, abstract=abstract), f"PMID {c.pmid}: {'; '.join(cuts)} (declared caps)"


def _citation(mc: etree._Element, source_name: str | None) -> Citation | Notice:
    pmid = _checked_pmid(mc)
    if isinstance(pmid, Notice):
        return pmid
    article = mc.find("Article")
    journal_el = article.find("Journal") if article is not None else None
    info = mc.find("MedlineJournalInfo")
    extra: dict[str, object] = {}
    if mc.get("Status"):
        extra["status"] = mc.get("Status")
    languages = _languages(article)
    if len(languages) > 1:
        extra["languages"] = languages
    pub_date_el = journal_el.find("JournalIssue/PubDate") if journal_el is not None else None
    pub_date, year = _pub_date(pub_date_el)
    journal = _journal(journal_el, info)
    return Citation(
        pmid=pmid,
        title=_text(article.find("ArticleTitle")) if article is not None else None,
        abstract=_abstract(article.find("Abstract")) if article is not None else None,
        mesh_headings=_mesh(mc.find("MeshHeadingList")),
        publication_types=_pub_types(article.find("PublicationTypeList") if article is not None else None),
        journal=journal,
        year=year,
        pub_date=pub_date,
        language=languages[0] if languages else None,
        source=source_name,
        extra=extra,
    )


def _book(elem: etree._Element, source_name: str | None) -> Citation | Notice:
    doc = elem.find("BookDocument")
    if doc is None:
        return Notice("book record without a BookDocument: skipped", skipped=True, line=elem.sourceline)
    pmid = _checked_pmid(doc)
    if isinstance(pmid, Notice):
        return pmid
    book = doc.find("Book")
    # A chapter has its own ArticleTitle; a whole book only its BookTitle.
    title = _text(doc.find("ArticleTitle"))
    if title is None and book is not None:
        title = _text(book.find("BookTitle"))
    pub_date, year = _pub_date(book.find("PubDate") if book is not None else None)
    languages = _languages(doc)
    extra: dict[str, object] = {"record_type": "book"}
    if len(languages) > 1:
        extra["languages"] = languages
    return Citation(
        pmid=pmid,
        title=title,
        abstract=_abstract(doc.find("Abstract")),
        mesh_headings=_mesh(doc.find("MeshHeadingList")),
        publication_types=_pub_types(doc),  # PublicationType elements sit directly in BookDocument
        journal=None,
        year=year,
        pub_date=pub_date,
        language=languages[0] if languages else None,
        source=source_name,
        extra=extra,
    )


def _languages(el: etree._Element | None) -> list[str]:
    if el is None:
        return []
    return [t for t in (_text(e) for e in el.iterfind("Language")) if t]


def _abstract(abstract: etree._Element | None) -> tuple[AbstractSection, ...] | None:
    if abstract is None:
        return None
    sections = []
    for el in abstract.iterfind("AbstractText"):
        text = _text(el)
        if text is None:
            continue
        label, category = el.get("Label") or None, el.get("NlmCategory") or None
        sections.append(AbstractSection(text=text, label=label, nlm_category=category))
    return tuple(sections) or None


def _mesh(mesh_list: etree._Element | None) -> tuple[MeshHeading, ...] | None:
    if mesh_list is None:
        return None
    headings = []
    for mh in mesh_list.iterfind("MeshHeading"):
        desc = mh.find("DescriptorName")
        name = _text(desc)
        if desc is None or name is None:
            continue
        qualifiers = tuple(
            Qualifier(ui=q.get("UI") or None, name=qname, major=q.get("MajorTopicYN") == "Y")
            for q in mh.iterfind("QualifierName")
            if (qname := _text(q)) is not None
        )
        headings.append(
            MeshHeading(
                descriptor_ui=desc.get("UI") or None,
                descriptor_name=name,
                major=desc.get("MajorTopicYN") == "Y",
                qualifiers=qualifiers,
            )
        )
    return tuple(headings)


def _pub_types(pt_list: etree._Element | None) -> tuple[PublicationType, ...] | None:
    if pt_list is None:
        return None
    types = tuple(
        PublicationType(ui=pt.get("UI") or None, name=name)
        for pt in pt_list.iterfind("PublicationType")
        if (name := _text(pt)) is not None
    )
    return types or None


def _journal(journal_el: etree._Element | None, info: etree._Element | None) -> Journal | None:
    journal = Journal(
        title=_text(journal_el.find("Title")) if journal_el is not None else None,
        iso_abbreviation=_text(journal_el.find("ISOAbbreviation")) if journal_el is not None else None,
        medline_ta=_text(info.find("MedlineTA")) if info is not None else None,
        nlm_unique_id=_text(info.find("NlmUniqueID")) if info is not None else None,
    )
    return None if journal == Journal() else journal


def _pub_date(el: etree._Element | None) -> tuple[str | None, int | None]:
    """(date as printed by PubMed, e.g. "2018 May 17" or "1998 Dec-1999 Jan"; year)."""
    if el is None:
        return None, None
    medline_date = _text(el.find("MedlineDate"))
    if medline_date is not None:
        match = _YEAR.search(medline_date)
        return medline_date, int(match.group(1)) if match else None
    year = _text(el.find("Year"))
    month = _text(el.find("Month"))
    if _number(month) in range(1, 13):
        month = _MONTHS[int(month or 0) - 1]  # efetch sometimes gives "05" where MEDLINE prints "May"
    parts = [p for p in (year, month or _text(el.find("Season")), _text(el.find("Day"))) if p]
    year_int = _number(year)
    return (" ".join(parts) or None), year_int


def _number(text: str | None) -> int | None:
    """ASCII digits as a number; None otherwise ("1²" and "١٢" are digits to str.isdigit,
    not to int)."""
    return int(text) if text is not None and text.isascii() and text.isdigit() else None


# --- text --------------------------------------------------------------------------------


def _text(el: etree._Element | None) -> str | None:
    """Element text with inline markup (<i>, <sup>, <sub>, MathML) flattened; None if empty.

    Whitespace runs collapse to one space, except indentation (whitespace holding a line
    break) next to an inline tag, which pretty-printing added: "β\\n    <sub>2</sub>" is "β2".
    """
    if el is None:
        return None
    pieces: list[str] = []
    _flatten(el, pieces, top=True)
    text = _WS.sub(" ", "".join(pieces)).strip()
    return text or None


def _flatten(el: etree._Element, out: list[str], top: bool = False) -> None:
    if not isinstance(el.tag, str):  # comments, processing instructions
        return
    if el.tag.startswith(_MATHML):
        # MathML: the visible symbols, without the layout whitespace between them.
        out.append("".join(t.strip() for t in el.itertext()))
        return
    if el.text:
        out.append(_trim_indent(el.text, left=not top, right=len(el) > 0))
    for child in el:
        _flatten(child, out)
        if child.tail:
            out.append(_trim_indent(child.tail, left=True, right=child.getnext() is not None))


def _trim_indent(text: str, *, left: bool, right: bool) -> str:
    """Drop line-break whitespace at the edges that touch an inline tag."""
    if left:
        stripped = text.lstrip()
        if "\n" in text[: len(text) - len(stripped)]:
            text = stripped
    if right:
        stripped = text.rstrip()
        if "\n" in text[len(stripped) :]:
            text = stripped
    return text
