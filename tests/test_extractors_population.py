"""Population extractor on real abstracts of the bundled corpus (PICO-data RCTs, Cochrane HT review)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.errors import InputError
from extractors.candidate import Candidate
from extractors.population import load_population_words, number_value
from tests.conftest import bundled_citations
from tests.tiny import annotate, default_pipeline, extract_population

PMIDS = {"7028532", "16691061", "20337202", "24371832", "19370593", "20369616", "1621668"}


@pytest.fixture(scope="module")
def citations() -> dict[str, Citation]:
    return bundled_citations(PMIDS)


@pytest.fixture(scope="module")
def population(tiny_resources: object, citations: dict[str, Citation]):
    matcher = None
    pipeline = default_pipeline()

    def run(pmid: str) -> list[Candidate]:
        doc = pipeline.process(citations[pmid])
        return extract_population(doc, annotate(doc, matcher))

    return run


def test_number_word_and_group(population) -> None:
    # "fourteen patients were assigned to receive diclofensine and thirteen to receive maprotiline"
    top = population("7028532")[0]
    assert top.text == "fourteen patients"
    assert top.concepts == ("D010361",)  # Patients, a GROUP concept
    assert any("number* GROUP" in e for e in top.evidence)


def test_number_disorder_group(population) -> None:
    # The paper's "44 HIV-infected children" pattern: number, disorder, group.
    top = population("16691061")[0]
    assert top.text == "Fifty-nine HIV-infected women"
    assert "1 token(s) between number and group" in top.evidence[0]


def test_count_written_over_several_words(population) -> None:
    assert population("20337202")[0].text == "Six hundred ninety-two women"


def test_group_with_description_then_n_equals(population) -> None:
    # "Participants with MS (n = 54) were randomized ...": the count follows the description.
    top = population("24371832")[0]
    assert top.text == "Participants with MS (n = 54)"
    assert any("(n = N)" in e for e in top.evidence)
    assert top.score > population("24371832")[1].score


def test_measured_number_is_not_a_head_count(population, citations: dict[str, Citation]) -> None:
    # "... 2839 relatively healthy 50 to 59 year old women ...": 59 is an age, never the count.
    found = population("19370593")
    assert found[0].text == "41,904 women"
    assert not any(c.text.startswith(("59", "50 to 59")) for c in found)


def test_description_is_kept_and_trimmed(population) -> None:
    # "494 patients with chronic hepatitis B and C." loses only the sentence's full stop.
    assert population("20369616")[0].text == "494 patients with chronic hepatitis B and C"


def test_description_cut_by_a_comma_is_dropped(population) -> None:
    # The paper's sample output (section 5.10): "37 otherwise healthy children aged 2 to 12 years"
    # from "... years with acute, intercurrent, febrile illness." -- not "... years with acute".
    assert population("1621668")[0].text == "37 otherwise healthy children aged 2 to 12 years"


def test_candidates_are_sorted_and_unique(population) -> None:
    for pmid in PMIDS:
        found = population(pmid)
        assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
        assert len({(c.start, c.end) for c in found}) == len(found)


def test_number_value() -> None:
    assert number_value("forty-nine") == 49
    assert number_value("1,234") == 1234
    assert number_value("twelve") == 12
    assert number_value("mg") is None


def test_bad_population_table_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "population_words.tsv"
    bad.write_text("# comment\nparticipant\tpatients\nparticipnt\tnurses\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"population_words\.tsv:3: .*'kind'.*did you mean 'participant'"):
        load_population_words(bad)
    two = tmp_path / "two.tsv"
    two.write_text("measure\tmg per\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"two\.tsv:1: 'mg per' is not one word"):
        load_population_words(two)
