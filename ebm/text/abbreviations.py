"""Abbreviations defined in the text ("acute otitis media (AOM)"), found with scispacy.

scispacy's ``AbbreviationDetector`` implements Schwartz & Hearst (2003): a parenthesised
short form after its long form (or the reverse), then every later occurrence of the short
form in the document. We call its matcher directly rather than reading ``doc._.abbreviations``,
whose list default is shared between documents by spaCy's extension mechanism.

``expand_abbreviations(doc)`` is what the concept matcher uses: for every occurrence of a
defined short form, the token span and the long form to match instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

from scispacy.abbreviation import AbbreviationDetector, filter_matches
from spacy.language import Language
from spacy.tokens import Doc as SpacyDoc
from spacy.tokens import Span

from ebm.text.document import AbbreviationSpan, Document


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

    def __init__(self, nlp: Language) -> None:
        self._detector = AbbreviationDetector(nlp)

    def find(
        self, sdoc: SpacyDoc, token_index: Sequence[int]
    ) -> tuple[dict[str, str], list[AbbreviationSpan]]:
        """Definitions (short -> long) and every occurrence of a short form.

        ``token_index`` maps a spaCy token index to its index in ``Document.tokens`` (-1 for
        whitespace tokens, which the Document drops).
        """
        matches = self._detector.matcher(sdoc)
        inside = [(m, start + 1, end - 1) for m, start, end in matches]  # drop the brackets
        candidates = filter_matches(inside, sdoc)
        if not candidates:
            return {}, []
        with warnings.catch_warnings():
            # scispacy runs its per-document matcher even when it holds no pattern (W036).
            warnings.simplefilter("ignore", UserWarning)
            found = self._detector.find_matches_for(candidates, sdoc)
        definitions: dict[str, str] = {}
        spans: list[AbbreviationSpan] = []
        for long_span, shorts in found:
            long_form = _clean(long_span)
            for short in sorted(shorts, key=lambda s: s.start):
                start, end = token_index[short.start], token_index[short.end - 1] + 1
                if start < 0 or end <= start:
                    continue
                short_form = short.text
                definitions.setdefault(short_form, long_form)
                is_def = _is_definition(sdoc, short, long_form)
                spans.append(AbbreviationSpan(start, end, short_form, definitions[short_form], is_def))
        spans.sort()
        return definitions, spans


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
