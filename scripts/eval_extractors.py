"""Intrinsic evaluation of the population, intervention and problem extractors (issue 4).

    python scripts/eval_extractors.py                 # everything (about a minute on one core)
    python scripts/eval_extractors.py --only population --sets pico-train
    python scripts/eval_extractors.py --json results.json

Population and intervention, on gold spans from ``../shared/data/pico``:

- ``ebmnlp-A`` / ``ebmnlp-B``: the 500 EBM-NLP dev abstracts (P and I token tags), split into a
  fixed half A (even document index: used for development) and half B (odd: held out). EBM-NLP
  has no PMIDs: each document is matched to its bundled citation by its title (the same
  abstracts are in PICO-data) and processed with its title and section labels; the gold tokens
  are carried over by a character alignment (``align_fuzzy``).
- ``pico-train`` / ``pico-dev``: PICO-data (Nguyen et al. 2017) participant spans, HMMCrowd
  aggregation, on the bundled citation of each PMID (title and labelled sections); the
  development split for tuning is ``pico-train``, ``pico-dev`` is reported, never tuned on.

Measures for the top candidate: (a) the paper's, correct when it lies in a sentence that
contains a gold token of the element, against the baseline "first three sentences of the
abstract" (correct when any of them contains one); (b) span overlap, correct when at least half
of its tokens are gold tokens, against the reference phrase "first five words of the text".
Documents without a gold span of the element are left out (the paper's test abstracts all had
one); their number is reported.

Problem: the primary problem against the MeSH major-topic disorders (descriptor in tree C or
F03, major as descriptor or through a starred qualifier; any of them counts) of the bundled
citations whose major flags are known (MEDLINE XML and PICO-data records; PubMedQA's are not),
for the title only, title + first two sentences and the whole abstract; split by PMID parity
(even = development, odd = held out). Strict (the paper's), on all citations and on the
answerable ones (a major-topic disorder is named in the text), lenient and version-tolerant
(``eval_problems``).
"""

from __future__ import annotations

import argparse
import difflib
import functools
import gzip
import json
import re
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from problem_corpus import pool_pmids, problem_citations  # noqa: E402

from ebm.citation import AbstractSection, Citation  # noqa: E402
from ebm.concepts.annotate import Concept  # noqa: E402
from ebm.concepts.annotate import annotate as annotate_concepts  # noqa: E402
from ebm.medline import iter_bundled  # noqa: E402
from ebm.mesh import mesh  # noqa: E402
from ebm.text.document import Document  # noqa: E402
from ebm.text.pipeline import SEPARATOR  # noqa: E402
from extractors.candidate import Candidate  # noqa: E402
from extractors.intervention import POSITION_WEIGHTS, extract_interventions, position_class  # noqa: E402
from extractors.population import extract_population  # noqa: E402
from extractors.problem import is_ancestor  # noqa: E402
from extractors.problem_ranker import (  # noqa: E402
    ProblemRanker,
    load_problem_ranker,
    problem_features,
)


@functools.cache
def resources() -> Any:  # ebm.resources.Resources of the shipped rules
    from ebm.resources import Resources

    return Resources.load()


def default_pipeline() -> Any:
    return resources().pipeline


def default_matcher() -> Any:
    return resources().matcher


def default_problem_ranker() -> ProblemRanker:
    return resources().problem_ranker  # type: ignore[no-any-return]


def annotate(doc: Document, matcher: Any) -> list[Concept]:
    return annotate_concepts(doc, matcher, resources().negation)


PICO_TAR = "pico/pico-data-nguyen2017/pico-data-docs-and-annotations.tar.gz"
EBMNLP = "pico/ebm-nlp/dev.txt.gz"
AGGREGATION = "HMMCrowd"
SETS = ("ebmnlp-A", "ebmnlp-B", "pico-train", "pico-dev")
SCOPES = ("title", "title+2", "all")
# The rules' primary problem in each scope, then the learned ranker's pick (whole abstract).
VARIANTS = (*SCOPES, "learned")
REFERENCE_WORDS = 5  # length of the first-words reference phrase


