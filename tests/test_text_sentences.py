"""Sentence splitting: the hard cases of biomedical prose, and section ends in real abstracts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ebm.medline.reader import read_citations
from ebm.text.sentences import split, split_spans


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # abbreviations that never end a sentence
        ("Drug A vs. placebo was tested. It worked.", ["Drug A vs. placebo was tested.", "It worked."]),
        ("As shown by Smith et al. in 2001, rates fell.", ["As shown by Smith et al. in 2001, rates fell."]),
        ("Some drugs, e.g. aspirin, i.e. NSAIDs, help.", ["Some drugs, e.g. aspirin, i.e. NSAIDs, help."]),
        ("See Fig. 2 for details. Rates fell.", ["See Fig. 2 for details.", "Rates fell."]),
        ("Mean age was approx. 50 years.", ["Mean age was approx. 50 years."]),
        # statistics and decimals
        ("Pain fell (P < .05). Mood rose.", ["Pain fell (P < .05).", "Mood rose."]),
        ("Pain fell, p = 0.03. Mood rose.", ["Pain fell, p = 0.03.", "Mood rose."]),
        ("The OR was 2.1 (95% CI 1.2-3.4). No deaths.", ["The OR was 2.1 (95% CI 1.2-3.4).", "No deaths."]),
        ("Rates were 79.9%vs. 53.3% at day 3.", ["Rates were 79.9%vs. 53.3% at day 3."]),
        # species names, initials, single letters
        (
            "Patients had H. pylori infection. All were treated.",
            ["Patients had H. pylori infection.", "All were treated."],
        ),
        ("Levels of vitamin D. The dose was high.", ["Levels of vitamin D.", "The dose was high."]),
        # numbered lists
        ("Aims were: 1. To test. 2. To compare.", ["Aims were: 1. To test.", "2. To compare."]),
        (
            "1. Patients were enrolled. 2. Drugs were given.",
            ["1. Patients were enrolled.", "2. Drugs were given."],
        ),
        # parentheses
        ("Doses (i.v. MgSO4) were given. It helped.", ["Doses (i.v. MgSO4) were given.", "It helped."]),
        ("Weight fell 9.8% (s.d. 6.9%) in all.", ["Weight fell 9.8% (s.d. 6.9%) in all."]),
        # an unclosed bracket (a typo) does not swallow the next sentence
        (
            "Events (as defined by NCI was demonstrated. Phase 3 trials (RCTs) followed.",
            ["Events (as defined by NCI was demonstrated.", "Phase 3 trials (RCTs) followed."],
        ),
        (
            "Rates (mean 0.42 vs 0.37 (ratio 0.90), P = .31). FEV1 did not change (0.003 L).",
            ["Rates (mean 0.42 vs 0.37 (ratio 0.90), P = .31).", "FEV1 did not change (0.003 L)."],
        ),
        # sentences starting with numbers or lower-case drug names
        ("Ten were enrolled. 25 patients had AOM.", ["Ten were enrolled.", "25 patients had AOM."]),
        ("Stroke was treated. tPA was given early.", ["Stroke was treated.", "tPA was given early."]),
        ("Cells were lysed. mRNA levels rose.", ["Cells were lysed.", "mRNA levels rose."]),
        # acronyms are not titles: "MS." ends a sentence although "Ms." would not
        (
            "Cells were frozen using MS. A new method followed.",
            ["Cells were frozen using MS.", "A new method followed."],
        ),
        # question and exclamation marks, line breaks
        ("Does it work? Yes.", ["Does it work?", "Yes."]),
        (
            "OBJECTIVE To compare drugs\nDESIGN Randomised trial",
            ["OBJECTIVE To compare drugs", "DESIGN Randomised trial"],
        ),
    ],
)
def test_hard_cases(text: str, expected: list[str]) -> None:
    assert split(text) == expected


def test_spans_are_offsets_into_the_text() -> None:
    text = "  Title here.\n\nFirst one (n = 5). Second one.  "
    spans = split_spans(text)
    assert [text[a:b] for a, b in spans] == ["Title here.", "First one (n = 5).", "Second one."]
    # a sub-range keeps absolute offsets
    sub = split_spans(text, 15, len(text))
    assert [text[a:b] for a, b in sub] == ["First one (n = 5).", "Second one."]


def test_empty() -> None:
    assert split("") == [] and split("   \n ") == []


def test_section_ends_in_real_structured_abstracts(shared: Path) -> None:
    """Flattened structured abstracts: section ends must be found, known non-boundaries kept."""
    ends = found = 0
    protected = re.compile(r"\bvs\.\s+\S|\bet al\.\s+[a-z(\[0-9]|\b[Pp]\s*[<>=]\s*0?\.\d|\([^()]{1,200}\)")
    false_splits = 0
    for c in read_citations(shared / "medline" / "medline16n0902.xml.gz"):
        secs = [s.text.strip() for s in c.abstract or () if s.text.strip()]
        if len(secs) < 2:
            continue
        text = " ".join(secs)
        starts = {a for a, _ in split_spans(text)}
        pos = 0
        for prev in secs[:-1]:
            pos += len(prev) + 1
            if prev.endswith((".", "?", "!")):
                ends += 1
                found += pos in starts
        for m in protected.finditer(text):
            false_splits += any(m.start() < b < m.end() for b in starts)
    assert ends > 800
    assert found / ends >= 0.99
    assert false_splits == 0
