"""Strength of evidence (Demner-Fushman & Lin 2007, section 5.9 and Table 5).

The grade (A, B, C) and the study class come from the citation's publication types and
study-design MeSH headings through ``rules/study_types.tsv``. A citation without publication
types or MeSH (many bundled records are text only) gets no grade: unknown, said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ebm.citation import Citation
from ebm.mesh import MeshVocabulary
from ebm.rules.tables import StudyEvidence, StudyTypes


@dataclass(frozen=True)
class Evidence:
    grade: str | None  # A, B, C or None (unknown)
    study_class: str | None  # clinical trial, observational, non-clinical, synthesis, ...
    s_study: float  # the S_study score of the matched row (0 when none)
    reasons: tuple[str, ...]
    # what the study-type table says (the rows behind S_study and the grade); None: no
    # publication types or MeSH headings. S_SoE reads it: the grade is computed once.
    study: StudyEvidence | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "grade": self.grade,
            "study_class": self.study_class,
            "s_study": self.s_study,
            "reasons": list(self.reasons),
        }


def grade_evidence(citation: Citation, study_types: StudyTypes, vocabulary: MeshVocabulary) -> Evidence:
    """The grade and study class from rules/study_types.tsv, names resolved in ``vocabulary``:
    the one evidence grade annotate, ask, explain and the web card show."""
    if citation.publication_types is None and citation.mesh_headings is None:
        return Evidence(None, None, 0.0, ("no publication types or MeSH headings: grade unknown",), None)
    found = study_types.classify(citation, vocabulary)
    reasons: list[str] = []
    if found.study_row is not None:
        r = found.study_row
        reasons.append(f"{r.field} {r.term!r}: {r.study_class}, S_study {found.s_study:g} ({r.where})")
    if found.grade_row is not None:
        r = found.grade_row
        reasons.append(f"{r.field} {r.term!r}: grade {found.grade} ({r.where})")
    if not reasons:
        reasons.append("no publication type or heading in the study-type table")
    klass = found.study_class or (found.grade_row.study_class if found.grade_row else None)
    return Evidence(found.grade, klass, found.s_study, tuple(reasons), found)
