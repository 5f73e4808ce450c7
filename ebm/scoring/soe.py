"""S_SoE: the strength of evidence of a citation (paper section 6.2, equations 5 and 6).

S_SoE = S_journal + S_study + S_date, where S_journal is the core-journal score
(``rules/journals.tsv``: 0.6 for core clinical journals), S_study the study-type score of the
first matching row of ``rules/study_types.tsv`` (clinical trials 0.5, observational studies
0.3, non-clinical -1.5, 0 otherwise) and S_date = (year of publication - current year) / 100.

The study part and the grade are the annotation's one evidence grade (``extractors.evidence``):
publication types through the study-type table, else the design predicted from the text through
``rules/design_grades.tsv`` (issue 13), so ``ebm annotate`` and ``ebm ask`` show the same grade.

Unknown is not bad: a citation without a journal, publication types or year (many records of
the bundled corpus are text only) gets 0 for that part, with a note saying so.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from ebm.citation import Citation
from ebm.rules import RuleSet, StudyEvidence
from ebm.scoring.contribution import Contribution
from extractors.evidence import Evidence


@dataclass(frozen=True)
class SoeScore:
    journal: float
    study: float
    date: float
    grade: str | None  # evidence grade (A, B, C) from the study-type table, None: unknown
    study_class: str | None
    contributions: tuple[Contribution, ...]
    source: str | None = None  # where the grade comes from: "publication types", "text", None
    probability: float | None = None  # the predicted design's probability (source "text")

    @property
    def total(self) -> float:
        return self.journal + self.study + self.date

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": round(self.total, 6),
            "journal": self.journal,
            "study": self.study,
            "date": round(self.date, 6),
        }


def current_year() -> int:
    return datetime.date.today().year


def journal_name(citation: Citation) -> str | None:
    j = citation.journal
    if j is None:
        return None
    return j.medline_ta or j.iso_abbreviation or j.title


def score_soe(
    citation: Citation, rules: RuleSet, year_now: int, study: Evidence | StudyEvidence | None
) -> SoeScore:
    """S_SoE of a citation; ``study``: its annotation's evidence (``Annotation.evidence``: the
    grade from publication types, or from the predicted design), or just what the study-type
    table says (``Evidence.study``; None: no publication types or MeSH), so the grade shown is
    the annotation's."""
    evidence, found = (study, study.study) if isinstance(study, Evidence) else (None, study)
    out: list[Contribution] = []
    # journal
    row = rules.journals.match(citation.journal)
    name = journal_name(citation)
    if row is not None:
        s_journal = row.s_journal
        out.append(Contribution("journal", s_journal, f"{name!r} is core journal {row.title!r}", row.where))
    else:
        s_journal = 0.0
        why = f"{name!r} is not in the journal table" if name else "journal unknown"
        out.append(Contribution("journal", 0.0, why, str(rules.journals.table.path)))
    # study type
    if evidence is not None and evidence.study is None and evidence.source is not None:
        s_study = evidence.s_study
        why = "; ".join(evidence.reasons)
        out.append(Contribution("study", s_study, f"{why} (S_study {s_study:g})", evidence.where))
    elif found is None:
        s_study = 0.0
        out.append(
            Contribution("study", 0.0, "no publication types or MeSH headings: study type unknown", None)
        )
    else:
        s_study = found.s_study
        if found.study_row is not None:
            r = found.study_row
            field = "publication type" if r.field == "pt" else "MeSH heading"
            out.append(
                Contribution(
                    "study", s_study, f"{field} {r.term!r}: {r.study_class} (S_study {s_study:g})", r.where
                )
            )
        else:
            out.append(
                Contribution(
                    "study",
                    0.0,
                    "no publication type or heading in the study-type table gives S_study",
                    str(rules.study_types.table.path),
                )
            )
        if found.grade_row is not None:
            r = found.grade_row
            out.append(Contribution("grade", 0.0, f"grade {found.grade} from {r.field} {r.term!r}", r.where))
    # date
    if citation.year is not None:
        s_date = (citation.year - year_now) / 100
        out.append(
            Contribution(
                "date", s_date, f"published {citation.year}: ({citation.year} - {year_now}) / 100", None
            )
        )
    else:
        s_date = 0.0
        out.append(Contribution("date", 0.0, "year of publication unknown", None))
    klass = None
    if found is not None:
        klass = found.study_class or (found.grade_row.study_class if found.grade_row else None)
    grade = found.grade if found is not None else None
    if evidence is not None:  # the annotation's one grade (a 'Review' graded by its design row)
        grade, klass = evidence.grade, evidence.study_class
        if found is not None and evidence.where is not None:
            why = evidence.reasons[-1]
            out.append(Contribution("grade", 0.0, why, evidence.where))
    return SoeScore(
        journal=s_journal,
        study=s_study,
        date=s_date,
        grade=grade,
        study_class=klass,
        contributions=tuple(out),
        source=evidence.source if evidence is not None else None,
        probability=evidence.probability if evidence is not None else None,
    )
