"""S_SoE: the strength of evidence of a citation (paper section 6.2, equations 5 and 6).

S_SoE = S_journal + S_study + S_date, where S_journal is the core-journal score
(``rules/journals.tsv``: 0.6 for core clinical journals), S_study the study-type score of the
first matching row of ``rules/study_types.tsv`` (clinical trials 0.5, observational studies
0.3, non-clinical -1.5, 0 otherwise) and S_date = (year of publication - current year) / 100.

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


@dataclass(frozen=True)
class SoeScore:
    journal: float
    study: float
    date: float
    grade: str | None  # evidence grade (A, B, C) from the study-type table, None: unknown
    study_class: str | None
    contributions: tuple[Contribution, ...]

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


def score_soe(citation: Citation, rules: RuleSet, year_now: int, study: StudyEvidence | None) -> SoeScore:
    """S_SoE of a citation; ``study``: what the study-type table says about it, as its
    annotation computed it (``Annotation.evidence.study``; None: no publication types or MeSH),
    so the grade shown is the annotation's."""
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
    found = study
    if found is None:
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
    return SoeScore(
        journal=s_journal,
        study=s_study,
        date=s_date,
        grade=found.grade if found is not None else None,
        study_class=klass,
        contributions=tuple(out),
    )
