"""Sentence-splitting accuracy on real structured abstracts (section ends are sentence ends).

Each structured abstract is flattened the way an unstructured one is printed (section texts
joined by one space, labels dropped) and split. Two kinds of gold positions are known:

- *section ends* (true boundaries): the start of every section after the first must be a
  sentence start. Recall = found / all section ends; reported separately for sections that end
  in ``.?!`` (a splitter can see them) and for all (some sections end without punctuation).
- *known non-boundaries*: inside "vs. X", "et al. (lower-case|bracket|digit)", "e.g. X", "i.e.
  X", "Fig. 2", "P < .05", "p = 0.03", "95% CI 1.2-3.4", "No. 5", "H. pylori", a numbered-list
  marker "2. Patients", and inside a short balanced parenthesis. A predicted sentence start
  strictly inside one of these is a false split.

Precision over the labelled positions = section ends found / (section ends found + false splits).
Boundaries elsewhere inside sections have no gold label; ``--audit N`` prints a random sample of
them (and of rejected candidates) for a hand check.

Corpora (``../shared/data``): ``medline`` (medline16n0902 + medsamp2006, the development set the
rules were written on), ``pubmedqa`` (PQA-L contexts + conclusion), ``pico`` (PICO-data docs whose
abstracts have one labelled section per line; the label is stripped), ``bundled`` (the bundled
corpus of ebm.medline.bundled: it overlaps the others) and ``evidence-outcomes`` (its
EvidenceOutcomes abstracts only, a source the rules were never looked at on).

    python scripts/eval_sentences.py --corpus medline pubmedqa pico --splitters ebm pysbd sentencizer
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.text.sentences import split_spans  # noqa: E402

Starts = Callable[[str], list[int]]  # text -> offsets where sentences start

NON_BOUNDARY_PATTERNS: dict[str, re.Pattern[str]] = {
    "vs.": re.compile(r"\bvs\.\s+\S+"),
    "et al.": re.compile(r"\bet al\.\s+[a-z(\[0-9,;]\S*"),
    "e.g./i.e.": re.compile(r"\b[ei]\.\s?[ge]\.,?\s+\S+"),
    "Fig. N": re.compile(r"\bFigs?\.\s+\d+"),
    "P value": re.compile(r"\b[Pp]\s*[<>=≤≥]\s*0?\.\d+"),
    "95% CI": re.compile(r"\b95\s?%\s*CI[:,]?\s*-?\d+(?:\.\d+)?\s*(?:-|–|to)\s*\d+(?:\.\d+)?"),
    "decimal": re.compile(r"\d\.\d"),
    "No. N": re.compile(r"\bNos?\.\s+\d+"),
    "genus": re.compile(r"\b[A-Z]\.\s+[a-z]{3,}"),
    "approx./ca./cf.": re.compile(r"\b(?:approx|ca|cf)\.\s+\S+"),
    # after a word of 3+ letters ending a sentence or a colon, so "Vol. 19, No. 13. See" is not one
    "list marker": re.compile(r"(?:^|[a-z]{3}[.:;]\s+)(\(?\d{1,2}[.)]\s+[A-Z])"),
    "parenthesis": re.compile(r"\([^()]{1,200}\)"),
}
_ENDS_WITH_MARK = re.compile(r"[.?!]['\"”’)\]]*\s*$")
_CANDIDATE = re.compile(r"[.?!]+['\"”’)\]]*\s+(?=\S)")


@dataclass
class Abstract:
    ident: str
    sections: list[str]


@dataclass
class Tally:
    abstracts: int = 0
    ends: int = 0
    ends_found: int = 0
    ends_marked: int = 0  # section ends with terminal punctuation
    ends_marked_found: int = 0
    sentences: int = 0
    non_boundaries: dict[str, int] = field(default_factory=dict)
    false_splits: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    missed: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


# --- corpora ---------------------------------------------------------------------------------


def medline_abstracts(shared: Path) -> Iterator[Abstract]:
    from ebm.medline.reader import read_citations

    for name in ("medline16n0902.xml.gz", "medsamp2006.xml"):
        for c in read_citations(shared / "medline" / name):
            secs = [s.text.strip() for s in c.abstract or () if s.text and s.text.strip()]
            if len(secs) >= 2:
                yield Abstract(c.pmid, secs)


def pubmedqa_abstracts(shared: Path) -> Iterator[Abstract]:
    with gzip.open(shared / "pubmedqa" / "ori_pqal.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    for pmid, rec in data.items():
        secs = [s.strip() for s in [*rec["CONTEXTS"], rec["LONG_ANSWER"]] if s and s.strip()]
        if len(secs) >= 2:
            yield Abstract(pmid, secs)


_INLINE_LABEL = re.compile(r"^[A-Z][A-Z/&,\- ]*[A-Z]:?\s+(?=[A-Z0-9(\"'])")


def pico_abstracts(shared: Path) -> Iterator[Abstract]:
    tar = shared / "pico" / "pico-data-nguyen2017" / "pico-data-docs-and-annotations.tar.gz"
    with tarfile.open(tar) as tf:
        for member in tf:
            path = Path(member.name)  # docs/PMID.txt (docs/mesh_tags/ holds other files)
            if not (member.isfile() and path.suffix == ".txt" and path.parent.name == "docs"):
                continue
            f = tf.extractfile(member)
            assert f is not None
            text = f.read().decode("utf-8", errors="replace").strip()
            _, _, abstract = text.partition("\n\n")
            lines = [ln.strip() for ln in abstract.split("\n") if ln.strip()]
            secs = [_INLINE_LABEL.sub("", ln, count=1) for ln in lines if _INLINE_LABEL.match(ln)]
            if len(secs) >= 2 and len(secs) == len(lines):
                yield Abstract(path.stem, secs)


def bundled_abstracts(shared: Path, source_prefix: str = "") -> Iterator[Abstract]:
    try:
        from ebm.medline.bundled import iter_bundled
    except ImportError:
        print("  (no ebm.medline.bundled: corpus skipped)", file=sys.stderr)
        return
    for c in iter_bundled():
        if not (c.source or "").startswith(source_prefix):
            continue
        secs = [s.text.strip() for s in c.abstract or () if s.text and s.text.strip()]
        if len(secs) >= 2:
            yield Abstract(c.pmid, secs)


def evidence_outcomes_abstracts(shared: Path) -> Iterator[Abstract]:
    """The EvidenceOutcomes abstracts of the bundled corpus (structured by the corpus builder)."""
    return bundled_abstracts(shared, "evidence-outcomes")


CORPORA = {
    "medline": medline_abstracts,
    "pubmedqa": pubmedqa_abstracts,
    "pico": pico_abstracts,
    "bundled": bundled_abstracts,
    "evidence-outcomes": evidence_outcomes_abstracts,
}

# --- splitters -------------------------------------------------------------------------------


def ebm_starts() -> Starts:
    return lambda text: [a for a, _ in split_spans(text)]


def pysbd_starts() -> Starts:
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def run(text: str) -> list[int]:
        out = []
        for s in seg.segment(text):
            lead = len(s.sent) - len(s.sent.lstrip())
            out.append(s.start + lead)
        return out

    return run


def sentencizer_starts() -> Starts:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return lambda text: [s[0].idx for s in nlp(text).sents if len(s)]


SPLITTERS: dict[str, Callable[[], Starts]] = {
    "ebm": ebm_starts,
    "pysbd": pysbd_starts,
    "sentencizer": sentencizer_starts,
}

# --- scoring ---------------------------------------------------------------------------------


def _context(text: str, pos: int, width: int = 60) -> str:
    return (text[max(0, pos - width) : pos] + " || " + text[pos : pos + width]).replace("\n", " ")


def score(abstract: Abstract, starts_fn: Starts, tally: Tally) -> None:
    text = " ".join(abstract.sections)
    ends: list[tuple[int, bool]] = []  # (offset of next section start, previous ends with a mark)
    pos = 0
    for prev, sec in zip(abstract.sections, abstract.sections[1:], strict=False):
        pos += len(prev) + 1
        ends.append((pos, bool(_ENDS_WITH_MARK.search(prev))))
        assert text.startswith(sec, pos)
    t0 = time.perf_counter()
    starts = starts_fn(text)
    tally.seconds += time.perf_counter() - t0
    predicted = set(starts) - {0}
    tally.abstracts += 1
    tally.sentences += len(starts)
    for off, marked in ends:
        hit = off in predicted
        tally.ends += 1
        tally.ends_found += hit
        tally.ends_marked += marked
        tally.ends_marked_found += hit and marked
        if not hit and marked:
            tally.missed.append(f"{abstract.ident}: {_context(text, off)}")
    for name, pat in NON_BOUNDARY_PATTERNS.items():
        for m in pat.finditer(text):
            tally.non_boundaries[name] = tally.non_boundaries.get(name, 0) + 1
            g = 1 if pat.groups else 0  # the protected part, when the pattern has context around it
            inside = [b for b in predicted if m.start(g) < b < m.end(g)]
            if inside:
                tally.false_splits[name] = tally.false_splits.get(name, 0) + 1
                tally.false.append(f"{abstract.ident} [{name}]: {_context(text, inside[0])}")
    end_offsets = {off for off, _ in ends}
    tally.internal.extend(f"{abstract.ident}: {_context(text, b)}" for b in predicted - end_offsets)
    for m in _CANDIDATE.finditer(text):
        if m.end() not in predicted:
            tally.rejected.append(f"{abstract.ident}: {_context(text, m.end())}")


def report(corpus: str, name: str, t: Tally) -> None:
    fs = sum(t.false_splits.values())
    nb = sum(t.non_boundaries.values())
    precision = t.ends_found / (t.ends_found + fs) if t.ends_found + fs else float("nan")
    print(
        f"{corpus:9} {name:12} abstracts={t.abstracts:5d} sentences={t.sentences:6d} "
        f"section-end recall={t.ends_found / t.ends:.4f} ({t.ends_found}/{t.ends}) "
        f"[ending in .?!: {t.ends_marked_found / max(t.ends_marked, 1):.4f} "
        f"({t.ends_marked_found}/{t.ends_marked})] "
        f"false splits={fs}/{nb} ({fs / max(nb, 1):.4%}) precision(labelled)={precision:.4f} "
        f"ms/abstract={1000 * t.seconds / max(t.abstracts, 1):.2f}"
    )
    detail = ", ".join(f"{k} {t.false_splits.get(k, 0)}/{v}" for k, v in sorted(t.non_boundaries.items()))
    print(f"{'':22} false splits by pattern: {detail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--corpus", nargs="+", default=["medline"], choices=sorted(CORPORA))
    ap.add_argument("--splitters", nargs="+", default=["ebm"], choices=sorted(SPLITTERS))
    ap.add_argument("--errors", type=int, default=0, help="print up to N missed ends and false splits")
    ap.add_argument("--audit", type=int, default=0, help="print N random internal splits and rejections")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args(argv)

    for corpus in args.corpus:
        abstracts = list(CORPORA[corpus](args.shared))
        if not abstracts:
            continue
        for name in args.splitters:
            tally = Tally()
            fn = SPLITTERS[name]()
            for a in abstracts:
                score(a, fn, tally)
            report(corpus, name, tally)
            for line in tally.missed[: args.errors]:
                print("   MISSED", line)
            for line in tally.false[: args.errors]:
                print("   FALSE ", line)
            if args.audit:
                rng = random.Random(args.seed)
                for line in rng.sample(tally.internal, min(args.audit, len(tally.internal))):
                    print("   SPLIT ", line)
                for line in rng.sample(tally.rejected, min(args.audit, len(tally.rejected))):
                    print("   KEPT  ", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
