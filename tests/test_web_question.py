"""The question in plain words on the web (issue 16): the form's box fills the fields for review
or answers at once, and the JSON API takes {"question": ...}; real parser, real pipeline, the
bundled corpus and the session's concept index, one worker process."""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from ebm.ask import AskConfig
from ebm.web.app import create_app
from tests.web_helpers import follow, web_app

FEVER_WORDS = "Is ibuprofen better than acetaminophen for fever in children?"
UNDERSTOOD = (
    "Understood as: therapy · problem Fever · population children · intervention Ibuprofen"
    " · comparison Acetaminophen"
)
# "risk" fills no slot: the page must show it, not drop it.
WITH_UNPLACED = "aspirin stroke prevention women over 65 bleeding risk"


@pytest.fixture(scope="module")
def app(concept_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    yield from web_app(concept_index, tmp_path_factory, "web-question", workers=1)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _value(page: str, id_: str) -> str:
    """The value of the text input with this id."""
    m = re.search(rf'<input type="text" id="{id_}" name="\w+" value="([^"]*)"', page)
    assert m, f"no field {id_}"
    return html.unescape(m.group(1))


def _follow(client: FlaskClient, location: str, timeout: float = 180) -> str:
    return follow(client, location, timeout)


# --- the JSON API -----------------------------------------------------------------------------


def test_api_answers_a_question_in_words(client: FlaskClient) -> None:
    r = client.post("/api/ask", json={"question": FEVER_WORDS, "top": 5})
    assert r.status_code == 200, r.get_data(as_text=True)
    doc = r.get_json()
    assert doc["understood_as"] == UNDERSTOOD
    assert doc["frame"] == {
        "task": "therapy",
        "question": FEVER_WORDS,
        "problem": "fever",
        "population": ["children"],
        "intervention": ["ibuprofen"],
        "comparison": ["acetaminophen"],
    }
    asked = doc["asked"]
    assert asked["text"] == FEVER_WORDS
    assert "better than" in asked["task_reason"]
    assert asked["from_fields"] == []
    assert 1 <= len(doc["results"]) <= 5
    assert all(x["pmid"].isdigit() for x in doc["results"])
    # The same frame sent as a frame ranks the same citations.
    frame = client.post("/api/ask", json={"frame": doc["frame"], "top": 5}).get_json()
    assert [x["pmid"] for x in frame["results"]] == [x["pmid"] for x in doc["results"]]


def test_api_fields_beside_the_question_replace_single_slots(client: FlaskClient) -> None:
    body = {"question": FEVER_WORDS, "population": [], "outcome": "temperature", "top": 2, "wait": 1}
    r = client.post("/api/ask", json={k: v for k, v in body.items() if k != "wait"})
    assert r.status_code == 200, r.get_data(as_text=True)
    doc = r.get_json()
    assert "population" not in doc["frame"]
    assert doc["frame"]["outcome"] == "temperature"
    assert doc["frame"]["intervention"] == ["ibuprofen"]  # still from the words
    assert doc["asked"]["from_fields"] == ["population", "outcome"]
    assert "population" not in doc["understood_as"]
    assert doc["understood_as"].endswith("outcome temperature")


def test_api_reports_words_not_placed(client: FlaskClient) -> None:
    doc = client.post("/api/ask", json={"question": WITH_UNPLACED, "top": 1}).get_json()
    assert doc["asked"]["unplaced"] == ["risk"]
    assert "(not placed: risk)" in doc["understood_as"]


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"question": "the of"}, "question", "no problem, population or intervention found in 'the of'"),
        ({"question": "the of"}, "question", "ignored: the"),
        ({"question": "   "}, "question", "empty"),
        ({"question": 5}, "question", "must be a string"),
        ({"question": "fever\x00 ibuprofen"}, "question", "control character"),
        ({"question": "x " * 600}, "question", "too long"),
        ({"question": FEVER_WORDS, "colour": "red"}, "colour", "unknown key"),
        ({"question": FEVER_WORDS, "task": "therapie"}, "task", "did you mean 'therapy'"),
        ({"question": FEVER_WORDS, "top": 0}, "top", "from 1 to"),
        ({"question": FEVER_WORDS, "randomized_only": "yes"}, "randomized_only", "true or false"),
        # the web needs a primary problem; the words gave none
        ({"question": "ibuprofen versus acetaminophen"}, "problem", "primary problem"),
    ],
)
def test_api_question_errors_name_the_field(client: FlaskClient, body: dict, field: str, words: str) -> None:
    r = client.post("/api/ask", json=body)
    assert r.status_code == 400, r.get_data(as_text=True)
    doc = r.get_json()
    assert doc["field"] == field
    assert words in doc["error"]


def test_reader_is_loaded_once_per_server(app: Flask, client: FlaskClient) -> None:
    readers = app.extensions["ebm_questions"]
    client.post("/question", data={"question": FEVER_WORDS, "action": "fill"})
    first = readers.get()
    client.post("/question", data={"question": "leg cramps quinine", "action": "fill"})
    assert readers.get() is first


# --- the form's box ---------------------------------------------------------------------------


