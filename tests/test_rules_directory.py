"""``--rules DIR`` means every table of DIR (issue 11).

For each declared table: a copy of the shipped rules with one meaningful edit in that table
changes what ``ebm annotate`` / ``ebm explain`` / ``ebm ask`` print, in the way the edit says;
and a broken row in that table stops ``ebm ask`` with exit 2 and the same ``file:line`` message
``ebm rules check`` prints (never a silent fallback to the shipped table).

Everything runs in-process on one stored citation (PMID 9505772, a randomised trial of early vs
late extubation after bypass grafting) and, for the population words, PMID 1636026 ("100
subjects").
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ebm.cli import main
from ebm.mesh import mesh
from ebm.resources import shipped_rules_dir
from ebm.rules.registry import specs

ROOT = Path(__file__).resolve().parents[1]
PMID = "9505772"
FRAME = ["--task", "therapy", "--problem", "myocardial ischemia", "--intervention", "tracheal extubation"]
EXPLAIN = ["explain", PMID, *FRAME, "--format", "json", "--no-cache", "--year", "2024"]
ANNOTATE = ["annotate", PMID, "--json", "--concepts"]
ASK = ["ask", *FRAME, "--format", "json", "--candidates", "5", "--no-cache", "--year", "2024"]


@pytest.fixture(autouse=True)
def _index(concept_index: Path) -> None:
    """The commands find the tests' concept index in EBM_HOME."""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def output(argv: list[str], capsys: pytest.CaptureFixture[str], rules: Path | None = None) -> Any:
    code, out, err = run([*argv, *(["--rules", str(rules)] if rules else [])], capsys)
    assert code == 0, err
    return json.loads(out)


