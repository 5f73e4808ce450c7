"""The processed-text model shared by the concept layer and the extractors.

A citation's title and abstract become one ``Document``: a single string (title, then
each abstract section), split into sentences that keep their section label, NLM category
and discourse position. Offsets are character offsets into ``Document.text``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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


@dataclass(frozen=True)
class Token:
    start: int
    end: int
    text: str
    sentence: int


@dataclass
class Document:
    text: str
    sentences: list[Sentence]
    tokens: list[Token]
    # short form -> long form, for abbreviations defined in the text ("AOM" -> "acute otitis media")
    abbreviations: dict[str, str] = field(default_factory=dict)
    pmid: str | None = None

    def sentence_at(self, offset: int) -> Sentence | None:
        for s in self.sentences:
            if s.start <= offset < s.end:
                return s
        return None
