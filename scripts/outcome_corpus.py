"""Labelled abstracts for the outcome-sentence extractor, read from ../shared/data.

Three sources, all turned into title + abstract sections (``AbstractSection``) so that the
sentences come from the project's own text pipeline, exactly as at run time:

- EvidenceOutcomes (``pico/evidence-outcomes/consensus.tar.gz``): 640 RCT abstracts with
  consensus outcome spans (brat ``T`` lines) in the results and conclusions. A sentence is an
  outcome statement when it contains a gold span. The ``.txt`` files put the title on the first
  line, one sentence per line, sections as blank-line separated blocks whose first line may
  start with ``LABEL : ``. The label prefix is removed (its category is kept), the lines of a
  block are rejoined with spaces (so offsets keep their length) and the pipeline re-splits them.
  Trailing copyright blocks ("© 2022. The Author(s).") are dropped: MEDLINE keeps them in
  ``CopyrightInformation``, outside the abstract text the extractor sees at run time.
- PubMedQA PQA-L (``pubmedqa/ori_pqal.json.gz``): labelled context sections plus the conclusion
  (LONG_ANSWER) restored as the last section.
- MEDLINE (``medline/medline16n0902.xml.gz``): the structured abstracts.

The last two are weakly labelled: every sentence of a RESULTS or CONCLUSIONS section is
positive, every other sentence negative, and the headings are removed before processing (the
sentences get no label, no NLM category), so nothing but the text and its position is learned.

Splits are by PMID from a seeded hash (fixed for a given seed, independent of file order);
only EvidenceOutcomes abstracts are split, weakly labelled abstracts are training material only
(and are dropped when their PMID is in an EvidenceOutcomes dev or test split).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ebm.citation import AbstractSection
from ebm.errors import DataError
from ebm.medline.reader import read_citations
from ebm.text.document import Document
from ebm.text.pipeline import TextPipeline

EO_DIR = Path("pico/evidence-outcomes")
OUTCOME_CATEGORIES = frozenset({"RESULTS", "CONCLUSIONS"})

# Printed section label -> NLM category, by the first matching keyword (NLM's own mapping file is
# not in ../shared; these keywords cover every label found in EvidenceOutcomes and PubMedQA).
_CATEGORY_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("CONCLUSION", "CONCLUSIONS"),
    ("INTERPRETATION", "CONCLUSIONS"),
    ("IMPLICATION", "CONCLUSIONS"),
    ("DISCUSSION", "CONCLUSIONS"),
    ("RESULT", "RESULTS"),
    ("FINDING", "RESULTS"),
    ("OUTCOMES AND RESULTS", "RESULTS"),
    ("OBJECTIVE", "OBJECTIVE"),
    ("AIM", "OBJECTIVE"),
    ("PURPOSE", "OBJECTIVE"),
    ("GOAL", "OBJECTIVE"),
    ("HYPOTHES", "OBJECTIVE"),
    ("QUESTION", "OBJECTIVE"),
    ("BACKGROUND", "BACKGROUND"),
    ("INTRODUCTION", "BACKGROUND"),
    ("CONTEXT", "BACKGROUND"),
    ("IMPORTANCE", "BACKGROUND"),
    ("RATIONALE", "BACKGROUND"),
    ("METHOD", "METHODS"),
    ("DESIGN", "METHODS"),
    ("SETTING", "METHODS"),
    ("PATIENT", "METHODS"),
    ("PARTICIPANT", "METHODS"),
    ("SUBJECT", "METHODS"),
    ("INTERVENTION", "METHODS"),
    ("MEASURE", "METHODS"),
    ("MATERIAL", "METHODS"),
    ("PROCEDURE", "METHODS"),
    ("POPULATION", "METHODS"),
    ("SAMPLE", "METHODS"),
)

_LABEL = re.compile(r"^([A-Z][A-Z0-9 ,/&()'-]*[A-Z)]) : ")
# First line of a copyright notice ("© 2022.", "Copyright © 2021 The Authors.").
_COPYRIGHT_START = re.compile(r"^(©|\(c\) ?\d{4}|copyright\b|published (by|on behalf of)\b)", re.IGNORECASE)


def nlm_category(label: str | None) -> str | None:
    """NLM category for a printed section label ("FINDINGS" -> RESULTS); UNASSIGNED if unknown."""
    if not label:
        return None
    up = label.upper()
    for key, cat in _CATEGORY_KEYWORDS:
        if key in up:
            return cat
    return "UNASSIGNED"


@dataclass(frozen=True)
class LabelledAbstract:
    """One abstract with its outcome labels, before text processing."""

    pmid: str
    source: str  # eo500, eo140 (EvidenceOutcomes subsets), pubmedqa, medline
    title: str | None
    sections: tuple[AbstractSection, ...]  # with the categories used for labels
    # EvidenceOutcomes: gold outcome spans as (section index, start, end) in that section's text.
    # None for the weakly labelled sources (labels come from the section categories).
    gold_spans: tuple[tuple[int, int, int], ...] | None

    @property
    def structured(self) -> bool:
        return any(s.label for s in self.sections)

    @property
    def gold(self) -> bool:
        return self.gold_spans is not None


@dataclass(frozen=True)
class ProcessedAbstract:
    """A labelled abstract after the text pipeline: one 0/1 label per sentence."""

    record: LabelledAbstract
    document: Document
    labels: tuple[int, ...]

    @property
    def pmid(self) -> str:
        return self.record.pmid


# --- EvidenceOutcomes ------------------------------------------------------------------------


def _eo140_pmids(shared: Path) -> set[str]:
    """PMIDs of the 140 abstracts that EvidenceOutcomes took from EBM-NLP (its CoNLL file)."""
    path = shared / EO_DIR / "140EBMNLP-CoNLL.tsv.gz"
    pmids: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            cols = line.split("\t")
            if len(cols) >= 2 and cols[1].isdigit():
                pmids.add(cols[1])
    return pmids


def _parse_ann(text: str, name: str) -> list[tuple[int, int, str]]:
    spans = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("T"):
            continue
        cols = line.split("\t")
        try:
            kind, start, end = cols[1].split(" ")
            spans.append((int(start), int(end), cols[2] if len(cols) > 2 else ""))
        except (IndexError, ValueError) as exc:
            raise DataError(f"{name}:{n}: malformed brat text-bound line: {line!r}") from exc
        if kind != "Outcome":
            spans.pop()
    return spans


def _lines(text: str) -> list[tuple[int, str]]:
    """Lines as (start offset, text), without the newline."""
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def _drop_copyright(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Cut the trailing copyright notice: from its first line (within the last six) to the end."""
    for i in range(max(0, len(lines) - 6), len(lines)):
        if _COPYRIGHT_START.match(lines[i][1].lstrip()):
            return lines[:i]
    return lines


