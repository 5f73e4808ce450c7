"""The bottom line across ranked answers: concurrence, contradiction, none; PMIDs always shown."""

from __future__ import annotations

import json
import re

from ebm.bottom_line import (
    AnswerFindings,
    applies_to,
    build_bottom_line,
    describe_designs,
    difference_note,
    group_outcomes,
)
from extractors.findings import Finding


def finding(direction: str, outcome: str = "temperature", confidence: float = 0.8) -> Finding:
    sentence = f"{outcome} result"
    return Finding(
        outcome, direction, direction != "no_difference", sentence, 0, len(sentence), {}, confidence
    )


def _pmids_in(text: str) -> set[str]:
    return {p for group in re.findall(r"\[PMID ([0-9, ]+)\]", text) for p in group.split(", ")}


def test_concurrence_counts_studies_and_patients_with_pmids() -> None:
    # Three ibuprofen vs acetaminophen fever trials of the bundled corpus (sizes as their abstracts say).
    answers = [
        AnswerFindings(
            "1621668", [finding("lower")], grade="B", design="RCT", sample_size=37, population="children"
        ),
        AnswerFindings(
            "2306478", [finding("lower")], grade="B", design="RCT", sample_size=150, population="children"
        ),
        AnswerFindings(
            "8404481", [finding("lower")], grade="B", design="RCT", sample_size=225, population="children"
        ),
    ]
    bl = build_bottom_line(answers, "ibuprofen", "acetaminophen", "temperature")
    assert len(bl.outcomes) == 1
    o = bl.outcomes[0]
    assert o.agreed
    assert o.concurrence.text == (
        "3 RCTs, 412 patients: temperature lower with ibuprofen than with acetaminophen "
        "[PMID 1621668, 2306478, 8404481]"
    )
    assert bl.render_text().startswith("Bottom line:\n- 3 RCTs, 412 patients")
    d = bl.to_dict()
    json.dumps(d)
    assert d["outcomes"][0]["concurrence"]["pmids"] == ["1621668", "2306478", "8404481"]
    assert d["none"] is None


def test_contradiction_names_the_population_difference() -> None:
    answers = [
        AnswerFindings(
            "1621668",
            [finding("lower")],
            grade="B",
            design="RCT",
            sample_size=37,
            population="children aged 2 to 12 years",
        ),
        AnswerFindings(
            "2306478",
            [finding("lower")],
            grade="B",
            design="RCT",
            sample_size=150,
            population="febrile children",
        ),
        AnswerFindings(
            "9000001",
            [finding("no_difference")],
            grade="B",
            design="RCT",
            sample_size=60,
            population="60 adults with fever",
        ),
    ]
    bl = build_bottom_line(answers, "ibuprofen", "acetaminophen", "temperature")
    o = bl.outcomes[0]
    assert o.concurrence.direction == "lower"
    assert o.concurrence.pmids == ("1621668", "2306478")
    (c,) = o.contradictions
    assert c.direction == "no_difference"
    assert (
        c.text == "1 RCT found no significant difference in temperature between ibuprofen and acetaminophen "
        "[PMID 9000001]"
    )
    assert c.note == "it studied adults"
    assert "but 1 RCT found no significant difference" in bl.render_text()
    assert "it studied adults" in bl.render_text()
    # every statement in the text cites its PMIDs, and only answers' PMIDs
    assert _pmids_in(bl.render_text()) == {"1621668", "2306478", "9000001"}


def test_design_difference_and_weighting_by_grade_and_size() -> None:
    # One large grade-A meta-analysis outweighs two small ungraded studies.
    answers = [
        AnswerFindings("111", [finding("higher", "mortality")], sample_size=20),
        AnswerFindings("222", [finding("higher", "mortality")], sample_size=30),
        AnswerFindings(
            "333",
            [finding("no_difference", "all-cause mortality")],
            grade="A",
            design="meta-analysis",
            sample_size=5000,
        ),
    ]
    bl = build_bottom_line(answers, "drug X", "placebo", "")
    o = bl.outcomes[0]
    assert o.concurrence.pmids == ("333",)
    assert o.concurrence.direction == "no_difference"
    assert [c.pmids for c in o.contradictions] == [("111", "222")]
    assert o.contradictions[0].text.startswith(
        "2 studies found mortality higher with drug X than with placebo"
    )


def test_none_when_no_answer_reports_a_finding() -> None:
    answers = [AnswerFindings("1621668", []), AnswerFindings("2306478", [])]
    bl = build_bottom_line(answers, "ibuprofen", "acetaminophen", "fever")
    assert bl.outcomes == ()
    assert bl.render_text() == (
        "Bottom line: no trial in these results compares ibuprofen with acetaminophen on fever "
        "(2 answers read)"
    )
    assert bl.to_dict()["considered"] == ["1621668", "2306478"]


def test_top_limits_the_answers_read_and_one_vote_per_answer_per_outcome() -> None:
    answers = [
        AnswerFindings("1", [finding("lower", confidence=0.9), finding("higher", confidence=0.3)]),
        AnswerFindings("2", [finding("higher")]),
        AnswerFindings("3", [finding("higher")]),
    ]
    bl = build_bottom_line(answers, "A", "B", "temperature", top=2)
    assert bl.considered == ("1", "2")
    o = bl.outcomes[0]
    all_pmids = [p for s in (o.concurrence, *o.contradictions) for p in s.pmids]
    assert sorted(all_pmids) == ["1", "2"]  # answer 1 votes once, with its most confident finding


def test_outcomes_grouped_by_close_wording_or_concept() -> None:
    assert group_outcomes(["body temperature", "temperature", "duration of fever"]) == [0, 0, 1]
    concepts = {"fever": "D005334", "pyrexia": "D005334"}
    assert group_outcomes(["fever", "pyrexia"], concepts.get) == [0, 0]
    assert group_outcomes(["fever", "pyrexia"]) == [0, 1]


def test_wording_helpers() -> None:
    rct = AnswerFindings("1", [], design="RCT")
    other = AnswerFindings("2", [])
    assert describe_designs([rct, rct, other]) == "2 RCTs and 1 study"
    assert (
        difference_note([AnswerFindings("9", [], design="cohort study")], [rct])
        == "it was cohort study rather than RCT"
    )
    assert applies_to("therapy") and applies_to("Prevention") and not applies_to("diagnosis")
