"""The result cards' evidence on the web (issues 13 and 14): the evidence sentence highlighted
in the abstract (escaped piece by piece), the findings list, the evidence badge, the bottom
line box with its PMIDs linked to their cards, and the "randomized trials and systematic
reviews only" filter; real extractor and model, real pipeline on the bundled corpus."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from ebm.frame import load_frame
from ebm.paths import package_data
from ebm.web.evidence import Highlight, card_evidence, highlight, numbers_text
from ebm.web.forms import TRIALS_AND_REVIEWS
from extractors.findings import MODEL_FILE, extract_findings, load_findings_model
from tests.web_helpers import ask_page, web_app

ROOT = Path(__file__).resolve().parents[1]
FEVER = ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml"
FEVER_ANSWER = "1621668"  # the paper's answer to the fever question

HOSTILE_TITLE = 'Ibuprofen <script>alert("t")</script> & acetaminophen in febrile children'
HOSTILE_ABSTRACT = (
    "BACKGROUND: Fever & discomfort <b>in</b> young children are common. "
    "METHODS: 120 children were randomized to ibuprofen or acetaminophen. "
    "RESULTS: The temperature was significantly lower with ibuprofen than with acetaminophen "
    "at 4 hours (p < 0.01) <script>alert(1)</script>. "
    "CONCLUSION: Ibuprofen & acetaminophen were both well tolerated."
)
_TAG = re.compile(r"<sup class=\"fn\">\d+</sup>|<[^>]+>")


def _text_of(markup: str) -> str:
    """What a browser shows of the markup (tags and footnote numbers removed, entities read)."""
    return html.unescape(_TAG.sub("", markup))


# --- escaping, without the pipeline ---------------------------------------------------------------


def test_highlighted_abstract_is_escaped_piece_by_piece() -> None:
    model = load_findings_model(package_data(MODEL_FILE))
    found = extract_findings(HOSTILE_ABSTRACT, "ibuprofen", "acetaminophen", "fever", model)
    assert found, "the extractor finds the RESULTS sentence"
    assert "temperature was significantly lower" in found[0].sentence
    assert found[0].direction == "lower"
    record = {"pmid": "42", "findings": [f.to_dict() for f in found]}
    card = card_evidence(record, HOSTILE_TITLE, HOSTILE_ABSTRACT)
    abstract, title = str(card.abstract), str(card.title)
    for markup in (abstract, title):
        assert "<script>" not in markup and "<b>" not in markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in abstract
    assert "&amp; discomfort &lt;b&gt;in&lt;/b&gt;" in abstract
    assert "&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt; &amp; acetaminophen" in title
    # the text reads exactly as given, with one mark per finding around its sentence
    assert _text_of(abstract) == HOSTILE_ABSTRACT
    assert _text_of(title) == HOSTILE_TITLE
    marks = re.findall(r'<mark class="evidence (\w+)" id="pmid-42-f(\d)"[^>]*>(.*?)<sup', abstract)
    assert sorted(int(n) for _, n, _ in marks) == list(range(1, len(found) + 1))
    first = next(m for m in marks if m[1] == "1")
    assert first[0] == "lower"
    assert html.unescape(first[2]) == found[0].sentence
    f1 = card.findings[0]
    assert (f1["arrow"], f1["word"], f1["where"]) == ("↓", "lower", "abstract")
    assert f1["numbers_text"] == "p < 0.01"


def test_highlight_offsets_and_fallbacks() -> None:
    text = "a < b & c. Second sentence here."
    # offsets that hold the sentence are used; overlapping and out-of-range marks are skipped
    out = str(
        highlight(
            text, [Highlight(0, 10, 1, "higher"), Highlight(5, 12, 2, "lower"), Highlight(30, 99, 3, "x")]
        )
    )
    assert out == (
        '<mark class="evidence higher" id="finding-f1" title="finding 1">a &lt; b &amp; c.'
        '<sup class="fn">1</sup></mark> Second sentence here.'
    )
    # stale offsets: the sentence is found by its text; a sentence not in the text is not marked
    card = card_evidence(
        {
            "pmid": "7",
            "findings": [
                {"sentence": "Second sentence here.", "start": 0, "end": 3, "direction": "no_difference"},
                {"sentence": "Not in it.", "start": 0, "end": 10, "direction": "higher"},
            ],
        },
        None,
        text,
    )
    assert '<mark class="evidence no_difference" id="pmid-7-f1"' in str(card.abstract)
    assert [f["where"] for f in card.findings] == ["abstract", None]
    assert "pmid-7-f2" not in str(card.abstract)


def test_numbers_text() -> None:
    numbers = {
        "effect": {"kind": "OR", "value": 0.52},
        "ci": {"level": 95, "low": 0.31, "high": 0.87},
        "p": {"relation": "<", "value": 0.01},
    }
    assert numbers_text(numbers) == "OR 0.52 · 95% CI 0.31 to 0.87 · p < 0.01"
    assert numbers_text({"percentages": [12.5, 30]}) == "12.5%, 30%"
    assert numbers_text({}) == ""


# --- the results page, on the real pipeline ---------------------------------------------------------


@pytest.fixture(scope="module")
def app(concept_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    yield from web_app(concept_index, tmp_path_factory, "web-findings", workers=1)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _ask_page(client: FlaskClient, form: dict[str, str], timeout: float = 240) -> str:
    return ask_page(client, form, timeout)[0]


def _fever_form(**extra: str) -> dict[str, str]:
    f = load_frame(FEVER)
    form = {
        "task": f.task.value,
        "problem": f.problem or "",
        "population": "; ".join(f.population),
        "intervention": "; ".join(f.intervention),
        "comparison": "; ".join(f.comparison),
        "outcome": f.outcome or "",
        "top": "10",
    }
    return form | extra


def _card(page: str, pmid: str) -> str:
    """The HTML of one card: from its start to the next card (or the end of the page)."""
    start = page.find(f'<li class="card" id="pmid-{pmid}"')
    assert start >= 0, f"no card for PMID {pmid}"
    end = page.find('<li class="card"', start + 1)
    return page[start : end if end > 0 else page.index("</main>")]


def _ask(client: FlaskClient, form: dict[str, str]) -> tuple[str, dict]:
    """The results page of the form's question and the same job's JSON document."""
    text, location = ask_page(client, form, 240)
    doc = client.get(location.replace("/results/", "/api/jobs/")).get_json()
    return text, doc


def test_fever_bottom_line_box_links_its_pmids_to_their_cards(client: FlaskClient) -> None:
    page, doc = _ask(client, _fever_form())
    bl = doc["bottom_line"]
    assert bl is not None and bl["outcomes"], "the fever question has a bottom line on its outcome"
    start = page.index('<section class="bottom-line"')
    assert start < page.index('<ol class="answers">')  # above the list
    box = page[start : page.index("</section>", start)]
    cited: set[str] = set()
    for summary in bl["outcomes"]:
        for st in [summary["concurrence"], *summary["contradictions"]]:
            words = st["text"].rsplit(" [PMID ", 1)[0]
            assert html.escape(words, quote=False) in box
            cited.update(st["pmids"])
    assert FEVER_ANSWER in cited
    shown = set(re.findall(r'<li class="card" id="pmid-(\d+)"', page))
    links = re.findall(r'<a class="cite" href="([^"]+)">(\d+)</a>', box)
    assert {pmid for _, pmid in links} >= cited
    for href, pmid in links:
        assert href == (f"#pmid-{pmid}" if pmid in shown else f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/")
    assert f'<a class="cite" href="#pmid-{FEVER_ANSWER}">{FEVER_ANSWER}</a>' in box
    assert FEVER_ANSWER in shown


def test_fever_cards_show_badge_findings_and_highlight(client: FlaskClient) -> None:
    page, doc = _ask(client, _fever_form())
    records = {x["pmid"]: x for x in doc["results"]}
    shown = re.findall(r'<li class="card" id="pmid-(\d+)"', page)
    assert shown == [x["pmid"] for x in doc["results"]]
    for pmid in shown:
        card, x = _card(page, pmid), records[pmid]
        assert x["evidence_line"], pmid
        assert f">{html.escape(x['evidence_line'])}</span>" in card
        items = re.findall(r'<li class="finding (\w+)">', card)
        assert items == [f["direction"] for f in x["findings"]]
        if x["findings"]:  # findings come before the outcome sentences
            assert card.index('<section class="findings"') < card.index('class="outcomes"')
    card = _card(page, FEVER_ANSWER)
    best = records[FEVER_ANSWER]["findings"][0]
    assert best["direction"] in ("higher", "lower", "no_difference")
    m = re.search(
        rf'<mark class="evidence {best["direction"]}" id="pmid-{FEVER_ANSWER}-f1"[^>]*>(.*?)<sup', card, re.S
    )
    assert m, "the best finding's sentence is highlighted in the abstract"
    assert html.unescape(m.group(1)) == best["sentence"]
    assert f'href="#pmid-{FEVER_ANSWER}-f1"' in card


def test_randomized_only_filter(client: FlaskClient) -> None:
    page, doc = _ask(client, _fever_form(top="5", randomized_only="on"))
    # every candidate of the same frame, unfiltered, with its design
    everything = client.post("/api/ask", json={"frame": doc["frame"], "top": 50}).get_json()
    expected = [x["pmid"] for x in everything["results"] if x["design"]["label"] in TRIALS_AND_REVIEWS]
    others = [x for x in everything["results"] if x["design"]["label"] not in TRIALS_AND_REVIEWS]
    assert others, "the fever candidates include other designs, so the filter has work to do"
    assert [x["pmid"] for x in doc["results"]] == expected[:5]
    assert [x["rank"] for x in doc["results"]] == [
        x["rank"] for x in everything["results"] if x["pmid"] in expected[:5]
    ]
    f = doc["design_filter"]
    assert (f["candidates"], f["kept"], f["filtered_out"]) == (
        everything["candidates"],
        len(expected),
        len(others),
    )
    assert re.findall(r'<li class="card" id="pmid-(\d+)"', page) == expected[:5]
    assert f"<strong>{len(others)} filtered out</strong> by study design" in page
    # the form shows the box ticked when asked again
    again = re.search(r'href="(/\?[^"]*randomized_only=on[^"]*)">Change the question', page)
    assert again
    form = client.get(html.unescape(again.group(1))).get_data(as_text=True)
    assert re.search(r'name="randomized_only" value="on" checked', form)
    # the API takes the option too
    api = client.post("/api/ask", json={"frame": doc["frame"], "top": 5, "randomized_only": True}).get_json()
    assert [x["pmid"] for x in api["results"]] == expected[:5]


def test_markup_in_a_title_is_text_on_the_page(client: FlaskClient) -> None:
    """PMID 20201949's title has "patients <65 years"."""
    form = {
        "task": "therapy",
        "problem": "non-Hodgkin lymphoma",
        "intervention": "CHOP; autograft",
        "top": "50",
    }
    page, _ = _ask(client, form)
    card = _card(page, "20201949")
    title = re.search(r'<h2 class="title">(.*?)</h2>', card, re.S)
    assert title and "&lt;65" in title.group(1) and "<65" not in title.group(1)