def parse_eo_document(pmid: str, txt: str, ann: str, source: str) -> LabelledAbstract:
    """One EvidenceOutcomes abstract (``.txt`` and ``.ann`` contents) as a labelled abstract.

    The first line is the title. A section starts after a blank line or at a line opening with
    ``LABEL : `` (67 files have no blank line between sections or after the title).
    """
    spans = _parse_ann(ann, f"{pmid}.ann")
    for s, e, surface in spans:
        if txt[s:e] != surface:
            raise DataError(f"{pmid}.ann: span {s}-{e} is {txt[s:e]!r} in the text, not {surface!r}")
    lines = _lines(txt)
    title = lines[0][1].strip() or None
    body = _drop_copyright([ln for ln in lines[1:]])
    # group lines into sections: (label, [(start, line text)])
    groups: list[tuple[str | None, list[tuple[int, str]]]] = []
    new_block = True
    for start, line in body:
        if not line.strip():
            new_block = True
            continue
        m = _LABEL.match(line)
        if m:
            groups.append((m.group(1), [(start + m.end(), line[m.end() :])]))
        elif new_block or not groups:
            groups.append((None, [(start, line)]))
        else:
            groups[-1][1].append((start, line))
        new_block = False
    sections: list[AbstractSection] = []
    regions: list[tuple[int, int]] = []  # file offsets of each section's text
    for label, glines in groups:
        a = glines[0][0]
        b = glines[-1][0] + len(glines[-1][1])
        # lines of a section are contiguous in the file: rejoin with spaces, offsets unchanged
        sections.append(AbstractSection(txt[a:b].replace("\n", " "), label, nlm_category(label)))
        regions.append((a, b))
    if not sections:
        raise DataError(f"{pmid}.txt: no abstract text")
    gold: list[tuple[int, int, int]] = []
    for s, e, _ in spans:
        for k, (a, b) in enumerate(regions):
            if a <= s and e <= b:
                gold.append((k, s - a, e - a))
                break
        else:
            raise DataError(f"{pmid}.ann: outcome span {s}-{e} lies outside the abstract sections")
    return LabelledAbstract(pmid, source, title, tuple(sections), tuple(sorted(gold)))


