"""S_EBM: the three facets of evidence-based medicine in one score (paper sections 6 and 8).

    S_EBM = l1 * S_PICO + l2 * S_SoE + (1 - l1 - l2) * S_task        (equation 8)

Defaults l1 = l2 = 1/3: the paper's equation 3 (S_PICO + S_SoE + S_task, the scorer its
results in Tables 7-11 come from) scaled by 1/3, so the same ranking. Section 8 searched the
(l1, l2) grid on the development therapy questions and found l1 = 0.38, l2 = 0.34
(``THERAPY_TUNED``), a gain that was not significant and did not carry over to the test
questions; it is available, not the default.

Every component keeps its contributions (``Contribution``): ``EbmScore.contributions``
lists every rule and extractor decision behind the score, for ``ebm explain``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ebm.errors import InputError
from ebm.frame_concepts import FrameConcepts
from ebm.mesh import MeshVocabulary
from ebm.rules import RuleSet
from ebm.scoring.contribution import Contribution
from ebm.scoring.pico import PicoScore, score_pico
from ebm.scoring.soe import SoeScore, current_year, score_soe
from ebm.scoring.task import TaskScore, score_task
from ebm.text.words import Words

if TYPE_CHECKING:
    from extractors.annotate import Annotation

EQUAL = (1 / 3, 1 / 3)
THERAPY_TUNED = (0.38, 0.34)


@dataclass(frozen=True)
class Weights:
    """l1 (PICO) and l2 (strength of evidence); the task weight is 1 - l1 - l2."""

    l1: float = EQUAL[0]
    l2: float = EQUAL[1]

    def __post_init__(self) -> None:
        for name, v in (("l1", self.l1), ("l2", self.l2)):
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise InputError(f"weight {name} must be in [0, 1], got {v}")
        if self.l1 + self.l2 > 1.0 + 1e-9:
            raise InputError(f"weights l1 + l2 must be at most 1, got {self.l1} + {self.l2}")

    @property
    def l3(self) -> float:
        return max(0.0, 1.0 - self.l1 - self.l2)

    @classmethod
    def parse(cls, text: str) -> Weights:
        """'0.38,0.34' -> Weights(0.38, 0.34); 'equal' and 'therapy' name the two presets."""
        presets = {"equal": EQUAL, "therapy": THERAPY_TUNED}
        if text.strip().casefold() in presets:
            return cls(*presets[text.strip().casefold()])
        parts = [p.strip() for p in text.split(",")]
        try:
            l1, l2 = (float(p) for p in parts)
        except ValueError:
            raise InputError(
                f"weights {text!r}: give 'L1,L2' (e.g. 0.38,0.34), 'equal' or 'therapy'"
            ) from None
        return cls(l1, l2)


@dataclass(frozen=True)
class ScoringConfig:
    weights: Weights = field(default_factory=Weights)
    year: int = field(default_factory=current_year)  # the "current year" of S_date


@dataclass(frozen=True)
class EbmScore:
    pmid: str
    pico: PicoScore
    soe: SoeScore
    task: TaskScore
    weights: Weights

    @property
    def total(self) -> float:
        w = self.weights
        return w.l1 * self.pico.total + w.l2 * self.soe.total + w.l3 * self.task.total

    @property
    def contributions(self) -> tuple[Contribution, ...]:
        return self.pico.contributions + self.soe.contributions + self.task.contributions

    def components(self) -> dict[str, Any]:
        return {"pico": self.pico.to_dict(), "soe": self.soe.to_dict(), "task": self.task.to_dict()}

    def formula(self) -> str:
        w = self.weights
        return (
            f"S_EBM = {w.l1:.3g} x {self.pico.total:.3f} (PICO) + {w.l2:.3g} x {self.soe.total:.3f} (SoE) "
            f"+ {w.l3:.3g} x {self.task.total:.3f} (task) = {self.total:.3f}"
        )


def score_citation(
    fc: FrameConcepts,
    ann: Annotation,
    rules: RuleSet,
    vocabulary: MeshVocabulary,
    config: ScoringConfig | None = None,
    *,
    words: Words,
) -> EbmScore:
    """S_EBM of one annotated citation for one frame, with every component's reasons;
    ``words``: the word normaliser (``Resources.words``)."""
    config = config or ScoringConfig()
    cit = ann.citation
    return EbmScore(
        pmid=cit.pmid,
        pico=score_pico(fc, ann, words),
        soe=score_soe(cit, rules, config.year, ann.evidence),
        task=score_task(cit, fc.frame.task.value, rules, vocabulary),
        weights=config.weights,
    )
