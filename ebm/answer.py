"""An answer: one reranked citation as the physician sees it (paper section 9).

"For each abstract in our reranked list of citations, our system produces an answer by
combining the title of the abstract and the top three outcome sentences (in the order they
appeared in the abstract)." An ``Answer`` adds what the physician needs to weigh it: PMID,
year, journal, evidence grade, the score and its components, and the reasons behind them.

Question-aware (issue 14): ``findings`` are what the study found for the frame's intervention
vs comparison on its outcome (``extractors.findings``), shown before the outcome sentences; the
design, sample size and human/animal (issue 13) come from the annotation, summed up in
``evidence_line`` ("RCT (predicted, 0.97) · n = 120 · grade A").
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
    from ebm.frame import Frame
    from extractors.annotate import Annotation
    from extractors.findings import Finding, FindingsModel, OutcomeWords
    from extractors.sample_size import SampleSize

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
    findings: tuple[Finding, ...] = ()  # for the frame's I vs C on O, best first (issue 14)
    design: dict[str, Any] | None = None  # {label, probability, probabilities, source} (issue 13)
    sample_size: SampleSize | None = None
    human: bool | None = None
    evidence_line: str = ""  # "RCT (predicted, 0.97) · n = 120 · grade A"

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
            "findings": [f.to_dict() for f in self.findings],
            "design": self.design,
            "sample_size": None if self.sample_size is None else self.sample_size.to_dict(),
            "human": self.human,
            "evidence_line": self.evidence_line,
        }
        if explanation:
            d["explanation"] = [c.to_dict() for c in self.explanation]
            d["term_matches"] = self.term.to_dict()["matches"]
            if self.lexical is not None:
                d["lexical_matches"] = self.lexical.to_dict()["matches"]
        return d


def top_outcome_sentences(ann: Annotation, n: int = OUTCOMES_PER_ANSWER) -> tuple[OutcomeSentence, ...]:
    return tuple(OutcomeSentence(o.sentence, o.text, o.probability) for o in ann.top_outcomes(n))


def frame_findings(
    ann: Annotation, frame: Frame, model: FindingsModel, outcome_words: OutcomeWords | None
) -> tuple[tuple[Finding, ...], float | None]:
    """The findings shown for ``frame`` (at least the model's minimum confidence, best first)
    and the question-aware S_outcome: the best finding's confidence, 0 when the abstract reports
    none, None when the frame has no intervention (then there is nothing to compare).

    One extraction serves both: the S_outcome is the best sentence at any confidence, the
    ``findings`` column ``ebm.scoring.rankers.candidate_columns`` gives the rankers (and their
    training in ``scripts/eval_rankers.py``)."""
    from extractors.findings import extract_findings

    if not frame.intervention:
        return (), None
    found = extract_findings(
        ann.document,
        ", ".join(frame.intervention),
        ", ".join(frame.comparison),
        frame.outcome or "",
        model,
        prior={o.sentence: o.probability for o in ann.outcomes},
        concepts=ann.concepts,
        outcome_words=outcome_words,
        min_confidence=0.0,
    )
    shown = tuple(f for f in found if f.confidence >= model.min_confidence)
    return shown, (float(found[0].confidence) if found else 0.0)


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
    findings: tuple[Finding, ...] = (),
) -> Answer:
    from extractors.evidence import evidence_line

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
        findings=findings,
        design=getattr(ann, "design", None),
        sample_size=getattr(ann, "sample_size", None),
        human=getattr(ann, "human", None),
        evidence_line=evidence_line(ann.evidence),
    )