def copy_rules(tmp_path: Path) -> Path:
    dest = tmp_path / "rules"
    shutil.copytree(shipped_rules_dir(), dest, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return dest


def replace_line(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    hits = [i for i, ln in enumerate(lines) if ln.rstrip("\r\n") == old]
    assert len(hits) == 1, (path.name, old)
    lines[hits[0]] = new + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")


def concept(ann: dict[str, Any], text: str) -> dict[str, Any] | None:
    return next((c for c in ann["concepts"] if c["text"] == text), None)


def intervention(ann: dict[str, Any], text: str) -> dict[str, Any]:
    return next(c for c in ann["interventions"] if c["text"] == text)


# --- one meaningful edit per table, and what it must change ----------------------------------

Edit = Callable[[Path], None]
Check = Callable[[Any, Any], None]  # (shipped output, edited output)


def _task(d: Path) -> None:  # Coronary Artery Bypass, one of the trial's headings, weighs for therapy
    append(d / "task_indicators.tsv", "therapy\tdescriptor\tCoronary Artery Bypass\t3\t3")


def _study(d: Path) -> None:
    old = "pt\tRandomized Controlled Trial\tclinical trial\t0.5\tA"
    replace_line(d / "study_types.tsv", old, "pt\tRandomized Controlled Trial\tclinical trial\t0.9\tB")


def _journal(d: Path) -> None:
    append(d / "journals.tsv", "British journal of anaesthesia\tBr J Anaesth\t0.6")


def _queries(d: Path) -> None:
    p = d / "clinical_queries.tsv"
    text = p.read_text(encoding="utf-8")
    p.write_text(
        text.replace(
            "(randomized controlled trial[Publication Type] OR", "(clinical trial[Publication Type] OR"
        )
    )


def _groups(d: Path) -> None:  # Myocardial Ischemia is a phenomenon, not a disorder
    append(d / "semantic_groups.tsv", f"{mesh().by_name('Myocardial Ischemia').ui}\tPHEN")


def _synonyms(d: Path) -> None:  # "isoenzyme" here is the MB isoenzyme of creatine kinase
    append(d / "concept_synonyms.tsv", f"isoenzyme\t{mesh().by_name('Creatine Kinase, MB Form').ui}")


def _adjectives(d: Path) -> None:
    old = "ischaemic\tischaemia\tIschemia"
    replace_line(d / "concept_adjectives.tsv", old, "ischaemic\tmyocardial ischaemia\tMyocardial Ischemia")


def _stoplist(d: Path) -> None:
    append(d / "concept_stoplist.tsv", "term\tincidence\tgeneric here")


def _stopwords(d: Path) -> None:
    append(d / "stopwords_en.txt", "safety")


def _negation(d: Path) -> None:
    append(d / "negation_triggers.tsv", "correction for\tpre\tadjusted away")


def _population(d: Path) -> None:  # "subjects" no longer names participants
    p = d / "population_words.tsv"
    p.write_text(p.read_text(encoding="utf-8").replace("participant\tsubjects\n", ""), encoding="utf-8")


def _cues(d: Path) -> None:
    replace_line(d / "intervention_cues.tsv", "vs\t2.0\tbefore", "vs\t4.0\tbefore")


def _kinds(d: Path) -> None:
    replace_line(
        d / "intervention_kinds.tsv", "E04\t1.0\t# surgical procedures", "E04\t0.2\t# surgical procedures"
    )


def _terms(d: Path) -> None:
    append(d / "intervention_terms.tsv", "word\tlate extubation\t1.5")


def _problem_kinds(d: Path) -> None:
    old = next(ln for ln in (d / "problem_kinds.tsv").read_text().splitlines() if ln.startswith("C23.550\t"))
    replace_line(d / "problem_kinds.tsv", old, old.replace("C23.550\t0.6", "C23.550\t1.5", 1))


def _outcome_cues(d: Path) -> None:  # "no significant differences" taken for an aim, not a result
    old = "phrase\tno significant differences\t0.9\t"
    replace_line(d / "outcome_cues.tsv", old, "phrase\tno significant differences\t-0.9\t")


def _design_grades(d: Path) -> None:  # a predicted RCT is graded B
    p = d / "design_grades.tsv"
    old = next(ln for ln in p.read_text().splitlines() if ln.startswith("randomized_controlled_trial\t"))
    replace_line(p, old, old.replace("\tA\t0.4\t", "\tB\t0.4\t", 1))


def _question_cues(d: Path) -> None:  # "quinine" becomes an ignored word of questions
    append(d / "question_cues.tsv", "ignore\tquinine\t-\t1")


def _check_task(a: Any, b: Any) -> None:
    assert b["answer"]["components"]["task"]["total"] > a["answer"]["components"]["task"]["total"]


def _check_study(a: Any, b: Any) -> None:
    assert (a["answer"]["grade"], b["answer"]["grade"]) == ("A", "B")
    assert b["answer"]["components"]["soe"]["study"] == 0.9


def _check_journal(a: Any, b: Any) -> None:
    assert (a["answer"]["components"]["soe"]["journal"], b["answer"]["components"]["soe"]["journal"]) == (
        0,
        0.6,
    )


def _check_queries(a: Any, b: Any) -> None:
    first_a, first_b = a["attempts"][0]["query"], b["attempts"][0]["query"]
    assert "(randomized controlled trial[Publication Type]" in first_a
    assert "(clinical trial[Publication Type]" in first_b and "randomized controlled trial" not in first_b


def _check_groups(a: Any, b: Any) -> None:
    assert concept(a, "Myocardial ischaemia")["groups"] == ["DISO"]
    assert concept(b, "Myocardial ischaemia")["groups"] == ["PHEN"]
    assert "Myocardial Ischemia" not in [n for p in b["problems"] for n in p["names"]]


def _check_synonyms(a: Any, b: Any) -> None:
    assert (concept(a, "isoenzyme")["name"], concept(b, "isoenzyme")["name"]) == (
        "Isoenzymes",
        "Creatine Kinase, MB Form",
    )


def _check_adjectives(a: Any, b: Any) -> None:
    assert (concept(a, "ischaemic")["name"], concept(b, "ischaemic")["name"]) == (
        "Ischemia",
        "Myocardial Ischemia",
    )


def _check_stoplist(a: Any, b: Any) -> None:
    assert concept(a, "incidence") is not None and concept(b, "incidence") is None


def _check_stopwords(a: Any, b: Any) -> None:
    assert concept(a, "safety") is not None and concept(b, "safety") is None


def _check_negation(a: Any, b: Any) -> None:
    assert concept(a, "randomization")["negated"] is False
    assert concept(b, "randomization")["negated"] is True


def _check_population(a: Any, b: Any) -> None:
    assert a["population"][0]["text"] == "100 subjects"
    assert all("subjects" not in p["text"] for p in b["population"][:1])


def _check_cues(a: Any, b: Any) -> None:
    assert intervention(b, "late extubation")["score"] > intervention(a, "late extubation")["score"]


def _check_kinds(a: Any, b: Any) -> None:
    cabg = "coronary artery bypass grafting"
    assert intervention(b, cabg)["score"] < intervention(a, cabg)["score"]


def _check_terms(a: Any, b: Any) -> None:
    assert any("listed term" in e for e in intervention(b, "late extubation")["evidence"])
    assert not any("listed term" in e for e in intervention(a, "late extubation")["evidence"])


def _check_problem_kinds(a: Any, b: Any) -> None:
    score = {p["text"]: p["score"] for p in a["problems"]}
    edited = {p["text"]: p["score"] for p in b["problems"]}
    assert edited["ischaemic"] > score["ischaemic"]


def _check_outcome_cues(a: Any, b: Any) -> None:
    p = {o["sentence"]: o["probability"] for o in a["outcomes"]}
    q = {o["sentence"]: o["probability"] for o in b["outcomes"]}
    assert q[6] < p[6]  # "no significant differences" no longer counts as a result cue


def _check_design_grades(a: Any, b: Any) -> None:
    # PMID 1621668 has no publication types: its grade comes from the predicted design
    assert a["design"]["source"] == "text" and a["design"]["label"] == "randomized_controlled_trial"
    assert (a["evidence"]["grade"], b["evidence"]["grade"]) == ("A", "B")
    assert b["evidence"]["predicted"] is True


def _check_question_cues(a: Any, b: Any) -> None:
    assert a["intervention"] == ["quinine"] and "intervention" not in b
    assert a["problem"] == b["problem"] == "leg cramps"


# table -> (command, edit, check)
EDITS: dict[str, tuple[list[str], Edit, Check]] = {
    "task_indicators": (EXPLAIN, _task, _check_task),
    "study_types": (EXPLAIN, _study, _check_study),
    "journals": (EXPLAIN, _journal, _check_journal),
    "clinical_queries": (ASK, _queries, _check_queries),
    "semantic_groups": (ANNOTATE, _groups, _check_groups),
    "concept_synonyms": (ANNOTATE, _synonyms, _check_synonyms),
    "concept_adjectives": (ANNOTATE, _adjectives, _check_adjectives),
    "concept_stoplist": (ANNOTATE, _stoplist, _check_stoplist),
    "stopwords": (ANNOTATE, _stopwords, _check_stopwords),
    "negation_triggers": (ANNOTATE, _negation, _check_negation),
    "population_words": (["annotate", "1636026", "--json"], _population, _check_population),
    "intervention_cues": (ANNOTATE, _cues, _check_cues),
    "intervention_kinds": (ANNOTATE, _kinds, _check_kinds),
    "intervention_terms": (ANNOTATE, _terms, _check_terms),
    "problem_kinds": (ANNOTATE, _problem_kinds, _check_problem_kinds),
    "outcome_cues": (ANNOTATE, _outcome_cues, _check_outcome_cues),
    "design_grades": (["annotate", "1621668", "--json"], _design_grades, _check_design_grades),
    "question_cues": (["frame", "leg cramps quinine", "--json"], _question_cues, _check_question_cues),
}
# Read only when `ebm setup --umls` builds an index: tested through setup below.
INDEX_ONLY = {"umls_semantic_groups"}


def test_every_shipped_table_has_an_edit_here() -> None:
    shipped = {s.name for s in specs() if s.path(shipped_rules_dir()).is_file()}
    assert shipped - INDEX_ONLY <= set(EDITS), "declare an edit for every shipped table"


def test_docs_list_every_table_with_its_consumers() -> None:
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for spec in specs():
        row = next((ln for ln in doc.splitlines() if ln.startswith(f"| `{spec.file}` |")), None)
        assert row is not None, spec.file
        assert row.split("|")[2].strip() == ", ".join(spec.consumers), spec.file


_SHIPPED: dict[str, Any] = {}


@pytest.mark.parametrize("table", sorted(EDITS))
def test_an_edit_in_each_table_changes_the_output(
    table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, edit, check = EDITS[table]
    key = " ".join(argv)
    if key not in _SHIPPED:
        _SHIPPED[key] = output(argv, capsys)
    rules = copy_rules(tmp_path)
    edit(rules)
    check(_SHIPPED[key], output(argv, capsys, rules))


def test_umls_groups_table_is_read_by_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = copy_rules(tmp_path)
    replace_line(
        rules / "umls_semantic_groups.tsv",
        "T047\tDISO\tDisease or Syndrome",
        "T047\tPHEN\tDisease or Syndrome",
    )
    text = "otitis media in children"
    groups = {}
    for name, d in (("shipped", None), ("edited", rules)):
        monkeypatch.setenv("EBM_HOME", str(tmp_path / name))
        extra = ["--rules", str(d)] if d else []
        code, _, err = run(
            ["setup", "--umls", str(ROOT / "tests" / "fixtures" / "umls"), "--quiet", *extra], capsys
        )
        assert code == 0, err
        found = output(["concepts", text, "--json"], capsys, d)
        groups[name] = {c["text"]: c["groups"] for c in found["concepts"]}["otitis media"]
    assert groups == {"shipped": ["DISO"], "edited": ["PHEN"]}


# --- a broken row in any table stops ebm ask with rules check's message ------------------------


def _broken(spec: Any) -> str:
    """A row with one cell more than the table has columns (never a comment)."""
    return "\t".join(["x"] * (len(spec.columns) + 1))


@pytest.mark.parametrize("name", [s.name for s in specs() if s.path(shipped_rules_dir()).is_file()])
def test_a_broken_row_stops_ask_with_the_check_message(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = next(s for s in specs() if s.name == name)
    rules = copy_rules(tmp_path)
    path = spec.path(rules)
    append(path, _broken(spec))
    line = len(path.read_text(encoding="utf-8").splitlines())
    code, out, err = run(["rules", "check", str(rules)], capsys)
    assert code == 1
    checked = [ln for ln in out.splitlines() if ln.startswith(f"{path}:")]
    assert checked and checked[0].startswith(f"{path}:{line}: ")
    code, out, err = run([*ASK, "--rules", str(rules)], capsys)
    assert code == 2 and out == ""
    assert checked[0] in err and "Traceback" not in err
