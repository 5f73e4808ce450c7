"""Rule-based sentence splitting tuned for biomedical abstracts.

A boundary can only fall after ``.``, ``?`` or ``!`` (with any closing quotes or brackets)
followed by whitespace, or at a line break. Each candidate is then judged from the word
before it and the text after it: abbreviations ("vs.", "et al.", "e.g.", "Fig. 2"),
species names ("H. pylori"), numbered-list markers and parenthesised asides do not end a
sentence. Decimals ("P < .05", "p = 0.03", "95% CI 1.2-3.4") never create a candidate,
since a boundary needs whitespace after the mark.

Why not pysbd: it is several times slower than the whole rest of the text pipeline, and the
measured accuracy of these rules on real structured abstracts is as good
(``scripts/eval_sentences.py``, figures in docs/text.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Words that, followed by a period, never end a sentence in abstracts (lower-cased, without
# the final period). Checked before any other rule.
NON_FINAL_ABBREVIATIONS: frozenset[str] = frozenset(
    """
    vs v al e.g eg i.e ie cf viz fig figs ref refs eq eqs approx ca dr mr mrs ms prof
    st sr jr vol vols pp incl esp nb n.b corp dept univ
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)

# Abbreviations that end a sentence when a capitalised word follows ("... and so on, etc. The")
# but not otherwise.
AMBIGUOUS_ABBREVIATIONS: frozenset[str] = frozenset(
    "etc u.s u.k e.u inc co ltd resp iv im ip po sc mo yr yrs wk wks bid tid qid qd prn"
    " spp sp ssp subsp var".split()
)
# Followed by a number these never end a sentence ("No. 5", "Nos. 3 and 4").
_NUMBER_ABBREVIATIONS: frozenset[str] = frozenset({"no", "nos", "nr"})

# Candidate boundary: terminal punctuation, closing quotes/brackets, then whitespace.
_CANDIDATE = re.compile(r"[.?!]+['\"”’)\]]*(?=\s)")
# Hard boundary: a line break (structured abstracts flattened with one label per line).
_NEWLINE = re.compile(r"[ \t]*\n\s*")
_WORD_BEFORE = re.compile(r"(\S+)$")
_NEXT_WORD = re.compile(r"\s*(\S+)")
# Lower-case words that open sentences in careless text ("... from 2006 to 2008. we computed").
SENTENCE_OPENERS: frozenset[str] = frozenset("we the this these our there it in a an".split())
_DOTTED = re.compile(r"^(?:[a-z]{1,4}\.)+[a-z]{1,4}$")
_GLUED_VS = re.compile(r"[^a-z]vs$")
_LIST_MARKER = re.compile(r"^\(?\d{1,2}[.)]?$|^\(?[ivx]{1,4}[.)]$|^\(?[a-h][.)]$")


def _opens_unclosed_paren(text: str, start: int, pos: int, reach: int = 200) -> bool:
    """True when ``pos`` lies inside a short parenthesis: opened after ``start``, within ``reach``
    characters before ``pos``, and closed within ``reach`` characters after it.

    A period inside "(n = 12, vs. 8 in controls.)" does not end the enclosing sentence. An
    unbalanced "(" (typo, list marker "1)") must not swallow the rest of the text, hence the
    limits on both sides.
    """
    depth = 0
    for ch in text[max(start, pos - reach) : pos]:
        if ch in "([":
            depth += 1
        elif ch in ")]" and depth > 0:
            depth -= 1
    if depth == 0:
        return False
    # An enclosing bracket must close ahead: a ")" not matched by a "(" opened after ``pos``.
    rel = 0
    for ch in text[pos : pos + reach]:
        if ch in "([":
            rel += 1
        elif ch in ")]":
            rel -= 1
            if rel < 0:
                return True
        elif ch == "\n":
            return False
    return False


def _is_ordinary_word(word: str) -> bool:
    """A plain lower-case word ("patients", "placebo"), which cannot be an abbreviation."""
    return len(word) >= 3 and word.isalpha() and word.islower() and word not in NON_FINAL_ABBREVIATIONS


def _starts_sentence(next_word: str) -> bool:
    """Whether the following word can open a sentence.

    Capitalised words, numbers, brackets and quotes can; so can lower-case names with a capital
    or digit inside ("tPA", "mRNA", "p53", "eGFR"), which begin sentences in biomedical prose.
    """
    ch = next_word[0]
    if ch.isupper() or ch.isdigit() or ch in "([\"'“‘<>±-–":
        return True
    if ch.islower():
        return any(c.isupper() or c.isdigit() for c in next_word[1:4])
    return not ch.isalpha()