def read_evidence_outcomes(shared: Path) -> list[LabelledAbstract]:
    """All EvidenceOutcomes consensus abstracts, sorted by PMID."""
    path = shared / EO_DIR / "consensus.tar.gz"
    if not path.is_file():
        raise DataError(f"EvidenceOutcomes not found: {path}")
    eo140 = _eo140_pmids(shared)
    files: dict[str, dict[str, str]] = {}
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            m = re.fullmatch(r"consensus/(\d+)\.(txt|ann)", member.name)
            if not m or not member.isfile():
                continue
            f = tar.extractfile(member)
            assert f is not None
            files.setdefault(m.group(1), {})[m.group(2)] = f.read().decode("utf-8")
    out = []
    for pmid in sorted(files, key=int):
        pair = files[pmid]
        if "txt" not in pair or "ann" not in pair:
            raise DataError(f"{path}: {pmid} lacks its .txt or .ann file")
        source = "eo140" if pmid in eo140 else "eo500"
        out.append(parse_eo_document(pmid, pair["txt"], pair["ann"], source))
    return out


# --- weakly labelled structured abstracts ----------------------------------------------------


def read_pubmedqa(shared: Path) -> list[LabelledAbstract]:
    """PubMedQA PQA-L abstracts: labelled contexts plus the conclusion as a last section."""
    path = shared / "pubmedqa" / "ori_pqal.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for pmid in sorted(data, key=int):
        rec = data[pmid]
        secs = [
            AbstractSection(text, label, nlm_category(label))
            for text, label in zip(rec["CONTEXTS"], rec["LABELS"], strict=True)
        ]
        secs.append(AbstractSection(rec["LONG_ANSWER"], "CONCLUSIONS", "CONCLUSIONS"))
        # PQA-L has no title (QUESTION is derived from it, not the title itself).
        out.append(LabelledAbstract(pmid, "pubmedqa", None, tuple(secs), None))
    return out


def read_medline_structured(shared: Path) -> list[LabelledAbstract]:
    """Structured abstracts (more than one labelled section) of the shared MEDLINE file."""
    path = shared / "medline" / "medline16n0902.xml.gz"
    out = []
    for c in read_citations(path):
        if not c.abstract or len(c.abstract) < 2 or not any(s.nlm_category for s in c.abstract):
            continue
        secs = tuple(
            AbstractSection(s.text, s.label, s.nlm_category or nlm_category(s.label)) for s in c.abstract
        )
        out.append(LabelledAbstract(c.pmid, "medline", c.title, secs, None))
    return out


# --- splits ----------------------------------------------------------------------------------


def split_of(pmid: str, seed: int, dev: float = 0.2, test: float = 0.2) -> str:
    """train/dev/test for a PMID: a seeded hash, so it never depends on file order."""
    h = int.from_bytes(hashlib.sha256(f"{seed}:{pmid}".encode()).digest()[:8], "big") / 2**64
    if h < test:
        return "test"
    if h < test + dev:
        return "dev"
    return "train"


def make_splits(records: Iterable[LabelledAbstract], seed: int) -> dict[str, list[str]]:
    """Explicit PMID lists for the gold (EvidenceOutcomes) abstracts."""
    splits: dict[str, list[str]] = {"train": [], "dev": [], "test": []}
    for r in records:
        if r.gold:
            splits[split_of(r.pmid, seed)].append(r.pmid)
    for v in splits.values():
        v.sort(key=int)
    return splits


