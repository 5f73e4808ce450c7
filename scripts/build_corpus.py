"""Build the bundled demo corpus (``ebm/data/corpus/citations.jsonl.gz``) from ../shared/data.

Sources, in order of precedence when a PMID occurs in several of them (each field comes
from the first source that gives it; ``source`` lists every source that holds the PMID):

1. MEDLINE/PubMed XML, every file in ``data/medline`` (read with ``ebm.medline.read_citations``).
2. PubMedQA PQA-L (``data/pubmedqa/ori_pqal.json.gz``): CONTEXTS with their LABELS are the
   abstract sections, LONG_ANSWER (the abstract's conclusion) is restored as the last section,
   labelled CONCLUSIONS; MESHES names are mapped to descriptor UIs with the MeSH 2024 vocabulary
   (major-topic flags are not given: ``extra["mesh_major_unknown"]``); YEAR. The QUESTION is
   derived from the title but is not the title, so the title stays unknown.
3. EvidenceOutcomes (``data/pico/evidence-outcomes/consensus.tar.gz``): ``PMID.txt`` = title line,
   then the abstract one sentence per line, sections introduced by ``LABEL : ``.
4. PICO-data (``data/pico/pico-data-nguyen2017/...tar.gz``): ``docs/PMID.txt`` = title, blank
   line, abstract (one line per section, ``LABEL text``); ``docs/mesh_tags/PMID.txt`` = the MeSH
   headings in MEDLINE display form (``Descriptor/*qualifier``, ``*`` = major topic).
5. BC5CDR training and development sets (PubTator): title and abstract lines.

Fields a source does not give stay ``None``. Output: gzip JSON lines of ``Citation.to_dict()``,
sorted by PMID, byte-identical across runs.

Usage: python scripts/build_corpus.py [--shared ../shared] [--out ebm/data/corpus/citations.jsonl.gz]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import sys
import tarfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from pathlib import Path

from ebm.citation import AbstractSection, Citation, MeshHeading, Qualifier
from ebm.errors import InputError
from ebm.evaluation.trec import read_run
from ebm.medline import read_citations
from ebm.mesh import MeshVocabulary, mesh

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "ebm" / "data" / "corpus" / "citations.jsonl.gz"
MERGED_FIELDS = [f.name for f in fields(Citation) if f.name not in ("pmid", "source", "extra")]

# "LABEL : text" (EvidenceOutcomes); the label is upper case, as printed in the abstract.
_EO_LABEL = re.compile(r"^([A-Z][A-Z0-9 ,&/()'-]*[A-Z)])\s:\s+(.*)$")
# An upper-case word that can be part of a section label ("MAIN", "AND", "RESULT(S)", "DESIGN,").
_LABEL_WORD = re.compile(r"^[A-Z0-9(),/&'-]*[A-Z][A-Z0-9(),/&'-]*$")


# --- MeSH ------------------------------------------------------------------------------


class MeshMapper:
    """Descriptor names -> UIs (MeSH 2024), qualifier names -> UIs (seen in MEDLINE XML records)."""

    def __init__(self, vocabulary: MeshVocabulary, qualifier_uis: dict[str, str]) -> None:
        self.vocabulary = vocabulary
        self.qualifier_uis = qualifier_uis
        self.unmapped: Counter[str] = Counter()

    def descriptor_ui(self, name: str) -> str | None:
        d = self.vocabulary.by_name(name)
        if d is not None:
            return d.ui
        # A name changed since the source was made is usually an entry term now; take it only
        # when it points to a single descriptor.
        uis = self.vocabulary.term_index.get(name.strip().casefold(), [])
        if len(uis) == 1:
            return uis[0]
        self.unmapped[name] += 1
        return None

    def heading(self, text: str) -> MeshHeading:
        """A heading in MEDLINE display form: ``Helicobacter Infections/*drug therapy/microbiology``."""
        descriptor, *quals = text.split("/")
        name = descriptor.lstrip("*").strip()
        qualifiers = tuple(
            Qualifier(
                ui=self.qualifier_uis.get(q.lstrip("*").strip()),
                name=q.lstrip("*").strip(),
                major=q.startswith("*"),
            )
            for q in quals
        )
        return MeshHeading(self.descriptor_ui(name), name, descriptor.startswith("*"), qualifiers)


# --- sources -----------------------------------------------------------------------------


def medline(shared: Path) -> Iterator[Citation]:
    # The files at the top of medline/ only: the later sub-folders (distribution-file slices,
    # efetch records) are ingest and design-training samples, not part of the demo corpus.
    for path in medline_files(shared):
        yield from read_citations(path)


def medline_files(shared: Path) -> list[Path]:
    return sorted(p for p in (shared / "medline").iterdir() if p.is_file())


def pubmedqa(shared: Path, mapper: MeshMapper) -> Iterator[Citation]:
    with gzip.open(shared / "pubmedqa" / "ori_pqal.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    for pmid, rec in data.items():
        sections = [
            AbstractSection(text=_clean(text), label=label or None)
            for text, label in zip(rec["CONTEXTS"], rec["LABELS"], strict=True)
        ]
        if rec.get("LONG_ANSWER"):
            sections.append(AbstractSection(text=_clean(rec["LONG_ANSWER"]), label="CONCLUSIONS"))
        names = rec.get("MESHES")
        headings = (
            None if not names else tuple(MeshHeading(mapper.descriptor_ui(n), n.strip()) for n in names)
        )
        year = rec.get("YEAR")
        yield Citation(
            pmid=str(pmid),
            abstract=tuple(s for s in sections if s.text) or None,
            mesh_headings=headings,
            year=int(year) if year and str(year).isdigit() else None,
            source="pubmedqa",
            extra={"mesh_major_unknown": True} if headings else {},
        )


def evidence_outcomes(shared: Path) -> Iterator[Citation]:
    path = shared / "pico" / "evidence-outcomes" / "consensus.tar.gz"
    for name, text in _tar_texts(path, lambda n: n.startswith("consensus/") and n.endswith(".txt")):
        pmid = Path(name).stem
        title, *body = text.split("\n")
        sections: list[tuple[str | None, list[str]]] = []
        for line in (ln.strip() for ln in body):
            if not line:
                continue
            match = _EO_LABEL.match(line)
            if match:
                sections.append((match.group(1), [match.group(2)]))
            elif sections:
                sections[-1][1].append(line)
            else:
                sections.append((None, [line]))
        yield Citation(
            pmid=pmid,
            title=_clean(title) or None,
            abstract=_sections((label, " ".join(lines)) for label, lines in sections),
            source="evidence-outcomes",
        )


def pico_data(shared: Path, mapper: MeshMapper, known_labels: set[str]) -> Iterator[Citation]:
    path = shared / "pico" / "pico-data-nguyen2017" / "pico-data-docs-and-annotations.tar.gz"
    headings: dict[str, list[str]] = {}
    docs: dict[str, str] = {}
    for name, text in _tar_texts(path, lambda n: n.startswith("docs/") and n.endswith(".txt")):
        if name.startswith("docs/mesh_tags/"):
            headings[Path(name).stem] = [ln.strip() for ln in text.split("\n") if ln.strip()]
        else:
            docs[Path(name).stem] = text
    for pmid, text in docs.items():
        title, *body = text.split("\n")
        lines = [ln.strip() for ln in body if ln.strip()]
        tags = headings.get(pmid)
        yield Citation(
            pmid=pmid,
            title=_clean(title) or None,
            abstract=_sections(_split_label(ln, known_labels, len(lines) > 1) for ln in lines),
            mesh_headings=tuple(mapper.heading(t) for t in tags) if tags else None,
            source="pico-data",
        )


def bc5cdr(shared: Path) -> Iterator[Citation]:
    for split, tag in (("Training", "bc5cdr-train"), ("Development", "bc5cdr-dev")):
        path = shared / "concepts" / "bc5cdr" / f"CDR_{split}Set.PubTator.txt.gz"
        titles: dict[str, str] = {}
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                pmid, kind, text = (line.rstrip("\n").split("|", 2) + ["", ""])[:3]
                if kind == "t":
                    titles[pmid] = text
                elif kind == "a":
                    yield Citation(
                        pmid=pmid,
                        title=_clean(titles.pop(pmid, "")) or None,
                        abstract=_sections([(None, text)]),
                        source=tag,
                    )
        for pmid, title in titles.items():  # a title without an abstract line
            yield Citation(pmid=pmid, title=_clean(title) or None, source=tag)


# --- helpers -----------------------------------------------------------------------------


def _tar_texts(path: Path, want: object) -> Iterator[tuple[str, str]]:
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if member.isfile() and want(member.name):  # type: ignore[operator]
                data = tar.extractfile(member)
                assert data is not None
                yield member.name, data.read().decode("utf-8")


def _clean(text: str) -> str:
    return " ".join(text.split())


def _sections(pairs: Iterable[tuple[str | None, str]]) -> tuple[AbstractSection, ...] | None:
    out = tuple(AbstractSection(text=t, label=label) for label, raw in pairs if (t := _clean(raw)))
    return out or None


def _split_label(line: str, known: set[str], structured: bool) -> tuple[str | None, str]:
    """("RESULTS", "Mean weight ...") from "RESULTS Mean weight ..." (PICO-data prints no colon).

    The longest run of upper-case words that is a label seen elsewhere (MEDLINE XML, PubMedQA,
    EvidenceOutcomes) wins, so "RESULTS HIV prevalence" keeps HIV in the text. In an abstract of
    several lines an unseen all-capitals run followed by ordinary text is taken as the label.
    """
    words = line.split(" ")
    run = 0
    while run < len(words) - 1 and _LABEL_WORD.match(words[run]):
        run += 1
    for n in range(run, 0, -1):
        label = " ".join(words[:n]).rstrip(",:")
        if label in known:
            return label, " ".join(words[n:])
    while run > 1 and len(words[run - 1]) <= 2:  # "TREATMENT A total of": "A" starts the text
        run -= 1
    if structured and run >= 1 and any(c.isalpha() for c in words[0]) and len(words[0]) >= 4:
        label = " ".join(words[:run]).rstrip(",:")
        return label, " ".join(words[run:])
    return None, line


def merge(records: list[Citation]) -> Citation:
    """One citation from the records of one PMID, ``records`` in order of precedence."""
    first = records[0]
    if len(records) == 1:
        return first
    values: dict[str, object] = {}
    origin: dict[str, str] = {}
    for name in MERGED_FIELDS:
        for rec in records:
            value = getattr(rec, name)
            if value is not None:
                values[name] = value
                origin[name] = rec.source or "?"
                break
    extra: dict[str, object] = {}
    for rec in reversed(records):
        extra.update(rec.extra)
    if origin.get("mesh_headings") != "pubmedqa":
        extra.pop("mesh_major_unknown", None)
    extra["field_sources"] = origin
    sources = "+".join(dict.fromkeys(r.source or "?" for r in records))
    return replace(first, **values, source=sources, extra=extra)  # type: ignore[arg-type]


def build(shared: Path) -> tuple[list[Citation], dict[str, int], MeshMapper]:
    xml_records = list(medline(shared))
    known_labels = {s.label for c in xml_records for s in c.abstract or () if s.label}
    qualifier_uis = _qualifier_uis(xml_records, shared)
    mapper = MeshMapper(mesh(), qualifier_uis)
    qa = list(pubmedqa(shared, mapper))
    eo = list(evidence_outcomes(shared))
    known_labels |= {s.label for c in qa + eo for s in c.abstract or () if s.label}
    sources = [xml_records, qa, eo, list(pico_data(shared, mapper, known_labels)), list(bc5cdr(shared))]
    by_pmid: dict[str, list[Citation]] = {}
    counts: dict[str, int] = {}
    for group in sources:
        for c in group:
            # Descriptor UIs for old-format headings that give only names (2006 records).
            if c.mesh_headings and any(h.descriptor_ui is None for h in c.mesh_headings):
                c = replace(c, mesh_headings=tuple(_fill_ui(h, mapper) for h in c.mesh_headings))
            tag = "medline" if c.source and c.source.endswith((".xml", ".xml.gz")) else c.source
            counts[tag or "?"] = counts.get(tag or "?", 0) + 1
            by_pmid.setdefault(c.pmid, []).append(c)
    merged = [merge(recs) for _pmid, recs in sorted(by_pmid.items(), key=lambda kv: int(kv[0]))]
    return merged, counts, mapper


def _qualifier_uis(xml_records: list[Citation], shared: Path) -> dict[str, str]:
    """Qualifier name -> UI as printed in real records (no qualifier vocabulary is available).

    The E-utilities samples are read too: they name a few qualifiers the MEDLINE files lack.
    """
    records = list(xml_records)
    for path in sorted((shared / "eutils").rglob("*.xml")):
        try:
            records.extend(read_citations(path))
        except InputError:
            continue  # einfo, esearch, ... replies: not PubMed XML
    return {q.name: q.ui for c in records for h in c.mesh_headings or () for q in h.qualifiers if q.ui}


def _fill_ui(h: MeshHeading, mapper: MeshMapper) -> MeshHeading:
    quals = tuple(q if q.ui else replace(q, ui=mapper.qualifier_uis.get(q.name)) for q in h.qualifiers)
    ui = h.descriptor_ui or mapper.descriptor_ui(h.descriptor_name)
    return replace(h, descriptor_ui=ui, qualifiers=quals)


def write(citations: list[Citation], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    # mtime=0 and no file name in the header: the same input gives the same bytes.
    with gzip.GzipFile(filename="", fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        for c in citations:
            line = json.dumps(c.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            gz.write(line.encode("utf-8") + b"\n")
    out.write_bytes(buf.getvalue())


def pool_pmids(shared: Path) -> set[str]:
    return read_run(shared / "bench" / "pools.run").docnos


def verify_pools(citations: list[Citation], bench: Path) -> None:
    """Re-pool the benchmark questions by BM25 over this corpus and compare with pools.run.

    Index as the pools were built: SQLite FTS5, porter tokenizer, title weight 5, abstract 1;
    abstract = each section's text preceded by its label.
    """
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(pmid UNINDEXED, title, abstract, tokenize='porter')")
    db.executemany(
        "INSERT INTO t VALUES (?, ?, ?)",
        [
            (
                c.pmid,
                c.title or "",
                "\n\n".join(f"{s.label} {s.text}" if s.label else s.text for s in c.abstract or ()),
            )
            for c in citations
        ],
    )
    pools: dict[str, list[tuple[str, float]]] = {}
    for line in (bench / "pools.run").read_text().splitlines():
        qid, _q0, pmid, _rank, score, _tag = line.split()
        pools.setdefault(qid, []).append((pmid, float(score)))
    pairs = same = exact = 0
    diff = worst = 0.0
    for qid, pool in sorted(pools.items()):
        frame = json.loads((bench / "frames" / f"{qid}.json").read_text())
        rows = db.execute(
            "SELECT pmid, -bm25(t, 0, 5, 1) FROM t WHERE t MATCH ? ORDER BY bm25(t, 0, 5, 1)",
            (frame["pool_query"],),
        ).fetchall()
        scores = dict(rows)
        mine = [p for p, _ in rows[: len(pool)]]
        pairs += len(pool)
        same += len(set(mine) & {p for p, _ in pool})
        # Same ranking up to exact ties (their order in pools.run follows no rule we can rebuild)
        # and to the file's 4-decimal rounding.
        exact += set(mine) == {p for p, _ in pool} and all(
            abs(scores[p] - s) <= 1e-4 for p, (_, s) in zip(mine, pool, strict=True)
        )
        diff += sum(abs(scores.get(p, 0.0) - s) for p, s in pool)
        worst = max([worst, *(abs(scores.get(p, 0.0) - s) for p, s in pool)])
    print(
        f"BM25 re-pooling: {same}/{pairs} pooled PMIDs found again, {exact}/{len(pools)} pools in the "
        f"same ranking (ties aside), |score difference| mean {diff / pairs:.6f}, max {worst:.6f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the ../shared folder")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--verify-pools", action="store_true", help="re-pool the benchmark by BM25 and compare")
    args = ap.parse_args()
    data = args.shared / "data"
    citations, counts, mapper = build(data)
    write(citations, args.out)

    n = len(citations)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB), {n} citations")
    print("records per source (before merging):", ", ".join(f"{k} {v}" for k, v in counts.items()))
    known = {
        name: sum(getattr(c, field) is not None for c in citations)
        for name, field in (
            ("title", "title"),
            ("abstract", "abstract"),
            ("MeSH", "mesh_headings"),
            ("publication types", "publication_types"),
            ("year", "year"),
        )
    }
    print("with " + ", ".join(f"{name} {n}" for name, n in known.items()))
    print(f"merged PMIDs (in more than one source): {sum('+' in (c.source or '') for c in citations)}")
    print(
        f"MeSH names without a 2024 descriptor UI: {len(mapper.unmapped)} distinct, "
        f"{sum(mapper.unmapped.values())} uses: {', '.join(sorted(mapper.unmapped)[:8])} ..."
    )
    if (data / "bench" / "pools.run").exists():
        pool = pool_pmids(data)
        missing = sorted(pool - {c.pmid for c in citations}, key=int)
        print(f"benchmark pool PMIDs: {len(pool)}, missing from the corpus: {len(missing)} {missing[:20]}")
        if missing:
            return 1
        if args.verify_pools:
            verify_pools(citations, data / "bench")
    return 0


if __name__ == "__main__":
    sys.exit(main())
