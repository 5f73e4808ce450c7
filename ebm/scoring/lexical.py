"""S_lexical: BM25 of the question's words over the candidates themselves (beyond the paper).

Concepts miss words the concept layer does not know ("chiropractic", "nomograms" in another
sense, a drug name without a MeSH entry); the words are still there. BM25 (Robertson et al.,
k1 = 1.2, b = 0.75) of the frame's question terms (``ebm.scoring.term.question_terms``:
normalised words without stopwords) over title and abstract, the title counted five times as
the local store's index weighs it. Document frequencies come from the candidate pool itself, so
the score needs nothing but the citations (it works the same for PubMed and the local store)
and a word every candidate contains (the query's own words) weighs almost nothing: what counts
is what sets a candidate apart from the others retrieved with it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.text.words import Words

if TYPE_CHECKING:
    from extractors.annotate import Annotation

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 5


@dataclass(frozen=True)
class LexicalScore:
    score: float
    matches: tuple[tuple[str, float], ...]  # (term, its BM25 part), best first

    def to_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 6), "matches": [[t, round(s, 4)] for t, s in self.matches]}


def term_frequencies(ann: Annotation, words: Words) -> Counter[str]:
    """Word counts of the citation, title words counted ``TITLE_WEIGHT`` times."""
    tf: Counter[str] = Counter()
    for s in ann.document.sentences:
        weight = TITLE_WEIGHT if s.position == "title" else 1
        for w in words.words(s.text):
            tf[w] += weight
    return tf


def lexical_scores(
    terms: Sequence[str], annotations: Sequence[Annotation], words: Words
) -> list[LexicalScore]:
    """BM25 of ``terms`` for each candidate, with the pool's statistics."""
    tfs = [term_frequencies(a, words) for a in annotations]
    n = len(tfs)
    if n == 0:
        return []
    lengths = [sum(tf.values()) for tf in tfs]
    avg = sum(lengths) / n or 1.0
    wanted = list(dict.fromkeys(terms))
    df = {t: sum(1 for tf in tfs if t in tf) for t in wanted}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in wanted}
    out = []
    for tf, length in zip(tfs, lengths, strict=True):
        norm = K1 * (1 - B + B * length / avg)
        parts = [(t, idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm)) for t in wanted if tf.get(t)]
        parts.sort(key=lambda p: -p[1])
        out.append(LexicalScore(sum(p for _, p in parts), tuple(parts)))
    return out