# --- text processing -------------------------------------------------------------------------


def process(record: LabelledAbstract, pipeline: TextPipeline) -> ProcessedAbstract:
    """Run the pipeline and label each sentence (see the module docstring for the rules)."""
    if record.gold:
        doc = pipeline.process_text(record.title, record.sections, pmid=record.pmid)
        starts = _section_starts(doc, record.sections)
        spans = [(starts[k] + s, starts[k] + e) for k, s, e in record.gold_spans or ()]
        labels = tuple(
            int(s.section_index >= 0 and any(a < s.end and s.start < b for a, b in spans))
            for s in doc.sentences
        )
    else:
        bare = [AbstractSection(s.text) for s in record.sections]  # headings removed
        doc = pipeline.process_text(record.title, bare, pmid=record.pmid)
        labels = tuple(
            int(s.section_index >= 0 and record.sections[s.section_index].nlm_category in OUTCOME_CATEGORIES)
            for s in doc.sentences
        )
    return ProcessedAbstract(record, doc, labels)


def _section_starts(doc: Document, sections: tuple[AbstractSection, ...]) -> dict[int, int]:
    """Offset of each section's text in ``doc.text`` (the pipeline joins them in order)."""
    starts: dict[int, int] = {}
    cursor = 0
    if doc.sentences and doc.sentences[0].section_index == -1:
        cursor = doc.sentences[0].end
    for k, sec in enumerate(sections):
        if not sec.text.strip():
            continue
        pos = doc.text.find(sec.text, cursor)
        if pos < 0:
            raise DataError(f"{doc.pmid}: section {k} not found in the processed text")
        starts[k] = pos
        cursor = pos + len(sec.text)
    return starts


def process_all(records: Iterable[LabelledAbstract], pipeline: TextPipeline) -> Iterator[ProcessedAbstract]:
    for r in records:
        yield process(r, pipeline)


def load_corpora(
    shared: Path, seed: int, *, weak: bool = True
) -> tuple[list[LabelledAbstract], dict[str, list[str]]]:
    """Every labelled abstract and the EvidenceOutcomes splits for ``seed``.

    Weakly labelled abstracts whose PMID is in an EvidenceOutcomes dev/test split are dropped.
    """
    eo = read_evidence_outcomes(shared)
    splits = make_splits(eo, seed)
    records = list(eo)
    if weak:
        held_out = set(splits["dev"]) | set(splits["test"])
        seen = {r.pmid for r in eo}
        for r in read_pubmedqa(shared) + read_medline_structured(shared):
            if r.pmid in held_out or r.pmid in seen:
                continue
            seen.add(r.pmid)
            records.append(r)
    return records, splits


# --- concepts for the semantic classifier ----------------------------------------------------


@dataclass(frozen=True)
class SemanticContext:
    """What the semantic classifier sees of a document: its concepts, problem, interventions."""

    concepts: list[Any]  # ebm.concepts.Concept
    primary_problem: str | None
    interventions: list[str]


def semantic_context(doc: Document, resources: Any) -> SemanticContext:
    """Concepts, primary problem and interventions as ``extractors.annotate.Annotator`` finds them
    (``resources``: ``ebm.resources.Resources``)."""
    from ebm.concepts import annotate
    from extractors.intervention import extract_interventions

    r = resources
    concepts = annotate(doc, r.matcher, r.negation)
    problem = r.problem_ranker.primary(
        doc, concepts, vocabulary=r.vocabulary, kinds=r.value("problem_kinds")
    )[1]
    interventions = extract_interventions(
        doc,
        concepts,
        vocabulary=r.vocabulary,
        cues=r.value("intervention_cues"),
        kinds=r.value("intervention_kinds"),
        terms=r.value("intervention_terms"),
        words=r.value("population_words"),
    )
    primary = problem.concepts[0] if problem and problem.concepts else None
    return SemanticContext(concepts, primary, [i.concepts[0] for i in interventions[:5] if i.concepts])
