"""The combination reranker (paper section 7): alpha * norm(S_EBM) + (1 - alpha) * norm(S_term).

Scores are normalised per question by min-max to [0, 1] (constant scores give 0, as
``ebm.evaluation.sweep.normalise`` does, so ``ebm ask`` ranks exactly as the sweeps
evaluate). The paper settled on alpha = 0.8 on its development questions.
"""

from __future__ import annotations

from collections.abc import Sequence

ALPHA = 0.8


def minmax(values: Sequence[float]) -> list[float]:
    """``values`` scaled to [0, 1] over this list; all equal -> all 0."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high <= low:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def combine(ebm: Sequence[float], term: Sequence[float], alpha: float = ALPHA) -> list[float]:
    """The combined score of each candidate of one question."""
    if len(ebm) != len(term):
        raise ValueError(f"{len(ebm)} EBM scores but {len(term)} term scores")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    return [alpha * e + (1 - alpha) * t for e, t in zip(minmax(ebm), minmax(term), strict=True)]
