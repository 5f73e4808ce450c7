"""Evidence grade from a predicted study design (``rules/design_grades.tsv``).

Integration: when a citation has no manually indexed publication types, the grade is
``grade_from_design(model.predict(title, abstract), extract_sample_size(abstract), table)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ebm.errors import InputError
from ebm.rules.table import Table, choice, load, number
from extractors.design import DESIGN_CLASSES, DesignPrediction
from extractors.sample_size import SampleSize

STUDY_CLASSES = ("clinical trial", "observational", "non-clinical", "synthesis", "other")
GRADES = ("A", "B", "C")

DESIGN_GRADE_COLUMNS = (
    choice("design", DESIGN_CLASSES, help="a design class of extractors/design.py"),
    choice("class", STUDY_CLASSES, help="the study class"),
    number("s_study", required=False, help="S_study, or empty"),
    choice("grade", GRADES, help="A, B or C"),
    number("min_probability", minimum=0.0, maximum=1.0, help="below it: no grade"),
    number(
        "min_n", required=False, minimum=1, help="reported participants for higher confidence in the grade"
    ),
)


@dataclass(frozen=True)
class DesignGrade:
    design: str
    study_class: str
    s_study: float | None
    grade: str
    min_probability: float
    min_n: int | None
    where: str  # file:line


@dataclass(frozen=True)
class DesignGrades:
    table: Table
    rows: dict[str, DesignGrade]


def load_design_grades(path: Path, errors: list[InputError] | None = None) -> DesignGrades:
    """The design -> grade table; ``InputError`` naming file:line for a bad cell or a repeated design."""
    return design_grades_from_table(load(path, DESIGN_GRADE_COLUMNS, errors), errors)


def design_grades_from_table(table: Table, errors: list[InputError] | None = None) -> DesignGrades:
    """The registry's builder (``rules/design_grades.tsv`` in a rules directory)."""
    rows: dict[str, DesignGrade] = {}
    for r in table:
        where = table.where(r)
        if r["design"] in rows:
            err = InputError(f"{where}: design {r['design']!r} repeated (first at {rows[r['design']].where})")
            if errors is None:
                raise err
            errors.append(err)
            continue
        n = r["min_n"]
        rows[r["design"]] = DesignGrade(
            r["design"],
            r["class"],
            r["s_study"],
            r["grade"],
            r["min_probability"],
            None if n is None else int(n),
            where,
        )
    return DesignGrades(table, rows)


def validate(grades: DesignGrades) -> list[str]:
    """Problems a loadable table can still have: a design class with no row."""
    return [
        f"{grades.table.path}: no row for design {d!r} (it will never get a grade)"
        for d in DESIGN_CLASSES
        if d not in grades.rows
    ]


def grade_masses(prediction: DesignPrediction, grades: DesignGrades) -> dict[str, float]:
    """Probability of each grade: the summed probabilities of the designs the table grades so
    (a cohort-or-RCT doubt is still grade A)."""
    mass = dict.fromkeys(GRADES, 0.0)
    for design, p in prediction.probabilities.items():
        row = grades.rows.get(design)
        if row is not None:
            mass[row.grade] += p
    return mass


def grade_from_design(
    prediction: DesignPrediction, sample_size: SampleSize | None, grades: DesignGrades
) -> tuple[str | None, str | None, str]:
    """(grade, study class, reason) for a predicted design; grade None when unknown.

    The grade is the one with the most probability mass; it is known when that mass reaches
    the MIN_PROBABILITY of the predicted design's row. The study class is the predicted design's."""
    row = grades.rows.get(prediction.label)
    p = prediction.probability
    if row is None:
        return None, None, f"predicted {prediction.label} ({p:.2f}): no row in {grades.table.path}"
    mass = grade_masses(prediction, grades)
    grade = max(GRADES, key=lambda g: (mass[g], -GRADES.index(g)))
    if mass[grade] < row.min_probability:
        return (
            None,
            None,
            (
                f"predicted {prediction.label} ({p:.2f}); grade {grade} only {mass[grade]:.2f} "
                f"< {row.min_probability:g} ({row.where}): grade unknown"
            ),
        )
    reason = f"predicted {prediction.label} ({p:.2f}): grade {grade} ({mass[grade]:.2f}; {row.where})"
    if row.min_n is not None and sample_size is not None and row.grade == grade:
        # sample size sets the confidence within the grade, never the grade (issue 13)
        if sample_size.value < row.min_n:
            reason += f"; n = {sample_size.value} < {row.min_n}: lower confidence within grade {grade}"
        else:
            reason += f"; n = {sample_size.value} >= {row.min_n}: higher confidence within grade {grade}"
    return grade, row.study_class, reason
