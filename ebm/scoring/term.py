"""The term-based reranker (paper section 7): question-term overlap weighted by outcome probability.

"A term-based reranker that computes term overlap between the natural language question and
the citation (i.e., counted words shared between the two strings). Each term match was
weighted by the outcome score of the sentence from which it came." Here:

    S_term = sum over the distinct question terms t found in the citation of
             max over the sentences s containing t of P(s is an outcome)

Terms are the question's words (the frame's ``question``; without one, the words of its
slots), normalised as the concept layer normalises them (case, plurals, British spellings)
and without stopwords. Sentence probabilities come from the outcome extractor (every
sentence is scored, the title included); a term counts once, at its best sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.frame import Frame
from ebm.text.words import Words

if TYPE_CHECKING:
    from extractors.annotate import Annotation


@dataclass(frozen=True)
class TermMatch:
    term: str
    sentence: int
    probability: float


@dataclass(frozen=True)
class TermScore:
    score: float
    terms: tuple[str, ...]  # the question terms looked for
    matches: tuple[TermMatch, ...]  # those found, each at its best sentence

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 6),
            "matches": [
                {"term": m.term, "sentence": m.sentence, "probability": round(m.probability, 4)}
                for m in self.matches
            ],
        }


def question_terms(frame: Frame, words: Words) -> tuple[str, ...]:
    """The distinct terms of the frame's question, or of its slots when it has no question."""
    if frame.question:
        text = frame.question
    else:
        parts = [frame.problem or "", *frame.co_problems, *frame.population, *frame.intervention]
        parts += [*frame.comparison, frame.outcome or ""]
        text = " ; ".join(p for p in parts if p)
    return tuple(dict.fromkeys(words.words(text)))


def term_score(terms: tuple[str, ...], ann: Annotation, words: Words) -> TermScore:
    probability = {o.sentence: o.probability for o in ann.outcomes}
    best: dict[str, tuple[float, int]] = {}
    wanted = set(terms)
    for s in ann.document.sentences:
        p = probability.get(s.index, 0.0)
        for w in set(words.words(s.text)) & wanted:
            if w not in best or p > best[w][0]:
                best[w] = (p, s.index)
    matches = tuple(TermMatch(t, best[t][1], best[t][0]) for t in terms if t in best)
    return TermScore(sum((m.probability for m in matches), 0.0), terms, matches)