def test_box_fills_the_fields_for_review(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    assert page.index('name="question"') < page.index('id="problem"')  # the box is above the fields
    r = client.post("/question", data={"question": FEVER_WORDS, "action": "fill"})
    assert r.status_code == 200
    page = r.get_data(as_text=True)
    assert f'<p class="understood">{UNDERSTOOD}</p>' in page
    assert "Task therapy: a drug or procedure named, &#39;better than&#39; (weight 3)." in page
    assert _value(page, "problem") == "fever"
    assert _value(page, "population") == "children"
    assert _value(page, "intervention") == "ibuprofen"
    assert _value(page, "comparison") == "acetaminophen"
    assert _value(page, "outcome") == ""
    assert _value(page, "question-text") == FEVER_WORDS  # the box keeps the words
    assert re.search(r'<option value="therapy" selected>', page)
    # the reviewed form carries the words on, so the frame keeps its question
    assert f'<input type="hidden" name="question" value="{html.escape(FEVER_WORDS)}">' in page


def test_box_shows_words_not_placed(client: FlaskClient) -> None:
    page = client.post("/question", data={"question": WITH_UNPLACED, "action": "fill"}).get_data(as_text=True)
    assert re.search(r'class="unplaced">Not placed in any field: <mark>risk</mark>', page)


def test_box_with_nothing_in_it_says_why(client: FlaskClient) -> None:
    r = client.post("/question", data={"question": "the of", "action": "fill"})
    assert r.status_code == 400
    page = r.get_data(as_text=True)
    m = re.search(r'<p class="error" id="question-error">([^<]*)</p>', page)
    assert m, page[:2000]
    assert "no problem, population or intervention found" in html.unescape(m.group(1))
    assert "ignored: the" in html.unescape(m.group(1))
    assert _value(page, "question-text") == "the of"


def test_box_answers_at_once(client: FlaskClient) -> None:
    r = client.post("/question", data={"question": "leg cramps quinine", "action": "answer"})
    assert r.status_code == 303
    page = _follow(client, r.headers["Location"])
    assert "Asked: “leg cramps quinine”" in page
    assert (
        '<p class="understood">Understood as: therapy · problem leg cramps · intervention Quinine</p>' in page
    )
    assert page.count('class="card"') >= 1


def test_box_answer_at_once_without_a_problem_goes_back_to_the_form(client: FlaskClient) -> None:
    r = client.post("/question", data={"question": "ibuprofen versus acetaminophen", "action": "answer"})
    assert r.status_code == 400
    page = r.get_data(as_text=True)
    assert 'id="problem-error">give the primary problem' in page
    assert _value(page, "intervention") == "ibuprofen"
    assert _value(page, "comparison") == "acetaminophen"


def test_reviewed_form_keeps_the_question_text(client: FlaskClient) -> None:
    form = {
        "question": FEVER_WORDS,
        "task": "therapy",
        "problem": "fever",
        "population": "children",
        "intervention": "ibuprofen",
        "comparison": "acetaminophen",
        "top": "3",
    }
    r = client.post("/ask", data=form)
    assert r.status_code == 303
    page = _follow(client, r.headers["Location"])
    assert f"Asked: “{html.escape(FEVER_WORDS)}”" in page
    doc = client.get(r.headers["Location"].replace("/results/", "/api/jobs/")).get_json()
    assert doc["frame"]["question"] == FEVER_WORDS


def test_reader_uses_the_servers_rules_directory(concept_index: Path, tmp_path: Path) -> None:
    """``ebm serve --rules DIR``: the box reads with DIR's question_cues.tsv (one added task cue
    changes the task), as the workers answer with DIR's tables."""
    from ebm.resources import shipped_rules_dir

    rules = tmp_path / "rules"
    shutil.copytree(shipped_rules_dir(), rules, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    with (rules / "question_cues.tsv").open("a", encoding="utf-8") as f:
        f.write("task\tin the long run\tprognosis\t5\n")
    mp = pytest.MonkeyPatch()
    mp.setenv("EBM_HOME", str(concept_index.parent))
    app = create_app(AskConfig(rules=rules, cache_path=tmp_path / "a.sqlite"), warm=False, workers=0)
    try:
        page = app.test_client().post(
            "/question", data={"question": "leg cramps quinine in the long run", "action": "fill"}
        )
        assert page.status_code == 200
        text = page.get_data(as_text=True)
        assert re.search(r'<option value="prognosis" selected>', text)
        assert "Task prognosis: &#39;in the long run&#39; (weight 5)" in text
    finally:
        app.extensions["ebm_runner"].stop()
        mp.undo()


def test_a_reader_that_cannot_load_says_why(concept_index: Path, tmp_path: Path) -> None:
    """A broken cue row: the box and the API answer 503 naming the file and line, not a 500."""
    from ebm.resources import shipped_rules_dir

    rules = tmp_path / "rules"
    shutil.copytree(shipped_rules_dir(), rules, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    with (rules / "question_cues.tsv").open("a", encoding="utf-8") as f:
        f.write("task\tin the long run\tprognosys\t5\n")
    line = len((rules / "question_cues.tsv").read_text(encoding="utf-8").splitlines())
    mp = pytest.MonkeyPatch()
    mp.setenv("EBM_HOME", str(concept_index.parent))
    app = create_app(AskConfig(rules=rules, cache_path=tmp_path / "a.sqlite"), warm=False, workers=0)
    try:
        client = app.test_client()
        r = client.post("/api/ask", json={"question": "leg cramps quinine"})
        assert r.status_code == 503
        doc = r.get_json()
        assert doc["field"] == "question"
        assert doc["error"].startswith("questions in words cannot be read on this server: ")
        assert f"question_cues.tsv:{line}" in doc["error"]
        page = client.post("/question", data={"question": "leg cramps quinine", "action": "fill"})
        assert page.status_code == 503
        assert f"question_cues.tsv:{line}" in page.get_data(as_text=True)
    finally:
        app.extensions["ebm_runner"].stop()
        mp.undo()
