"""``ebm ask``: from a PICO frame to ranked answers (paper sections 4, 6-9).

    frame -> query (relaxed until enough hits) -> retrieve N candidates (default 50) from a
    CitationSource -> annotate each (cached on disk) -> S_EBM and S_term -> rerank -> answers

Everything the pipeline uses comes from an explicit ``AskConfig`` (source, rules directory,
weights, ...) and the resources a ``Pipeline`` holds (source, rule tables, concept matcher,
annotator, annotation cache), which tests and the web form can pass in; there is no hidden
global state besides the process-wide caches of the shipped vocabulary and models.

Rankers (``ebm.scoring.rankers``): ``ebm-plus`` (the default: retrieval score, BM25 of the
question's words among the candidates and MeSH-tree PICO matches, weights fitted on the
development questions), the paper's ``paper-ebm`` (S_EBM, alias ``ebm``), ``combination``
(0.8 norm(S_EBM) + 0.2 norm(S_term), alias ``combo``) and ``term``, and ``retrieval`` (the
source's order). Ties keep the retrieval order.

Question-aware answers (issue 14): for a frame with an intervention each candidate's findings
(what it found for I vs C on O) are extracted once; they are shown first in each answer, their
best confidence is the question-aware S_outcome the rankers can read (``findings`` column), and
for therapy and prevention a bottom line collates the top answers' findings
(``AskResult.bottom_line``).

Start-up: the annotator (and with it spaCy, the slowest import) is built only when a candidate
is missing from the annotation cache.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebm.answer import Answer, frame_findings, make_answer
from ebm.citation import Citation
from ebm.errors import InputError
from ebm.frame import Frame
from ebm.frame_concepts import FrameConcepts, frame_concepts
from ebm.mesh import MeshVocabulary
from ebm.query import Retrieval, retrieve
from ebm.scoring.combine import ALPHA
from ebm.scoring.ebm_score import EbmScore, ScoringConfig, Weights, score_citation
from ebm.scoring.lexical import LexicalScore, lexical_scores
from ebm.scoring.rankers import (
    DEFAULT_RANKER,
    RANKERS,
    CandidateScores,
    PlusWeights,
    RankerSettings,
    canonical,
)
from ebm.scoring.rankers import rank as rank_candidates
from ebm.scoring.soe import current_year
from ebm.scoring.term import TermScore, question_terms, term_score
from ebm.scoring.topical import TopicalScore, score_topical
from ebm.source import CitationSource

if TYPE_CHECKING:
    from ebm.bottom_line import BottomLine
    from ebm.concepts.matcher import ConceptMatcher
    from ebm.resources import Resources
    from extractors.annotate import Annotation, Annotator

__all__ = ["RANKERS", "AskConfig", "AskResult", "Explanation", "Pipeline", "ask"]
SOURCES = ("local", "pubmed")
MAX_CANDIDATES = 10_000


@dataclass(frozen=True)
class AskConfig:
    source: str = "local"  # local (the MEDLINE store) or pubmed (E-utilities)
    db: Path | None = None  # the local store (default: the one in the data directory)
    rules: Path | None = None  # an edited copy of rules/ (default: the shipped tables)
    candidates: int = 50  # citations retrieved and reranked
    min_hits: int | None = None  # relax the query until this many match (default: candidates)
    top: int = 10  # answers shown
    ranker: str = DEFAULT_RANKER  # see ebm.scoring.rankers (aliases: ebm, combo)
    weights: Weights = field(default_factory=Weights)  # the paper's l1, l2 (paper-ebm, combination)
    alpha: float = ALPHA  # weight of S_EBM in the combination
    ranker_weights: Path | None = None  # EBM+ weights (TOML); default: the shipped ones
    year: int | None = None  # the "current year" of S_date (default: this year)
    cache: bool = True  # keep annotations on disk
    cache_path: Path | None = None  # default: annotations.sqlite in the data directory
    deadline_s: float | None = 60.0  # a whole question (searches, fetches); None: no deadline
    # bm25: the query ladder; pico: the store's index of stored annotations (ebm.pico_retrieval)
    retrieval: str = "bm25"
    findings: bool = True  # extract each candidate's findings for the frame (issue 14)
    bottom_line_top: int = 10  # answers the bottom line reads (therapy and prevention)

    def __post_init__(self) -> None:
        if self.retrieval not in ("bm25", "pico"):
            raise InputError(f"unknown retrieval {self.retrieval!r} (choose from bm25, pico)")
        if self.source not in SOURCES:
            raise InputError(f"unknown source {self.source!r} (choose from {', '.join(SOURCES)})")
        object.__setattr__(self, "ranker", canonical(self.ranker))
        if not 1 <= self.candidates <= MAX_CANDIDATES:
            raise InputError(f"candidates must be 1..{MAX_CANDIDATES}, got {self.candidates}")
        if self.min_hits is not None and self.min_hits < 0:
            raise InputError(f"min_hits must be at least 0, got {self.min_hits}")
        if self.top < 1:
            raise InputError(f"top must be at least 1, got {self.top}")
        if not 0.0 <= self.alpha <= 1.0:
            raise InputError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.bottom_line_top < 1:
            raise InputError(f"bottom-line top must be at least 1, got {self.bottom_line_top}")
        if self.deadline_s is not None and not 0 < self.deadline_s < float("inf"):
            raise InputError(f"deadline must be a positive number of seconds, got {self.deadline_s}")

    @property
    def hits_wanted(self) -> int:
        """Relax the query while fewer citations than this match (issue 5: N candidates)."""
        return self.candidates if self.min_hits is None else self.min_hits

    def scoring(self) -> ScoringConfig:
        return ScoringConfig(self.weights, self.year if self.year is not None else current_year())

    def ranker_settings(self) -> RankerSettings:
        plus = PlusWeights.read(self.ranker_weights) if self.ranker_weights is not None else None
        return RankerSettings(self.weights, self.alpha, plus)


@dataclass
class Timings:
    """Seconds spent in each step of one question."""

    retrieve: float = 0.0
    fetch: float = 0.0
    annotate: float = 0.0
    score: float = 0.0  # includes the findings
    findings: float = 0.0  # part of ``score``: extracting the findings, the bottom line

    @property
    def total(self) -> float:
        return self.retrieve + self.fetch + self.annotate + self.score

    def to_dict(self) -> dict[str, float]:
        d = {k: round(v, 4) for k, v in vars(self).items()}
        d["total"] = round(self.total, 4)
        return d


@dataclass(frozen=True)
class AskResult:
    frame: Frame
    concepts: FrameConcepts
    retrieval: Retrieval
    answers: tuple[Answer, ...]  # every candidate, reranked
    missing: tuple[str, ...]  # retrieved PMIDs the source could not return
    cached: int  # annotations read from the cache
    timings: Timings
    # retrieved citations the pipeline could not process, each with why (skipped, not ranked)
    skipped: tuple[str, ...] = ()
    # the top answers' findings collated (therapy and prevention with an intervention), else None
    bottom_line: BottomLine | None = None
    understood_as: str | None = None  # "Understood as: ..." when the question came as words

    def top(self, n: int) -> tuple[Answer, ...]:
        return self.answers[:n]

    def to_dict(self, top: int | None = None, explanation: bool = False) -> dict[str, Any]:
        r = self.retrieval
        answers = self.answers if top is None else self.answers[:top]
        return {
            "frame": self.frame.to_dict(),
            "query": r.query,
            "relaxations": list(r.relaxations),
            "query_notes": list(r.notes),  # frame parts the query could not search
            "hits": r.result.count,
            "attempts": [
                {"query": a.query, "relaxations": list(a.relaxations), "hits": a.count, "error": a.error}
                for a in r.attempts
            ],
            "candidates": len(self.answers),
            "missing": list(self.missing),
            "skipped": list(self.skipped),
            "frame_concepts": self.concepts.to_dict(),
            "bottom_line": None if self.bottom_line is None else self.bottom_line.to_dict(),
            **({"understood_as": self.understood_as} if self.understood_as is not None else {}),
            "results": [a.to_dict(explanation) for a in answers],
            "timings": self.timings.to_dict(),
        }


@dataclass(frozen=True)
class Explanation:
    """Everything behind one citation's score for one frame (``ebm explain``)."""

    frame: Frame
    concepts: FrameConcepts
    annotation: Annotation
    ebm: EbmScore
    term: TermScore
    answer: Answer
    match: TopicalScore | None = None
    plus: PlusWeights | None = None  # the EBM+ weights the features would be ranked with

    def to_dict(self) -> dict[str, Any]:
        a = self.annotation
        d = {
            "frame": self.frame.to_dict(),
            "frame_concepts": self.concepts.to_dict(),
            "pmid": a.citation.pmid,
            "answer": self.answer.to_dict(explanation=True),
            "formula": self.ebm.formula(),
            "extracted": {
                "primary_problem": a.primary_problem.to_dict() if a.primary_problem else None,
                "problems": [c.to_dict() for c in a.problems[:5]],
                "population": [c.to_dict() for c in a.population[:3]],
                "interventions": [c.to_dict() for c in a.interventions[:8]],
                "outcomes": [o.to_dict() for o in a.outcomes[:3]],
            },
        }
        if self.plus is not None:
            d["ebm_plus_weights"] = dict(self.plus.weights)
        return d