@dataclass
class GoldDoc:
    key: str  # PMID, or "ebmnlp:N"
    citation: Citation
    text: str  # the text the gold offsets refer to
    spans: dict[str, list[tuple[int, int]]]  # element ("P", "I") -> character spans in ``text``


@dataclass
class Prepared:
    gold: GoldDoc
    doc: Document
    concepts: list[Concept]
    token_gold: dict[str, list[bool]]  # element -> per Document token


# --- gold data --------------------------------------------------------------------------------


def ebmnlp_docs(shared: Path, bundled: list[Citation] | None = None) -> list[GoldDoc]:
    """EBM-NLP dev: ``token POS tag`` lines, a blank line between sentences, ``-DOCSTART-``.

    Each document is title + abstract without PMID; it is matched to its bundled citation (the
    same abstracts are in PICO-data) by its title, so that the extractors see the title and the
    labelled sections they see in use. A document without a match is processed as one
    unstructured abstract.
    """
    docs: list[list[list[tuple[str, str]]]] = []
    with gzip.open(shared / EBMNLP, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("-DOCSTART-"):
                docs.append([[]])
            elif not line.strip():
                if docs and docs[-1][-1]:
                    docs[-1].append([])
            else:
                token, _pos, tag = line.rsplit(" ", 2)
                docs[-1][-1].append((token, tag))
    by_title: dict[str, list[tuple[str, Citation]]] = {}
    for c in bundled or ():
        if c.title and c.abstract:
            k = _match_key(c.title)
            by_title.setdefault(k[:20], []).append((k, c))
    out: list[GoldDoc] = []
    for n, sentences in enumerate(docs):
        text, spans = _detokenize([s for s in sentences if s])
        k = _match_key(text)
        found = [c for t, c in by_title.get(k[:20], ()) if k.startswith(t)]
        cit = (
            max(found, key=lambda c: len(c.title or ""))
            if found
            else Citation(pmid=f"ebmnlp{n}", abstract=(AbstractSection(text),), source="ebm-nlp")
        )
        out.append(GoldDoc(f"ebmnlp:{n}", cit, text, spans))
    return out


def _match_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.casefold())


_NO_SPACE_BEFORE = {".", ",", ";", ":", ")", "]", "%", "?", "!"}


def _detokenize(sentences: list[list[tuple[str, str]]]) -> tuple[str, dict[str, list[tuple[int, int]]]]:
    """Text with ordinary spacing and the character span of every tagged token."""
    parts: list[str] = []
    pos = 0
    spans: dict[str, list[tuple[int, int]]] = {"P": [], "I": [], "O": []}
    for sentence in sentences:
        for i, (token, tag) in enumerate(sentence):
            glue = (not parts) or (i > 0 and (token in _NO_SPACE_BEFORE or sentence[i - 1][0] in {"(", "["}))
            if not glue:
                parts.append(" ")
                pos += 1
            if tag in spans:
                spans[tag].append((pos, pos + len(token)))
            parts.append(token)
            pos += len(token)
    return "".join(parts), spans


