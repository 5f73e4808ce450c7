"""The web form and JSON API through Flask's test client, on the real pipeline and real citations
(the bundled corpus in the default local store, the session's MeSH concept index)."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from ebm.ask import AskConfig
from ebm.cli import build_parser, main
from ebm.cli.serve import is_loopback
from ebm.frame import frame_from_dict, load_frame
from ebm.web.app import MAX_REQUEST, _num, create_app
from ebm.web.forms import MAX_ITEMS, MAX_TEXT, Question
from ebm.web.jobs import Busy, Runner
from tests.eutils_server import EutilsServer, eutils_server_fixture  # noqa: F401 - the fixture
from tests.web_helpers import ask_page, web_app

ROOT = Path(__file__).resolve().parents[1]
FEVER = ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml"
# PMID 20201949's title: "... followed by a BEAM autograft in patients <65 years with poor ...".
LYMPHOMA = {"task": "therapy", "problem": "non-Hodgkin lymphoma", "intervention": ["CHOP", "autograft"]}
# PMID 15929820's outcome sentence: "... reduced significantly (<or= 50 beats per minute) ...".
ANGINA = {"task": "therapy", "problem": "unstable angina", "intervention": "diltiazem"}
NO_TRACEBACK = re.compile(r"Traceback|File \"")


@pytest.fixture(scope="module")
def app(concept_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    yield from web_app(concept_index, tmp_path_factory, "web")


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _ask_page(client: FlaskClient, form: dict[str, str], timeout: float = 180) -> str:
    """Submit the form and follow the progress page until the answers are there."""
    text, location = ask_page(client, form, timeout)
    assert re.fullmatch(r"/results/[\w-]+", location)
    return text


def _without_timings(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "timings"}


# --- the JSON API ---------------------------------------------------------------------------------


def test_api_serves_the_ebm_ask_json_document(client: FlaskClient, capsys: pytest.CaptureFixture) -> None:
    frame = load_frame(FEVER)
    r = client.post("/api/ask", json={"frame": frame.to_dict(), "top": 5})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.mimetype == "application/json"
    doc = r.get_json()
    assert {"frame", "query", "relaxations", "results", "timings"} <= doc.keys()
    assert doc["frame"] == frame.to_dict()
    results = doc["results"]
    assert [x["rank"] for x in results] == list(range(1, len(results) + 1))
    assert 1 <= len(results) <= 5
    for x in results:
        assert x["pmid"].isdigit()
        assert set(x["components"]) == {"pico", "soe", "task"}
        assert x["grade"] in ("A", "B", "C", None)
        assert {"title", "outcomes", "year", "score"} <= x.keys()
    scores = [x["score"] for x in results]
    assert scores == sorted(scores, reverse=True)
    # The same document `ebm ask --format json` prints (timings aside).
    assert main(["ask", "--frame", str(FEVER), "--format", "json", "--top", "5"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert _without_timings(doc) == _without_timings(cli)
    # A bare frame is accepted too (defaults: local store, top 10).
    bare = client.post("/api/ask", json=frame.to_dict()).get_json()
    assert [x["pmid"] for x in bare["results"][:5]] == [x["pmid"] for x in results]
    assert len(bare["results"]) == min(10, bare["candidates"])


def test_api_explain_adds_every_decision(client: FlaskClient) -> None:
    r = client.post("/api/ask", json={"frame": ANGINA, "top": 2, "explain": True})
    assert r.status_code == 200
    for x in r.get_json()["results"]:
        components = {c["component"] for c in x["explanation"]}
        assert {"problem", "journal", "study", "date"} <= components


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"task": "therapy"}, "problem", "empty"),
        ({"task": "therapy", "intervention": "quinine"}, "problem", "primary problem"),
        ({"task": "therapie", "problem": "fever"}, "task", "did you mean 'therapy'"),
        ({"problem": "fever"}, "task", "required"),
        ({"task": "therapy", "problem": "x" * (MAX_TEXT + 1)}, "problem", "too long"),
        ({"task": "therapy", "problem": "fever", "population": "y" * 300}, "population", "too long"),
        (
            {
                "task": "therapy",
                "problem": "fever",
                "intervention": [f"drug {i}" for i in range(MAX_ITEMS + 1)],
            },
            "intervention",
            "too many",
        ),
        ({"task": "therapy", "problem": "fever", "colour": "red"}, "colour", "unknown field"),
        ({"task": "therapy", "problem": 5}, "problem", "must be text"),
        ({"frame": {"task": "therapy", "problem": "fever"}, "source": "medline"}, "source", "unknown source"),
        ({"frame": {"task": "therapy", "problem": "fever"}, "top": 0}, "top", "from 1 to"),
        ({"frame": {"task": "therapy", "problem": "fever"}, "explain": "yes"}, "explain", "true or false"),
        ({"frame": {"task": "therapy", "problem": "fever"}, "rank": 3}, "rank", "unknown key"),
        ({"frame": "fever"}, "frame", "JSON object"),
        ([1, 2], None, "JSON object"),
    ],
)
def test_api_errors_name_the_field(client: FlaskClient, body: Any, field: str | None, words: str) -> None:
    r = client.post("/api/ask", json=body)
    assert r.status_code == 400
    doc = r.get_json()
    assert doc["field"] == field
    assert words in doc["error"]


def test_api_refuses_non_json_and_oversized_requests(client: FlaskClient) -> None:
    r = client.post("/api/ask", data="task=therapy&problem=fever")
    assert r.status_code == 400
    assert "JSON" in r.get_json()["error"]
    r = client.post("/api/ask", data="{not json", content_type="application/json")
    assert r.status_code == 400
    assert "not valid JSON" in r.get_json()["error"]
    big = {"task": "therapy", "problem": "fever", "question": "x" * (MAX_REQUEST + 10)}
    r = client.post("/api/ask", json=big)
    assert r.status_code == 413
    assert "too large" in r.get_json()["error"]
    r = client.post("/ask", data={"task": "therapy", "problem": "p" * (MAX_REQUEST + 10)})
    assert r.status_code == 413
    assert "too large" in r.get_data(as_text=True)


def test_api_refuses_deeply_nested_json_with_400(client: FlaskClient) -> None:
    """5,000 nested arrays exhausted the JSON parser's stack (a 500); now a 400 naming the depth,
    before any parsing. Nesting inside strings does not count."""
    for body in ("[" * 5000 + "]" * 5000, '{"frame": ' * 3000 + "{}" + "}" * 3000):
        r = client.post("/api/ask", data=body, content_type="application/json")
        assert r.status_code == 400
        assert r.get_json() == {
            "error": f"the request body nests {body.count('[') + body.count('{')} levels deep (at most 32)",
            "field": None,
        }
    r = client.post("/api/ask", json={"task": "therapy", "problem": "[[[[" * 20, "colour": "red"})
    assert r.status_code == 400
    assert r.get_json()["field"] == "colour"  # parsed: the brackets were text
    r = client.post("/api/ask", data=b'{"task": "\xff"}', content_type="application/json")
    assert r.status_code == 400 and "not valid JSON" in r.get_json()["error"]


def test_control_characters_are_refused_never_echoed(client: FlaskClient) -> None:
    r = client.post(
        "/ask", data={"task": "therapy", "problem": "fever\x00<i>x</i>", "intervention": "a\x1bb"}
    )
    assert r.status_code == 400
    text = r.get_data(as_text=True)
    assert "\x00" not in text and "\x1b" not in text
    m = re.search(r'<p class="error" id="problem-error">([^<]*)</p>', text)
    assert m and "control character (U+0000) at position 6" in m.group(1)
    assert 'value="fever&lt;i&gt;x&lt;/i&gt;"' in text  # shown back without it, escaped
    assert re.search(r'id="intervention-error">[^<]*U\+001B', text)
    r = client.get("/?problem=fev%00er&task=therapy")
    assert r.status_code == 200 and "\x00" not in r.get_data(as_text=True)
    r = client.post("/api/ask", json={"task": "therapy", "problem": "fever", "population": ["kids", "a\x07"]})
    assert r.status_code == 400
    assert r.get_json() == {
        "error": "frame: field 'population': contains a control character (U+0007) at position 2; remove it",
        "field": "population",
    }
    # Tabs and new lines are white space (a new line separates values of a list field).
    r = client.post(
        "/ask", data={"task": "therapy", "problem": "leg\tcramps", "intervention": "quinine\nvitamin E"}
    )
    assert r.status_code == 303


def test_api_job_without_waiting(client: FlaskClient) -> None:
    r = client.post("/api/ask?wait=0", json=ANGINA)
    assert r.status_code == 202
    url = r.headers["Location"]
    assert url == r.get_json()["url"]
    deadline = time.monotonic() + 120
    while (doc := client.get(url).get_json()).get("state") in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert doc["results"][0]["pmid"].isdigit()
    missing = client.get("/api/jobs/no-such-job")
    assert missing.status_code == 404
    assert "no question" in missing.get_json()["error"]


# --- the form and the results page --------------------------------------------------------------


def test_form_page_offers_every_task_and_no_script(client: FlaskClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    text = r.get_data(as_text=True)
    for task in (
        "therapy",
        "prevention",
        "differential diagnosis",
        "diagnostic test",
        "etiology",
        "prognosis",
    ):
        assert f'<option value="{task}"' in text
    for name in ("problem", "co_problems", "population", "intervention", "comparison", "outcome"):
        assert f'name="{name}"' in text
    assert 'name="source" value="local"' in text and 'name="source" value="pubmed"' in text
    assert "<script" not in text
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    example = client.get("/?example=fever").get_data(as_text=True)
    assert 'value="acute febrile illness"' in example


@pytest.mark.parametrize(
    ("form", "field", "words"),
    [
        (
            {"task": "therapy", "problem": "", "intervention": "quinine"},
            "problem",
            "give the primary problem",
        ),
        ({"task": "therapie", "problem": "fever"}, "task", "did you mean"),
        ({"task": "", "problem": "fever"}, "task", "choose a task"),
        ({"task": "therapy", "problem": "fever", "outcome": "o" * (MAX_TEXT + 1)}, "outcome", "too long"),
        (
            {"task": "therapy", "problem": "fever", "comparison": ";".join("abcdefghij")},
            "comparison",
            "too many",
        ),
        ({"task": "therapy", "problem": "fever", "source": "medline"}, "source", "unknown source"),
        ({"task": "therapy", "problem": "fever", "top": "1000"}, "top", "from 1 to"),
    ],
)
def test_form_errors_next_to_their_fields(
    client: FlaskClient, form: dict[str, str], field: str, words: str
) -> None:
    r = client.post("/ask", data=form)
    assert r.status_code == 400
    text = r.get_data(as_text=True)
    m = re.search(rf'<p class="error" id="{field}-error">([^<]*)</p>', text)
    assert m, text
    assert words in html.unescape(m.group(1))
    assert f'aria-describedby="{field}-error"' in text or field == "source"  # radios: a fieldset
    assert len(re.findall(r'class="error" id="', text)) == 1  # only the bad field is marked


def test_form_keeps_and_escapes_what_was_typed(client: FlaskClient) -> None:
    typed = '<b onmouseover="x()">fever & "chills"</b>'
    r = client.post("/ask", data={"task": "", "problem": typed, "population": "children; infants"})
    assert r.status_code == 400
    text = r.get_data(as_text=True)
    assert 'value="&lt;b onmouseover=&#34;x()&#34;&gt;fever &amp; &#34;chills&#34;&lt;/b&gt;"' in text
    assert "<b onmouseover" not in text
    assert 'value="children; infants"' in text


def test_fever_question_results_page(client: FlaskClient) -> None:
    frame = load_frame(FEVER)
    form = {
        "task": frame.task.value,
        "problem": frame.problem or "",
        "population": "; ".join(frame.population),
        "intervention": "; ".join(frame.intervention),
        "comparison": "; ".join(frame.comparison),
        "outcome": frame.outcome or "",
        "source": "local",
        "top": "10",
    }
    text = _ask_page(client, form)
    pmids = re.findall(r'<li class="card" id="pmid-(\d+)" data-pmid="\1">', text)
    assert 1 <= len(pmids) <= 10
    # The cards are the API's answers, in order.
    doc = client.get(re.search(r'href="(/api/jobs/[\w-]+)"', text).group(1)).get_json()
    assert pmids == [x["pmid"] for x in doc["results"]]
    for pmid in pmids:
        assert f'href="https://pubmed.ncbi.nlm.nih.gov/{pmid}/"' in text
    assert len(re.findall(r'<span class="badge grade grade-(a|b|c|none)"', text)) == len(pmids)
    assert text.count('<details class="why">') == len(pmids)
    assert text.count("S_EBM = ") == len(pmids)
    assert len(re.findall(r"<dt>PICO</dt>", text)) == len(pmids)
    # Ranked by EBM+ (ebm ask's default), named in words, its formula without server paths.
    assert {x["ranker"] for x in doc["results"]} == {"ebm-plus"}
    assert re.search(r"ranked by\s+EBM\+ \(retrieval score", text)
    formula = html.unescape(re.search(r'<span class="ranker-formula">(.*?)</span>', text, re.S).group(1))
    assert formula.startswith("EBM+ = 1 retrieval + ") and formula.endswith("weights: ebm_plus_weights.toml)")
    assert "/" not in formula
    # Each card shows what each weighted feature added to its score, as the API gives it.
    cards = text.split('<li class="card"')[1:]
    for card, answer in zip(cards, doc["results"], strict=True):
        shown = re.search(r"<dt>Score</dt><dd>[^<]*<small>(.*?)</small>", card, re.S).group(1)
        parts = {k: v for k, v in answer["ranking"].items() if v}
        assert shown.count(", ") == len(parts) - 1
        for name, value in parts.items():
            assert f"{name.replace('_', ' ')} {_num(value)}" in shown
    assert doc["query"] in html.unescape(text)
    for relaxation in doc["relaxations"]:
        assert relaxation in text
    assert "<script" not in text


def test_real_citation_markup_is_escaped(client: FlaskClient) -> None:
    text = _ask_page(client, {**LYMPHOMA, "intervention": "CHOP; autograft", "top": "50"})
    assert 'data-pmid="20201949"' in text
    assert "BEAM autograft in patients &lt;65 years with poor prognosis" in text
    assert "patients <65" not in text
    text = _ask_page(client, {**ANGINA, "top": "50"})
    assert 'data-pmid="15929820"' in text
    assert "reduced significantly (&lt;or= 50 beats per minute)" in text
    assert "<or=" not in text


def test_failed_question_is_a_page_with_the_message(
    concept_index: Path, eutils_server: EutilsServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """PubMed refusing every query (the local E-utilities replay server answers HTTP 400 to
    queries it has no recording of) is shown as a message, never a traceback."""
    monkeypatch.setenv("EBM_HOME", str(concept_index.parent))
    monkeypatch.setenv("EBM_EUTILS_URL", eutils_server.url)
    app = create_app(AskConfig(cache_path=tmp_path / "a.sqlite"), warm=False)
    try:
        client = app.test_client()
        r = client.post("/ask", data={"task": "therapy", "problem": "leg cramps", "source": "pubmed"})
        assert r.status_code == 303
        deadline = time.monotonic() + 60
        while 'http-equiv="refresh"' in (text := client.get(r.headers["Location"]).get_data(as_text=True)):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        page = client.get(r.headers["Location"])
        assert page.status_code == 502
        assert "could not be answered" in text
        assert re.search(r"esearch term=.* failed at http://127\.0\.0\.1:\d+/.*: HTTP 400", text)
        assert not NO_TRACEBACK.search(text)
        api = client.post(
            "/api/ask", json={"frame": {"task": "therapy", "problem": "leg cramps"}, "source": "pubmed"}
        )
        assert api.status_code == 502
        assert "HTTP 400" in api.get_json()["error"]
        assert any(s.utility == "esearch.fcgi" for s in eutils_server.seen)
    finally:
        app.extensions["ebm_runner"].stop()


def test_unknown_pages_and_methods_are_pages(client: FlaskClient) -> None:
    for url, status in (("/results/nope", 404), ("/nowhere", 404)):
        r = client.get(url)
        assert r.status_code == status
        text = r.get_data(as_text=True)
        assert "<h1>Not Found</h1>" in text or "<h1>Not found</h1>" in text
        assert not NO_TRACEBACK.search(text)
    r = client.get("/ask")
    assert r.status_code == 405
    assert "does not take that kind of request" in r.get_data(as_text=True)
    r = client.get("/api/ask")
    assert r.status_code == 405
    assert r.get_json()["field"] is None


def test_foreign_host_names_are_refused_on_loopback(app: Flask) -> None:
    """Served on loopback, the app accepts only loopback Host names (no DNS rebinding)."""
    guarded = create_app(runner=app.extensions["ebm_runner"], trusted_hosts=["127.0.0.1", "localhost"])
    client = guarded.test_client()
    assert client.get("/", headers={"Host": "127.0.0.1:8000"}).status_code == 200
    assert client.get("/", headers={"Host": "localhost"}).status_code == 200
    r = client.get("/", headers={"Host": "evil.example:8000"})
    assert r.status_code == 400
    assert "answers only to its own address" in r.get_data(as_text=True)
    assert client.post("/api/ask", json=ANGINA, headers={"Host": "evil.example"}).status_code == 400


def test_serve_binds_to_loopback_by_default() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")


def test_serve_refuses_bad_options(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["serve", "--rules", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "0..65535" in capsys.readouterr().err
    assert main(["serve", "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no such store" in capsys.readouterr().err


# --- the background worker ------------------------------------------------------------------------


def test_worker_reports_progress_and_warms_the_cache(concept_index: Path, tmp_path: Path) -> None:
    frame = load_frame(FEVER)
    runner = Runner(AskConfig(cache_path=tmp_path / "a.sqlite"), warm=True, warm_frames=[frame]).start()
    try:
        deadline = time.monotonic() + 180
        while runner.warmed_frames < 1:
            assert not runner.status.startswith("not ready"), runner.status
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert runner.status == "ready"
        # The warm-up annotated the fever question's candidates: asked now, all come from the cache.
        job = runner.submit(Question(frame))
        assert runner.wait(job, 120)
        assert job.state == "done", job.error
        result = job.result
        assert result is not None and result.answers
        assert result.cached == len(result.answers)
        assert job.step == "done"
        assert set(job.explanations) == {a.pmid for a in result.top(10)}
        # A question not asked before: its progress goes through search and annotation.
        other = frame_from_dict({"task": "therapy", "problem": "leg cramps", "intervention": "quinine"})
        job = runner.submit(Question(other))
        assert runner.wait(job, 120)
        assert job.state == "done", job.error
        # The worker process's reports, in order, as the server received them.
        seen = job.steps
        assert seen[0] in ("starting", "waiting for the worker") and seen[-1] == "done", seen
        assert "searching" in seen and "annotating" in seen and "scoring" in seen, seen
        assert seen.index("searching") < seen.index("annotating") < seen.index("scoring"), seen
        assert job.result is not None and job.result.cached < len(job.result.answers)
    finally:
        runner.stop()


def test_too_many_waiting_questions_are_refused_not_queued() -> None:
    idle = Runner(warm=False, max_pending=1)  # not started: its questions stay queued
    idle.submit(Question(frame_from_dict(ANGINA)))
    with pytest.raises(Busy, match="busy with 1 question"):
        idle.submit(Question(frame_from_dict(ANGINA)))
    full = Runner(warm=False, max_pending=0, workers=0)
    app = create_app(runner=full)
    try:
        client = app.test_client()
        r = client.post("/api/ask", json=ANGINA)
        assert r.status_code == 503
        assert r.headers["Retry-After"] == "5"
        assert "busy" in r.get_json()["error"]
        r = client.post("/ask", data={"task": "therapy", "problem": "fever"})
        assert r.status_code == 503
        assert "busy" in r.get_data(as_text=True)
    finally:
        full.stop()
