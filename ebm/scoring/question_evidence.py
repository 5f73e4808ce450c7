"""Question-aware evidence features of a candidate, each in [0, 1] (issue 15).

- ``findings``: does the abstract report a result for the frame's intervention vs comparison
  (on its outcome, when it has one)? The findings extractor's confidence for its best evidence
  sentence (``extractors.findings``). Only for frames with an intervention; others get the
  question-blind S_match outcome part instead (given by the caller).
- ``design``: the expected evidence grade, A 1, B 0.5, C 0: from manually indexed publication
  types when the grader found one (``Annotation.evidence.grade``), else from the study design
  predicted from the text (``extractors.design`` and ``rules/design_grades.tsv``: the
  probability mass of each grade).
- ``sample_size``: log10 of the participants randomised or enrolled over 4 (10,000 -> 1),
  0 when the abstract gives none (``extractors.sample_size``).
- ``recency``: (year - 1975) / 50 within [0, 1]; unknown years 0.5 (half the bundled records
  have none: the middle of the range neither rewards nor punishes the gap).

The models are parameters (``EvidenceModels``); the app layer loads them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ebm.frame import Frame
from extractors.design import DesignModel, predict_design
from extractors.design_grade import DesignGrades, grade_masses
from extractors.findings import FindingsModel, OutcomeWords, extract_findings
from extractors.sample_size import extract_sample_size

EVIDENCE_COLUMNS = ("findings", "design", "sample_size", "recency")
GRADE_VALUE = {"A": 1.0, "B": 0.5, "C": 0.0}
RECENCY_FROM, RECENCY_SPAN = 1975, 50.0


@dataclass(frozen=True)
class EvidenceModels:
    design: DesignModel
    grades: DesignGrades
    findings: FindingsModel
    outcome_words: OutcomeWords | None = None


def design_value(annotation: Any, models: EvidenceModels) -> float:
    grade = annotation.evidence.grade
    if grade in GRADE_VALUE:
        return GRADE_VALUE[grade]
    c = annotation.citation
    prediction = predict_design(models.design, c.title, c.abstract_text)
    if prediction is None:  # no text: no design predicted, nothing known of the evidence
        return 0.0
    mass = grade_masses(prediction, models.grades)
    return sum(GRADE_VALUE[g] * p for g, p in mass.items())


def sample_size_value(annotation: Any) -> float:
    found = extract_sample_size(annotation.citation.abstract_text)
    return 0.0 if found is None else min(1.0, math.log10(max(found.value, 1)) / 4.0)


def recency_value(annotation: Any) -> float:
    year = annotation.citation.year
    if year is None:
        return 0.5
    return min(1.0, max(0.0, (year - RECENCY_FROM) / RECENCY_SPAN))


def findings_value(annotation: Any, frame: Frame, models: EvidenceModels) -> float:
    """The best finding's confidence for the frame's I vs C (on O), 0 when none; the caller
    checks that the frame has an intervention."""
    prior = {o.sentence: o.probability for o in annotation.outcomes}
    found = extract_findings(
        annotation.document,
        ", ".join(frame.intervention),
        ", ".join(frame.comparison),
        frame.outcome or "",
        models.findings,
        prior=prior,
        concepts=annotation.concepts,
        outcome_words=models.outcome_words,
        limit=1,
        min_confidence=0.0,
    )
    return float(found[0].confidence) if found else 0.0


def evidence_columns(
    frame: Frame, annotations: Sequence[Any], models: EvidenceModels, blind_outcome: Sequence[float]
) -> dict[str, list[float]]:
    """The four columns for one question's candidates (``annotations`` in candidate order);
    ``blind_outcome``: the question-blind outcome value used as ``findings`` when the frame
    names no intervention."""
    if frame.intervention:
        findings = [findings_value(a, frame, models) for a in annotations]
    else:
        findings = [float(v) for v in blind_outcome]
    return {
        "findings": findings,
        "design": [design_value(a, models) for a in annotations],
        "sample_size": [sample_size_value(a) for a in annotations],
        "recency": [recency_value(a) for a in annotations],
    }
