"""``ebm annotate`` on real citations: the local store (built from the bundled corpus) and PubMed XML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.cli import main


@pytest.fixture(autouse=True)
def _index(concept_index: Path) -> None:
    """Every test here needs the concept index in the tests' data directory."""


def test_text_report_of_a_stored_citation(capsys) -> None:
    assert main(["annotate", "7028532"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PMID 7028532: A controlled trial with diclofensine")
    assert "'fourteen patients' [Patients D010361]" in out
    assert "'depression' [Depressive Disorder D003866]" in out
    assert "'diclofensine'" in out and "'maprotiline' [Maprotiline D008376]" in out
    # no publication types: the grade comes from the design predicted from the text (issue 13)
    assert "Strength of evidence: grade A (clinical trial)" in out
    assert "RCT (predicted, 0.36) · n = 14 · grade A" in out
    assert "most probable outcome sentences" in out


def test_explain_shows_the_reasons(capsys) -> None:
    assert main(["annotate", "7028532", "--explain", "--outcomes", "0"]) == 0
    out = capsys.readouterr().out
    assert "- pattern number* GROUP, 0 token(s) between number and group" in out
    assert "- 'depression' in title (+3)" in out
    assert "Outcomes" not in out


def test_json_of_a_stored_citation(capsys) -> None:
    assert main(["annotate", "7028532", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) == {
        "pmid", "title", "population", "primary_problem", "problems", "interventions", "outcomes", "evidence",
        "design", "design_from_text", "sample_size", "human",
    }
    assert d["pmid"] == "7028532"
    # issue 13: no publication types, so the design and the grade come from the text
    assert d["design"]["source"] == "text" and d["design"] == d["design_from_text"]
    assert d["sample_size"]["value"] == 14 and "fourteen" in d["sample_size"]["sentence"].lower()
    assert d["evidence"]["predicted"] is True and d["evidence"]["grade"] == "A"
    assert d["population"][0]["text"] == "fourteen patients"
    assert d["problems"][0]["concepts"] == ["D003866"]
    assert d["primary_problem"]["concepts"] == ["D003866"]
    assert "learned ranker: primary problem" in d["primary_problem"]["evidence"][-1]
    assert [i["text"] for i in d["interventions"][:2]] == ["diclofensine", "maprotiline"]
    assert len(d["outcomes"]) == 11 and {"sentence", "text", "probability"} <= set(d["outcomes"][0])


def test_pubmed_xml_file(shared: Path, capsys) -> None:
    path = shared / "medline" / "test_current_medline.xml.gz"
    assert main(["annotate", "--file", str(path), "--json"]) == 0
    data = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # JSON Lines
    assert [d["pmid"] for d in data] == ["36400559", "2930949", "11446611", "28786991"]
    assert data[2]["population"] == [] and [o["sentence"] for o in data[2]["outcomes"]] == [0]  # a title only
    assert data[0]["problems"][0]["names"] == ["Back Pain"]
    assert main(["annotate", "--file", str(shared / "medline" / "pubmed-29768149.xml"), "29768149"]) == 0
    out = capsys.readouterr().out
    assert "Strength of evidence: grade A (clinical trial)" in out
    assert "'Asthma' [Asthma D001249]" in out and "'Budesonide' [Budesonide D019819]" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["annotate", "99999999"], "PMID 99999999 is not in the local store"),
        (["annotate", "abc"], "'abc' is not a PMID"),
        (["annotate"], "give a PMID, or --file FILE"),
        (["annotate", "--file", "/nonexistent.xml"], "--file /nonexistent.xml: no such file"),
        (["annotate", "7028532", "--outcomes", "-1"], "--outcomes -1: must be 0 or more"),
    ],
)
def test_user_errors(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_pmid_missing_from_file(shared: Path, capsys) -> None:
    path = shared / "medline" / "pubmed-29768149.xml"
    assert main(["annotate", "--file", str(path), "123"]) == 2
    assert "pubmed-29768149.xml: no citation with PMID 123 in the file" in capsys.readouterr().err