def _is_boundary(text: str, seg_start: int, mark_start: int, mark_end: int, sent_start: int) -> bool:
    """Decide whether the punctuation at ``text[mark_start:mark_end]`` ends a sentence."""
    mark = text[mark_start:mark_end]
    m_next = _NEXT_WORD.match(text, mark_end)
    if m_next is None:
        return False  # only whitespace follows: the segment end handles it
    next_word = m_next.group(1)
    if mark[0] in "?!":
        return True
    m_prev = _WORD_BEFORE.search(text, sent_start, mark_start)
    prev = m_prev.group(1) if m_prev else ""
    # Strip opening punctuation of the previous token: "(vs." -> "vs".
    bare = prev.lstrip("([{\"'“‘").lower()
    closing = len(mark.rstrip(".?!")) > 0  # ".)" or '."': the period is inside a bracket/quote
    # Inside a short parenthesis: "(i.v. MgSO4)", "(P. Howlin, R. K. Gordon, 2007)", "(s.d. 6.9%)";
    # but an ordinary word, a period and a capitalised word is a boundary even there, since an
    # unclosed bracket (a typo: "events (CVAE) (as defined by ... was demonstrated. Phase 3")
    # is more common than a sentence inside brackets.
    strong = _is_ordinary_word(bare) and next_word[:1].isupper() and next_word[1:2].islower()
    if not strong and _opens_unclosed_paren(text, sent_start, mark_end):
        return False
    acronym = len(bare) >= 2 and bare.isalpha() and prev.strip("([{\"'“‘").isupper()  # "MS", "NO", "CA"
    if not closing and not acronym:
        if bare in NON_FINAL_ABBREVIATIONS or _GLUED_VS.search(bare):  # "79.9%vs. 53.3%"
            return False
        if bare in AMBIGUOUS_ABBREVIATIONS:
            return next_word[0].isupper()
        if bare in _NUMBER_ABBREVIATIONS and next_word[0].isdigit():
            return False
        # Numbered list marker opening a sentence or following a colon: "2. Patients", "were: 1. Drinking"
        if m_prev is not None and _LIST_MARKER.match(prev + "."):
            before = text[sent_start : m_prev.start()].rstrip()
            if not before or before.endswith(":"):
                return False
        # Single capital letter: an initial or a genus ("H. pylori", "E. coli") when a
        # lower-case word follows; otherwise "vitamin D." / "hepatitis B." end sentences.
        if len(bare) == 1 and bare.isalpha():
            return _starts_sentence(next_word) and not next_word[0].islower()
        # Dotted abbreviations ("i.v.", "U.S.", "s.d.") end a sentence only before a capital.
        if _DOTTED.match(bare.rstrip(".")):
            return next_word[0].isupper()
    if _starts_sentence(next_word):
        return True
    # A lower-case word after a period: a boundary only after an ordinary word, since the
    # period of an abbreviation ("approx. five", "s.c. injection") is the usual cause.
    if closing:
        return False
    word = bare.rstrip(".,;:)]'\"")
    return _is_ordinary_word(word) or (next_word in SENTENCE_OPENERS and len(word) > 1)


def split_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text[start:end]``, stripped of surrounding whitespace."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    for seg_start, seg_end in _segments(text, start, end):
        sent_start = seg_start
        for m in _CANDIDATE.finditer(text, seg_start, seg_end):
            if _is_boundary(text, seg_start, m.start(), m.end(), sent_start):
                spans.append((sent_start, m.end()))
                nxt = _NEXT_WORD.match(text, m.end())
                sent_start = nxt.start(1) if nxt else seg_end
        if sent_start < seg_end:
            spans.append((sent_start, seg_end))
    return [s for s in (_strip(text, a, b) for a, b in spans) if s[1] > s[0]]


def split(text: str) -> list[str]:
    """The sentences of ``text`` as strings."""
    return [text[a:b] for a, b in split_spans(text)]


def _segments(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Pieces of ``text[start:end]`` between line breaks (a line break always ends a sentence)."""
    pos = start
    for m in _NEWLINE.finditer(text, start, end):
        yield pos, m.start()
        pos = m.end()
    yield pos, end


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b
