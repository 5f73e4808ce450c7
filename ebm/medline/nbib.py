"""Reader for the MEDLINE text format (PubMed "Save -> PubMed format", ``.nbib`` / ``.txt``).

A record is a run of tagged lines (``PMID- 20000000``, ``TI  - ...``: the tag left-justified
in four columns, then ``- ``), continued on lines indented by six spaces; records are separated
by blank lines. Plain or gzip (detected by magic bytes), from a path, a binary stream or bytes.

The records are the same ``Citation`` records as the XML reader's (``ebm.medline.reader``),
field by field, except for what the text format does not carry:

- MeSH and publication-type UIs: the format gives names only. ``descriptor_ui`` (a
  name -> UI lookup, e.g. ``MeshVocabulary.by_name``) fills descriptor and publication-type UIs;
  qualifier UIs stay ``None`` (the store resolves none either).
- the journal's ISO abbreviation (the format has ``TA``, the MEDLINE abbreviation, and ``JT``).
- abstract sections: a structured abstract is printed as ``LABEL: text LABEL: text``; it is
  split back into labelled sections, but the NLM category of each is not printed (``None``).

A line that is neither a tag line, a continuation nor blank, or a record without a PMID,
raises ``InputError`` naming ``file:line``, after the records before it have been yielded.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from ebm.citation import AbstractSection, Citation, Journal, MeshHeading, PublicationType, Qualifier
from ebm.errors import InputError

Source = str | os.PathLike[str] | bytes | bytearray | BinaryIO
UiLookup = Callable[[str], str | None]

_GZIP_MAGIC = b"\x1f\x8b"
_CONTINUATION = "      "  # six spaces
_YEAR = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")
# A printed section label of a structured abstract: upper-case words ending in ": ", at the start
# or after the end of a sentence ("... perfusion levels. METHODS: Two transducers ...").
_LABEL = re.compile(r"(?:^|(?<=[.?!)\]] ))([A-Z][A-Z0-9 ,&'/()-]*[A-Z0-9)]): ")
_PMID = re.compile(r"\d{1,9}")


def is_nbib(head: bytes) -> bool:
    """Whether decompressed leading bytes look like MEDLINE text format (first tag ``PMID-``)."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"PMID-")


def read_nbib(
    source: Source, *, name: str | None = None, descriptor_ui: UiLookup | None = None
) -> Iterator[Citation]:
    """Yield the citations of a MEDLINE text-format document, in document order.

    ``name`` labels error messages and is ``Citation.source`` (default: the file name).
    ``descriptor_ui`` maps a MeSH descriptor or publication-type name to its UI.
    """
    label, source_name, lines = _open(source, name)
    record: list[tuple[int, str, str]] = []  # (line number, tag, value)
    lineno = 0
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            if record:
                yield _citation(record, label, source_name, descriptor_ui)
                record = []
            continue
        if line.startswith(_CONTINUATION) and record:
            n, tag, value = record[-1]
            record[-1] = (n, tag, f"{value} {line.strip()}" if value else line.strip())
            continue
        if len(line) < 5 or line[4] != "-" or not line[:4].rstrip().isalnum():
            what = "a continuation line before any tag" if line.startswith(" ") else repr(line[:40])
            raise InputError(f"{label}:{lineno}: not MEDLINE text format: {what} (expected 'TAG - value')")
        tag = line[:4].rstrip()
        if tag == "PMID" and record:  # records not separated by a blank line
            yield _citation(record, label, source_name, descriptor_ui)
            record = []
        if not record and tag != "PMID":
            raise InputError(f"{label}:{lineno}: record starts with {tag!r}, expected 'PMID- '")
        record.append((lineno, tag, line[5:].strip()))
    if record:
        yield _citation(record, label, source_name, descriptor_ui)
    elif lineno == 0:
        raise InputError(f"{label}: empty input, not MEDLINE text format")


def _open(source: Source, name: str | None) -> tuple[str, str | None, Iterator[str]]:
    """(label for messages, Citation.source, decoded lines)."""
    label: str
    source_name: str | None
    data: bytes
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        label, source_name = name or str(path), name or path.name
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{label}: cannot open: {exc.strerror or exc}") from exc
    elif isinstance(source, bytes | bytearray):
        label, source_name, data = name or "<bytes>", name, bytes(source)
    else:
        stream_name = getattr(source, "name", None)
        label = name or str(stream_name or "<stream>")
        source_name = name or (Path(stream_name).name if isinstance(stream_name, str) else None)
        data = source.read()
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{label}: corrupt or truncated gzip data: {exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{label}:{line}: not UTF-8 text: {exc.reason}") from exc
    return label, source_name, iter(io.StringIO(text))


def _citation(
    fields: list[tuple[int, str, str]], label: str, source_name: str | None, descriptor_ui: UiLookup | None
) -> Citation:
    start, _, pmid = fields[0]
    if not _PMID.fullmatch(pmid):
        raise InputError(f"{label}:{start}: PMID {pmid!r} is not a PubMed identifier (1 to 9 digits)")
    values: dict[str, list[str]] = {}
    for _, tag, value in fields:
        values.setdefault(tag, []).append(value)

    def first(tag: str) -> str | None:
        found = values.get(tag)
        return found[0] if found and found[0] else None

    ui = descriptor_ui or (lambda _name: None)
    languages = values.get("LA", [])
    extra: dict[str, object] = {}
    if first("STAT"):
        extra["status"] = first("STAT")
    if len(languages) > 1:
        extra["languages"] = languages
    is_book = "BTI" in values and "JT" not in values
    if is_book:
        extra["record_type"] = "book"
    title = first("TI") or (first("BTI") if is_book else None)
    pub_date = first("DP")
    year_match = _YEAR.search(pub_date or "")
    journal = Journal(title=first("JT"), medline_ta=first("TA"), nlm_unique_id=first("JID"))
    mesh = values.get("MH")
    pts = tuple(PublicationType(ui=ui(p), name=p) for p in values.get("PT", []) if p)
    return Citation(
        pmid=pmid,
        title=title,
        abstract=_abstract(first("AB")),
        mesh_headings=None if mesh is None else tuple(_heading(h, ui) for h in mesh if h),
        publication_types=pts or None,
        journal=None if journal == Journal() else journal,
        year=int(year_match.group(1)) if year_match else None,
        pub_date=pub_date,
        language=languages[0] if languages else None,
        source=source_name,
        extra=extra,
    )


def _heading(text: str, ui: UiLookup) -> MeshHeading:
    """``Robinia/*drug effects/growth & development`` -> descriptor, starred qualifiers."""
    descriptor, *quals = text.split("/")
    name = descriptor.lstrip("*")
    return MeshHeading(
        descriptor_ui=ui(name),
        descriptor_name=name,
        major=descriptor.startswith("*"),
        qualifiers=tuple(Qualifier(ui=None, name=q.lstrip("*"), major=q.startswith("*")) for q in quals),
    )


def _abstract(text: str | None) -> tuple[AbstractSection, ...] | None:
    if not text:
        return None
    labels = list(_LABEL.finditer(text))
    if not labels or labels[0].start() != 0:
        return (AbstractSection(text=text),)
    sections = []
    for i, match in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        body = text[match.end() : end].strip()
        sections.append(AbstractSection(text=body, label=match.group(1)))
    return tuple(sections)
