"""Concept recognition accuracy on BC5CDR (PubTator) against gold MeSH IDs.

Disease mentions are compared with our DISORDER (DISO) matches, Chemical mentions with
CHEMICALS & DRUGS (CHEM). Document level: the set of MeSH IDs per abstract (gold IDs "-1"
dropped, composite "D1|D2" split); also with MeSH versions reconciled (``version_adjusted``).
Mention level: strict (same span and ID) and overlap (overlapping span, same ID). Chemical
predictions are limited to BC5CDR's annotation scope (no proteins, no drug classes named by
their action) unless --scope classes or all (``in_scope``).
Tune on the training set; report the development set separately.

Usage:
  python scripts/eval_bc5cdr.py [--split train|dev|both|all] [--matcher dictionary|quickumls]
        [--threshold 0.9] [--no-pipeline] [--no-adjectives] [--nested GROUPS]
        [--scope bc5cdr|classes|all] [--errors N] [--json]
Needs a concept index (`ebm setup`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.citation import AbstractSection, Citation  # noqa: E402
from ebm.concepts.groups import CHEMICALS, DISORDERS  # noqa: E402

SPLITS = {
    "train": "CDR_TrainingSet.PubTator.txt.gz",
    "dev": "CDR_DevelopmentSet.PubTator.txt.gz",
}
TYPES = {"Disease": DISORDERS, "Chemical": CHEMICALS}

# BC5CDR's chemical annotation leaves out proteins, enzymes and nucleic acids (in the training
# set 35, 1 and 1 of 5,203 Chemical mentions have a descriptor under these trees, against
# ~370 documents where the vocabulary names one), and it rarely marks drug classes named by
# their action (descriptors only under D27 Chemical Actions and Uses: "analgesics",
# "antibiotics", "anesthetics"): of the 255 document-level class IDs the dictionary matcher
# finds in the training set, 30 are in the gold (37 of its 1,467 Chemical IDs are such
# classes). The product keeps both kinds (the extractors need "antibiotics"); the evaluation
# does not count them as Chemical predictions:
# - --scope bc5cdr (default): neither proteins/enzymes/nucleic acids nor action classes;
# - --scope classes: action classes counted (proteins still not: the earlier convention);
# - --scope all: every CHEM match counted.
# All three are reported in docs/concepts.md; the gold is never changed.
OUT_OF_SCOPE_CHEMICAL_TREES = ("D12.776", "D08.811", "D13.444")
ACTION_CLASS_TREE = "D27."
SCOPES = ("bc5cdr", "classes", "all")


@dataclass
class Mention:
    start: int
    end: int
    text: str
    type: str
    ids: tuple[str, ...]


@dataclass
class Doc:
    pmid: str
    title: str
    abstract: str
    mentions: list[Mention] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.title} {self.abstract}"


def read_pubtator(path: Path) -> list[Doc]:
    docs: list[Doc] = []
    cur: Doc | None = None
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                cur = None
                continue
            if "|t|" in line[:20]:
                pmid, _, title = line.split("|", 2)
                cur = Doc(pmid, title, "")
                docs.append(cur)
            elif "|a|" in line[:20] and cur is not None:
                cur.abstract = line.split("|", 2)[2]
            elif cur is not None:
                parts = line.split("\t")
                if len(parts) >= 6 and parts[1].isdigit():
                    ids = tuple(i for i in parts[5].split("|") if i and i != "-1")
                    cur.mentions.append(Mention(int(parts[1]), int(parts[2]), parts[3], parts[4], ids))
    return docs


@dataclass
class PRF:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, gold: set, pred: set) -> None:
        self.tp += len(gold & pred)
        self.fp += len(pred - gold)
        self.fn += len(gold - pred)

    @property
    def p(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def r(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return 2 * self.p * self.r / (self.p + self.r) if self.p + self.r else 0.0

    def row(self) -> dict[str, float]:
        return {"P": round(self.p, 3), "R": round(self.r, 3), "F1": round(self.f1, 3), "TP": self.tp,
                "FP": self.fp, "FN": self.fn}  # fmt: skip


def citation_of(doc: Doc) -> Citation:
    return Citation(pmid=doc.pmid, title=doc.title, abstract=(AbstractSection(doc.abstract, None, None),))


Pred = tuple[int, int, str, tuple[str, ...], bool]  # start, end, concept ID, groups, nested


def predict(docs: Iterable[Doc], args: argparse.Namespace) -> dict[str, list[Pred]]:
    """PMID -> (start, end, concept ID, groups, nested) over ``doc.text`` offsets."""
    from ebm.concepts.matcher import load_matcher

    options = (
        {"threshold": args.threshold}
        if args.matcher == "quickumls"
        else {"nested": _nested(args.nested), "adjectives": not args.no_adjectives}
    )
    matcher = load_matcher(args.matcher, **options)
    pipeline = None
    if not args.no_pipeline:
        try:
            from ebm.concepts.annotate import annotate
            from ebm.text.pipeline import TextPipeline

            pipeline = TextPipeline()
        except ImportError as exc:
            print(f"(text pipeline unavailable: {exc}; matching raw text)", file=sys.stderr)
    out: dict[str, list[Pred]] = {}
    for doc in docs:
        if pipeline is not None:
            document = pipeline.process(citation_of(doc))
            found = annotate(document, matcher, negation=None)
            # Document.text is title then sections; map back to PubTator offsets by text search.
            offset = _offset_map(doc, document.text)
            out[doc.pmid] = [(offset(c.start), offset(c.end), c.cui, c.groups, c.nested) for c in found]
        else:
            out[doc.pmid] = [(m.start, m.end, m.cui, m.groups, m.nested) for m in matcher.match(doc.text)]
    return out


def _nested(spec: str) -> bool | set[str]:
    if not spec:
        return False
    return True if spec == "all" else set(spec.split(","))


def _offset_map(doc: Doc, text: str):  # noqa: ANN202
    """Document.text offset -> PubTator offset (title and abstract may be joined differently)."""
    a_in_text = text.find(doc.abstract[:50]) if doc.abstract else -1
    a_start = len(doc.title) + 1

    def f(i: int) -> int:
        if a_in_text >= 0 and i >= a_in_text:
            return i - a_in_text + a_start
        return i

    return f


def in_scope(cui: str, etype: str, scope: str) -> bool:
    """Whether a prediction of ``cui`` counts as a Chemical under ``scope`` (see SCOPES)."""
    if scope == "all" or etype != "Chemical":
        return True
    from ebm.mesh import mesh

    d = mesh().get(cui)
    trees = [t for t in d.tree_numbers if t.startswith("D")] if d else []
    if not trees:
        return True
    if all(t.startswith(OUT_OF_SCOPE_CHEMICAL_TREES) for t in trees):
        return False
    return scope == "classes" or not all(t.startswith(ACTION_CLASS_TREE) for t in trees)


def is_protein(cui: str) -> bool:
    """A descriptor only under the protein, enzyme and nucleic acid trees."""
    return not in_scope(cui, "Chemical", "classes")


def counted(pred: tuple, preds: list, scope: str) -> bool:
    """Whether a prediction counts: matches nested in longer ones (``--nested``) count only
    inside a match that is out of BC5CDR's chemical scope ("dopamine" in "dopamine receptor",
    "creatine" in "creatine kinase": its annotators mark chemicals inside protein names) unless
    --scope all, where every nested match counts."""
    if len(pred) < 5 or not pred[4] or scope == "all":
        return True
    s, e = pred[0], pred[1]
    outer = [p for p in preds if not (len(p) > 4 and p[4]) and p[0] <= s and e <= p[1]]
    return bool(outer) and all(CHEMICALS in p[3] and is_protein(p[2]) for p in outer)


def version_adjusted(pred: tuple, gold_m: list[Mention]) -> set[str]:
    """IDs a prediction stands for once MeSH versions are reconciled.

    BC5CDR's gold IDs come from MeSH 2015 (largest gold UI: D066126). Descriptors created
    since have 10-character UIs (D0000xxxxx): some replace a supplementary concept the gold
    uses ("vinorelbine": C030852 then, D000077235 now), others split a broader 2015 heading
    ("tardive dyskinesia": D004409 then). A post-2015 descriptor predicted on a span that
    overlaps a gold mention stands for that mention's IDs; any other prediction keeps its ID.
    """
    s, e, cui = pred[0], pred[1], pred[2]
    if len(cui) == 10 and cui.startswith("D"):
        over = {i for m in gold_m if s < m.end and m.start < e for i in m.ids}
        if over:
            return over
    return {cui}


def evaluate(
    docs: list[Doc], preds: dict, errors: Counter | None = None, scope: str = "bc5cdr"
) -> dict[str, dict[str, dict]]:
    res: dict[str, dict[str, dict]] = {}
    for etype, group in TYPES.items():
        doc_prf, strict, overlap, drift = PRF(), PRF(), PRF(), PRF()
        for d in docs:
            gold_m = [m for m in d.mentions if m.type == etype and m.ids]
            gold_ids = {i for m in gold_m for i in m.ids}
            doc_preds = preds[d.pmid]
            pred_m = [
                p[:4]
                for p in doc_preds
                if group in p[3] and in_scope(p[2], etype, scope) and counted(p, doc_preds, scope)
            ]
            pred_ids = {p[2] for p in pred_m}
            doc_prf.add(gold_ids, pred_ids)
            drift.add(gold_ids, {i for p in pred_m for i in version_adjusted(p, gold_m)})
            if errors is not None:
                for i in pred_ids - gold_ids:
                    texts = {d.text[s:e].lower() for s, e, c, _ in pred_m if c == i}
                    errors[(etype, "FP", i, "/".join(sorted(texts))[:60])] += 1
                for i in gold_ids - pred_ids:
                    texts = {m.text.lower() for m in gold_m if i in m.ids}
                    errors[(etype, "FN", i, "/".join(sorted(texts))[:60])] += 1
            strict.add(
                {(m.start, m.end, i) for m in gold_m for i in m.ids}, {(s, e, c) for s, e, c, _ in pred_m}
            )
            # overlap: a predicted mention is right if it overlaps a gold mention with its ID
            tp_p = sum(
                1 for s, e, c, _ in pred_m if any(c in m.ids and s < m.end and m.start < e for m in gold_m)
            )
            tp_g = sum(
                1 for m in gold_m if any(c in m.ids and s < m.end and m.start < e for s, e, c, _ in pred_m)
            )
            overlap.tp += tp_g
            overlap.fn += len(gold_m) - tp_g
            overlap.fp += len(pred_m) - tp_p
        res[etype] = {
            "document": doc_prf.row(),
            "document_mesh_version_adjusted": drift.row(),
            "mention_strict": strict.row(),
            "mention_overlap": overlap.row(),
        }
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--split", choices=["train", "dev", "both", "all"], default="all",
                    help="both = train+dev as one set; all = train, dev and train+dev")  # fmt: skip
    ap.add_argument("--matcher", default="dictionary")
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--no-pipeline", action="store_true", help="match raw text (no abbreviations, sentences)")
    ap.add_argument("--nested", default="", help="also count matches nested in longer ones: 'all' or "
                    "comma-separated groups (CHEM)")  # fmt: skip
    ap.add_argument(
        "--no-adjectives", action="store_true", help="dictionary matcher without disorder adjectives"
    )
    ap.add_argument("--errors", type=int, default=0, help="print the N most frequent errors per type")
    ap.add_argument("--scope", choices=SCOPES, default="bc5cdr",
                    help="bc5cdr: proteins/enzymes/nucleic acids and drug classes named by action (D27) "
                    "are not Chemical predictions; classes: action classes counted; all: every CHEM "
                    "match")  # fmt: skip
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base = args.shared / "data" / "concepts" / "bc5cdr"
    data = {name: read_pubtator(base / fn) for name, fn in SPLITS.items()}
    t0 = time.perf_counter()
    preds = predict([d for docs in data.values() for d in docs], args)
    seconds = time.perf_counter() - t0
    sets = {
        "train": data["train"],
        "dev": data["dev"],
        "train+dev": data["train"] + data["dev"],
    }
    wanted = {"train": ["train"], "dev": ["dev"], "both": ["train+dev"], "all": list(sets)}[args.split]
    results = {}
    for name in wanted:
        errors: Counter | None = Counter() if args.errors and name == wanted[0] else None
        results[name] = evaluate(sets[name], preds, errors, args.scope)
        if errors:
            for etype in TYPES:
                for kind in ("FP", "FN"):
                    top = [(k, v) for k, v in errors.most_common() if k[0] == etype and k[1] == kind]
                    print(f"# {name} {etype} {kind} (documents)")
                    for k, v in top[: args.errors]:
                        print(f"{v:5d}  {k[2]}  {k[3]}")
    if args.json:
        print(json.dumps({"matcher": args.matcher, "scope": args.scope, "seconds": round(seconds, 1),
                          "results": results}, indent=2))  # fmt: skip
        return
    print(f"matcher={args.matcher} pipeline={'no' if args.no_pipeline else 'yes'} scope={args.scope} "
          f"time={seconds:.1f}s")  # fmt: skip
    for name, res in results.items():
        for etype, levels in res.items():
            for level, r in levels.items():
                print(f"{name:10s} {etype:8s} {level:16s} P {r['P']:.3f} R {r['R']:.3f} F1 {r['F1']:.3f}"
                      f"  (TP {r['TP']} FP {r['FP']} FN {r['FN']})")  # fmt: skip


if __name__ == "__main__":
    main()
