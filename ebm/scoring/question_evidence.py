"""Question-aware evidence features of a candidate, each in [0, 1] (issue 15): the design,
sample size and recency below. The fourth, ``findings`` (does the abstract report a result for
the frame's intervention vs comparison?), is not computed here: ``candidate_columns`` of
``ebm.scoring.rankers`` gives it from the pipeline's one findings extraction
(``ebm.answer.frame_findings``).

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

from extractors.design import DesignModel, predict_design
from extractors.design_grade import DesignGrades, grade_masses
from extractors.sample_size import extract_sample_size

GRADE_VALUE = {"A": 1.0, "B": 0.5, "C": 0.0}
RECENCY_FROM, RECENCY_SPAN = 1975, 50.0


@dataclass(frozen=True)
class EvidenceModels:
    design: DesignModel
    grades: DesignGrades


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


def evidence_columns(annotations: Sequence[Any], models: EvidenceModels) -> dict[str, list[float]]:
    """The three columns for one question's candidates (``annotations`` in candidate order)."""
    return {
        "design": [design_value(a, models) for a in annotations],
        "sample_size": [sample_size_value(a) for a in annotations],
        "recency": [recency_value(a) for a in annotations],
    }
