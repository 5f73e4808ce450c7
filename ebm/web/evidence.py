"""What each result card shows about the evidence (issues 13 and 14), from the answer's record
in the ``ebm ask --format json`` document: the evidence badge ("RCT (predicted, 0.97) · n = 120
· grade A"), the findings for the frame (direction, outcome, significance, numbers) with their
evidence sentence highlighted in the abstract, the bottom line's statements with their PMIDs,
and the "randomized trials and systematic reviews only" filter.

The highlighted abstract is built from character offsets, each piece escaped by markupsafe
before it is joined with the ``<mark>`` tags, so a title or abstract containing ``<script>`` or
``&`` is shown as text (the templates autoescape everything else).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from ebm.web.forms import TRIALS_AND_REVIEWS, Question

if TYPE_CHECKING:
    from ebm.answer import Answer
    from ebm.ask import AskResult

# How a direction reads on a card: (arrow, word). The direction is the intervention's outcome
# relative to the comparison (extractors.findings).
DIRECTIONS: dict[str, tuple[str, str]] = {
    "higher": ("↑", "higher"),
    "lower": ("↓", "lower"),
    "no_difference": ("=", "no significant difference"),
}


# --- the design filter ---------------------------------------------------------------------------


def design_label(design: Any) -> str | None:
    """The design class name of an answer's ``design`` (its record or its JSON object)."""
    if design is None:
        return None
    if isinstance(design, Mapping):
        label = design.get("label")
    else:
        label = getattr(design, "label", None)
    return str(label) if label else None


def is_trial_or_review(design: Any) -> bool:
    return design_label(design) in TRIALS_AND_REVIEWS


def shown_answers(result: AskResult, q: Question) -> tuple[Answer, ...]:
    """The answers a question shows: the top ``q.top``, or with ``q.randomized_only`` the top
    ``q.top`` of the ranked candidates whose design is a randomized trial or systematic review
    (their ranks unchanged, so the page shows where they stood)."""
    if not q.randomized_only:
        return result.top(q.top)
    return tuple(a for a in result.answers if is_trial_or_review(getattr(a, "design", None)))[: q.top]


def question_document(result: AskResult, q: Question) -> dict[str, Any]:
    """The ``ebm ask --format json`` document of the answers ``shown_answers`` gives; with the
    filter, ``design_filter`` says what it kept and how many candidates it left out."""
    if not q.randomized_only:
        return result.to_dict(top=q.top, explanation=q.explain)
    doc = result.to_dict(top=None, explanation=q.explain)
    kept = [x for x in doc["results"] if is_trial_or_review(x.get("design"))]
    doc["results"] = kept[: q.top]
    doc["design_filter"] = filter_summary(len(result.answers), len(kept))
    return doc


def filter_summary(candidates: int, kept: int) -> dict[str, Any]:
    return {
        "designs": list(TRIALS_AND_REVIEWS),
        "candidates": candidates,
        "kept": kept,
        "filtered_out": candidates - kept,
    }


# --- findings and the highlighted abstract -----------------------------------------------------------


@dataclass(frozen=True)
class Highlight:
    start: int
    end: int
    n: int  # the finding's number on the card (1 = best)
    direction: str


def locate(text: str | None, finding: Mapping[str, Any]) -> tuple[int, int] | None:
    """Where the finding's sentence is in ``text``: at its offsets when they hold it, else at its
    first occurrence; None when ``text`` does not contain it."""
    if not text:
        return None
    sentence = str(finding.get("sentence") or "")
    if not sentence:
        return None
    start, end = finding.get("start"), finding.get("end")
    if isinstance(start, int) and isinstance(end, int) and text[start:end] == sentence:
        return start, end
    i = text.find(sentence)
    return (i, i + len(sentence)) if i >= 0 else None


def highlight(text: str | None, marks: Sequence[Highlight], anchor: str = "finding") -> Markup:
    """``text`` escaped, with each mark's span in ``<mark id="{anchor}-f{n}">`` (overlapping
    marks: the first wins). Every piece of the text passes through ``markupsafe.escape``."""
    if not text:
        return Markup("")
    out: list[str] = []
    pos = 0
    for m in sorted(marks, key=lambda m: (m.start, m.n)):
        if m.start < pos or m.end <= m.start or m.end > len(text):
            continue
        out.append(escape(text[pos : m.start]))
        cls = f"evidence {escape(m.direction)}"
        out.append(Markup(f'<mark class="{cls}" id="{escape(anchor)}-f{m.n}" title="finding {m.n}">'))
        out.append(escape(text[m.start : m.end]))
        out.append(Markup(f'<sup class="fn">{m.n}</sup></mark>'))
        pos = m.end
    out.append(escape(text[pos:]))
    return Markup("").join(out)


