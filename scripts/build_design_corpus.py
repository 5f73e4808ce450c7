"""Build the study-design training/evaluation file from the real records in ../shared.

Distant labels (no hand labelling):

* indexer publication types and study-design MeSH headings of every MEDLINE record in
  ../shared/data/medline (the 2016 baseline slice, NLM's 2006 sample, pmparser's 2020/2026
  slices, metapub's efetch tarball, the two single records) and of the bundled corpus
  (``ebm/data/corpus/citations.jsonl.gz``; PubMedQA's MESHES are in it);
* design known by construction: PICO-data docs, EvidenceOutcomes and the Evidence Inference
  abstracts are randomized controlled trials;
* titles (else abstracts) of otherwise unlabelled records (BC5CDR, in-process MEDLINE records
  whose publication types name no design) that name their design ("a case report", "in rats",
  "a systematic review"; "we searched MEDLINE ...", "we report a case", "single-arm phase II"):
  a weak label, training only.

Split (seeded, by PMID, fixed): half of the records whose publication types come with MeSH
headings (indexed by NLM, so the publication types are the indexer's) is the evaluation set
``eval``; one tenth of the RCTs by construction is ``eval_rct`` and one quarter of the labelled
PubMedQA records ``eval_mesh`` (secondary evaluation sets). Nothing of an evaluation set is
trained on: a training record with the PMID or the text of an evaluation record is dropped.

    python scripts/build_design_corpus.py [--shared ../shared/data] [--out build/design_corpus.jsonl.gz]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import tarfile
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.citation import Citation  # noqa: E402
from ebm.medline.reader import read_citations  # noqa: E402
from extractors.design import label_from_index  # noqa: E402

SEED = "design-split-2026"
DEFAULT_OUT = ROOT / "build" / "design_corpus.jsonl.gz"  # read by train_design.py and eval_design.py

MEDLINE_FILES = (
    "medline16n0902.xml.gz",
    "medsamp2006.xml",
    "pmparser-samples/pubmed20n1016-sample.xml.gz",
    "pmparser-samples/pubmed26n1334-sample.xml.gz",
    "pmparser-samples/pubmed26n1335-update-sample.xml.gz",
    "test_current_medline.xml.gz",
    "pubmed-29768149.xml",
)

# Weak title labels for otherwise unlabelled records (training only).
TITLE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("systematic_review", re.compile(r"\b(systematic review|meta-?analys[ie]s)\b", re.I)),
    ("guideline", re.compile(r"\b(guidelines?|consensus statement|position statement)\b", re.I)),
    (
        "case_report",
        re.compile(r"\b(a case report|case reports?|a case of|report of (a|two|three) cases?)\b", re.I),
    ),
    (
        "animal_or_in_vitro",
        re.compile(
            r"\b(in (rats?|mice|dogs|rabbits|guinea pigs?|monkeys|cats|pigs)|"
            r"rat model|mouse model|murine|in vitro)\b",
            re.I,
        ),
    ),
    ("randomized_controlled_trial", re.compile(r"\brandomi[sz]ed\b.*\btrial\b", re.I)),
)


# Weak abstract labels for otherwise unlabelled records (training only): the design words
# authors use for the two rare designs the indexed records barely cover.
ABSTRACT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "systematic_review",
        re.compile(
            r"\b(we|were) (systematically )?searched\b.{0,80}\b(medline|pubmed|embase|cochrane)\b", re.I
        ),
    ),
    (
        "non_randomized_trial",
        re.compile(
            r"\b(non-?randomi[sz]ed (controlled |clinical )?(trial|study)|single[- ]arm (trial|study)|"
            r"open[- ]label,? (single[- ]arm|phase (ii|2|i|1))|phase (ii|2) (trial|study))\b",
            re.I,
        ),
    ),
    (
        "case_report",
        re.compile(
            r"\bwe (report|describe|present) (a|an|the|two|three) (cases?|patients?|\d+-year-old)\b", re.I
        ),
    ),
)


def label_from_title(title: str, abstract: str = "") -> str | None:
    hits = {name for name, rx in TITLE_PATTERNS if rx.search(title)}
    if not hits:
        hits = {name for name, rx in ABSTRACT_PATTERNS if rx.search(abstract)}
    return hits.pop() if len(hits) == 1 else None


@dataclass
class Record:
    pmid: str
    title: str
    abstract: str
    label: str
    source: str
    indexed: bool  # publication types given together with MeSH headings (indexer's)
    pts: list[str] = field(default_factory=list)
    mesh: list[str] = field(default_factory=list)
    split: str = "train"


def _bucket(pmid: str, n: int) -> int:
    return int(hashlib.sha1(f"{SEED}:{pmid}".encode()).hexdigest(), 16) % n


def _text_key(title: str, abstract: str) -> str:
    return re.sub(r"[^a-z0-9]", "", (title + abstract[:200]).lower())[:160]


def from_citation(c: Citation, source: str) -> Record | None:
    if not c.has_abstract and not c.title:
        return None
    pts = {p.name.casefold() for p in c.publication_types or ()}
    mhs = None if c.mesh_headings is None else {h.descriptor_name.casefold() for h in c.mesh_headings}
    label = label_from_index(pts, mhs)
    if label is None:
        return None
    return Record(
        pmid=c.pmid,
        title=c.title or "",
        abstract=c.abstract_text or "",
        label=label,
        source=source,
        indexed=bool(pts) and bool(mhs),
        pts=sorted(p.name for p in c.publication_types or ()),
        mesh=sorted(h.descriptor_name for h in c.mesh_headings or ()),
    )


def weak_record(c: Citation, source: str) -> Record | None:
    lab = label_from_title(c.title or "", c.abstract_text or "")
    if lab is None or not c.has_abstract:
        return None
    return Record(c.pmid, c.title or "", c.abstract_text or "", lab, "title:" + source, False)


def medline_records(shared: Path) -> Iterator[Record]:
    for name in MEDLINE_FILES:
        for c in read_citations(shared / "medline" / name):
            r = from_citation(c, "medline:" + name) or weak_record(c, "medline:" + name)
            if r:
                yield r
    with tarfile.open(shared / "medline" / "metapub-efetch" / "pmid_xml.tar.gz") as tar:
        for m in tar:
            f = tar.extractfile(m) if m.isfile() else None
            if f is None:
                continue
            for c in read_citations(f.read(), name=m.name):
                r = from_citation(c, "metapub-efetch") or weak_record(c, "metapub-efetch")
                if r:
                    yield r


def bundled_records(corpus: Path) -> Iterator[Record]:
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            c = Citation.from_dict(json.loads(line))
            src = c.source or ""
            if c.publication_types is not None:
                r = from_citation(c, "bundled:" + src) or weak_record(c, "bundled:" + src)
            elif "pico-data" in src or "evidence-outcomes" in src:
                r = Record(
                    c.pmid,
                    c.title or "",
                    c.abstract_text or "",
                    "randomized_controlled_trial",
                    "construction:" + src,
                    False,
                )
            elif src.startswith("pubmedqa"):
                mhs = {h.descriptor_name.casefold() for h in c.mesh_headings or ()}
                lab = label_from_index(set(), mhs) if mhs else None
                r = (
                    None
                    if lab in (None, "other")
                    else Record(
                        c.pmid,
                        c.title or "",
                        c.abstract_text or "",
                        lab,
                        "pubmedqa-mesh",
                        False,
                        mesh=sorted(h.descriptor_name for h in c.mesh_headings or ()),
                    )
                )
            else:
                r = weak_record(c, src)
            if r and (r.title or r.abstract):
                yield r


def pico_docs(shared: Path) -> Iterator[Record]:
    """All PICO-data docs (the bundle keeps only some of them)."""
    path = shared / "pico" / "pico-data-nguyen2017" / "pico-data-docs-and-annotations.tar.gz"
    with tarfile.open(path) as tar:
        for m in tar:
            if not (m.isfile() and m.name.startswith("docs/") and m.name.endswith(".txt")):
                continue
            if "/mesh_tags/" in m.name:
                continue
            f = tar.extractfile(m)
            assert f is not None
            title, _, body = f.read().decode("utf-8", "replace").partition("\n")
            yield Record(
                Path(m.name).stem,
                title.strip(),
                " ".join(body.split()),
                "randomized_controlled_trial",
                "construction:pico-data",
                False,
            )


def evidence_inference(shared: Path) -> Iterator[Record]:
    with tarfile.open(shared / "evidence-inference" / "abstracts.tar.gz") as tar:
        for m in tar:
            f = tar.extractfile(m) if m.isfile() else None
            if f is None:
                continue
            text = f.read().decode("utf-8", "replace")
            title, _, abstract = text.partition("ABSTRACT")
            title = " ".join(title.replace("TITLE:", "").split())
            abstract = re.sub(r"^\.?[A-Z ]*:", "", abstract.strip())
            abstract = re.sub(r"\n+ABSTRACT\.[A-Z /&]+:\n", "\n", "\n" + abstract)
            yield Record(
                "EI:" + Path(m.name).stem,
                title,
                " ".join(abstract.split()),
                "randomized_controlled_trial",
                "construction:evidence-inference",
                False,
            )


def assign_splits(records: Iterable[Record]) -> list[Record]:
    """Dedupe by PMID (first, i.e. the richest source, wins) and text; split; keep evaluation clean."""
    by_pmid: dict[str, Record] = {}
    for r in records:
        old = by_pmid.get(r.pmid)
        if old is None or (r.indexed and not old.indexed):
            by_pmid[r.pmid] = r
    out: list[Record] = []
    for r in by_pmid.values():
        if r.indexed:
            r.split = "eval" if _bucket(r.pmid, 2) == 0 else "train"
        elif r.source.startswith("construction:"):
            r.split = "eval_rct" if _bucket(r.pmid, 10) == 0 else "train"
        elif r.source == "pubmedqa-mesh":
            r.split = "eval_mesh" if _bucket(r.pmid, 4) == 0 else "train"
        out.append(r)
    held = {_text_key(r.title, r.abstract) for r in out if r.split != "train"}
    seen: set[str] = set()
    kept: list[Record] = []
    for r in sorted(out, key=lambda r: (r.split == "train", r.pmid)):
        key = _text_key(r.title, r.abstract)
        if r.split == "train" and (key in held or key in seen):
            continue
        seen.add(key)
        kept.append(r)
    return kept


def read_corpus(path: Path, splits: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The records of a corpus this script wrote (only those of ``splits`` when given), in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [r for r in map(json.loads, f) if splits is None or r["split"] in splits]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--corpus", type=Path, default=ROOT / "ebm" / "data" / "corpus" / "citations.jsonl.gz")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    def all_records() -> Iterator[Record]:
        yield from medline_records(args.shared)
        yield from bundled_records(args.corpus)
        yield from pico_docs(args.shared)
        yield from evidence_inference(args.shared)

    kept = assign_splits(all_records())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for r in sorted(kept, key=lambda r: r.pmid):
            f.write(json.dumps(r.__dict__, ensure_ascii=False) + "\n")
    counts = Counter((r.split, r.label) for r in kept)
    for split in ("train", "eval", "eval_rct", "eval_mesh"):
        row = {lab: n for (s, lab), n in sorted(counts.items()) if s == split}
        print(f"{split}: {sum(row.values())} {row}", file=sys.stderr)
    print(f"wrote {len(kept)} records to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
