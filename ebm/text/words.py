"""The one word normaliser of the scorer: the words of a text as the question and the abstracts
are compared (S_term, the lexical BM25 of EBM+, the partial string matches of S_PICO and
S_match).

Tokens are normalised by ``ebm.concepts.normalize`` (as concept keys are: "ischaemia" and
"ischemia" meet), case-folded; numbers, one-character tokens and the rules directory's stop
words (``rules/stopwords_en.txt``) are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ebm.concepts.normalize import tokenize


@dataclass(frozen=True)
class Words:
    stopwords: frozenset[str]
    _stop: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stop", frozenset(w.casefold() for w in self.stopwords))

    def words(self, text: str) -> list[str]:
        """Normalised content words of ``text`` in order (repeats kept)."""
        out = []
        for segment in tokenize(text):
            for tok in segment:
                w = tok.norm.casefold()
                if len(w) > 1 and not w.isdigit() and w not in self._stop:
                    out.append(w)
        return out

    def distinct(self, text: str, drop: Iterable[str] = ()) -> frozenset[str]:
        """The set of ``words(text)``, without ``drop``."""
        return frozenset(self.words(text)) - frozenset(drop)
