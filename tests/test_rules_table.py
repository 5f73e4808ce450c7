"""The generic rule-table loader: typed columns, comments, file:line errors, exact round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.resources import shipped_rules_dir as rules_dir
from ebm.rules.table import choice, load, number, text
from ebm.rules.tables import (
    CLINICAL_QUERY_COLUMNS,
    JOURNAL_COLUMNS,
    STUDY_TYPE_COLUMNS,
    TASK_INDICATOR_COLUMNS,
)

COLUMNS = (
    choice("task", ("therapy", "diagnosis")),
    text("term"),
    number("major"),
    number("minor", required=False, default=0.0),
)

SHIPPED = {
    "task_indicators.tsv": TASK_INDICATOR_COLUMNS,
    "study_types.tsv": STUDY_TYPE_COLUMNS,
    "journals.tsv": JOURNAL_COLUMNS,
    "clinical_queries.tsv": CLINICAL_QUERY_COLUMNS,
}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_tables_round_trip_exactly(name: str, tmp_path: Path) -> None:
    path = rules_dir() / name
    table = load(path, SHIPPED[name])
    assert len(table) > 0
    assert table.dumps() == path.read_text(encoding="utf-8")
    out = table.write(tmp_path / name)
    assert out.read_bytes() == path.read_bytes()


def test_comments_blank_lines_and_trailing_comments(tmp_path: Path) -> None:
    p = tmp_path / "t.tsv"
    content = (
        "# a leading comment\n"
        "\n"
        "therapy\tRandom Allocation\t1\t0.50\t# why: the therapy filter\n"
        "diagnosis\tDiagnosis\t1\n"
        "   # an indented comment\n"
    )
    p.write_text(content)
    t = load(p, COLUMNS)
    assert [r.line for r in t] == [3, 4]
    first, second = t.rows
    assert first.values == {"task": "therapy", "term": "Random Allocation", "major": 1.0, "minor": 0.5}
    assert first.comment == " why: the therapy filter"
    assert second["minor"] == 0.0 and second.comment is None
    assert t.dumps() == content  # "0.50" stays as written


def test_changing_one_row_rewrites_only_that_line(tmp_path: Path) -> None:
    p = tmp_path / "t.tsv"
    content = "# c\ntherapy\tA\t1\t0.50\t# keep me\ndiagnosis\tB\t2\n"
    p.write_text(content)
    t = load(p, COLUMNS)
    t.replace(0, major=3)
    assert t.dumps() == "# c\ntherapy\tA\t3\t0.5\t# keep me\ndiagnosis\tB\t2\n"
    with pytest.raises(InputError, match=r"t.tsv:2: column 'major': 'x' is not a number"):
        t.replace(0, major="x")
    with pytest.raises(InputError, match="no column 'weight'"):
        t.replace(0, weight=1)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("therapy\tA\t1,5", "t.tsv:2: column 'major': '1,5' is not a number (use a dot for decimals: 0.5)"),
        (
            "therapie\tA\t1",
            "t.tsv:2: column 'task': 'therapie' is not one of therapy, diagnosis; did you mean 'therapy'?",
        ),
        ("therapy\t\t1", "t.tsv:2: column 'term' is empty"),
        ("therapy\tA", "t.tsv:2: column 'major' is missing"),
        (
            "therapy\tA\t1\t2\textra",
            "t.tsv:2: 5 cells, at most 4 expected (task, term, major, minor); unexpected 'extra'",
        ),
        ("therapy\tA\tnan", "t.tsv:2: column 'major': 'nan' is not a finite number"),
    ],
)
def test_errors_name_file_line_and_column(tmp_path: Path, line: str, expected: str) -> None:
    p = tmp_path / "t.tsv"
    p.write_text(f"# header\n{line}\n")
    with pytest.raises(InputError) as e:
        load(p, COLUMNS)
    assert str(e.value).startswith(str(tmp_path) + "/")
    assert expected in str(e.value)


def test_collecting_errors_reports_every_bad_row(tmp_path: Path) -> None:
    p = tmp_path / "t.tsv"
    p.write_text("therapy\tA\t1\nbad\tB\t1\ntherapy\tC\tx\ndiagnosis\tD\t2\n")
    errors: list[InputError] = []
    t = load(p, COLUMNS, errors)
    assert [r["term"] for r in t] == ["A", "D"]
    assert [str(e).split(": ", 1)[0] for e in errors] == [f"{p}:2", f"{p}:3"]
    assert t.dumps() == p.read_text()


def test_toml_tables_load_check_and_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "t.toml"
    content = (
        "# Task indicators as TOML\n"
        "\n"
        "# the therapy filter's heading\n"
        "[[row]]\n"
        'task = "therapy"\n'
        'term = "Random Allocation"\n'
        "major = 1\n"
        "minor = 0.50  # half for minor headings\n"
        "\n"
        "[[row]]\n"
        'task = "diagnosis"\n'
        'term = "Diagnosis"\n'
        "major = 1\n"
    )
    p.write_text(content)
    t = load(p, COLUMNS)
    assert [r.line for r in t] == [4, 10]
    assert t.rows[0].values == {"task": "therapy", "term": "Random Allocation", "major": 1.0, "minor": 0.5}
    assert t.rows[1]["minor"] == 0.0
    assert t.dumps() == content
    t.replace(1, major=2)
    changed = t.dumps()
    assert changed.startswith(content.split('[[row]]\ntask = "diagnosis"')[0])
    assert 'task = "diagnosis"\nterm = "Diagnosis"\nmajor = 2.0\nminor = 0.0\n' in changed
    again = tmp_path / "again.toml"
    again.write_text(changed)
    assert [r.values for r in load(again, COLUMNS)] == [r.values for r in t]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '[[row]]\ntask = "therapy"\nterm = "A"\nmajr = 1\n',
            "t.toml:1: unknown key 'majr'; did you mean 'major'?",
        ),
        ('[[row]]\ntask = "therapy"\nterm = "A"\n', "t.toml:1: key 'major' is missing"),
        (
            '[[row]]\ntask = "therapy"\nterm = "A"\nmajor = "high"\n',
            "t.toml:1: column 'major': 'high' is not a number",
        ),
        ('[[row]]\ntask = "therapy"\nterm = ["A"]\nmajor = 1\n', "t.toml:1: key 'term': nested values"),
        ('task = "therapy"\n', "t.toml: expected only [[row]] blocks"),
        ("[[row]\n", "t.toml: invalid TOML"),
    ],
)
def test_toml_errors(tmp_path: Path, body: str, expected: str) -> None:
    p = tmp_path / "t.toml"
    p.write_text(body)
    with pytest.raises(InputError) as e:
        load(p, COLUMNS)
    assert expected in str(e.value)


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="rule table not found"):
        load(tmp_path / "nope.tsv", COLUMNS)
    p = tmp_path / "latin1.tsv"
    p.write_bytes("therapy\tfi\xe8vre\t1\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        load(p, COLUMNS)
