"""The outcome cue table: validation with file:line errors, matching and scoring on real sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.resources import shipped_rules_dir as rules_dir
from extractors.outcome_cues import CueTable as _CueTable
from extractors.outcome_cues import read_cues
from extractors.outcome_features import phrase_count, tokenize, words


def CueTable(path: Path | None = None) -> _CueTable:  # noqa: N802 -- the table of a file (default: shipped)
    path = path or rules_dir() / "outcome_cues.tsv"
    return _CueTable(read_cues(path), path)


# Real sentences: EvidenceOutcomes PMID 35075109 (a training abstract), MEDLINE PMID 26702203.
PFS = (
    "Median progression-free survival (mPFS) was 7.1 vs 4.8 months with ixa-dex vs pom-dex "
    "(HR 0.847, 95% CI 0.535-1.341, P = 0.477; median follow-up: 15.3 vs 17.3 months); there was "
    "no statistically significant difference between arms."
)
AIM = (
    "We aimed to determine the ropivacaine concentration that provided adequate analgesia with early "
    "ambulation and minimal urinary retention or other side-effects when used with fentanyl and "
    "epinephrine for patient-controlled epidural analgesia (PCEA) after elective cesarean section."
)
REGISTRATION = "Trial registration: ClinicalTrials.gov number, NCT03170882."


def table(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "cues.tsv"
    path.write_text("# header comment\n\n" + body, encoding="utf-8")
    return path


def test_shipped_table_loads_and_every_row_is_used() -> None:
    cues = read_cues(rules_dir() / "outcome_cues.tsv")
    assert len(cues) > 200
    assert {c.kind for c in cues} == {"phrase", "regex"}
    # the paper's own examples are there
    patterns = {c.pattern for c in cues}
    assert {"well tolerated", "adverse events", "significantly"} <= patterns
    t = CueTable()
    # every phrase can match its own text (its tokens are what the tokenizer makes of it)
    for c in cues:
        if c.kind == "phrase" and "<num>" not in c.pattern:
            assert any(m.cue == c.pattern for m in t.matches(c.pattern)), c.pattern


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("phrase\tsignificantly\n", "3: column 'weight' is missing"),
        ("word\tsignificantly\t0.5\n", "3: column 'kind': 'word' is not one of phrase, regex"),
        ("phrase\tsignificantly\tmuch\n", "3: column 'weight': 'much' is not a number"),
        ("phrase\tsignificantly\t1.5\n", r"3: column 'weight': 1.5 is above the maximum 1"),
        ("phrase\tsignificantly\t0\n", "3:.*not 0"),
        ("regex\tp\\s*(<\t0.5\n", "3:.*bad regular expression"),
        ("regex\tp\\s*(<)\t0.5\n", r"3:.*\(\?:\.\.\.\)"),
        ("regex\tNCT\\d+\t0.5\n", "3:.*lower case"),
        ("regex\tx*\t0.5\n", "3:.*matches the empty string"),
        ("phrase\t95 % ci\t0.5\n", "3:.*<num>"),
        ("phrase\t\t0.5\n", "3: column 'pattern' is empty"),
        ("phrase\tadverse events\t0.5\nphrase\tAdverse  Events\t0.4\n", "4:.*already given on line 3"),
        ("", "no cues"),
    ],
)
def test_table_errors_name_file_and_line(tmp_path: Path, body: str, message: str) -> None:
    path = table(tmp_path, body)
    with pytest.raises(InputError, match=message) as err:
        CueTable(path)
    assert str(path) in str(err.value)


def test_missing_table_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="rule table not found"):
        CueTable(tmp_path / "nope.tsv")


def test_statistics_of_a_results_sentence_are_found() -> None:
    found = {m.text: m.weight for m in CueTable().matches(PFS)}
    assert "P = 0.477" in found
    assert "95% CI" in found
    assert "HR 0.847" in found
    assert "7.1 vs 4.8" in found
    assert "statistically significant" in found
    # offsets point at the matched text
    for m in CueTable().matches(PFS):
        assert PFS[m.start : m.end] == m.text


def test_longest_phrase_wins_where_cues_overlap(tmp_path: Path) -> None:
    t = CueTable(table(tmp_path, "phrase\tsignificant\t0.5\nphrase\tno significant difference\t0.9\n"))
    m = t.matches("There was no significant difference in mortality.")
    assert [(x.cue, x.text) for x in m] == [("no significant difference", "no significant difference")]
    # elsewhere the short cue still matches
    assert [x.cue for x in t.matches("a significant fall")] == ["significant"]
    # whole words only: "significant" is not found inside "significantly" or "non-significant"
    assert t.matches("significantly lower; non-significant") == []


def test_score_is_cue_weight_over_phrase_count(tmp_path: Path) -> None:
    sentence = (
        "The dropout rate due to adverse events was 12.4% in the moxonidine and 9.8% in the "
        "nitrendipine group"
    )
    # the paper's example: 8 phrases, two cues of weight 1 -> 0.25
    assert phrase_count(words(sentence)) == 8
    t = CueTable(table(tmp_path, "phrase\tdropout rate\t1\nphrase\tadverse events\t1\n"))
    score, found = t.score(sentence)
    assert score == pytest.approx(0.25)
    assert [m.text for m in found] == ["dropout rate", "adverse events"]


def test_aims_and_registrations_score_negative_results_positive() -> None:
    t = CueTable()
    assert t.score(AIM)[0] < 0
    assert t.score(REGISTRATION)[0] < 0
    assert t.score(PFS)[0] > 0.1
    assert -1.0 <= t.score(REGISTRATION)[0] <= 1.0


def test_tokens_keep_offsets_and_normalise_numbers() -> None:
    tk = tokenize(PFS)
    assert len(tk.spans) == len(tk.norm)
    for (a, b), norm in zip(tk.spans, tk.norm, strict=True):
        assert norm == "<num>" or PFS[a:b].lower() == norm
    assert "0.477" not in tk.norm and "<num>" in tk.norm
    assert "progression-free" in tk.norm
    # punctuation is not a naive Bayes feature, comparison signs are
    assert "(" not in words(tk) and "=" in words(tk)