_LOADED: dict[tuple[str, str], Resources] = {}


def default_resources(rules: Path | None) -> Resources:
    """The ``Resources`` of ``rules`` (default: shipped) for ``AskConfig``'s entry points, loaded
    once per process and rules directory; tables edited on disk are loaded (and validated) anew."""
    from ebm.resources import Resources, shipped_rules_dir

    d = Path(rules) if rules is not None else shipped_rules_dir()
    if not d.is_dir():
        raise InputError(f"rules directory not found: {d}")
    files = sorted(f for f in d.iterdir() if f.is_file())
    stamp = "|".join(f"{f.name}:{f.stat().st_mtime_ns}:{f.stat().st_size}" for f in files)
    key = (str(d.resolve()), stamp)
    if key not in _LOADED:
        _LOADED[key] = Resources.load(d)
    return _LOADED[key]


def retrieval_scores(ranked: Sequence[str], scores: dict[str, float | None] | None) -> list[float]:
    """The retrieval score of each candidate (in retrieval order): the source's score when it
    gave one (a hit without a text score ranks after all scored ones: 0), else from the rank
    alone (n, n - 1, ..., 1)."""
    n = len(ranked)
    if not scores or all(scores.get(p) is None for p in ranked):
        return [float(n - i) for i in range(n)]
    return [float(scores.get(p) or 0.0) for p in ranked]


