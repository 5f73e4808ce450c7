"""S_SoE and S_task on real citations of the bundled corpus (paper sections 6.2 and 6.3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.citation import Citation, MeshHeading, Qualifier
from ebm.rules import RuleSet
from ebm.scoring.soe import score_soe as _score_soe
from ebm.scoring.task import score_task
from tests import tiny
from tests.scoring_pool import headings, pub_types
from tests.tiny import load_rules, vocabulary


def score_soe(citation: Citation, rules: RuleSet, year: int, vocabulary: object) -> object:
    """S_SoE with the study evidence an annotation computes (``grade_evidence``)."""
    from extractors.evidence import grade_evidence

    ev = grade_evidence(citation, rules.study_types, vocabulary)  # type: ignore[arg-type]
    return _score_soe(citation, rules, year, ev.study)

YEAR = 2024


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules()


def one(name: str, keep, what: str) -> Citation:
    """The bundled citation ``tests.tiny`` fixes as the ``name`` example (``keep`` checks it)."""
    c = tiny.pool_citations()[name]
    assert keep(c), f"{c.pmid} is no {what}"
    return c


def rule_line(where: str) -> str:
    """The text of the rule row a contribution points to."""
    path, line = where.rsplit(":", 1)
    return Path(path).read_text(encoding="utf-8").splitlines()[int(line) - 1]


# --- S_SoE ------------------------------------------------------------------------------------


def test_core_journal_randomized_trial_and_date(rules: RuleSet) -> None:
    nejm = one(
        "nejm_rct",
        lambda c: c.journal is not None and c.journal.medline_ta == "N Engl J Med" and c.year is not None,
        "trial in the N Engl J Med",
    )
    s = score_soe(nejm, rules, YEAR, vocabulary())
    assert s.journal == 0.6 and s.study == 0.5
    assert s.date == pytest.approx((nejm.year - YEAR) / 100)
    assert s.total == pytest.approx(0.6 + 0.5 + (nejm.year - YEAR) / 100)
    assert s.grade == "A" and s.study_class == "clinical trial"
    by = {c.component: c for c in s.contributions}
    assert "N Engl J Med" in rule_line(by["journal"].where)
    assert rule_line(by["study"].where).startswith("pt\tRandomized Controlled Trial\t")


def test_observational_non_core_and_non_clinical(rules: RuleSet) -> None:
    case = tiny.ischemia_pool()["case_report"]
    s = score_soe(case, rules, YEAR, vocabulary())
    assert rules.journals.match(case.journal) is None and s.journal == 0.0
    assert s.study == 0.3 and s.grade == "C"
    animal = one(
        "animal",
        lambda c: (
            "Animals" in headings(c) and "Humans" not in headings(c) and c.publication_types is not None
        ),
        "animal study",
    )
    a = score_soe(animal, rules, YEAR, vocabulary())
    assert a.study == -1.5 and a.study_class == "non-clinical"


def test_unknown_fields_score_zero_with_notes(rules: RuleSet) -> None:
    text_only = Citation(pmid="2", title="A title", abstract=None)
    s = score_soe(text_only, rules, YEAR, vocabulary())
    assert (s.journal, s.study, s.date, s.grade) == (0.0, 0.0, 0.0, None)
    reasons = " | ".join(c.reason for c in s.contributions)
    assert "journal unknown" in reasons and "study type unknown" in reasons and "year" in reasons


# --- S_task -------------------------------------------------------------------------------------


def test_therapy_indicators_with_rule_lines(rules: RuleSet) -> None:
    nejm = one(
        "nejm_rct",
        lambda c: "drug therapy" in headings(c).get("Asthma", (False, set()))[1],
        "asthma trial indexed Asthma/drug therapy",
    )
    t = score_task(nejm, "therapy", rules, vocabulary())
    assert t.task == "therapy"
    hits = [c for c in t.contributions if c.points != 0]
    assert hits and t.score == pytest.approx(sum(c.points for c in t.contributions))
    assert t.score == pytest.approx(
        rules.task_indicators.weights("therapy", vocabulary()).score(nejm.mesh_headings, vocabulary())
    )
    drug = [c for c in hits if "'Asthma/drug therapy'" in c.reason]
    assert len(drug) == 1
    major = headings(nejm)["Asthma"][0]
    assert drug[0].points == (1.0 if major else 0.5)
    for c in hits:  # every hit points at the row that gave its weight
        fields = rule_line(c.where).split("\t")
        major = ", main theme:" in c.reason
        assert fields[0] == "therapy" and float(fields[3 if major else 4]) == c.points


def test_diagnosis_flips_therapy_terms_and_genomics_is_negative(rules: RuleSet) -> None:
    pool = tiny.ischemia_pool()
    v = vocabulary()
    diag = pool["diagnostic"]
    assert score_task(diag, "diagnostic test", rules, v).score > 0
    assert score_task(diag, "therapy", rules, v).score < 0
    nejm = one("nejm_rct", lambda c: True, "asthma trial")
    assert score_task(nejm, "therapy", rules, v).score > 0
    assert score_task(nejm, "differential diagnosis", rules, v).score < 0
    genomics = pool["genomics"]
    for task in ("therapy", "diagnostic test", "prognosis", "etiology", "prevention"):
        t = score_task(genomics, task, rules, v)
        negative = [c for c in t.contributions if c.points < 0]
        assert any(rule_line(c.where).startswith("all\t") for c in negative), task


def test_prevention_adds_to_therapy_and_prognosis_terms(rules: RuleSet) -> None:
    v = vocabulary()
    prev = one(
        "prevention",
        lambda c: any("prevention & control" in q for _, q in headings(c).values()),
        "citation indexed with /prevention & control",
    )
    assert score_task(prev, "prevention", rules, v).score > score_task(prev, "therapy", rules, v).score
    rct = tiny.ischemia_pool()["rct"]
    assert "Treatment Outcome" in headings(rct)
    p = score_task(rct, "prognosis", rules, v)
    (hit,) = [c for c in p.contributions if "'Treatment Outcome'" in c.reason]
    assert hit.points == 1.0  # +2 main theme, +1 otherwise; it is not a main theme here


def test_unknown_and_missing_headings(rules: RuleSet) -> None:
    v = vocabulary()
    old = Citation(
        pmid="3",
        mesh_headings=(
            MeshHeading(None, "Bias (Epidemiology)"),
            MeshHeading(None, "Fever", qualifiers=(Qualifier(None, "drug therapy", True),)),
        ),
    )
    t = score_task(old, "therapy", rules, v)
    assert any("not in MeSH 2024" in c.reason and c.points == 0 for c in t.contributions)
    assert t.score == 1.0  # Fever/*drug therapy, a main theme
    none = score_task(Citation(pmid="4"), "therapy", rules, v)
    assert none.score == 0.0 and "not indexed" in none.contributions[0].reason
    pqa = one(
        "pubmedqa",
        lambda c: bool(c.extra.get("mesh_major_unknown")),
        "PubMedQA record without main-theme flags",
    )
    assert any(
        "main-theme flags unknown" in c.reason for c in score_task(pqa, "therapy", rules, v).contributions
    )
    assert pub_types(pqa) == set()
