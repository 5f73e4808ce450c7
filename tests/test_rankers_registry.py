"""One registry of rankers (``ebm.scoring.rankers.REGISTRY``): every registered ranker can be chosen
in ``ebm ask`` (by name or alias), in the web form and the JSON API, and is run by ``ebm bench``
(``tests/test_bench_runner.py`` checks that each bench run is ``ebm ask``'s ranking)."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from ebm.ask import AskConfig
from ebm.cli import build_parser, main
from ebm.evaluation.bench import SYSTEMS
from ebm.scoring.rankers import ALIASES, DEFAULT_RANKER, REGISTRY
from ebm.web.app import create_app
from tests import scoring_pool

ROOT = Path(__file__).resolve().parents[1]
FEVER = ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml"
ANGINA = {"task": "therapy", "problem": "unstable angina", "intervention": "diltiazem"}


def test_registry_records() -> None:
    assert next(iter(REGISTRY)) == DEFAULT_RANKER  # the form preselects the first one
    for name, r in REGISTRY.items():
        assert r.name == name and r.label and r.help and r.bench_run in SYSTEMS
        assert all(ALIASES[a] == name for a in r.aliases)


def test_every_ranker_is_an_ask_choice(concept_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scoring_pool.store()
    parser = build_parser()
    for choice in [*REGISTRY, *ALIASES]:
        args = parser.parse_args(["ask", "--frame", str(FEVER), "--ranker", choice])
        assert args.ranker == choice
    with pytest.raises(SystemExit):
        parser.parse_args(["ask", "--frame", str(FEVER), "--ranker", "bm25"])
    capsys.readouterr()
    for name in REGISTRY:
        args = ["ask", "--frame", str(FEVER), "--ranker", name, "--format", "json", "--top", "3"]
        assert main([*args, "--year", "2024"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert {r["ranker"] for r in doc["results"]} == {name}


@pytest.fixture(scope="module")
def app(concept_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    mp = pytest.MonkeyPatch()
    mp.setenv("EBM_HOME", str(concept_index.parent))  # the worker thread opens the store there
    scoring_pool.store()
    cache = tmp_path_factory.mktemp("web") / "annotations.sqlite"
    app = create_app(AskConfig(cache_path=cache, year=2024), warm=False)
    yield app
    app.extensions["ebm_runner"].stop()
    mp.undo()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def test_web_form_offers_every_ranker(client: FlaskClient) -> None:
    page = html.unescape(client.get("/").get_data(as_text=True))
    options = re.findall(r'<option value="([^"]+)"( selected)?>([^<]+)</option>', page)
    offered = {value: (label, bool(selected)) for value, selected, label in options if value in REGISTRY}
    assert set(offered) == set(REGISTRY)
    for name, r in REGISTRY.items():
        assert offered[name] == (r.label, name == DEFAULT_RANKER)


def test_web_form_and_api_rank_with_the_chosen_ranker(client: FlaskClient) -> None:
    for name, r in REGISTRY.items():
        choice = r.aliases[0] if r.aliases else name  # an alias works as in ebm ask
        got = client.post("/api/ask", json={"frame": ANGINA, "top": 3, "ranker": choice})
        assert got.status_code == 200, got.get_data(as_text=True)[:500]
        assert {a["ranker"] for a in got.get_json()["results"]} == {name}
    bad = client.post("/api/ask", json={"frame": ANGINA, "ranker": "bm25"})
    assert bad.status_code == 400 and "unknown ranker 'bm25'" in bad.get_data(as_text=True)

    form = {"task": "therapy", "problem": "unstable angina", "intervention": "diltiazem", "ranker": "term"}
    r = client.post("/ask", data=form)
    assert r.status_code == 303, r.get_data(as_text=True)[:500]
    deadline = time.monotonic() + 180
    while True:
        text = html.unescape(client.get(r.headers["Location"]).get_data(as_text=True))
        if 'http-equiv="refresh"' not in text:
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert re.search(r"ranked by\s+" + re.escape(REGISTRY["term"].label), text)
    page = client.post("/ask", data=form | {"ranker": "bm25"}).get_data(as_text=True)
    assert "unknown ranker" in html.unescape(page)