class Pipeline:
    """The resources one or many questions share; build once, ask many times."""

    def __init__(
        self,
        config: AskConfig | None = None,
        *,
        source: CitationSource | None = None,
        resources: Resources | None = None,
        annotator: Annotator | None = None,
    ) -> None:
        """``resources``: the rules directory's tables, vocabulary and models (default: the
        annotator's, else ``default_resources(config.rules)``, validated now: a broken table
        stops here)."""
        self.config = config or AskConfig()
        if resources is None and annotator is not None and self.config.rules is None:
            resources = annotator.resources  # the annotator's own, already loaded
        if resources is None:
            resources = default_resources(self.config.rules)
        if annotator is not None and annotator.resources is not resources:
            # annotations and scores must come from the same tables (one evidence grade)
            raise ValueError("the annotator was built with other resources than the pipeline's")
        self.resources = resources
        self.rules = resources.rules
        self.ranker_settings = self.config.ranker_settings()
        self._source = source
        self._owns_source = source is None
        self._annotator = annotator
        self._cache: Any = None
        self.skipped: list[str] = []  # citations the last question could not process, and why
        self.last_findings_s = 0.0  # seconds the last findings extraction took

    # --- resources, opened on first use -------------------------------------------------------

    @property
    def vocabulary(self) -> MeshVocabulary:
        return self.resources.vocabulary

    @property
    def source(self) -> CitationSource:
        if self._source is None:
            if self.config.source == "pubmed":
                from ebm.pubmed import PubMedSource

                self._source = PubMedSource()
            else:
                from ebm.store import open_store

                self._source = open_store(self.config.db, vocabulary=lambda: self.resources.vocabulary)
        return self._source

    @property
    def matcher(self) -> ConceptMatcher:
        return self.resources.matcher

    @property
    def annotator(self) -> Annotator:
        """Built on first use: it loads the text pipeline (spaCy), which a question whose
        candidates are all in the annotation cache never needs."""
        if self._annotator is None:
            from extractors.annotate import Annotator

            self._annotator = Annotator(self.resources)
        return self._annotator

    @property
    def cache(self) -> Any:  # AnnotationCache | None
        if self._cache is None and self.config.cache:
            from ebm.annotation_cache import AnnotationCache, annotation_version, default_cache_path

            path = self.config.cache_path or default_cache_path()
            self._cache = AnnotationCache(path, annotation_version(self.resources))
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
        if self._owns_source and self._source is not None and hasattr(self._source, "close"):
            self._source.close()  # type: ignore[attr-defined]
            self._source = None

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- steps ------------------------------------------------------------------------------------

    def concepts(self, frame: Frame) -> FrameConcepts:
        return frame_concepts(frame, self.matcher, self.vocabulary)

    def annotate(self, citations: Sequence[Citation]) -> tuple[list[Annotation], int]:
        """Annotations of ``citations`` in order, and how many came from the cache. A citation
        the text pipeline cannot process (``UnprocessableText``: a 2 MB abstract) is left out,
        and why is added to ``skipped``: one such record must not break a question."""
        from ebm.store.annotations import stored_for
        from ebm.text.document import UnprocessableText

        cache = self.cache
        found = stored_for(self.source, self.resources, citations)  # ebm corpus annotate's
        rest = [c for c in citations if c.pmid not in found]
        found.update(cache.get_many(rest) if cache is not None and rest else {})
        missing = [c for c in citations if c.pmid not in found]
        fresh = []
        for c in missing:
            try:
                fresh.append(self.annotator.annotate(c))
            except UnprocessableText as exc:
                self.skipped.append(f"skipped: {exc}")
        if cache is not None and fresh:
            cache.put_many(fresh)
        made = {a.citation.pmid: a for a in fresh}
        done = [found.get(c.pmid) or made.get(c.pmid) for c in citations]
        return [a for a in done if a is not None], len(found)

    def score(
        self, frame: Frame, annotations: Sequence[Annotation], fc: FrameConcepts | None = None
    ) -> tuple[list[EbmScore], list[TermScore]]:
        """The paper's S_EBM and S_term of each annotated citation."""
        fc = fc or self.concepts(frame)
        config = self.config.scoring()
        words = self.resources.words
        terms = question_terms(frame, words)
        ebm = [score_citation(fc, a, self.rules, self.vocabulary, config, words=words) for a in annotations]
        return ebm, [term_score(terms, a, words) for a in annotations]

    def candidate_scores(
        self,
        frame: Frame,
        annotations: Sequence[Annotation],
        fc: FrameConcepts | None = None,
        retrieval: Sequence[float] | None = None,
    ) -> list[CandidateScores]:
        """Every score any ranker uses, for each candidate (given in retrieval order);
        ``retrieval``: the source's score of each (default: from the order alone)."""
        fc = fc or self.concepts(frame)
        ebm, term = self.score(frame, annotations, fc)
        words = self.resources.words
        match = [score_topical(fc, a, self.vocabulary, words) for a in annotations]
        lexical: list[LexicalScore] = lexical_scores(question_terms(frame, words), annotations, words)
        n = len(annotations)
        if retrieval is None:
            retrieval = [float(n - i) for i in range(n)]
        elif len(retrieval) != n:
            raise InputError(f"{len(retrieval)} retrieval scores for {n} candidates")
        found = self.findings(frame, annotations)
        return [
            CandidateScores(
                a.citation.pmid,
                ebm[i],
                term[i],
                match[i],
                lexical[i],
                float(retrieval[i]),
                i + 1,
                findings=found[i][0],
                s_outcome_question=found[i][1],
            )
            for i, a in enumerate(annotations)
        ]

    def findings(
        self, frame: Frame, annotations: Sequence[Annotation]
    ) -> list[tuple[tuple[Any, ...], float | None]]:
        """Each candidate's findings for the frame and its question-aware S_outcome
        (``ebm.answer.frame_findings``); none when the frame has no intervention or
        ``config.findings`` is off."""
        if not (self.config.findings and frame.intervention):
            return [((), None)] * len(annotations)
        t = time.perf_counter()
        model, words = self.resources.findings_model, self.resources.outcome_words
        out = [frame_findings(a, frame, model, words) for a in annotations]
        self.last_findings_s = time.perf_counter() - t
        return out

    def bottom_line(
        self, frame: Frame, answers: Sequence[Answer], annotations: Sequence[Annotation]
    ) -> BottomLine | None:
        """The top answers' findings collated, for therapy and prevention frames with an
        intervention (``ebm.bottom_line``); None otherwise."""
        from ebm.bottom_line import AnswerFindings, applies_to, build_bottom_line
        from extractors.evidence import DESIGN_NAMES

        if not (self.config.findings and frame.intervention and applies_to(frame.task.value)):
            return None
        by_pmid = {a.citation.pmid: a for a in annotations}
        read = []
        for ans in answers[: self.config.bottom_line_top]:
            ann = by_pmid[ans.pmid]
            design = ann.evidence.design
            pop = ann.population[0].text if ann.population else None
            read.append(
                AnswerFindings(
                    ans.pmid,
                    ans.findings,
                    grade=ans.grade,
                    design=DESIGN_NAMES.get(design, design) if design else None,
                    sample_size=ann.evidence.sample_size,
                    population=pop,
                )
            )
        return build_bottom_line(
            read,
            ", ".join(frame.intervention),
            ", ".join(frame.comparison),
            frame.outcome or "",
            top=self.config.bottom_line_top,
        )

    def rank(
        self,
        frame: Frame,
        annotations: Sequence[Annotation],
        fc: FrameConcepts | None = None,
        retrieval: Sequence[float] | None = None,
        ranker: str | None = None,
    ) -> list[Answer]:
        """Score and rerank annotated candidates (given in retrieval order) with ``ranker``
        (default: the configured one; the web form picks one per question)."""
        cands = self.candidate_scores(frame, annotations, fc, retrieval)
        r = rank_candidates(ranker or self.config.ranker, cands, self.ranker_settings)
        return [
            make_answer(
                rank,
                r.scores[i],
                r.ranker,
                annotations[i],
                cands[i].ebm,
                cands[i].term,
                retrieval_rank=i + 1,
                match=cands[i].match,
                lexical=cands[i].lexical,
                retrieval=None if retrieval is None else cands[i].retrieval,
                ranking=r.parts[i],
                ranker_description=r.description,
                findings=cands[i].findings,
            )
            for rank, i in enumerate(r.order, start=1)
        ]

    def ask(self, frame: Frame, ranker: str | None = None) -> AskResult:
        """Answer one question (see the module docstring) within ``config.deadline_s``: a
        source that is unreachable or too slow ends it with ``SourceUnavailable``, the deadline
        passing with ``DeadlineExceeded`` (checked before each search, the fetch, annotation)."""
        from ebm.source import check_deadline, deadline

        with deadline(self.config.deadline_s):
            return self._ask(frame, check_deadline, ranker)

    def _ask(self, frame: Frame, check_deadline: Any, ranker: str | None = None) -> AskResult:
        timings = Timings()
        t = time.perf_counter()
        fc = self.concepts(frame)
        if self.config.retrieval == "pico":  # issue 17: match stored PICO elements directly
            from ebm.pico_retrieval import pico_retrieve

            retrieval = pico_retrieve(fc, self.source, self.config.hits_wanted, self.config.candidates)
        else:
            retrieval = retrieve(
                frame,
                self.source,
                min_hits=self.config.hits_wanted,
                limit=self.config.candidates,
                rules=self.rules,
                vocabulary=self.vocabulary,
            )
        timings.retrieve = time.perf_counter() - t
        t = time.perf_counter()
        pmids = list(retrieval.result.pmids)
        check_deadline(f"fetching {len(pmids)} citations")
        citations = self.source.fetch(pmids) if pmids else []
        got = {c.pmid for c in citations}
        missing = tuple(p for p in pmids if p not in got)
        timings.fetch = time.perf_counter() - t
        t = time.perf_counter()
        check_deadline(f"annotating {len(citations)} citations")
        self.skipped = []
        annotations, cached = self.annotate(citations)
        annotated = {a.citation.pmid for a in annotations}
        citations = [c for c in citations if c.pmid in annotated]  # the skipped ones left out
        timings.annotate = time.perf_counter() - t
        t = time.perf_counter()
        scores = self.retrieval_scores(retrieval, [c.pmid for c in citations])
        answers = self.rank(frame, annotations, fc, scores, ranker)
        t_bl = time.perf_counter()
        bottom = self.bottom_line(frame, answers, annotations)
        timings.score = time.perf_counter() - t
        timings.findings = self.last_findings_s + (time.perf_counter() - t_bl)
        return AskResult(
            frame,
            fc,
            retrieval,
            tuple(answers),
            missing,
            cached,
            timings,
            tuple(self.skipped),
            bottom_line=bottom,
        )

    def retrieval_scores(self, retrieval: Retrieval, pmids: Sequence[str]) -> list[float] | None:
        """The source's score of each retrieved candidate, when the source gave scores with its
        result (the local store: BM25); None (rank them by order) otherwise."""
        result = retrieval.result
        if result.scores is None or not pmids:
            return None
        return retrieval_scores(pmids, dict(zip(result.pmids, result.scores, strict=True)))

    def explain(self, pmid: str, frame: Frame) -> Explanation:
        """Every rule and extractor decision behind ``pmid``'s score for ``frame``."""
        pmid = pmid.strip()
        if not pmid.isdigit():
            raise InputError(f"{pmid!r} is not a PMID (a PMID is a number)")
        found = self.source.fetch([pmid])
        if not found:
            where = "PubMed" if self.config.source == "pubmed" else "the local store"
            raise InputError(f"PMID {pmid} is not in {where}")
        fc = self.concepts(frame)
        self.skipped = []
        annotated, _ = self.annotate(found)
        if not annotated:
            raise InputError(f"PMID {pmid} cannot be explained: {'; '.join(self.skipped)}")
        (ann,) = annotated
        (c,) = self.candidate_scores(frame, [ann], fc)
        # Alone, a citation has no per-question scaling: its answer carries S_EBM.
        answer = make_answer(
            1,
            c.ebm.total,
            "paper-ebm",
            ann,
            c.ebm,
            c.term,
            retrieval_rank=1,
            match=c.match,
            lexical=c.lexical,
            findings=c.findings,
        )
        plus = self.ranker_settings.plus_weights()
        return Explanation(frame, fc, ann, c.ebm, c.term, answer, c.match, plus)


def ask(frame: Frame, config: AskConfig | None = None) -> AskResult:
    """One question with a pipeline built for it (use ``Pipeline`` to ask several)."""
    with Pipeline(config) as pipeline:
        return pipeline.ask(frame)
