"""Careless edits of a rules copy (issue 12): every one is a ``file:line`` (or ``file:``) problem
from ``ebm rules check``, one line each, exit 1, and stops ``ebm ask`` with exit 2 -- never a
traceback, never a silent fallback; ``ebm rules copy`` fails in one line; JSON is standard."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ebm.cli import main
from ebm.resources import shipped_rules_dir

ROOT = Path(__file__).resolve().parents[1]
ASK = [
    "ask", "--task", "therapy", "--problem", "fever", "--format", "json", "--no-cache", "--candidates", "5",
]


@pytest.fixture()
def rules(tmp_path: Path) -> Path:
    dest = tmp_path / "rules"
    shutil.copytree(shipped_rules_dir(), dest, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return dest


def check_fails_with(rules: Path, capsys: pytest.CaptureFixture[str], expected: str) -> str:
    """``ebm rules check`` and ``ebm ask --rules`` both report ``expected`` on one line."""
    capsys.readouterr()
    assert main(["rules", "check", str(rules)]) == 1
    out, err = capsys.readouterr()
    lines = [ln for ln in out.splitlines() if expected in ln]
    assert len(lines) == 1, out
    assert "Traceback" not in out + err
    assert main([*ASK, "--rules", str(rules)]) == 2
    out2, err2 = capsys.readouterr()
    assert out2 == "" and lines[0] in err2 and "Traceback" not in err2
    return lines[0]


def test_an_empty_required_table(rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ti = rules / "task_indicators.tsv"
    ti.write_text("# every row deleted\n", encoding="utf-8")
    line = check_fails_with(rules, capsys, "no rows")
    assert line.startswith(f"{ti}: ")


@pytest.mark.parametrize(
    ("table", "row", "message"),
    [
        ("task_indicators.tsv", "therapy\tdescriptor\tFever\t1e308\t1", "1e+308 is above the maximum 100"),
        ("task_indicators.tsv", "therapy\tdescriptor\tFever\tinf\t1", "'inf' is not a finite number"),
        ("task_indicators.tsv", "therapy\tdescriptor\tFever\tnan\t1", "'nan' is not a finite number"),
        ("journals.tsv", "Some Journal\tSome J\t-1e308", "is below the minimum -100"),
        ("study_types.tsv", "pt\tReview\tsynthesis\t1e9\tB", "1e+09 is above the maximum 100"),
        ("intervention_cues.tsv", "tested\t1e300\tsentence", "is above the maximum 100"),
        ("outcome_cues.tsv", "phrase\tvery significant\t2\t", "2 is above the maximum 1"),
        ("intervention_kinds.tsv", "D02\t3", "3 is above the maximum 2"),
    ],
)
def test_weights_outside_their_declared_range(
    rules: Path, capsys: pytest.CaptureFixture[str], table: str, row: str, message: str
) -> None:
    path = rules / table
    path.write_text(path.read_text(encoding="utf-8") + row + "\n", encoding="utf-8")
    n = len(path.read_text(encoding="utf-8").splitlines())
    line = check_fails_with(rules, capsys, message)
    assert line.startswith(f"{path}:{n}: ")


def test_a_binary_stopword_list(rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sw = rules / "stopwords_en.txt"
    sw.write_bytes(bytes(range(256)) * 4)
    line = check_fails_with(rules, capsys, "not UTF-8")
    assert line.startswith(f"{sw}: ")


def test_control_characters_in_a_stopword_list(rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sw = rules / "stopwords_en.txt"
    sw.write_text(sw.read_text(encoding="utf-8") + "ab\x00cd\n", encoding="utf-8")
    n = len(sw.read_text(encoding="utf-8").splitlines())
    line = check_fails_with(rules, capsys, "is not a lower-case word")
    assert line.startswith(f"{sw}:{n}: ")


def test_a_deleted_required_table(rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (rules / "semantic_groups.tsv").unlink()
    line = check_fails_with(rules, capsys, "table missing")
    assert line.startswith(f"{rules / 'semantic_groups.tsv'}: ")


def test_a_table_replaced_by_a_directory(rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (rules / "journals.tsv").unlink()
    (rules / "journals.tsv").mkdir()
    line = check_fails_with(rules, capsys, "a directory, not a table file")
    assert line.startswith(f"{rules / 'journals.tsv'}: ")


def test_copy_to_an_impossible_path_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for dest in (a_file / "rules", Path("/proc/no/such/place")):
        capsys.readouterr()
        assert main(["rules", "copy", str(dest)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("ebm: error: cannot copy the rule tables to") and "\n" not in err


def test_copy_inside_the_checkout_leaves_no_untracked_folder(capsys: pytest.CaptureFixture[str]) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    dest = ROOT / "tmp-test-rules-copy"
    assert not dest.exists()
    try:
        assert main(["rules", "copy", str(dest)]) == 0
        assert (dest / "task_indicators.tsv").is_file()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", dest.name],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert status == ""
        assert main(["rules", "check", str(dest)]) == 0  # the .gitignore is no table
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def test_copy_elsewhere_has_no_gitignore(tmp_path: Path) -> None:
    assert main(["rules", "copy", str(tmp_path / "mine")]) == 0
    assert not (tmp_path / "mine" / ".gitignore").exists()


def test_ebm_home_pointing_at_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.write_text("not a directory")
    monkeypatch.setenv("EBM_HOME", str(home))
    assert main(ASK) == 2
    err = capsys.readouterr().err.strip()
    assert "is a file, not a directory" in err and "\n" not in err and "Traceback" not in err


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_output_is_standard_even_with_extreme_weights(
    rules: Path, concept_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The largest weights the tables accept still give finite scores and standard JSON."""
    ti = rules / "task_indicators.tsv"
    rows = [ln.split("\t") for ln in ti.read_text(encoding="utf-8").splitlines()]
    out = []
    for cells in rows:
        if len(cells) >= 5 and not cells[0].startswith("#"):
            cells[3] = cells[4] = "100"
        out.append("\t".join(cells))
    ti.write_text("\n".join(out) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main([*ASK, "--rules", str(rules), "--ranker", "paper-ebm"]) == 0
    data = _strict(capsys.readouterr().out)
    assert isinstance(data, dict) and data["results"]
    assert main(["annotate", "9505772", "--json", "--rules", str(rules)]) == 0
    _strict(capsys.readouterr().out)