def pico_docs(shared: Path, split: str, bundled: dict[str, Citation]) -> list[GoldDoc]:
    """PICO-data participant spans (``AGGREGATION``) of one split, on the bundled citations."""
    want = f"annotations/{split}/PICO-annos-crowdsourcing-agg.json"
    spans: dict[str, list[tuple[int, int]]] = {}
    texts: dict[str, str] = {}
    with tarfile.open(shared / PICO_TAR, "r:gz") as tar:
        member = tar.extractfile(want)
        if member is None:
            raise SystemExit(f"{want} not found in {shared / PICO_TAR}")
        for line in member.read().decode("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                spans[row["docid"]] = [tuple(s) for s in row["Participants"][AGGREGATION]]
        for m in tar:
            if m.name.startswith("docs/") and m.name.count("/") == 1 and Path(m.name).stem in spans:
                data = tar.extractfile(m)
                assert data is not None
                texts[Path(m.name).stem] = data.read().decode("utf-8")
    out: list[GoldDoc] = []
    for pmid in sorted(spans, key=int):
        if pmid in texts and pmid in bundled and bundled[pmid].abstract:
            out.append(GoldDoc(pmid, bundled[pmid], texts[pmid], {"P": spans[pmid]}))
    return out


# --- alignment of gold offsets to Document tokens ------------------------------------------------


def align(doc: Document, text: str) -> list[int] | None:
    """For each character of ``doc.text``, its offset in ``text`` (-1 for spaces and separators).

    The document is the title and the sections joined by ``SEPARATOR``; each piece is found in
    the gold text ignoring whitespace (the corpus builder collapses spaces and drops section
    labels). None when a piece cannot be found.
    """
    nonspace = [i for i, ch in enumerate(text) if not ch.isspace()]
    squeezed = "".join(text[i] for i in nonspace)
    out = [-1] * len(doc.text)
    cursor = 0
    offset = 0
    for piece in doc.text.split(SEPARATOR):
        chars = [i for i, ch in enumerate(piece) if not ch.isspace()]
        needle = "".join(piece[i] for i in chars)
        if needle:
            at = squeezed.find(needle, cursor)
            if at < 0:
                return None
            for k, i in enumerate(chars):
                out[offset + i] = nonspace[at + k]
            cursor = at + len(needle)
        offset += len(piece) + len(SEPARATOR)
    return out


def align_fuzzy(doc: Document, text: str) -> list[int]:
    """``align`` for texts that differ in a few characters (EBM-NLP drops some punctuation and
    has undecodable bytes; its section labels are in the text): the matching blocks of the two
    texts without whitespace (difflib); characters outside them map to -1."""
    a_idx = [i for i, ch in enumerate(doc.text) if not ch.isspace()]
    b_idx = [i for i, ch in enumerate(text) if not ch.isspace()]
    a = "".join(doc.text[i] for i in a_idx)
    b = "".join(text[i] for i in b_idx)
    out = [-1] * len(doc.text)
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            out[a_idx[block.a + k]] = b_idx[block.b + k]
    return out


def prepare(golds: Iterable[GoldDoc], log: Callable[[str], None]) -> list[Prepared]:
    pipeline, matcher = default_pipeline(), default_matcher()
    out: list[Prepared] = []
    skipped = 0
    for g in golds:
        doc = pipeline.process(g.citation)
        mapping = align(doc, g.text)
        if mapping is None and g.key.startswith("ebmnlp"):
            mapping = align_fuzzy(doc, g.text)
        if mapping is None:
            skipped += 1
            continue
        token_gold: dict[str, list[bool]] = {}
        for element, spans in g.spans.items():
            mask = [False] * (len(g.text) + 1)
            for a, b in spans:
                for i in range(max(a, 0), min(b, len(g.text))):
                    mask[i] = True
            token_gold[element] = [
                any(mapping[i] >= 0 and mask[mapping[i]] for i in range(t.start, t.end)) for t in doc.tokens
            ]
        out.append(Prepared(g, doc, annotate(doc, matcher), token_gold))
    if skipped:
        log(f"  {skipped} document(s) skipped: text not aligned with the gold text")
    return out


# --- measures -------------------------------------------------------------------------------------


@dataclass
class Tally:
    n: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: str) -> None:
        self.n += 1
        self.counts[outcome] += 1

    def pct(self, outcome: str) -> float:
        return 100.0 * self.counts[outcome] / self.n if self.n else 0.0

    def row(self) -> dict[str, Any]:
        return {"n": self.n, **{k: round(self.pct(k), 1) for k in ("correct", "unknown", "wrong")}}


def tokens_in(doc: Document, start: int, end: int) -> range:
    idx = [i for i, t in enumerate(doc.tokens) if t.start < end and t.end > start]
    return range(idx[0], idx[-1] + 1) if idx else range(0)


def sentence_has_gold(doc: Document, sentence: int, gold: list[bool]) -> bool:
    s = doc.sentences[sentence]
    return any(gold[s.token_start : s.token_end])


def overlap_ok(tokens: range, gold: list[bool]) -> bool:
    return len(tokens) > 0 and 2 * sum(gold[i] for i in tokens) >= len(tokens)


