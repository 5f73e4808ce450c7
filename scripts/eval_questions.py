"""Evaluate the question parser (``ebm.question``) against gold PICO frames, with a baseline.

    python scripts/eval_questions.py [--shared ../shared] [--json OUT.json] [--write-frames DIR]

Sets:
* bench: the 23 development questions of ``../shared/data/bench/frames`` (the question in words
  -> the gold frame). DEVELOPMENT data: the cue table was written looking at them, so their
  figures are inflated.
* clirec-test: the seeded test quarter of CLIREC's reviews (``scripts/train_question_model.py``
  ``clirec_split``), never trained or tuned on. Input: the review's keyword query; gold: its
  PICO fields; gold task: therapy (Cochrane intervention reviews; prevention counts as right).
* pubmedqa: PubMedQA questions (PQA-L, minus the ones the bench drew from) with a weak task
  label from their MeSH headings (one task's headings only); task agreement only.

A slot is right when both are empty, or when the filled slot maps to the same MeSH descriptor
as the gold slot (a shared concept ID after ``ebm.frame_concepts.slot_concepts``, which keeps a
slot's disorders or drugs/procedures and drops Patients/Humans), or, when the gold slot has no
concept, the same words (half or more of the content words shared). "Exact frame": task and
every slot of problem, co-problems, population, intervention and comparison right (outcome is
scored alone). "In input" is the ceiling: the share of gold-filled slots whose concept or
words occur in the input text at all.

Baseline (same run): every disorder concept -> problem (the first; the others co-problems),
every drug/procedure/device concept -> intervention, persons -> nothing, task therapy.

``--write-frames DIR`` writes the parsed bench frames (id and question kept) for ``ebm bench``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ebm.frame import Frame, Task, load_frames  # noqa: E402
from ebm.frame_concepts import slot_concepts  # noqa: E402
from ebm.question import fold, load_question_cues, load_role_model, parse_question  # noqa: E402

SLOTS = ("problem", "co_problems", "population", "intervention", "comparison", "outcome")
EXACT_SLOTS = ("problem", "co_problems", "population", "intervention", "comparison")
STOP = frozenset(
    "a an the of in for with and or to on at by from as than that this is are was be does do can "
    "patients patient people".split()
)


def _load_train_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "train_question_model", ROOT / "scripts" / "train_question_model.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["train_question_model"] = mod
    spec.loader.exec_module(mod)
    return mod


@dataclass(frozen=True)
class Case:
    id: str
    text: str  # the parser's input
    gold: Frame
    task_ok: Callable[[Task], bool]


def _values(frame: Frame, slot: str) -> list[str]:
    v = getattr(frame, slot)
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def _words(text: str) -> set[str]:
    return {fold(w)[:5] for w in re.findall(r"[^\W_]+", text) if fold(w) not in STOP}


class Scorer:
    def __init__(self, matcher: Any, vocabulary: Any) -> None:
        self.matcher, self.vocabulary = matcher, vocabulary
        self._cache: dict[tuple[str, str], frozenset[str]] = {}

    def ids(self, slot: str, value: str) -> frozenset[str]:
        key = (slot, value)
        if key not in self._cache:
            sv = slot_concepts(slot, value, self.matcher, self.vocabulary)
            self._cache[key] = frozenset(i for c in sv.concepts for i in c.ids)
        return self._cache[key]

    def same(self, slot: str, gold: list[str], pred: list[str], tree: bool = False) -> bool:
        """Same descriptor (``tree``: or one above or below the other in a MeSH tree)."""
        if not gold and not pred:
            return True
        if not gold or not pred:
            return False
        g = frozenset().union(*(self.ids(slot, v) for v in gold))
        if g:
            p = frozenset().union(*(self.ids(slot, v) for v in pred))
            return bool(g & p) or (tree and any(self.related(a, b) for a in g for b in p))
        gw, pw = _words(" ".join(gold)), _words(" ".join(pred))
        return bool(gw) and len(gw & pw) * 2 >= len(gw)

    def related(self, a: str, b: str) -> bool:
        da, db = self.vocabulary.get(a), self.vocabulary.get(b)
        if da is None or db is None:
            return False
        return any(
            x.startswith(y + ".") or y.startswith(x + ".") for x in da.tree_numbers for y in db.tree_numbers
        )

    def in_input(self, slot: str, gold: list[str], text: str) -> bool:
        return self.same(slot, gold, [text])


def baseline(text: str, matcher: Any) -> Frame:
    problems: list[str] = []
    interventions: list[str] = []
    for m in matcher.match(text):
        if m.nested:
            continue
        if "DISO" in m.groups:
            problems.append(m.text)
        elif {"CHEM", "PROC", "DEVI"} & set(m.groups):
            interventions.append(m.text)
    return Frame(
        task=Task.THERAPY,
        problem=problems[0] if problems else None,
        co_problems=tuple(dict.fromkeys(problems[1:])),
        intervention=tuple(dict.fromkeys(interventions)),
    )


def evaluate(cases: Sequence[Case], predict: Callable[[str], Frame], scorer: Scorer) -> dict[str, Any]:
    """Task, exact-frame and per-slot accuracy; "tree" figures count a broader or narrower
    descriptor (same MeSH tree branch) as right too."""
    n = len(cases)
    right = {m: dict.fromkeys(SLOTS, 0) for m in ("descriptor", "tree")}
    filled = dict.fromkeys(SLOTS, 0)
    filled_right = {m: dict.fromkeys(SLOTS, 0) for m in ("descriptor", "tree")}
    reachable = dict.fromkeys(SLOTS, 0)
    task_right = 0
    exact = dict.fromkeys(("descriptor", "tree"), 0)
    rows = []
    for case in cases:
        pred = predict(case.text)
        ok_task = case.task_ok(pred.task)
        task_right += ok_task
        oks: dict[str, dict[str, bool]] = {"descriptor": {}, "tree": {}}
        for slot in SLOTS:
            g, p = _values(case.gold, slot), _values(pred, slot)
            for mode in ("descriptor", "tree"):
                ok = scorer.same(slot, g, p, tree=mode == "tree")
                oks[mode][slot] = ok
                right[mode][slot] += ok
                if g:
                    filled_right[mode][slot] += ok
            if g:
                filled[slot] += 1
                reachable[slot] += scorer.in_input(slot, g, case.text)
        for mode in ("descriptor", "tree"):
            exact[mode] += ok_task and all(oks[mode][s] for s in EXACT_SLOTS)
        rows.append({"id": case.id, "task": pred.task.value, "task_ok": ok_task, **oks["descriptor"]})
    return {
        "n": n,
        "task": task_right / n,
        "exact": exact["descriptor"] / n,
        "exact_tree": exact["tree"] / n,
        "slots": {
            s: {
                "all": right["descriptor"][s] / n,
                "all_tree": right["tree"][s] / n,
                "gold_filled": filled[s],
                "filled_right": filled_right["descriptor"][s] / filled[s] if filled[s] else None,
                "filled_right_tree": filled_right["tree"][s] / filled[s] if filled[s] else None,
                "in_input": reachable[s] / filled[s] if filled[s] else None,
            }
            for s in SLOTS
        },
        "rows": rows,
    }


# --- data ------------------------------------------------------------------------------------

WEAK_TASKS: dict[str, tuple[str, ...]] = {
    "diagnostic test": (
        "Sensitivity and Specificity",
        "Predictive Value of Tests",
        "ROC Curve",
        "False Positive Reactions",
        "False Negative Reactions",
    ),
    "differential diagnosis": ("Diagnosis, Differential",),
    "prognosis": (
        "Prognosis",
        "Survival Analysis",
        "Survival Rate",
        "Disease-Free Survival",
        "Kaplan-Meier Estimate",
        "Proportional Hazards Models",
    ),
    "etiology": ("Risk Factors", "Case-Control Studies", "Odds Ratio"),
    "therapy": (
        "Randomized Controlled Trials as Topic",
        "Drug Therapy, Combination",
        "Double-Blind Method",
        "Random Allocation",
    ),
}


def pubmedqa_cases(shared: Path) -> list[tuple[str, str]]:
    """(question, weak task) for PubMedQA questions whose MeSH headings name one task only;
    the questions the bench was drawn from are left out."""
    sources = (shared / "data" / "bench" / "sources.tsv").read_text(encoding="utf-8").splitlines()[1:]
    bench_pmids = {c.split("\t")[2] for c in sources if len(c.split("\t")) > 2 and c.split("\t")[2]}
    with gzip.open(shared / "data" / "pubmedqa" / "ori_pqal.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for pmid, rec in sorted(data.items()):
        if pmid in bench_pmids:
            continue
        heads = set(rec.get("MESHES", []))
        tasks = [t for t, names in WEAK_TASKS.items() if heads & set(names)]
        if len(tasks) == 1:
            out.append((rec["QUESTION"], tasks[0]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--cues", type=Path, default=ROOT / "rules" / "question_cues.tsv")
    ap.add_argument("--model", type=Path, default=ROOT / "ebm" / "data" / "models" / "question_roles.json.gz")
    ap.add_argument("--json", type=Path, help="write all figures and per-question rows here")
    ap.add_argument("--write-frames", type=Path, metavar="DIR", help="write the parsed bench frames here")
    ap.add_argument("--show", action="store_true", help="print each bench question's parse")
    ap.add_argument(
        "--clirec-part",
        choices=["test", "train"],
        default="test",
        help="the CLIREC part to score: test (default; never tuned on) or train (for tuning)",
    )
    args = ap.parse_args()

    from ebm.resources import Resources

    res = Resources.load()
    matcher, vocabulary = res.matcher, res.vocabulary
    cues = load_question_cues(args.cues)
    model = load_role_model(args.model)
    scorer = Scorer(matcher, vocabulary)
    train = _load_train_script()

    bench_frames = load_frames(args.shared / "data" / "bench" / "frames")
    bench = [Case(f.id or "", f.question or "", f, lambda t, g=f.task: t == g) for f in bench_frames]
    train_part, test = train.clirec_split(train.read_clirec(args.shared))
    if args.clirec_part == "train":  # for tuning: the figures of the part the model learnt from
        test = [q for q in train_part if q.review not in train.bench_reviews(args.shared)]
    clirec = [
        Case(
            q.id,
            q.keywords,
            Frame(
                task=Task.THERAPY,
                problem=q.fields.get("problem"),
                population=tuple(v for v in [q.fields.get("population")] if v),
                intervention=tuple(v for v in [q.fields.get("intervention")] if v),
                comparison=tuple(v for v in [q.fields.get("comparison")] if v),
                outcome=q.fields.get("outcome"),
            ),
            lambda t: t.clinical_task == "therapy",
        )
        for q in test
    ]

    def parse(text: str) -> Frame:
        return parse_question(text, matcher, vocabulary, cues, model).frame

    def base(text: str) -> Frame:
        return baseline(text, matcher)

    results: dict[str, Any] = {}
    clirec_name = f"clirec-{args.clirec_part}"
    for name, cases in (("bench (development)", bench), (clirec_name, clirec)):
        results[name] = {"parser": evaluate(cases, parse, scorer), "baseline": evaluate(cases, base, scorer)}
    pq = pubmedqa_cases(args.shared)
    pq_right = sum(parse(q).task.value == t for q, t in pq)
    pq_base = sum(t == "therapy" for _, t in pq)
    results["pubmedqa-weak-task"] = {
        "n": len(pq),
        "parser": pq_right / len(pq),
        "baseline": pq_base / len(pq),
    }

    print(
        f"{'set':22} {'system':9} {'n':>4} {'task':>6} {'exact':>6} "
        + " ".join(f"{s[:12]:>12}" for s in SLOTS)
    )
    for name in ("bench (development)", clirec_name):
        for system in ("parser", "baseline"):
            r = results[name][system]
            cells = " ".join(f"{r['slots'][s]['all']:12.1%}" for s in SLOTS)
            print(f"{name:22} {system:9} {r['n']:4d} {r['task']:6.1%} {r['exact']:6.1%} {cells}")
        for system in ("parser", "baseline"):
            r = results[name][system]
            cells = " ".join(f"{r['slots'][s]['all_tree']:12.1%}" for s in SLOTS)
            print(f"{'  tree-lenient':22} {system:9} {'':4} {'':6} {r['exact_tree']:6.1%} {cells}")
        r = results[name]["parser"]
        print(
            f"{'':22} {'gold set':9} {'':4} {'':6} {'':6} "
            + " ".join(f"{r['slots'][s]['gold_filled']:12d}" for s in SLOTS)
        )
        for system in ("parser", "baseline"):
            r = results[name][system]
            cells = " ".join(
                f"{r['slots'][s]['filled_right']:12.1%}"
                if r["slots"][s]["filled_right"] is not None
                else f"{'-':>12}"
                for s in SLOTS
            )
            print(f"{'  where gold is set':22} {system:9} {'':4} {'':6} {'':6} {cells}")
        r = results[name]["parser"]
        cells = " ".join(
            f"{r['slots'][s]['in_input']:12.1%}" if r["slots"][s]["in_input"] is not None else f"{'-':>12}"
            for s in SLOTS
        )
        print(f"{'  gold in input':22} {'ceiling':9} {'':4} {'':6} {'':6} {cells}")
    pqr = results["pubmedqa-weak-task"]
    print(
        f"pubmedqa weak task labels: n={pqr['n']}  parser {pqr['parser']:.1%}  "
        f"baseline (therapy) {pqr['baseline']:.1%}"
    )

    if args.show:
        for case in bench:
            p = parse_question(case.text, matcher, vocabulary, cues, model)
            print(case.id, p.frame.to_dict())
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.write_frames:
        args.write_frames.mkdir(parents=True, exist_ok=True)
        for case in bench:
            f = parse(case.text)
            d = {"id": case.id, **{k: v for k, v in f.to_dict().items() if k != "id"}}
            (args.write_frames / f"{case.id}.json").write_text(json.dumps(d, indent=1), encoding="utf-8")
        print(f"wrote {len(bench)} parsed frames to {args.write_frames}")


if __name__ == "__main__":
    main()
