"""Evaluate the outcome-sentence extractor with the protocol of Demner-Fushman & Lin (2007, 5.8).

For each held-out EvidenceOutcomes abstract that has at least one gold outcome sentence (a
sentence containing an annotated outcome span), the extractor is correct at cutoff k when its k
most probable sentences include a gold one. Baseline: the last k sentences of the abstract.
Each base classifier alone is ranked the same way (ties broken at random, seeded). Also
reported, as a stricter view: P@k, the mean fraction of the top k that are gold.

The split's PMIDs come from the model's metadata; the script refuses to evaluate a model on
abstracts it was trained on.

Usage:
  python scripts/eval_outcomes.py                         # shipped model, test split
  python scripts/eval_outcomes.py --model /tmp/outcome-train.json.gz --split dev
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import outcome_corpus as oc  # noqa: E402

from ebm.errors import EbmError  # noqa: E402
from ebm.text.pipeline import TextPipeline  # noqa: E402
from extractors.outcome import CLASSIFIERS, OutcomeModel, load_model  # noqa: E402
from extractors.outcome_cues import CueTable  # noqa: E402

KS = (2, 3)
SUBSETS: dict[str, Callable[[oc.ProcessedAbstract], bool]] = {
    "all": lambda p: True,
    "EO-500 (random RCTs)": lambda p: p.record.source == "eo500",
    "EO-140 (from EBM-NLP)": lambda p: p.record.source == "eo140",
    "structured": lambda p: p.record.structured,
    "unstructured": lambda p: not p.record.structured,
}


def gold_sentences(p: oc.ProcessedAbstract) -> set[int]:
    return {i for i, v in enumerate(p.labels) if v}


def ranked(scores: Sequence[float], rng: random.Random) -> list[int]:
    """Sentence indices by decreasing score; ties in random (seeded) order."""
    noise = [rng.random() for _ in scores]
    return sorted(range(len(scores)), key=lambda i: (-scores[i], noise[i]))


def last_k(p: oc.ProcessedAbstract, k: int) -> list[int]:
    n = len(p.document.sentences)
    return list(range(max(0, n - k), n))


def systems(
    model: OutcomeModel,
    processed: Sequence[oc.ProcessedAbstract],
    seed: int,
    cues: CueTable,
    contexts: Sequence[oc.SemanticContext] | None = None,
) -> dict[str, list[list[int]]]:
    """For each system, the ranked sentence indices of every abstract (top 3 kept).

    With ``contexts`` (concepts of each abstract) the ensemble uses the semantic classifier and
    the five-classifier ensemble is reported beside it.
    """
    rng = random.Random(seed)
    use_sem = contexts is not None and model.semantic is not None and model.stack_semantic is not None
    out: dict[str, list[list[int]]] = {"baseline (last k)": []}
    if use_sem:
        out["ensemble (LR, 6 classifiers)"] = []
    out["ensemble (LR, 5: no semantic)"] = []
    for name in CLASSIFIERS:
        if name != "semantic" or use_sem:
            out[f"{name} alone"] = []
    for i, p in enumerate(processed):
        out["baseline (last k)"].append([])  # last k, computed per k in evaluate()
        cands = model.score(p.document, cues)
        out["ensemble (LR, 5: no semantic)"].append([c.sentence for c in cands[: max(KS)]])
        ctx = contexts[i] if use_sem and contexts is not None else None
        if ctx is not None:
            cands = model.score(p.document, cues, ctx.concepts, ctx.primary_problem, ctx.interventions)
            out["ensemble (LR, 6 classifiers)"].append([c.sentence for c in cands[: max(KS)]])
            base = model.base_scores(p.document, cues, ctx.concepts, ctx.primary_problem, ctx.interventions)
        else:
            base = model.base_scores(p.document, cues)
        for name in CLASSIFIERS:
            key = f"{name} alone"
            if key in out:
                scores = [b[0].get(name, 0.0) for b in base]
                out[key].append(ranked(scores, rng)[: max(KS)])
    return out


def evaluate(
    model: OutcomeModel,
    processed: Sequence[oc.ProcessedAbstract],
    seed: int,
    cues: CueTable,
    contexts: Sequence[oc.SemanticContext] | None = None,
) -> str:
    """Markdown tables: hits at 2 and 3 sentences per system and subset, and P@k."""
    keep = [i for i, p in enumerate(processed) if gold_sentences(p)]
    usable = [processed[i] for i in keep]
    ranks = systems(model, usable, seed, cues, [contexts[i] for i in keep] if contexts is not None else None)
    lines: list[str] = []
    for subset, pred in SUBSETS.items():
        idx = [i for i, p in enumerate(usable) if pred(p)]
        if not idx:
            continue
        lines.append(f"\n**{subset}** ({len(idx)} abstracts)\n")
        lines.append("| system | top 2 correct | top 3 correct | P@2 | P@3 |")
        lines.append("|---|---|---|---|---|")
        for system, rk in ranks.items():
            cells = []
            precs = []
            for k in KS:
                hits = 0
                prec = 0.0
                for i in idx:
                    top = last_k(usable[i], k) if system.startswith("baseline") else rk[i][:k]
                    gold = gold_sentences(usable[i])
                    hits += bool(gold & set(top))
                    prec += len(gold & set(top)) / k
                cells.append(f"{100 * hits / len(idx):.1f}% ({hits}/{len(idx)})")
                precs.append(f"{100 * prec / len(idx):.1f}%")
            lines.append(f"| {system} | {cells[0]} | {cells[1]} | {precs[0]} | {precs[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", type=Path, default=None, help="default: the shipped model")
    ap.add_argument("--split", choices=["dev", "test"], default="test")
    ap.add_argument("--seed", type=int, default=1, help="tie-breaking for the single classifiers")
    ap.add_argument(
        "--no-concepts", action="store_true", help="skip the semantic classifier (no concept index needed)"
    )
    args = ap.parse_args(argv)

    from ebm.resources import Resources
    from extractors.outcome import shipped_model_path

    resources = Resources.load()
    cues = resources.outcome_cues
    model = load_model(args.model or shipped_model_path())
    splits = model.meta.get("splits")
    if not splits:
        print("model has no split metadata", file=sys.stderr)
        return 2
    fit_on = model.meta.get("fit_on", [])
    if args.split in fit_on:
        print(f"the model was trained on the {args.split} split; refusing to evaluate on it", file=sys.stderr)
        return 2
    wanted = set(splits[args.split])
    records = [r for r in oc.read_evidence_outcomes(args.shared) if r.pmid in wanted]
    if len(records) != len(wanted):
        print(f"{len(wanted) - len(records)} PMIDs of the split not found", file=sys.stderr)
        return 2
    pipeline = TextPipeline()
    processed = list(oc.process_all(records, pipeline))
    n_without = sum(1 for p in processed if not gold_sentences(p))
    contexts = None
    if not args.no_concepts and model.semantic is not None:
        contexts = [oc.semantic_context(p.document, resources) for p in processed]
    t0 = time.perf_counter()
    for p in processed:
        model.score(p.document, cues)
    per_abstract = (time.perf_counter() - t0) / max(1, len(processed))
    print(
        f"# Outcome extractor on the EvidenceOutcomes {args.split} split "
        f"(seed {model.meta.get('seed')}, {len(processed)} abstracts, {n_without} without gold outcome "
        f"sentences left out; model trained on {'+'.join(fit_on)})"
    )
    print(evaluate(model, processed, args.seed, cues, contexts))
    print(f"\nscoring time: {1000 * per_abstract:.2f} ms per abstract (no concepts)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
