"""The processed-text model shared by the concept layer and the extractors.

A citation's title and abstract become one ``Document``: a single string (title, then
each abstract section), split into sentences that keep their section label, NLM category
and discourse position. Offsets are character offsets into ``Document.text``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from ebm.errors import DataError


class UnprocessableText(DataError):
    """A citation the text pipeline cannot process (a title and abstract beyond spaCy's length
    limit, error E088): a question skips it with a note, ``ebm annotate`` reports it."""

# Discourse position used by extractors for unstructured abstracts (and kept for structured ones).
Position = Literal["title", "first", "middle", "last"]


@dataclass(frozen=True)
class Sentence:
    index: int  # 0 is the title when there is one
    start: int
    end: int
    text: str
    section_label: str | None  # "TITLE" for the title; the printed label; None if unstructured
    nlm_category: str | None  # BACKGROUND/OBJECTIVE/METHODS/RESULTS/CONCLUSIONS/UNASSIGNED or None
    position: Position  # title, first two abstract sentences, middle, last two
    section_index: int  # -1 for the title, else index of the abstract section
    # Tokens of this sentence are ``Document.tokens[token_start:token_end]``.
    token_start: int = 0
    token_end: int = 0


@dataclass(frozen=True)
class Token:
    start: int
    end: int
    text: str
    sentence: int


class AbbreviationSpan(NamedTuple):
    """One occurrence of an abbreviation defined in the document, as token indices."""

    start: int  # first token of the short form
    end: int  # one past its last token
    short_form: str
    long_form: str
    definition: bool  # True for the short form inside its own definition "(AOM)"


@dataclass
class Document:
    text: str
    sentences: list[Sentence]
    tokens: list[Token]
    # short form -> long form, for abbreviations defined in the text ("AOM" -> "acute otitis media")
    abbreviations: dict[str, str] = field(default_factory=dict)
    pmid: str | None = None
    # every occurrence of a defined short form (see ebm.text.abbreviations.expand_abbreviations)
    abbreviation_spans: list[AbbreviationSpan] = field(default_factory=list)
    # per-document memo for derived data (e.g. negation triggers); not part of equality
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def sentence_at(self, offset: int) -> Sentence | None:
        for s in self.sentences:
            if s.start <= offset < s.end:
                return s
        return None

    def sentence_tokens(self, sentence: Sentence | int) -> list[Token]:
        """The tokens of one sentence (given as a ``Sentence`` or its index)."""
        s = self.sentences[sentence] if isinstance(sentence, int) else sentence
        return self.tokens[s.token_start : s.token_end]

    def span_text(self, start: int, end: int) -> str:
        """The document text covered by tokens ``start..end-1``."""
        return self.text[self.tokens[start].start : self.tokens[end - 1].end]
