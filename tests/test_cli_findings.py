"""``ebm findings`` on real texts: a citation of the store (the fever RCT), a text, stdin, JSONL."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ebm.cli import main
from tests.conftest import ROOT, bundled_citations

FEVER_FRAME = str(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")
FEVER_RESULT = (
    "Ibuprofen provided greater temperature decrement and longer duration of antipyresis than "
    "acetaminophen when the two drugs were administered in approximately equal doses."
)
KEYS = {"outcome", "direction", "significant", "sentence", "start", "end", "numbers", "confidence"}


@pytest.fixture(scope="module")
def fever_text() -> str:
    c = bundled_citations({"1621668"})["1621668"]
    return " ".join(s.text for s in c.abstract)


def test_frame_and_pmid_from_the_store(capsys) -> None:
    assert main(["findings", "--frame", FEVER_FRAME, "1621668"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PMID 1621668: Antipyretic efficacy of ibuprofen vs acetaminophen.")
    assert "1. reducing fever lower with acetaminophen than with ibuprofen (significant;" in out
    assert "Ibuprofen provided greater temperature decrement" in out


def test_frame_json_offsets_into_the_document(capsys) -> None:
    assert main(["findings", "--frame", FEVER_FRAME, "1621668", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    (c,) = d["citations"]
    assert c["pmid"] == "1621668"
    f = c["findings"][0]
    assert set(f) == KEYS
    assert f["sentence"] == FEVER_RESULT and f["direction"] == "lower"
    title = "Antipyretic efficacy of ibuprofen vs acetaminophen."
    assert f["start"] > len(title)  # the document text is the title, a blank line, the abstract


def test_text_json_schema_and_offsets(capsys, fever_text: str) -> None:
    args = [
        "findings",
        "--intervention",
        "ibuprofen",
        "--comparison",
        "acetaminophen",
        "--outcome",
        "temperature",
    ]
    assert main([*args, "--json", fever_text]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) == {"findings"}
    assert d["findings"], "the result sentence should be found"
    for f in d["findings"]:
        assert set(f) == KEYS
        assert f["direction"] in ("higher", "lower", "no_difference")
        assert isinstance(f["significant"], bool)
        assert fever_text[f["start"] : f["end"]] == f["sentence"]
    assert d["findings"][0]["sentence"] == FEVER_RESULT
    assert d["findings"][0]["direction"] == "higher"
    confidences = [f["confidence"] for f in d["findings"]]
    assert confidences == sorted(confidences, reverse=True)


def test_stdin_text(capsys, monkeypatch, fever_text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(fever_text))
    assert (
        main(
            [
                "findings",
                "--intervention",
                "acetaminophen",
                "--comparison",
                "ibuprofen",
                "--outcome",
                "temperature",
                "--json",
                "-",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert any(f["sentence"] == FEVER_RESULT and f["direction"] == "lower" for f in d["findings"])


def test_jsonl_one_answer_per_line(capsys, tmp_path: Path, fever_text: str) -> None:
    p = tmp_path / "prompts.jsonl"
    lines = [
        {
            "id": "a",
            "intervention": "ibuprofen",
            "comparison": "acetaminophen",
            "outcome": "temperature",
            "text": fever_text,
        },
        {
            "id": "b",
            "intervention": "acetaminophen",
            "comparison": "ibuprofen",
            "outcome": "temperature",
            "text": fever_text,
        },
        {
            "id": 3,
            "intervention": "ibuprofen",
            "text": "No adverse effects were observed in any treatment group.",
        },
    ]
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    assert main(["findings", "--jsonl", str(p)]) == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["a", "b", 3]
    assert out[0]["findings"][0]["direction"] == "higher"
    assert out[1]["findings"][0]["direction"] == "lower"
    assert out[0]["findings"][0]["sentence"] == out[1]["findings"][0]["sentence"] == FEVER_RESULT


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["findings", "some text"], "give one of --frame"),
        (["findings", "--intervention", "x"], "exactly one TEXT"),
        (["findings", "--intervention", "x", "a", "b"], "exactly one TEXT"),
        (["findings", "--intervention", "x", "   "], "the text is empty"),
        (["findings", "--frame", FEVER_FRAME], "needs one or more PMIDs"),
        (["findings", "--frame", FEVER_FRAME, "abc"], "'abc' is not a PMID"),
        (["findings", "--frame", FEVER_FRAME, "999999999"], "PMID 999999999 is not in the local store"),
        (["findings", "--frame", "/nonexistent.yaml", "1621668"], "no such file"),
        (["findings", "--intervention", "x", "--limit", "0", "t"], "--limit 0"),
        (
            ["findings", "--intervention", "x", "--model", "/nonexistent.gz", "t"],
            "--model /nonexistent.gz: no such file",
        ),
        (["findings", "--jsonl", "/nonexistent.jsonl"], "no such file"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_jsonl_bad_line_names_file_and_line(capsys, tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(
        '{"id": 1, "intervention": "x", "text": "A sentence."}\n{"id": 2, "text": "no intervention"}\n'
    )
    assert main(["findings", "--jsonl", str(p)]) == 2
    captured = capsys.readouterr()
    assert f"{p}:2: field 'intervention' missing or empty" in captured.err
    assert json.loads(captured.out.splitlines()[0])["id"] == 1
    p.write_text("not json\n")
    assert main(["findings", "--jsonl", str(p)]) == 2
    assert f"{p}:1: not JSON" in capsys.readouterr().err
