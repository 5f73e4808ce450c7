"""The rule tables: faithful to the paper, valid MeSH, checked with suggestions, editable copies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ebm.citation import Citation, Journal, MeshHeading, PublicationType, Qualifier
from ebm.cli import main
from ebm.errors import InputError
from ebm.medline.reader import read_citations
from ebm.mesh import mesh
from ebm.resources import Resources, shipped_rules_dir
from ebm.rules import RuleSet, qualifiers
from ebm.rules.check import check_directory

rules_dir = shipped_rules_dir


def load_rules(directory: Path | None = None) -> RuleSet:
    """The scoring and query tables of a validated rules directory."""
    return Resources.load(directory, vocabulary=None).rules


@pytest.fixture(scope="module")
def citations(shared: Path) -> dict[str, Citation]:
    """Real MEDLINE records (2016 baseline sample and NLM's 2006 sample), by PMID."""
    out: dict[str, Citation] = {}
    for name in ("medline16n0902.xml.gz", "medsamp2006.xml"):
        for c in read_citations(shared / "medline" / name):
            out[c.pmid] = c
    return out


@pytest.fixture()
def rules_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "rules"
    shutil.copytree(rules_dir(), dest, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return dest


def heading(name: str, major: bool = False, *quals: tuple[str, bool]) -> MeshHeading:
    d = mesh().by_name(name)
    assert d is not None, name
    return MeshHeading(d.ui, d.name, major, tuple(Qualifier(None, q, m) for q, m in quals))


# --- shipped tables ---------------------------------------------------------------------


def test_shipped_tables_are_valid() -> None:
    report = check_directory(rules_dir())
    assert report.problems == []
    assert {"task_indicators.tsv", "study_types.tsv", "journals.tsv", "clinical_queries.tsv"} <= set(
        report.checked
    )


def test_qualifier_list_covers_every_qualifier_in_real_medline(shared: Path) -> None:
    assert len(qualifiers.QUALIFIERS) == 76
    seen: dict[str, str | None] = {}
    for f in sorted((shared / "medline").iterdir()):
        if not f.is_file():
            continue
        for c in read_citations(f):
            for h in c.mesh_headings or ():
                for q in h.qualifiers:
                    seen[q.name] = q.ui
    assert len(seen) > 40
    for name, ui in seen.items():
        assert qualifiers.canonical(name) == name, name
        if ui and name in qualifiers.UIS:
            assert qualifiers.UIS[name] == ui
    assert set(seen) - set(qualifiers.QUALIFIERS) <= set(qualifiers.RETIRED)
    assert qualifiers.canonical("Prevention and Control") == "prevention & control"
    assert qualifiers.canonical("DT") == "drug therapy"


def test_task_weights_follow_section_6_3() -> None:
    r = load_rules()
    voc = mesh()

    def weight(task: str, h: MeshHeading) -> float:
        return r.task_indicators.weights(task, voc).score([h], voc)

    oral = heading("Administration, Oral")  # a child of Drug Administration Routes
    assert weight("therapy", heading("Administration, Oral", True)) == 1
    assert weight("therapy", oral) == 0.5
    assert weight("diagnosis", oral) == -0.5  # therapy positives are diagnosis negatives
    assert weight("etiology", oral) == -0.3
    assert weight("prevention", oral) == 0.5  # prevention includes the therapy rows
    differential = heading("Diagnosis, Differential", True)  # in the Diagnosis tree
    assert weight("diagnosis", differential) == 1
    assert weight("therapy", differential) == -1
    assert weight("etiology", differential) == 0.1
    for task in ("therapy", "diagnosis", "prognosis", "etiology"):
        assert weight(task, heading("Gene Expression", True)) == -1  # genomics: every task
    assert weight("prognosis", heading("Risk Factors", True)) == 2
    assert weight("prognosis", heading("Quality of Life")) == 1
    assert weight("etiology", heading("Risk Factors")) == 1
    assert weight("etiology", heading("Causality", True)) == 2
    # the paper's own heading list: Fever/*drug therapy, Acetaminophen/*therapeutic use
    fever = heading("Fever", False, ("drug therapy", True))
    assert weight("therapy", fever) == 1  # Fever itself weighs nothing; the starred qualifier 1
    acetaminophen = heading("Acetaminophen", False, ("therapeutic use", True), ("adverse effects", False))
    assert weight("therapy", acetaminophen) == 1
    assert weight("diagnosis", acetaminophen) == -1
    prevention = heading("Influenza, Human", False, ("prevention & control", True))
    assert weight("prevention", prevention) == 1
    assert weight("therapy", prevention) == 0
    # the prognosis branch of the Diagnosis tree is neutral for therapy, positive for diagnosis
    outcome = heading("Treatment Outcome")
    assert weight("therapy", outcome) == 0
    assert weight("diagnosis", outcome) == 0.5
    assert weight("prognosis", outcome) == 1


def test_task_hits_explain_the_deciding_row() -> None:
    r = load_rules()
    w = r.task_indicators.weights("diagnostic test", mesh())  # frame task -> diagnosis rows
    hits = w.hits([heading("Random Allocation")], mesh())
    assert len(hits) == 1
    hit = hits[0]
    assert hit.weight == -0.5 and not hit.major
    assert hit.indicator.kind == "task" and hit.indicator.term == "therapy"
    assert hit.via is not None and hit.via.term == "Random Allocation" and hit.via.task == "therapy"
    assert hit.indicator.where.endswith(f"task_indicators.tsv:{hit.indicator.line}")


def test_real_citations_rank_by_task(citations: dict[str, Citation]) -> None:
    r = load_rules()
    voc = mesh()
    rct = citations["22508830"]  # Randomized phase II trial of erlotinib with entinostat
    case_report = citations["25636559"]  # Correction of a skeletal Class II malocclusion
    genomics = citations["25371200"]  # MicroRNA-200 cluster regulation by achaete scute-like 2
    imaging = citations["25919099"]  # Postsurgical volumetric airway changes (CT measurements)

    def s(task: str, c: Citation) -> float:
        return r.task_indicators.weights(task, voc).score(c.mesh_headings, voc)

    assert s("therapy", rct) > s("therapy", case_report) > s("therapy", genomics)
    assert s("diagnosis", imaging) > s("diagnosis", rct)
    assert s("therapy", rct) > s("therapy", imaging)
    for task in ("therapy", "diagnosis", "prognosis", "etiology"):
        assert s(task, genomics) < 0


def test_study_types_from_real_publication_types(citations: dict[str, Citation]) -> None:
    st = load_rules().study_types
    rct = st.classify(citations["22508830"], mesh())
    assert (rct.s_study, rct.grade, rct.study_class) == (0.5, "A", "clinical trial")
    phase2 = st.classify(citations["23415808"], mesh())  # phase II, not randomized
    assert (phase2.s_study, phase2.grade) == (0.5, "B")
    case = st.classify(citations["25636559"], mesh())
    assert (case.s_study, case.grade, case.study_class) == (0.3, "C", "observational")
    animal = st.classify(citations["20501835"], mesh())  # mouse strains: Animals without Humans
    assert (animal.s_study, animal.grade, animal.study_class) == (-1.5, "C", "non-clinical")
    review = st.classify(citations["11034741"], mesh())  # a Cochrane review (Review only)
    assert (review.s_study, review.grade) == (0.0, None)
    unknown = st.classify(Citation("1"), mesh())
    assert (unknown.s_study, unknown.grade, unknown.study_row) == (0.0, None, None)


def test_unless_and_order_decide() -> None:
    st = load_rules().study_types
    voc = mesh()
    humans_and_animals = Citation(
        "1",
        mesh_headings=(heading("Animals"), heading("Humans")),
        publication_types=(PublicationType("D016449", "Randomized Controlled Trial"),),
    )
    ev = st.classify(humans_and_animals, voc)
    assert (ev.s_study, ev.grade) == (0.5, "A")
    meta = Citation("2", publication_types=(PublicationType(None, "Meta-Analysis"),))
    ev = st.classify(meta, voc)
    assert (ev.s_study, ev.grade, ev.grade_row.term) == (0.0, "A", "Meta-Analysis")


def test_core_journals_match_real_citations(citations: dict[str, Citation]) -> None:
    journals = load_rules().journals
    assert len(journals.rows) == 123
    assert journals.match(citations["11694165"].journal).medline_ta == "JAMA"
    assert journals.score(citations["11704686"].journal) == 0.6  # N Engl J Med
    assert journals.score(citations["22508830"].journal) == 0.0
    assert journals.match(Journal(title="Lancet (London, England)")).title == "Lancet"
    assert journals.match(Journal(iso_abbreviation="N. Engl. J. Med.")).medline_ta == "N Engl J Med"
    assert journals.match(Journal(title="Lancet oncology")) is None
    assert journals.match(
        Journal(title="Archives of disease in childhood. Fetal and neonatal edition")
    ).line != (journals.match(Journal(title="Archives of disease in childhood")).line)
    assert journals.match(None) is None


def test_clinical_queries_filters_as_shipped(shared: Path) -> None:
    cq = load_rules().clinical_queries
    source = (shared / "clinical-queries" / "pubmed_clinical_queries_filters.tsv").read_text().splitlines()
    originals = {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in source[1:]}
    for row in cq.rows:
        assert originals[(row.category, row.scope, row.source)] == row.pubmed
    assert cq.filter("prevention", "narrow") == cq.get("therapy", "narrow").pubmed
    assert cq.filter("differential diagnosis", "broad", "subset") == cq.get("diagnosis", "broad").subset
    assert "random*" not in cq.get("therapy", "broad").subset


# --- validation -------------------------------------------------------------------------


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_check_reports_every_problem_with_line_and_suggestion(rules_copy: Path, capsys) -> None:
    ti = rules_copy / "task_indicators.tsv"
    _edit(ti, "diagnosis\texplode\tDiagnosis\t", "diagnosis\texplode\tDiagnosis, Diferential\t")
    _edit(ti, "etiology\tdescriptor\tRisk Factors\t", "etiology\tdescriptor\tPopulation at Risk\t")
    _edit(ti, "therapy\tqualifier\tdrug therapy\t", "therapy\tqualifier\tdrug therapie\t")
    _edit(ti, "therapy\tqualifier\ttherapy\t", "therapy\tdescriptor\ttherapeutic use\t")
    _edit(ti, "therapy\ttree\tE02.319.267\t", "therapy\ttree\tDrug Administration Routes\t")
    _edit(ti, "prognosis\tdescriptor\tPrevalence\t2\t1", "prognosis\tdescriptor\tPrevalence\t2\t1,5")
    _edit(ti, "etiology\ttask\tdiagnosis\t", "etiology\ttask\tdiagnosys\t")
    st = rules_copy / "study_types.tsv"
    _edit(st, "pt\tCase Reports\t", "mh\tCase Reports\t")
    _edit(st, "mh\tCohort Studies\t", "pt\tCohort Studies\t")
    code = main(["rules", "check", str(rules_copy)])
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()

    def line_of(path: Path, text: str) -> int:
        return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)

    expected = [
        (
            ti,
            "Diagnosis, Diferential",
            "Diagnosis, Diferential: not a MeSH descriptor; did you mean 'Diagnosis, Differential'?",
        ),
        (ti, "Population at Risk", "an entry term, not a descriptor name; did you mean 'Risk Factors'?"),
        (ti, "drug therapie", "not a MeSH qualifier (subheading); did you mean 'drug therapy'?"),
        (
            ti,
            "descriptor\ttherapeutic use",
            "a MeSH qualifier (subheading), not a descriptor; use kind 'qualifier'",
        ),
        (
            ti,
            "tree\tDrug Administration Routes",
            "use kind 'explode' (or one of its tree numbers: E02.319.267)",
        ),
        (ti, "1,5", "column 'minor': '1,5' is not a number"),
        (ti, "diagnosys", "did you mean 'diagnosis'?"),
        (st, "mh\tCase Reports", "Case Reports: a publication type; use field 'pt'"),
        (st, "pt\tCohort Studies", "Cohort Studies: not a publication type; use field 'mh'"),
    ]
    for path, marker, message in expected:
        prefix = f"{path}:{line_of(path, marker)}: "
        assert any(ln.startswith(prefix) and message in ln for ln in lines), (prefix, message, lines)
    assert len(lines) == len(expected)
    assert f"{len(expected)} problems" in err
    with pytest.raises(InputError) as e:
        load_rules(rules_copy)
    for path, marker, message in expected:
        assert f"{path}:{line_of(path, marker)}: " in str(e.value) and message in str(e.value)


def test_check_clean_copy_and_duplicates(rules_copy: Path, capsys) -> None:
    assert main(["rules", "check", str(rules_copy)]) == 0
    assert "no problems" in capsys.readouterr().out
    ti = rules_copy / "task_indicators.tsv"
    ti.write_text(ti.read_text() + "therapy\tdescriptor\tD011897\t2\t1\n")  # Random Allocation again
    problems = check_directory(rules_copy).problems
    assert len(problems) == 1 and "same descriptor for therapy as line" in problems[0].message


def test_other_modules_validators_run_through_the_hook(rules_copy: Path) -> None:
    sg = rules_copy / "semantic_groups.tsv"
    _edit(sg, "C\tDISO", "C\tDISORDER")
    report = check_directory(rules_copy)
    assert "semantic_groups.tsv" in report.checked
    assert [p.file for p in report.problems] == [str(sg)]
    assert "'DISORDER' is not one of" in report.problems[0].message
    assert "did you mean 'DISO'?" in report.problems[0].message
    assert report.problems[0].line is not None


def test_missing_table_and_directory(rules_copy: Path, tmp_path: Path) -> None:
    (rules_copy / "journals.tsv").unlink()
    with pytest.raises(InputError, match=r"journals.tsv: table missing"):
        load_rules(rules_copy)
    with pytest.raises(InputError, match="rules directory not found"):
        load_rules(tmp_path / "nope")
    assert main(["rules", "check", str(tmp_path / "nope")]) == 2


def test_edited_copy_changes_the_weights(rules_copy: Path, citations: dict[str, Citation]) -> None:
    voc = mesh()
    rct = citations["22508830"]
    shipped = load_rules().task_indicators.weights("therapy", voc).score(rct.mesh_headings, voc)
    ti = rules_copy / "task_indicators.tsv"
    _edit(ti, "therapy\tqualifier\ttherapeutic use\t1\t0.5", "therapy\tqualifier\ttherapeutic use\t5\t3")
    edited = load_rules(rules_copy).task_indicators.weights("therapy", voc).score(rct.mesh_headings, voc)
    uses = [q for h in rct.mesh_headings for q in h.qualifiers if q.name == "therapeutic use"]
    assert uses
    expected = sum((5 - 1) if q.major else (3 - 0.5) for q in uses)
    assert edited == pytest.approx(shipped + expected)


def test_copy_command(tmp_path: Path, capsys) -> None:
    dest = tmp_path / "my-rules"
    assert main(["rules", "copy", str(dest)]) == 0
    assert (dest / "task_indicators.tsv").read_text() == (rules_dir() / "task_indicators.tsv").read_text()
    assert load_rules(dest).directory == dest
    assert main(["rules", "copy", str(dest)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_a_table_may_be_toml(rules_copy: Path, citations: dict[str, Citation]) -> None:
    tsv = rules_copy / "task_indicators.tsv"
    rows = load_rules().task_indicators.rows
    blocks = ["# task indicators as TOML\n"]
    for r in rows:
        blocks.append(
            f'\n[[row]]\ntask = "{r.task}"\nkind = "{r.kind}"\nterm = "{r.term}"\n'
            f"major = {r.major}\nminor = {r.minor}\n"
        )
    tsv.unlink()
    toml = rules_copy / "task_indicators.toml"
    toml.write_text("".join(blocks))
    loaded = load_rules(rules_copy)
    assert loaded.task_indicators.table.path == toml
    voc = mesh()
    for pmid in ("22508830", "25919099", "25371200"):
        headings = citations[pmid].mesh_headings
        for task in ("therapy", "prevention", "diagnosis", "prognosis", "etiology"):
            assert loaded.task_indicators.weights(task, voc).score(
                headings, voc
            ) == load_rules().task_indicators.weights(task, voc).score(headings, voc)
    toml.write_text(toml.read_text().replace('term = "Random Allocation"', 'term = "Random Alocation"'))
    with pytest.raises(
        InputError, match=r"task_indicators.toml:\d+: Random Alocation: not a MeSH descriptor"
    ):
        load_rules(rules_copy)


# --- remembered passes (ebm.rules.verdicts) ---------------------------------------------------


@pytest.fixture()
def validations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A fresh verdict store (EBM_HOME in tmp_path) and the names of the tables validated
    (their declared validator run) since."""
    from dataclasses import replace

    from ebm.rules import registry

    monkeypatch.setenv("EBM_HOME", str(tmp_path / "home"))
    calls: list[str] = []
    for spec in registry.specs():
        if spec.validate is None:
            continue

        def counting(t: object, v: object, ctx: object, _name: str = spec.name, _real=spec.validate) -> list:
            calls.append(_name)
            return _real(t, v, ctx)

        monkeypatch.setitem(registry.REGISTRY, spec.name, replace(spec, validate=counting))
    return calls


VALIDATED = [s.name for s in __import__("ebm.rules.registry").rules.registry.specs() if s.validate]


def test_unchanged_tables_load_without_validating_again(rules_copy: Path, validations: list[str]) -> None:
    first = load_rules(rules_copy)
    assert sorted(validations) == sorted(VALIDATED)
    validations.clear()
    second = load_rules(rules_copy)  # as a new process would: passes are on disk
    assert validations == []
    assert second is not first and second.task_indicators.rows == first.task_indicators.rows
    assert second.study_types.rows == first.study_types.rows
    # an edit is validated again, and only the edited table is
    ti = rules_copy / "task_indicators.tsv"
    _edit(ti, "therapy\tqualifier\ttherapeutic use\t1\t0.5", "therapy\tqualifier\ttherapeutic use\t5\t3")
    load_rules(rules_copy)
    assert validations == ["task_indicators"]


def test_a_broken_edit_is_refused_even_with_remembered_passes(
    rules_copy: Path, validations: list[str], capsys
) -> None:
    assert main(["rules", "check", str(rules_copy)]) == 0  # every table passes and is remembered
    load_rules(rules_copy)
    ti = rules_copy / "task_indicators.tsv"
    _edit(ti, "therapy\tdescriptor\tRandom Allocation\t", "therapy\tdescriptor\tRandom Alocation\t")
    sg = rules_copy / "semantic_groups.tsv"
    _edit(sg, "C\tDISO", "C\tDISORDER")
    expected = check_directory(rules_copy, remember=False).problems  # validated from scratch
    assert {p.file for p in expected} == {str(ti), str(sg)}
    with pytest.raises(InputError) as e:
        load_rules(rules_copy)
    own = [p for p in expected if p.file == str(ti)]
    assert len(own) == 1 and "Random Alocation: not a MeSH descriptor; did you mean 'Random Allocation'?" in (
        own[0].message
    )
    assert str(own[0]) in str(e.value)
    capsys.readouterr()
    assert main(["rules", "check", str(rules_copy)]) == 1
    shown = [str(p) for p in sorted(expected, key=lambda p: p.sort_key)]
    assert capsys.readouterr().out.splitlines() == shown
    # the same broken table is refused again: problems are never remembered
    with pytest.raises(InputError) as again:
        load_rules(rules_copy)
    assert str(again.value) == str(e.value)


def test_check_output_is_the_same_with_and_without_remembered_passes(rules_copy: Path, capsys) -> None:
    fresh = check_directory(rules_copy, remember=False)
    check_directory(rules_copy)  # records passes (in this session's EBM_HOME)
    remembered = check_directory(rules_copy)
    assert remembered.problems == fresh.problems == []
    assert remembered.checked == fresh.checked and remembered.unchecked == fresh.unchecked


def test_verdicts_follow_their_inputs(
    rules_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A validator reading the concept index or another table is run again when they change."""
    from ebm.rules.check import _key
    from ebm.rules.registry import REGISTRY
    from ebm.rules.verdicts import Verdicts

    monkeypatch.setenv("EBM_HOME", str(tmp_path / "home"))
    verdicts = Verdicts()
    spec = REGISTRY["concept_adjectives"]
    content = spec.path(rules_copy).read_bytes()
    index = tmp_path / "home" / "concepts"  # adjective rows are looked up in the concept index
    keys = [_key(verdicts, spec, content, rules_copy, index)]
    index.mkdir(parents=True)
    (index / "meta.json").write_text("{}")
    keys.append(_key(verdicts, spec, content, rules_copy, index))
    (index / "meta.json").write_text('{"rebuilt": true}')
    keys.append(_key(verdicts, spec, content, rules_copy, index))
    synonyms = rules_copy / "concept_synonyms.tsv"  # the table its validator reads
    synonyms.write_text(synonyms.read_text() + "\n")
    keys.append(_key(verdicts, spec, content, rules_copy, index))
    keys.append(_key(verdicts, REGISTRY["concept_stoplist"], content, rules_copy, index))
    assert len(set(keys)) == len(keys)
    assert _key(verdicts, spec, content, rules_copy, index) == keys[-2]
    journals = rules_copy / "journals.tsv"  # not read by it: same key
    journals.write_text(journals.read_text() + "\n")
    assert _key(verdicts, spec, content, rules_copy, index) == keys[-2]
