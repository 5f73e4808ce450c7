"""Sample size from the abstract: number words, group sums, abstaining, and the hand-checked gold."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from extractors.sample_size import extract_sample_size, parse_number
from tests.conftest import ROOT, bundled_citations

GOLD = ROOT / "tests" / "fixtures" / "sample_size_gold.tsv"
# Figures on the test part of the gold (docs/design.md); the tests allow a small margin below them.
TEST_RCT_COVERAGE = 0.756
TEST_ACCURACY = 0.775
MARGIN = 0.03


def read_gold(path: Path = GOLD) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t"))


@pytest.mark.parametrize(
    ("text", "value"),
    [("One hundred twenty", 120), ("forty-two", 42), ("1,024", 1024), ("Four hundred and forty-three", 443)],
)
def test_parse_number(text: str, value: int) -> None:
    assert parse_number(text) == value


def test_number_words_and_randomised_subset() -> None:
    got = extract_sample_size("One hundred twenty children were randomized to ibuprofen or placebo.")
    assert got is not None and got.value == 120
    got = extract_sample_size("Of 1,024 patients screened, 512 were randomly assigned to drug A or B.")
    assert got is not None and got.value == 512


def test_abstains_without_a_count_of_people() -> None:
    assert extract_sample_size("Mean age was 45 years; 30 % were women, treated for 12 weeks.") is None
    assert extract_sample_size(None) is None


def test_fever_trial_sample_size() -> None:
    """The paper's fever RCT: '37 otherwise healthy children aged 2 to 12 years' (a PATIENTS section)."""
    c = bundled_citations({"1621668"})["1621668"]
    got = extract_sample_size(c.abstract_text)
    assert got is not None and got.value == 37
    assert c.abstract_text is not None and c.abstract_text[got.start : got.end] == "37"
    assert got.to_dict() == {"value": 37, "sentence": got.sentence}


def test_gold_file_is_well_formed() -> None:
    rows = read_gold()
    assert len(rows) >= 150
    assert len({r["pmid"] for r in rows}) == len(rows)
    for r in rows:
        assert r["part"] in ("dev", "test") and r["design"] in ("rct", "other"), r
        assert r["value"] == "none" or r["value"].isdigit(), r
        assert r["evidence"].strip(), r


def test_gold_accuracy_and_coverage_on_the_test_part() -> None:
    """Computed over the held-out part of the gold (rules were tuned on the dev part only)."""
    rows = [r for r in read_gold() if r["part"] == "test"]
    texts = bundled_citations({r["pmid"] for r in rows})
    answered = correct = rct = rct_answered = 0
    for r in rows:
        got = extract_sample_size(texts[r["pmid"]].abstract_text)
        if r["design"] == "rct":
            rct += 1
            rct_answered += got is not None
        if got is not None:
            answered += 1
            correct += r["value"] != "none" and got.value == int(r["value"])
    assert rct_answered / rct >= TEST_RCT_COVERAGE - MARGIN
    assert correct / answered >= TEST_ACCURACY - MARGIN


def test_every_bundled_abstract_is_read_without_error() -> None:
    """All 8,185 bundled citations (odd numbers such as 'n = 13 155' included): a value or None."""
    from ebm.medline.bundled import iter_bundled

    answered = 0
    for c in iter_bundled():
        got = extract_sample_size(c.abstract_text)
        if got is not None:
            answered += 1
            assert got.value >= 2 and c.abstract_text is not None
            assert got.sentence in c.abstract_text
    assert answered > 1000
