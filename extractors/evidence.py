"""Strength of evidence (Demner-Fushman & Lin 2007, section 5.9 and Table 5; issue 13).

One grade per citation, computed once by the annotation:

1. Indexer publication types and study-design headings, through ``rules/study_types.tsv``,
   win when they name a design (``extractors.design.design_from_index``) or the table matches
   them. When they name a design the study-type table gives no grade for ("Review"), the
   design's row of ``rules/design_grades.tsv`` grades it (still from the publication types).
2. Otherwise the design predicted from the title and abstract (``extractors.design``) sets the
   study class, S_study and grade through ``rules/design_grades.tsv``, marked predicted with
   its probability; the sample size states the confidence within the grade, never the grade.

Without a text design (``text=None``) a citation without publication types or MeSH gets no
grade: unknown, said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ebm.citation import Citation
from ebm.mesh import MeshVocabulary
from ebm.rules.tables import StudyEvidence, StudyTypes
from extractors.design import DesignPrediction, design_from_index
from extractors.design_grade import DesignGrades, grade_from_design
from extractors.sample_size import SampleSize

PUBLICATION_TYPES = "publication types"  # Evidence.source / design.source values
TEXT = "text"


@dataclass(frozen=True)
class TextDesign:
    """What the text says about the study: the predicted design and the sample size."""

    prediction: DesignPrediction | None  # None: no title or abstract text (design abstains)
    sample_size: SampleSize | None


@dataclass(frozen=True)
class Evidence:
    grade: str | None  # A, B, C or None (unknown)
    study_class: str | None  # clinical trial, observational, non-clinical, synthesis, ...
    s_study: float  # the S_study score of the matched row (0 when none)
    reasons: tuple[str, ...]
    # what the study-type table says (the rows behind S_study and the grade); None: no
    # publication types or MeSH headings. S_SoE reads it: the grade is computed once.
    study: StudyEvidence | None = None
    design: str | None = None  # the design class behind the grade (publication types or text)
    source: str | None = None  # "publication types", "text" (predicted) or None (unknown)
    probability: float | None = None  # the predicted design's probability (source "text")
    sample_size: int | None = None  # participants, when the abstract says (confidence only)
    where: str | None = None  # the design_grades.tsv row that gave the grade, if one did

    @property
    def predicted(self) -> bool:
        return self.source == TEXT

    def to_dict(self) -> dict[str, Any]:
        return {
            "grade": self.grade,
            "study_class": self.study_class,
            "s_study": self.s_study,
            "reasons": list(self.reasons),
            "design": self.design,
            "source": self.source,
            "predicted": self.predicted,
            "probability": None if self.probability is None else round(self.probability, 4),
        }


def grade_evidence(
    citation: Citation,
    study_types: StudyTypes,
    vocabulary: MeshVocabulary,
    text: TextDesign | None = None,
    grades: DesignGrades | None = None,
) -> Evidence:
    """The one evidence grade annotate, ask, explain and the web card show (module docstring):
    publication types through ``study_types`` (names resolved in ``vocabulary``), else the
    text's design through ``grades`` (both ``text`` and ``grades`` needed for that)."""
    size = None if text is None or text.sample_size is None else text.sample_size.value
    indexed = design_from_index(citation)
    if citation.publication_types is not None or citation.mesh_headings is not None:
        found = study_types.classify(citation, vocabulary)
        if indexed is not None or found.study_row is not None or found.grade_row is not None:
            ev = _from_study_types(found, indexed, size)
            if ev.grade is None and indexed is not None and grades is not None:
                return _from_indexed_design(ev, indexed, grades)
            return ev
    if text is None or grades is None:
        if citation.publication_types is None and citation.mesh_headings is None:
            why = "no publication types or MeSH headings: grade unknown"
        else:
            why = "no publication type or heading in the study-type table"
        return Evidence(None, None, 0.0, (why,), None, sample_size=size)
    return _from_text(text, grades)


def _from_study_types(found: StudyEvidence, indexed: str | None, size: int | None) -> Evidence:
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
    return Evidence(
        found.grade,
        klass,
        found.s_study,
        tuple(reasons),
        found,
        design=indexed,
        source=PUBLICATION_TYPES,
        sample_size=size,
    )


def _from_indexed_design(ev: Evidence, design: str, grades: DesignGrades) -> Evidence:
    """Publication types name a design the study-type table gives no grade ('Review')."""
    row = grades.rows.get(design)
    if row is None:
        return ev
    why = f"publication types name {design}: grade {row.grade} ({row.where})"
    return Evidence(  # S_study stays the study-type table's (S_SoE reads that table's rows)
        row.grade,
        ev.study_class or row.study_class,
        ev.s_study,
        (*ev.reasons, why),
        ev.study,
        design=design,
        source=PUBLICATION_TYPES,
        sample_size=ev.sample_size,
        where=row.where,
    )


def _from_text(text: TextDesign, grades: DesignGrades) -> Evidence:
    p = text.prediction
    if p is None:  # nothing to read: no design, no grade (never the classifier's prior)
        why = "no title or abstract text: no design predicted, grade unknown"
        return Evidence(None, None, 0.0, (why,), None)
    grade, klass, reason = grade_from_design(p, text.sample_size, grades)
    row = grades.rows.get(p.label) if grade is not None else None  # the row behind the grade
    size = None if text.sample_size is None else text.sample_size.value
    return Evidence(
        grade,
        klass,
        (row.s_study or 0.0) if row is not None else 0.0,
        (reason,),
        None,
        design=p.label,
        source=TEXT,
        probability=p.probability,
        sample_size=size,
        where=row.where if row is not None else None,
    )


# Short names of the design classes for the one-line summary ("RCT (predicted, 0.97) ...").
DESIGN_NAMES = {
    "randomized_controlled_trial": "RCT",
    "systematic_review": "systematic review",
    "non_randomized_trial": "non-randomized trial",
    "cohort": "cohort study",
    "case_control": "case-control study",
    "cross_sectional": "cross-sectional study",
    "case_report": "case report",
    "diagnostic_accuracy": "diagnostic accuracy study",
    "narrative_review": "review",
    "guideline": "guideline",
    "animal_or_in_vitro": "animal or in-vitro study",
    "other": "other design",
}


def evidence_line(evidence: Evidence) -> str:
    """``RCT (predicted, 0.97) · n = 120 · grade A``: the design and where it comes from, the
    sample size when the abstract gives it, the grade (the same everywhere it is shown)."""
    parts = []
    if evidence.design is not None:
        name = DESIGN_NAMES.get(evidence.design, evidence.design)
        if evidence.predicted and evidence.probability is not None:
            parts.append(f"{name} (predicted, {evidence.probability:.2f})")
        else:
            parts.append(f"{name} ({evidence.source})")
    elif evidence.study_class is not None:
        parts.append(f"{evidence.study_class} ({evidence.source or 'publication types'})")
    else:
        parts.append("study type unknown")
    if evidence.sample_size is not None:
        parts.append(f"n = {evidence.sample_size:,}")
    parts.append(f"grade {evidence.grade}" if evidence.grade else "grade unknown")
    return " · ".join(parts)
