"""An answer: one reranked citation as the physician sees it (paper section 9).

"For each abstract in our reranked list of citations, our system produces an answer by
combining the title of the abstract and the top three outcome sentences (in the order they
appeared in the abstract)." An ``Answer`` adds what the physician needs to weigh it: PMID,
year, journal, evidence grade, the score and its components, and the reasons behind them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ebm.scoring.contribution import Contribution
from ebm.scoring.ebm_score import EbmScore
from ebm.scoring.lexical import LexicalScore
from ebm.scoring.soe import journal_name
from ebm.scoring.term import TermScore
from ebm.scoring.topical import TopicalScore

if TYPE_CHECKING:
    from extractors.annotate import Annotation

OUTCOMES_PER_ANSWER = 3


@dataclass(frozen=True)
class OutcomeSentence:
    sentence: int  # index into the citation's sentences (0 = title)
    text: str
    probability: float

    def to_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "text": self.text, "probability": round(self.probability, 4)}


@dataclass(frozen=True)
class Answer:
    rank: int
    pmid: str
    score: float  # the ranking score (see ``ranker``)
    ranker: str  # ebm-plus, paper-ebm, combination, term or retrieval (ebm.scoring.rankers)
    ebm: EbmScore
    term: TermScore
    title: str | None
    outcomes: tuple[OutcomeSentence, ...]  # the top three, in abstract order
    grade: str | None
    study_class: str | None
    year: int | None
    journal: str | None
    retrieval_rank: int  # position in the retrieved list (1-based), before reranking
    match: TopicalScore | None = None  # S_match parts (EBM+)
    lexical: LexicalScore | None = None  # BM25 of the question's words over the candidates
    retrieval: float | None = None  # the source's retrieval score (None: only the rank is known)
    ranking: dict[str, float] = field(default_factory=dict)  # what each feature added to ``score``
    ranker_description: str = ""

    @property
    def explanation(self) -> tuple[Contribution, ...]:
        extra = self.match.contributions if self.match is not None else ()
        return self.ebm.contributions + extra

    def components(self) -> dict[str, Any]:
        """The paper's components (issue 5's JSON: pico, soe, task); EBM+'s are beside them."""
        return self.ebm.components()

    def to_dict(self, explanation: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "rank": self.rank,
            "pmid": self.pmid,
            "score": round(self.score, 6),
            "ranker": self.ranker,
            "ebm": round(self.ebm.total, 6),
            "term": round(self.term.score, 6),
            "components": self.components(),
            "weights": {"l1": self.ebm.weights.l1, "l2": self.ebm.weights.l2, "l3": self.ebm.weights.l3},
            "title": self.title,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "grade": self.grade,
            "study_class": self.study_class,
            "year": self.year,
            "journal": self.journal,
            "retrieval_rank": self.retrieval_rank,
            "match": self.match.to_dict() if self.match is not None else None,
            "lexical": round(self.lexical.score, 6) if self.lexical is not None else None,
            "retrieval_score": None if self.retrieval is None else round(self.retrieval, 6),
            "ranking": {k: round(v, 6) for k, v in self.ranking.items()},
        }
        if explanation:
            d["explanation"] = [c.to_dict() for c in self.explanation]
            d["term_matches"] = self.term.to_dict()["matches"]
            if self.lexical is not None:
                d["lexical_matches"] = self.lexical.to_dict()["matches"]
        return d


def top_outcome_sentences(ann: Annotation, n: int = OUTCOMES_PER_ANSWER) -> tuple[OutcomeSentence, ...]:
    return tuple(OutcomeSentence(o.sentence, o.text, o.probability) for o in ann.top_outcomes(n))


def make_answer(
    rank: int,
    score: float,
    ranker: str,
    ann: Annotation,
    ebm_score: EbmScore,
    term: TermScore,
    retrieval_rank: int,
    *,
    match: TopicalScore | None = None,
    lexical: LexicalScore | None = None,
    retrieval: float | None = None,
    ranking: dict[str, float] | None = None,
    ranker_description: str = "",
) -> Answer:
    cit = ann.citation
    return Answer(
        rank=rank,
        pmid=cit.pmid,
        score=score,
        ranker=ranker,
        ebm=ebm_score,
        term=term,
        title=cit.title,
        outcomes=top_outcome_sentences(ann),
        grade=ebm_score.soe.grade,
        study_class=ebm_score.soe.study_class,
        year=cit.year,
        journal=journal_name(cit),
        retrieval_rank=retrieval_rank,
        match=match,
        lexical=lexical,
        retrieval=retrieval,
        ranking=dict(ranking or {}),
        ranker_description=ranker_description,
    )
