"""The PICO form in a real headless browser: Debian's chromium driven by Playwright.

The server under test is the real command, ``python -m ebm serve --port 0``, on 127.0.0.1 and a
free port, over the tests' EBM_HOME (the session's concept index, the default store built from
the bundled corpus). Set EBM_UPDATE_SCREENSHOT=1 to refresh docs/screenshot-results.png.

Needs ``apt-get install -y chromium`` and the ``test`` extra (Playwright's Python package; never
``playwright install``: the browser is Debian's).
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebm.frame import load_frame
from tests.web_helpers import start_serve

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-first-run",
]
SCREENSHOT = ROOT / "docs" / "screenshot-results.png"
SCREENSHOT_BOTTOM_LINE = ROOT / "docs" / "screenshot-bottom-line.png"
SCREENSHOT_QUESTION = ROOT / "docs" / "screenshot-question.png"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).is_file(), reason=f"chromium not installed at {CHROMIUM} (apt-get install -y chromium)"
)


@pytest.fixture(scope="module")
def server(concept_index: Path) -> Iterator[str]:
    """``ebm serve`` on 127.0.0.1 and a free port; its URL once the models are loaded."""
    # The tests' data directory (the session's concept index; the store is built there).
    proc, url, _ = start_serve(
        ["--host", "127.0.0.1", "--port", "0"],
        {"EBM_HOME": str(concept_index.parent)},
        ready=lambda status: status["status"] == "ready",
        within=180,
        waiting="models not loaded",
    )
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):  # -> playwright Page
    context = browser.new_context(viewport={"width": 1200, "height": 1500})
    pg = context.new_page()
    pg.set_default_timeout(120_000)
    yield pg
    context.close()


def _fill(page, frame, top: int | None = None) -> None:
    page.select_option("#task", frame.task.value)
    page.fill("#problem", frame.problem or "")
    for name in ("co_problems", "population", "intervention", "comparison"):
        page.fill(f"#{name}", "; ".join(getattr(frame, name)))
    page.fill("#outcome", frame.outcome or "")
    page.check("input[name=source][value=local]")
    if top:
        page.select_option("#top", str(top))


def test_fever_question_ranked_cards_and_explanation(server: str, page) -> None:
    frame = load_frame(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")
    page.goto(server)
    assert page.title().startswith("Ask a clinical question")
    _fill(page, frame)
    page.click("form.pico button[type=submit]")
    # The progress page refreshes itself until the answers are there.
    page.wait_for_selector("ol.answers li.card")
    assert "/results/" in page.url
    cards = page.locator("ol.answers li.card")
    n = cards.count()
    assert 1 <= n <= 10
    ranks = [int(cards.nth(i).locator(".rank").inner_text()) for i in range(n)]
    assert ranks == list(range(1, n + 1))
    for i in range(n):
        card = cards.nth(i)
        pmid = card.get_attribute("data-pmid")
        assert pmid and pmid.isdigit()
        link = card.locator("a.pmid")
        assert link.get_attribute("href") == f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
        assert link.inner_text() == f"PMID {pmid}"
        # the evidence badge: design (predicted or from the publication types) · n · grade
        badge = card.locator(".meta .badge").inner_text()
        assert re.fullmatch(
            r".+ \((predicted, [01]\.\d\d|publication types)\)( · n = [\d,]+)?( · grade \w+)?", badge
        ), badge
        assert card.locator("h2.title").inner_text().strip()
        score = card.locator("dl.score")
        for label in ("Score", "PICO", "Strength of evidence", "Task"):
            assert score.get_by_text(label, exact=True).count() == 1
    # The query that was run, and its relaxations, are on the page.
    query = page.locator("code.query-text").inner_text()
    assert "acetaminophen" in query.casefold() or "fever" in query.casefold()
    assert re.search(r"\d+ hits?;", page.locator("section.query p.hits").first.inner_text())
    # "Why ranked here" opens and shows every decision behind the score.
    why = cards.first.locator("details.why")
    assert why.get_attribute("open") is None
    assert not why.locator(".why-body").is_visible()
    why.locator("summary").click()
    assert why.get_attribute("open") is not None
    body = why.locator(".why-body")
    assert body.is_visible()
    assert "S_EBM =" in body.locator(".formula").inner_text()
    assert body.locator("ul.contributions li").count() >= 3


def _screenshot_path(path: Path = SCREENSHOT) -> Path:
    if os.environ.get("EBM_UPDATE_SCREENSHOT") == "1":
        return path
    return Path(os.environ["EBM_HOME"]) / path.name


def test_question_in_words_bottom_line_and_findings(server: str, page) -> None:
    """The box fills the fields; the fever question's bottom line box links its PMIDs to their
    cards; the cards show their findings with the sentence highlighted in the abstract."""
    page.goto(server)
    # words no slot takes are shown, not dropped
    page.fill("#question-text", "aspirin stroke prevention women over 65 bleeding risk")
    page.click("form.words button[value=fill]")
    assert page.locator("section.reading .unplaced mark").inner_text() == "risk"
    assert page.input_value("#problem") == "stroke"
    page.screenshot(path=str(_screenshot_path(SCREENSHOT_QUESTION)))
    page.fill("#question-text", "Is ibuprofen better than acetaminophen for fever in children?")
    page.click("form.words button[value=fill]")
    page.wait_for_selector("section.reading")
    assert (
        "Understood as: therapy · problem Fever" in page.locator("section.reading .understood").inner_text()
    )
    assert page.input_value("#intervention") == "ibuprofen"
    assert page.input_value("#comparison") == "acetaminophen"
    # the paper's frame, for the paper's answer (a fresh form: the words above are not its question)
    frame = load_frame(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")
    page.goto(server)
    _fill(page, frame)
    page.click("form.pico button[type=submit]")
    page.wait_for_selector("ol.answers li.card")
    box = page.locator("section.bottom-line")
    assert box.count() == 1
    links = box.locator("a.cite")
    assert links.count() >= 1
    for i in range(links.count()):
        href = links.nth(i).get_attribute("href") or ""
        pmid = links.nth(i).text_content() or ""  # also the links inside a closed <details>
        assert href in (f"#pmid-{pmid}", f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/")
        if href.startswith("#"):
            assert page.locator(f"li.card#pmid-{pmid}").count() == 1
    card = page.locator("li.card[data-pmid='1621668']")
    assert card.locator("section.findings li.finding").count() >= 1
    mark = card.locator("details.abstract mark.evidence").first
    assert mark.is_visible()
    page.screenshot(path=str(_screenshot_path()))
    # the box with the first card's head and findings below it
    page.evaluate("window.scrollTo(0, 0)")
    top = box.bounding_box()
    findings = page.locator("ol.answers li.card").first.locator("section.findings").bounding_box()
    assert top and findings
    clip = {
        "x": top["x"] - 8,
        "y": top["y"] - 8,
        "width": top["width"] + 16,
        "height": findings["y"] + findings["height"] - top["y"] + 16,
    }
    page.screenshot(path=str(_screenshot_path(SCREENSHOT_BOTTOM_LINE)), clip=clip)


def test_empty_problem_shows_message_next_to_field(server: str, page) -> None:
    page.goto(server)
    page.select_option("#task", "therapy")
    page.fill("#intervention", "acetaminophen")
    page.click("form.pico button[type=submit]")
    message = page.locator("#problem-error")
    message.wait_for()
    assert "primary problem" in message.inner_text()
    # Next to its field: inside the field's block, referenced by the input.
    assert page.locator(".field.invalid #problem-error").count() == 1
    assert page.get_attribute("#problem", "aria-invalid") == "true"
    assert page.get_attribute("#problem", "aria-describedby") == "problem-error"
    assert page.input_value("#intervention") == "acetaminophen"  # what was typed is kept
    assert page.locator(".error").filter(has_text="task").count() == 0


def test_abstract_markup_is_shown_as_text(server: str, page) -> None:
    """PMID 15929820's outcome sentence has "(<or= 50 beats per minute)": unescaped, the browser
    would open an <or=> element and swallow the text."""
    page.goto(server)
    page.select_option("#task", "therapy")
    page.fill("#problem", "unstable angina")
    page.fill("#intervention", "diltiazem")
    page.select_option("#top", "50")
    page.click("form.pico button[type=submit]")
    page.wait_for_selector("ol.answers li.card")
    card = page.locator("li.card[data-pmid='15929820']")
    assert card.count() == 1
    assert "(<or= 50 beats per minute)" in card.locator("ul.outcomes").inner_text()
    assert page.locator("ul.outcomes or\\=").count() == 0
    assert "&lt;or= 50" in page.content()


def test_page_has_no_script(server: str, page) -> None:
    page.goto(server + "?problem=" + urllib.request.quote("<script>alert(1)</script>"))
    assert page.locator("script").count() == 0
    assert page.input_value("#problem") == "<script>alert(1)</script>"
