"""Evaluate the findings extractor on the Evidence Inference 2.0 VALIDATION split.

Evidence sentence: top-1 / top-3 accuracy (a chosen sentence overlaps a doctor's evidence text),
on the prompts whose evidence lies in the abstract, against the sentence with most word overlap
with the prompt (same run). Direction: accuracy and macro-F1 with the doctors' evidence text
given (one row per doctor's answer) and end to end (the extractor's own first finding; one row per
prompt, the doctors' majority label), against the majority class; on the prompts with evidence in
the abstract and on all prompts.

Usage:
  python scripts/eval_findings.py [--corpus /tmp/findings_corpus.jsonl.gz] [--model PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

import train_findings as tf  # noqa: E402

from extractors.findings import (  # noqa: E402
    DIRECTIONS,
    MODEL_FILE,
    FindingsModel,
    extract_findings,
    load_findings_model,
    rank_sentences,
    units_of,
)

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of in on with and or to for by at from as vs versus than was were is are".split())


def overlap_baseline(p: tf.Prompt) -> list[bool]:
    """Sentences by word overlap with the prompt (I + C + O words), ties to the earlier: whether
    each is a gold evidence sentence."""
    words = {
        w for w in _WORD.findall(f"{p.intervention} {p.comparator} {p.outcome}".lower()) if w not in _STOP
    }
    _, units = units_of(p.doc)
    scored = [(-len(words & set(_WORD.findall(u.text.lower()))), u.index) for u in units]
    return [i in p.gold for _, i in sorted(scored)]


def evidence_scores(
    prompts: Sequence[tf.Prompt], ranking: Callable[[tf.Prompt], list[bool]]
) -> dict[str, float]:
    with_gold = [p for p in prompts if p.gold]
    ranks = [ranking(p) for p in with_gold]
    n = len(with_gold)
    return {"n": n, "top1": sum(any(r[:1]) for r in ranks) / n, "top3": sum(any(r[:3]) for r in ranks) / n}


def scores(gold: list[str], pred: list[str]) -> dict[str, float]:
    return {
        "n": len(gold),
        "accuracy": sum(g == x for g, x in zip(gold, pred, strict=True)) / len(gold),
        "macro_f1": tf.macro_f1(gold, pred),
    }


def majority(train: Sequence[tf.Prompt]) -> str:
    return Counter(a["label"] for p in train for a in p.answers).most_common(1)[0][0]


def evaluate(prompts: list[tf.Prompt], model: FindingsModel) -> dict[str, Any]:
    tr = [p for p in prompts if p.split == "train"]
    va = [p for p in prompts if p.split == "validation"]
    maj = majority(tr)
    out: dict[str, Any] = {
        "majority_class": maj,
        "prompts": len(va),
        "prompts_evidence_in_abstract": sum(1 for p in va if p.gold),
    }

    def ranked(with_prior: bool) -> Callable[[tf.Prompt], list[bool]]:
        def f(p: tf.Prompt) -> list[bool]:
            _, sc = rank_sentences(p.doc, p.question(), model, p.prior if with_prior else None)
            return [s.unit.index in p.gold for s in sc]

        return f

    def ranked_plain(p: tf.Prompt) -> list[bool]:
        """The abstract as one plain string (no headings, sentences re-split): a sentence is
        gold when it overlaps a gold sentence of the structured document."""
        spans = [(s.start, s.end) for s in p.doc.sentences if s.index in p.gold]
        _, sc = rank_sentences(p.doc.text, p.question(), model)
        return [any(s.unit.start < b and a < s.unit.end for a, b in spans) for s in sc]

    out["evidence"] = {
        "findings": evidence_scores(va, ranked(False)),
        "findings + outcome prior": evidence_scores(va, ranked(True)),
        "findings, headings removed (plain text)": evidence_scores(va, ranked_plain),
        "word-overlap baseline": evidence_scores(va, overlap_baseline),
    }
    for subset, ps in (("evidence in abstract", [p for p in va if p.gold]), ("all prompts", va)):
        gold, pred = tf.gold_directions(ps, model)
        e2e_gold, e2e_pred, e2e_prior = [], [], []
        for p in ps:
            e2e_gold.append(p.label)
            for prior, sink in ((None, e2e_pred), (p.prior, e2e_prior)):
                f = extract_findings(
                    p.doc,
                    p.intervention,
                    p.comparator,
                    p.outcome,
                    model,
                    prior=prior,
                    limit=1,
                    min_confidence=0.0,
                )
                sink.append(f[0].direction if f else "no_difference")
        out[subset] = {
            "gold evidence (per doctor's answer)": scores(gold, pred),
            "gold evidence, majority class": scores(gold, [maj] * len(gold)),
            "end to end (per prompt)": scores(e2e_gold, e2e_pred),
            "end to end + outcome prior": scores(e2e_gold, e2e_prior),
            "end to end, majority class": scores(e2e_gold, [maj] * len(e2e_gold)),
        }
    return out


def print_markdown(r: dict[str, Any]) -> None:
    print(
        f"Validation prompts: {r['prompts']} "
        f"({r['prompts_evidence_in_abstract']} with evidence in the abstract); "
        f"majority class (train): {r['majority_class']}\n"
    )
    print(
        "| evidence sentence (prompts with evidence in the abstract) | n | top-1 | top-3 |\n|---|---|---|---|"
    )
    for k, v in r["evidence"].items():
        print(f"| {k} | {v['n']} | {v['top1']:.1%} | {v['top3']:.1%} |")
    print()
    print("| direction | subset | n | accuracy | macro-F1 |\n|---|---|---|---|---|")
    for subset in ("evidence in abstract", "all prompts"):
        for k, v in r[subset].items():
            print(f"| {k} | {subset} | {v['n']} | {v['accuracy']:.1%} | {v['macro_f1']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--corpus", type=Path, help="corpus from build_findings_corpus.py (default: build from ../shared)"
    )
    ap.add_argument("--model", type=Path, default=ROOT / "ebm" / "data" / MODEL_FILE)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    prompts = tf.load_prompts(args.corpus)
    r = evaluate(prompts, load_findings_model(args.model))
    r["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print_markdown(r)
        print(f"\n({r['seconds']} s; directions: {', '.join(DIRECTIONS)})")


if __name__ == "__main__":
    main()