def eval_phrases(
    prepared: list[Prepared], element: str, extract: Callable[[Prepared], list[Candidate]]
) -> dict[str, Any]:
    """Measures (a) and (b) with their baselines for the top candidate of ``extract``."""
    a, a_base, b, b_ref = Tally(), Tally(), Tally(), Tally()
    examples: list[dict[str, Any]] = []
    skipped = 0
    for p in prepared:
        gold = p.token_gold[element]
        doc = p.doc
        if not any(gold):  # as in the paper: only abstracts with an annotated element count
            skipped += 1
            continue
        abstract = [s for s in doc.sentences if s.position != "title"]
        a_base.add("correct" if any(sentence_has_gold(doc, s.index, gold) for s in abstract[:3]) else "wrong")
        found = extract(p)
        if not found:
            a.add("unknown")
            b.add("unknown")
        else:
            top = found[0]
            toks = tokens_in(doc, top.start, top.end)
            a.add("correct" if sentence_has_gold(doc, top.sentence, gold) else "wrong")
            ok = overlap_ok(toks, gold)
            b.add("correct" if ok else "wrong")
            if len(examples) < 400:
                examples.append({"doc": p.gold.key, "top": top.text, "overlap": ok})
        words = [i for i, t in enumerate(doc.tokens) if any(ch.isalnum() for ch in t.text)][:REFERENCE_WORDS]
        b_ref.add("correct" if words and overlap_ok(range(words[0], words[-1] + 1), gold) else "wrong")
    return {
        "without_gold": skipped,
        "a": a.row(),
        "a_baseline_first3": a_base.row(),
        "b": b.row(),
        "b_reference_first_words": b_ref.row(),
        "examples": examples,
    }


