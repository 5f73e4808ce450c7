"""Abbreviations defined in the text ("acute otitis media (AOM)"), found with scispacy.

scispacy's ``AbbreviationDetector`` implements Schwartz & Hearst (2003): a parenthesised
short form after its long form (or the reverse), then every occurrence of the short form in
the document. We reuse its candidate filter and its matching algorithm (``filter_matches``,
``find_abbreviation``) but enumerate the bracket candidates and the later occurrences with a
plain scan of the token texts instead of its two spaCy ``Matcher`` passes, which were the most
expensive step of the whole text pipeline (about 1.2 ms of a 2.5 ms abstract). The results are
the same as the detector's (tests/test_text_abbreviations.py checks it on real abstracts).

``expand_abbreviations(doc)`` is what the concept matcher uses: for every occurrence of a
defined short form, the token span and the long form to match instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from scispacy.abbreviation import filter_matches, find_abbreviation
from spacy.tokens import Doc as SpacyDoc
from spacy.tokens import Span

from ebm.text.document import AbbreviationSpan, Document

# filter_matches drops candidates of more than 8 tokens between the brackets
_MAX_INSIDE = 8


class Expansion(NamedTuple):
    """A short form occurrence (token indices into ``Document.tokens``) and its long form."""

    start: int
    end: int
    long_form: str


def _clean(span: Span) -> str:
    return " ".join(span.text.split())


def _is_definition(sdoc: SpacyDoc, short: Span, long_form: str) -> bool:
    """Whether this short form sits in a definition "long form (SF)" or "SF (long form)".

    Checked on the text rather than the detector's long-form span, because a short form
    defined twice (in the title and again in the abstract) has only one long-form span.
    """
    n = len(long_form.split())
    lf = long_form.lower()
    if short.start >= 1 and sdoc[short.start - 1].text in "([":
        before = sdoc[max(short.start - 1 - 3 * n, 0) : short.start - 1]
        if " ".join(before.text.lower().split()).endswith(lf):
            return True
    if short.end < len(sdoc) and sdoc[short.end].text in "([":
        after = sdoc[short.end + 1 : short.end + 1 + 3 * n]
        if " ".join(after.text.lower().split()).startswith(lf):
            return True
    return False


class AbbreviationFinder:
    """Schwartz & Hearst abbreviation definitions and their uses, over one spaCy ``Doc``."""

    def find(
        self, sdoc: SpacyDoc, token_index: Sequence[int], words: Sequence[str] | None = None
    ) -> tuple[dict[str, str], list[AbbreviationSpan]]:
        """Definitions (short -> long) and every occurrence of a short form.

        ``token_index`` maps a spaCy token index to its index in ``Document.tokens`` (-1 for
        whitespace tokens, which the Document drops); ``words`` are the token texts, if known.
        """
        if words is None:
            words = [t.text for t in sdoc]
        definitions_found = self.definitions(sdoc, words)
        if not definitions_found:
            return {}, []
        where: dict[str, list[int]] = defaultdict(list)
        for i, w in enumerate(words):
            where[w].append(i)
        definitions: dict[str, str] = {}
        spans: list[AbbreviationSpan] = []
        for long_span, short in definitions_found:
            long_form = _clean(long_span)
            short_words = list(words[short.start : short.end])
            n = len(short_words)
            short_form = short.text
            definitions[short_form] = long_form
            for i in where.get(short_words[0], ()):
                if list(words[i : i + n]) != short_words:
                    continue
                start, end = token_index[i], token_index[i + n - 1] + 1
                if start < 0 or end <= start:
                    continue
                is_def = _is_definition(sdoc, sdoc[i : i + n], long_form)
                spans.append(AbbreviationSpan(start, end, short_form, long_form, is_def))
        spans.sort()
        return definitions, spans

    @staticmethod
    def definitions(sdoc: SpacyDoc, words: Sequence[str]) -> list[tuple[Span, Span]]:
        """(long form, short form) spans, first definition of each form, as scispacy finds them.

        Candidates are what scispacy's matcher ``( + )`` yields and ``filter_matches`` keeps (at
        most 8 tokens inside the brackets); a long or short form already defined is skipped, as
        in ``AbbreviationDetector.find_matches_for``.
        """
        inside: list[tuple[int, int, int]] = []
        for i, w in enumerate(words):
            if w == "(":
                for j in range(i + 2, min(i + 2 + _MAX_INSIDE, len(words))):
                    if words[j] == ")":
                        inside.append((0, i + 1, j))
        if not inside:
            return []
        seen_long: set[str] = set()
        seen_short: set[str] = set()
        found: list[tuple[Span, Span]] = []
        for long_candidate, short_candidate in filter_matches(inside, sdoc):
            short, long = find_abbreviation(long_candidate, short_candidate)
            if long is None or long.text in seen_long or short.text in seen_short:
                continue
            seen_long.add(long.text)
            seen_short.add(short.text)
            found.append((long, short))
        return found


def expand_abbreviations(doc: Document, include_definitions: bool = False) -> list[Expansion]:
    """Every occurrence of a short form defined in ``doc``, with the long form to match instead.

    The short form inside its own definition ("acute otitis media (AOM)") is left out unless
    ``include_definitions``: its long form is right beside it and is matched as text anyway.
    """
    return [
        Expansion(a.start, a.end, a.long_form)
        for a in doc.abbreviation_spans
        if include_definitions or not a.definition
    ]


def long_form_at(doc: Document, start: int, end: int) -> str | None:
    """The long form when tokens ``start..end-1`` are exactly a defined short form, else None."""
    for a in doc.abbreviation_spans:
        if a.start == start and a.end == end:
            return a.long_form
        if a.start > start:
            break
    return None
