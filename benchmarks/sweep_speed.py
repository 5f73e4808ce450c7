"""Speed of the vectorised weight sweep against the plain per-setting evaluation, same inputs.

Inputs: 50 questions x 50 candidates with seeded random component scores (S_PICO, S_SoE, S_task
on coarse grids so that ties occur) and random graded judgments; the EBM scorer does not exist yet,
so the scores are synthetic, the work per setting is the same. The reference is what a sweep
without the vectorised engine does: for each setting build the run and score it with the plain
measures (measured on a sample of settings, extrapolated to the full grid).

    python benchmarks/sweep_speed.py [--questions 50] [--docs 50] [--step 0.01] [--sample 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ebm.evaluation.scores import score_run
from ebm.evaluation.sweep import (
    CombinationScores,
    ComponentScores,
    grid_size,
    grid_weights,
    sweep_combination,
    sweep_weights,
    weights_run,
)


def inputs(questions: int, docs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    items, qrels = [], {}
    for q in range(questions):
        qid = f"Q{q:03d}"
        docnos = [str(10_000_000 + rng.integers(0, 30_000_000)) for _ in range(docs)]
        docnos = list(dict.fromkeys(docnos))
        n = len(docnos)
        items.append(
            ComponentScores(
                qid,
                docnos,
                pico=rng.integers(-2, 5, n) / 2,
                soe=rng.integers(-3, 3, n) / 5,
                task=rng.integers(-4, 8, n) / 4,
            )
        )
        qrels[qid] = {d: int(rng.choice([0, 0, 0, 1, 2, 3])) for d in docnos}
    return items, qrels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--step", type=float, default=0.01)
    parser.add_argument("--sample", type=int, default=200, help="settings timed for the reference")
    args = parser.parse_args()
    items, qrels = inputs(args.questions, args.docs)
    n = grid_size(args.step)
    _, _, l1, l2, l3 = grid_weights(n)
    settings = len(l1)

    start = time.perf_counter()
    surface = sweep_weights(items, qrels, 2, step=args.step)
    vectorised = time.perf_counter() - start

    rng = np.random.default_rng(1)
    sample = rng.choice(settings, size=min(args.sample, settings), replace=False)
    start = time.perf_counter()
    for k in sample:
        plain = score_run(qrels, weights_run(items, l1[k], l2[k], l3[k]), 2).mean("MAP")
        assert abs(plain - surface.at(l1[k], l2[k])["MAP"]) < 1e-12  # same answer, or the timing is moot
    per_setting = (time.perf_counter() - start) / len(sample)

    combos = [CombinationScores(i.qid, i.docnos, i.pico + i.soe + i.task, i.pico) for i in items]
    start = time.perf_counter()
    sweep_combination(combos, qrels, 2, step=args.step)
    alpha_time = time.perf_counter() - start

    print(
        f"inputs: {args.questions} questions x {args.docs} candidates, step {args.step}: {settings} settings"
    )
    print(f"vectorised sweep_weights (4 measures): {vectorised:.2f} s")
    print(
        f"reference, plain run + score per setting: {per_setting * 1000:.1f} ms/setting "
        f"-> {per_setting * settings:.1f} s for the grid (from {len(sample)} settings)"
    )
    print(f"speed-up: {per_setting * settings / vectorised:.0f}x")
    print(f"vectorised sweep_combination ({n + 1} alphas): {alpha_time:.3f} s")
    print(
        f"best MAP {surface.best_value:.4f} at l1={surface.best_l1:g}, l2={surface.best_l2:g} "
        f"({surface.ties} ties)"
    )


if __name__ == "__main__":
    main()