def position_density(prepared: list[Prepared], element: str) -> dict[str, tuple[int, int]]:
    """Per position class of the intervention extractor: (sentences with a gold token of
    ``element``, sentences), over the abstracts that have one."""
    out: dict[str, list[int]] = {}
    for p in prepared:
        gold = p.token_gold[element]
        if not any(gold):
            continue
        for s in p.doc.sentences:
            row = out.setdefault(position_class(s), [0, 0])
            row[0] += sentence_has_gold(p.doc, s.index, gold)
            row[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def population(p: Prepared) -> list[Candidate]:
    return extract_population(p.doc, p.concepts, resources().value("population_words"))


def intervention(p: Prepared) -> list[Candidate]:
    r = resources()
    return extract_interventions(
        p.doc,
        p.concepts,
        vocabulary=r.vocabulary,
        cues=r.value("intervention_cues"),
        kinds=r.value("intervention_kinds"),
        terms=r.value("intervention_terms"),
        words=r.value("population_words"),
    )


# --- problems -------------------------------------------------------------------------------------


def indexed_descriptors() -> set[str]:
    """Every descriptor any bundled record is indexed with (major or not, all sources)."""
    return {h.descriptor_ui for c in iter_bundled() for h in c.mesh_headings or () if h.descriptor_ui}


_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset("of the and in with or to for nos".split())


def _word_set(text: str) -> set[str]:
    """Lower-case words, a plural -s dropped ("cancers" = "cancer")."""
    return {
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
        for w in _WORD.findall(text.casefold())
    }


@cache
def _entry_terms() -> dict[str, list[frozenset[str]]]:
    out: dict[str, list[frozenset[str]]] = {}
    for t in mesh().terms:
        words = frozenset(_word_set(t.text) - _FILLER)
        if words:
            out.setdefault(t.descriptor_ui, []).append(words)
    return out


def named_in_text(gold: set[str], doc: Document) -> bool:
    """True when some entry term of a gold descriptor has all its words in one sentence of the
    title or abstract (any order: "Diabetes Mellitus, Type 2" in "type 2 diabetes mellitus").
    Decided on the text and MeSH alone, not on what the concept matcher recognises."""
    sentences = [_word_set(s.text) for s in doc.sentences]
    terms = _entry_terms()
    return any(words <= s for g in gold for words in terms.get(g, ()) for s in sentences)


def eval_problems(
    citations: list[tuple[Citation, set[str]]], in_use: set[str], ranker: ProblemRanker | None = None
) -> dict[str, Any]:
    """Per scope: strict, the paper's criterion (the primary problem is one of the major-topic
    disorders), on all citations and on the answerable ones (a major-topic disorder is named in
    the text, ``named_in_text``); lenient (also a MeSH descendant of one: a more specific disorder
    under the indexed topic); version-tolerant (also a descendant that no bundled record is
    indexed with, such as Essential Hypertension, new in MeSH 2019: an estimate of what MeSH
    drift costs). ``recognised``: a major-topic disorder is among all the problems found."""
    pipeline, matcher, voc = default_pipeline(), default_matcher(), resources().vocabulary
    ranker = ranker or default_problem_ranker()
    strict = {s: Tally() for s in VARIANTS}
    answerable = {s: Tally() for s in VARIANTS}
    lenient = {s: Tally() for s in VARIANTS}
    tolerant = {s: Tally() for s in VARIANTS}
    recognised = Tally()
    recognised_answerable = Tally()
    for c, gold in citations:
        doc = pipeline.process(c)
        concepts = annotate(doc, matcher)
        named = named_in_text(gold, doc)
        ranked = problem_features(doc, concepts, vocabulary=voc, kinds=resources().value("problem_kinds"))
        chosen = ranker.choose(ranked)
        for scope in VARIANTS:
            if scope == "learned":
                found = [ranked.candidates[chosen[0]]] if chosen else []
            else:
                found = ranked.by_scope[scope]
            if scope == "all":
                hit = "correct" if any(f.concepts[0] in gold for f in found) else "wrong"
                recognised.add(hit)
                if named:
                    recognised_answerable.add(hit)
            tallies = [strict[scope], lenient[scope], tolerant[scope]] + (
                [answerable[scope]] if named else []
            )
            if not found:
                for t in tallies:
                    t.add("unknown")
                continue
            top = found[0].concepts[0]
            below = any(is_ancestor(g, top, voc) for g in gold)
            ok = top in gold
            strict[scope].add("correct" if ok else "wrong")
            lenient[scope].add("correct" if ok or below else "wrong")
            tolerant[scope].add("correct" if ok or (below and top not in in_use) else "wrong")
            if named:
                answerable[scope].add("correct" if ok else "wrong")
    out: dict[str, Any] = {
        s: {
            "strict": strict[s].row(),
            "answerable": answerable[s].row(),
            "lenient": lenient[s].row(),
            "version_tolerant": tolerant[s].row(),
        }
        for s in VARIANTS
    }
    out["recognised"] = recognised.row()
    out["recognised_answerable"] = recognised_answerable.row()
    return out


# --- report ---------------------------------------------------------------------------------------


def _fmt(row: dict[str, Any]) -> str:
    return f"{row['correct']:5.1f} {row['unknown']:5.1f} {row['wrong']:5.1f}"


def phrase_table(results: dict[str, dict[str, Any]]) -> Iterator[str]:
    yield (
        "| element | set | n | (a) extractor C/U/W % | (a) first 3 sentences C/W % "
        "| (b) extractor C/U/W % | (b) first 5 words C % |"
    )
    yield "|---|---|---|---|---|---|---|"
    for key, r in results.items():
        element, name = key.split("@")
        base, ref = r["a_baseline_first3"], r["b_reference_first_words"]
        yield (
            f"| {element} | {name} | {r['a']['n']} | {_fmt(r['a'])} "
            f"| {base['correct']:.1f} / {base['wrong']:.1f} | {_fmt(r['b'])} | {ref['correct']:.1f} |"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--only", choices=["population", "intervention", "problem"], action="append")
    ap.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    ap.add_argument("--limit", type=int, help="at most this many documents per set (quick runs)")
    ap.add_argument("--json", type=Path, help="also write all results (with examples) here")
    ap.add_argument(
        "--positions",
        action="store_true",
        help="also print, per EBM-NLP set, how often a sentence at each position names an intervention",
    )
    ap.add_argument("--problem-ranker", type=Path, help="a trained problem ranker file (default: shipped)")
    args = ap.parse_args(argv)
    only = set(args.only or ["population", "intervention", "problem"])

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    results: dict[str, Any] = {}
    bundled: dict[str, Citation] = {}
    if only & {"population", "intervention"}:
        bundled = {c.pmid: c for c in iter_bundled() if "pico-data" in (c.source or "")}
    for name in args.sets:
        if name.startswith("ebmnlp"):
            docs = ebmnlp_docs(args.shared, list(bundled.values()))
            docs = docs[0::2] if name.endswith("A") else docs[1::2]
            elements = [("population", "P", population), ("intervention", "I", intervention)]
        else:
            docs = pico_docs(args.shared, name.split("-")[1], bundled)
            elements = [("population", "P", population)]
        elements = [e for e in elements if e[0] in only]
        if not elements:
            continue
        log(f"{name}: {len(docs)} documents")
        prepared = prepare(docs[: args.limit] if args.limit else docs, log)
        for label, element, fn in elements:
            results[f"{label}@{name}"] = eval_phrases(prepared, element, fn)
        if args.positions and name.startswith("ebmnlp"):
            density = position_density(prepared, "I")
            results[f"positions@{name}"] = density
            print(f"\n| position ({name}) | sentences naming an intervention | share % | weight |")
            print("|---|---|---|---|")
            for key in sorted(density, key=lambda k: -density[k][0] / density[k][1]):
                hit, n = density[key]
                print(f"| {key} | {hit} / {n} | {100 * hit / n:.1f} | {POSITION_WEIGHTS[key]:g} |")
    phrase_results = {k: v for k, v in results.items() if "@" in k and not k.startswith("positions@")}
    if phrase_results:
        print("\n".join(phrase_table(phrase_results)))
    if "problem" in only:
        cits = problem_citations()
        if args.limit:
            cits = cits[: args.limit]
        dev = [x for x in cits if int(x[0].pmid) % 2 == 0]
        held = [x for x in cits if int(x[0].pmid) % 2 == 1]
        log(f"problem: {len(cits)} citations with a major-topic disorder ({len(dev)} dev, {len(held)} test)")
        in_use = indexed_descriptors()
        ranker = load_problem_ranker(args.problem_ranker) if args.problem_ranker else None
        xml = [x for x in cits if ".xml" in (x[0].source or "")]
        # The paper's selection (section 5.4): abstracts retrieved for clinical questions whose
        # main topic is a disorder; here the bench pools of the 23 development questions.
        pooled = pool_pmids(args.shared / "bench" / "pools.run")
        in_pools = [x for x in cits if x[0].pmid in pooled]
        parts = [
            ("dev (even PMID)", dev),
            ("test (odd PMID)", held),
            ("MEDLINE XML records (both)", xml),
            ("question pools (both)", in_pools),
            ("question pools, test (odd PMID)", [x for x in in_pools if int(x[0].pmid) % 2 == 1]),
        ]
        rows = []
        for name, part in parts:
            if not part:
                continue
            r = eval_problems(part, in_use, ranker)
            results[f"problem@{name}"] = r
            rows.append((name, r))
        print(
            "\n| problem, strict | n | title C/U/W % | title + 2 sentences C/U/W % | whole abstract C/U/W % "
            "| learned ranker C/U/W % | recognised % |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, r in rows:
            st = [_fmt(r[s]["strict"]) for s in VARIANTS]
            rec = r["recognised"]["correct"]
            print(f"| {name} | {r['all']['strict']['n']} | {' | '.join(st)} | {rec:.1f} |")
        print(
            "\n| problem, answerable (disorder named in the text) | n (% of all) | title C/U/W % "
            "| title + 2 sentences C/U/W % | whole abstract C/U/W % | learned ranker C/U/W % | recognised % |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, r in rows:
            a = r["all"]["answerable"]
            share = 100.0 * a["n"] / max(r["all"]["strict"]["n"], 1)
            st = [_fmt(r[s]["answerable"]) for s in VARIANTS]
            rec = r["recognised_answerable"]["correct"]
            print(f"| {name} | {a['n']} ({share:.1f}) | {' | '.join(st)} | {rec:.1f} |")
        print(
            "\n| problem, C % | lenient: title / title + 2 / whole / learned "
            "| version-tolerant: title / title + 2 / whole / learned |"
        )
        print("|---|---|---|")
        for name, r in rows:
            le = " / ".join(f"{r[s]['lenient']['correct']:.1f}" for s in VARIANTS)
            vt = " / ".join(f"{r[s]['version_tolerant']['correct']:.1f}" for s in VARIANTS)
            print(f"| {name} | {le} | {vt} |")
    log(f"done in {time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