def numbers_text(numbers: Mapping[str, Any] | None) -> str:
    """``OR 0.52 · 95% CI 0.31–0.87 · p < 0.01`` from a finding's numbers."""
    if not numbers:
        return ""
    parts: list[str] = []
    effect = numbers.get("effect")
    if isinstance(effect, Mapping) and "value" in effect:
        parts.append(f"{effect.get('kind', 'effect')} {_g(effect['value'])}")
    ci = numbers.get("ci")
    if isinstance(ci, Mapping) and "low" in ci and "high" in ci:
        parts.append(f"{_g(ci.get('level', 95))}% CI {_g(ci['low'])} to {_g(ci['high'])}")
    p = numbers.get("p")
    if isinstance(p, Mapping) and "value" in p:
        parts.append(f"p {p.get('relation', '=')} {_g(p['value'])}")
    elif isinstance(p, str | int | float):
        parts.append(f"p {p}")
    pct = numbers.get("percentages")
    if pct and not parts:
        parts.append(", ".join(f"{_g(v)}%" for v in list(pct)[:4]))
    return " · ".join(parts)


def _g(x: Any) -> str:
    return f"{x:g}" if isinstance(x, int | float) else str(x)


@dataclass(frozen=True)
class CardEvidence:
    """What one card shows about its evidence."""

    badge: str  # "RCT (predicted, 0.97) · n = 120 · grade A"; "" when the record has none
    design_source: str | None  # "publication types" | "text"
    human: bool | None
    findings: tuple[dict[str, Any], ...]  # each finding + "arrow", "word", "numbers_text", "where"
    title: Markup  # the title, escaped, with the findings it holds highlighted
    abstract: Markup  # the abstract, escaped, with the findings highlighted
    sample_sentence: str | None


def card_evidence(record: Mapping[str, Any], title: str | None, abstract: str | None) -> CardEvidence:
    """From an answer's JSON record (``results[i]`` of the document) and its citation's text."""
    pmid = str(record.get("pmid", ""))
    findings: list[dict[str, Any]] = []
    in_title: list[Highlight] = []
    in_abstract: list[Highlight] = []
    for n, f in enumerate(record.get("findings") or (), start=1):
        arrow, word = DIRECTIONS.get(str(f.get("direction")), ("?", str(f.get("direction"))))
        where = None
        span = locate(abstract, f)
        if span is not None:
            in_abstract.append(Highlight(*span, n, str(f.get("direction"))))
            where = "abstract"
        elif (span := locate(title, f)) is not None:
            in_title.append(Highlight(*span, n, str(f.get("direction"))))
            where = "title"
        findings.append(
            dict(f)
            | {
                "n": n,
                "arrow": arrow,
                "word": word,
                "numbers_text": numbers_text(f.get("numbers")),
                "where": where,
            }
        )
    size = record.get("sample_size")
    design = record.get("design")
    return CardEvidence(
        badge=str(record.get("evidence_line") or ""),
        design_source=design.get("source") if isinstance(design, Mapping) else None,
        human=record.get("human"),
        findings=tuple(findings),
        title=highlight(title, in_title, f"pmid-{pmid}"),
        abstract=highlight(abstract, in_abstract, f"pmid-{pmid}"),
        sample_sentence=size.get("sentence") if isinstance(size, Mapping) else None,
    )


# --- the bottom line -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Said:
    """One statement of the bottom line: its words and the PMIDs it cites (linked)."""

    text: str  # without the trailing "[PMID ...]"
    pmids: tuple[str, ...]
    note: str = ""
    contradiction: bool = False


def statement(s: Mapping[str, Any], contradiction: bool = False) -> Said:
    pmids = tuple(str(p) for p in s.get("pmids") or ())
    text = str(s.get("text", ""))
    cite = " [PMID " + ", ".join(pmids) + "]"
    if pmids and text.endswith(cite):
        text = text[: -len(cite)]
    return Said(text, pmids, str(s.get("note") or ""), contradiction)


def bottom_line_view(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The bottom line box: each outcome's concurrence and contradictions as ``Said``; None when
    the document has no bottom line (not a therapy or prevention question)."""
    bl = doc.get("bottom_line")
    if not bl:
        return None

    def summaries(key: str) -> list[list[Said]]:
        return [
            [statement(o["concurrence"])] + [statement(c, True) for c in o.get("contradictions") or ()]
            for o in bl.get(key) or ()
        ]

    return {
        "outcomes": summaries("outcomes"),
        "other_outcomes": summaries("other_outcomes"),
        "none": bl.get("none"),
        "considered": list(bl.get("considered") or ()),
        "intervention": bl.get("intervention"),
        "comparison": bl.get("comparison"),
        "outcome": bl.get("outcome"),
    }
