"""``ebm concepts`` on text and on a stored citation; errors a user can cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.cli import main
from ebm.medline.reader import read_citations
from ebm.mesh import mesh as shipped_mesh
from ebm.store import MedlineStore

TEXT = "Acute otitis media (AOM) in children given amoxicillin. There was no AOM recurrence."


@pytest.fixture
def home(concept_index: Path) -> Path:
    """The tests' EBM_HOME (set by conftest), where the session's MeSH index lives."""
    return concept_index.parent


def test_concepts_of_a_text_as_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["concepts", TEXT, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = [(c["text"], c["cui"], c["groups"], c["negated"], c["sentence"]) for c in out["concepts"]]
    assert rows == [
        ("otitis media", "D010033", ["DISO"], False, 0),
        ("AOM", "D010033", ["DISO"], False, 0),
        ("children", "D002648", ["GRUP"], False, 0),
        ("amoxicillin", "D000658", ["CHEM"], False, 0),
        ("AOM", "D010033", ["DISO"], True, 1),
        ("recurrence", "D012008", ["DISO"], True, 1),
    ]
    first = out["concepts"][0]
    assert out["text"][first["start"] : first["end"]] == "otitis media"
    assert first["name"] == "Otitis Media" and first["similarity"] == 1.0 and first["section"] is None


def test_concepts_table_and_group_filter(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["concepts", TEXT, "--group", "CHEM"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("span\ttext\tconcept\tname\tgroups")
    assert len(lines) == 2 and "\tD000658\tAmoxicillin\tCHEM\t1.00\t-\t0\t" in lines[1]


def test_concepts_of_a_stored_citation(
    home: Path, shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    citations = list(read_citations(shared / "medline" / "medline16n0902.xml.gz"))[:5]
    db = tmp_path / "store.sqlite"
    MedlineStore(db, vocabulary=shipped_mesh).ingest(citations)
    target = next(c for c in citations if c.abstract)
    assert main(["concepts", "--pmid", target.pmid, "--db", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pmid"] == target.pmid and out["concepts"]
    assert {c["section"] for c in out["concepts"] if c["sentence"] == 0} <= {"TITLE"}
    assert main(["concepts", "--pmid", "999999999", "--db", str(db)]) == 2
    assert "PMID 999999999 is not in the local store" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["concepts"], "give either a TEXT or --pmid PMID"),
        (["concepts", "x", "--pmid", "1"], "give either a TEXT or --pmid PMID"),
        (["concepts", "   "], "the text is empty"),
        (["concepts", "x", "--group", "DISORDER"], "unknown group 'DISORDER'"),
        (["concepts", "--pmid", "abc"], "a PMID is a number"),
    ],
)
def test_user_errors(home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_concepts_without_an_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("EBM_HOME", str(tmp_path))
    assert main(["concepts", TEXT]) == 2
    assert "run `ebm setup` first" in capsys.readouterr().err


def test_setup_rejects_a_missing_umls_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("EBM_HOME", str(tmp_path))
    assert main(["setup", "--umls", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_setup_builds_the_mesh_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("EBM_HOME", str(tmp_path))
    assert main(["setup", "--no-quickumls", "--no-permuted", "--quiet"]) == 0
    assert "MeSH 2024: 30,764 concepts, 132,801 strings" in capsys.readouterr().out
    assert (tmp_path / "concepts" / "lookup.marshal").is_file()
    assert main(["concepts", "hypertensive children with oedema", "--json"]) == 0
    names = [c["name"] for c in json.loads(capsys.readouterr().out)["concepts"]]
    assert names == ["Hypertension", "Child", "Edema"]
