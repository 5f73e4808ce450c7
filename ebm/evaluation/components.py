"""Score components of every candidate of every question, computed once and cached in a file.

``ebm bench`` and ``ebm sweep`` rerank fixed candidate pools with several systems and many weight
settings. Everything those need that depends on the citations is computed here in one pass:
each distinct citation is annotated once (``extractors.annotate.Annotator``), then scored for
each question whose pool holds it:

- ``pico``, ``soe``, ``task``: the three components of S_EBM (``ebm.scoring.score_citation``),
  and their parts (``pico.problem``, ``pico.outcome``, ``soe.journal``, ``soe.date``, ...) for
  diagnosis;
- ``term``: the term-based reranker's score (``ebm.scoring.term_score``);
- ``ebm-plus``: the EBM+ score ``ebm ask`` ranks by by default (``ebm.scoring.rankers``, the
  shipped weights, the pool score as the retrieval feature), with ``ebm-plus.rank``, the
  position ``ask`` gives the candidate (ties: pool order), and the parts EBM+ is built from for
  diagnosis (``match.problem``, ``match.intervention``, ..., ``lexical``);
- ``bm25``: BM25 of the question's words over the candidate (the store's FTS5 index, title
  weight 5, abstract 1; 0 when no word matches);
- the candidate's pool position and score, and its year (for date order);
- ``known.mesh``, ``known.year``, ... : whether the record gives what a component needs.

The result (``Components``) is written as gzipped JSON together with a fingerprint of every input
(frames, pools, citation records, rule tables, outcome model, EBM+ weights, concept index, the
scoring and extractor code, the year of S_date). A later run with the same inputs loads it instead of
annotating again, so a weight grid or a second ``ebm bench`` costs seconds.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ebm.citation import Citation
from ebm.errors import DataError, InputError
from ebm.evaluation.sweep import CombinationScores, ComponentScores
from ebm.frame import Frame
from ebm.resources import Resources
from ebm.rules.registry import ANNOTATION, SCORER

FORMAT = "ebm-bench-components/1"
EBM_PARTS = ("pico", "soe", "task")
PLUS_MATCH_PARTS = ("problem", "intervention", "population", "co_problems", "outcome")
# Code whose change changes the scores: a cache made by other code is stale.
SCORING_CODE = (
    "ebm/scoring",
    "extractors",
    "ebm/concepts",
    "ebm/text",
    "ebm/frame_concepts.py",
    "ebm/frame.py",
    "ebm/ask.py",
)
BM25_WORD = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*")


@dataclass
class Candidate:
    """One pooled citation of one question."""

    pmid: str
    pool_score: float


@dataclass
class Pool:
    """A question's candidates in pool order (the baseline order)."""

    qid: str
    candidates: list[Candidate]

    @property
    def pmids(self) -> list[str]:
        return [c.pmid for c in self.candidates]


@dataclass
class QuestionComponents:
    """One question's candidates (pool order) and every component of each, aligned."""

    qid: str
    task: str  # the frame's task (therapy, diagnostic test, ...)
    docnos: list[str]
    pool_scores: list[float]
    years: list[int | None]
    values: dict[str, np.ndarray]  # column -> one value per candidate

    def column(self, name: str) -> np.ndarray:
        try:
            return self.values[name]
        except KeyError:
            raise InputError(
                f"question {self.qid}: no component {name!r} (have {', '.join(self.values)})"
            ) from None

    def ebm(self, l1: float, l2: float, l3: float) -> np.ndarray:
        """S_EBM, with the scorer's arithmetic (l1 PICO + l2 SoE + l3 task, in that order)."""
        return l1 * self.column("pico") + l2 * self.column("soe") + l3 * self.column("task")

    def component_scores(self) -> ComponentScores:
        return ComponentScores(self.qid, self.docnos, *(self.column(p) for p in EBM_PARTS))

    def combination_scores(self, l1: float, l2: float, l3: float) -> CombinationScores:
        return CombinationScores(self.qid, self.docnos, self.ebm(l1, l2, l3), self.column("term"))


@dataclass
class Components:
    questions: list[QuestionComponents]
    fingerprint: str
    meta: dict[str, Any] = field(default_factory=dict)  # year, timings, counts, versions

    @property
    def qids(self) -> list[str]:
        return [q.qid for q in self.questions]

    @property
    def columns(self) -> list[str]:
        return list(self.questions[0].values) if self.questions else []

    def question(self, qid: str) -> QuestionComponents:
        for q in self.questions:
            if q.qid == qid:
                return q
        raise InputError(f"no question {qid!r} among the components")

    def select(self, qids: Iterable[str]) -> Components:
        wanted = set(qids)
        return Components([q for q in self.questions if q.qid in wanted], self.fingerprint, dict(self.meta))

    # -- file ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "meta": self.meta,
            "questions": [
                {
                    "qid": q.qid,
                    "task": q.task,
                    "docnos": q.docnos,
                    "pool_scores": q.pool_scores,
                    "years": q.years,
                    "values": {name: v.tolist() for name, v in q.values.items()},
                }
                for q in self.questions
            ],
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        # repr-exact floats (json writes shortest round-trip repr): reloaded runs rank identically
        with gzip.open(tmp, "wt", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, separators=(",", ":"))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Components:
        path = Path(path)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise InputError(f"components file not found: {path}") from None
        except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: not a components file (gzipped JSON): {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"{path}: not a components file of format {FORMAT}")
        try:
            questions = [
                QuestionComponents(
                    qid=q["qid"],
                    task=q["task"],
                    docnos=list(q["docnos"]),
                    pool_scores=[float(s) for s in q["pool_scores"]],
                    years=list(q["years"]),
                    values={name: np.asarray(v, dtype=float) for name, v in q["values"].items()},
                )
                for q in data["questions"]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}: malformed components file ({exc!r})") from None
        for q in questions:
            for name, v in q.values.items():
                if v.shape != (len(q.docnos),):
                    raise InputError(f"{path}: question {q.qid}: column {name} has {v.size} values")
        return cls(questions, str(data.get("fingerprint", "")), dict(data.get("meta", {})))


# -- inputs ----------------------------------------------------------------------------------


def bm25_words(frame: Frame, stopwords: frozenset[str]) -> list[str]:
    """The question's words for the BM25 baseline: as written, stopwords (rules/stopwords_en.txt)
    and numbers dropped.

    From the natural-language question, or, for a frame without one, from its slots.
    """
    if frame.question:
        text = frame.question
    else:
        parts = [frame.problem or "", *frame.co_problems, *frame.population, *frame.intervention]
        text = " ".join([*parts, *frame.comparison, frame.outcome or ""])
    stop = {w.casefold() for w in stopwords}
    seen: dict[str, str] = {}
    for w in BM25_WORD.findall(text):
        key = w.casefold()
        if key not in stop and not w.isdigit() and len(w) > 1:
            seen.setdefault(key, w)
    return list(seen.values())


def bm25_query(frame: Frame, stopwords: frozenset[str], kind: str = "question") -> str:
    """The text query BM25 ranks a pool by: the question's words ORed, or the frame's pool_query."""
    if kind == "pool":
        if not frame.pool_query:
            raise InputError(f"frame {frame.id}: no pool_query for --bm25-query pool")
        return frame.pool_query
    if kind != "question":
        raise InputError(f"unknown BM25 query {kind!r} (question or pool)")
    words = bm25_words(frame, stopwords)
    if not words:
        raise InputError(f"frame {frame.id}: no words to rank by BM25")
    return " OR ".join(f'"{w}"[tiab]' for w in words)


def bm25_scores(store: Any, query: str, pmids: Sequence[str]) -> dict[str, float]:
    """BM25 of ``query`` for each of ``pmids`` from the store's index (absent: no word matches).

    The query is restricted to the pool with ``[pmid]`` terms, so the scores are those of the
    whole index (collection statistics of the whole store), looked up for the pool only.
    """
    if not pmids:
        return {}
    restrict = " OR ".join(f"{p}[pmid]" for p in pmids)
    hits = store.search_hits(f"({query}) AND ({restrict})", limit=len(pmids))
    return {h.pmid: float(h.score) for h in hits.hits if h.score is not None}


def metadata_flags(citations: Sequence[Citation]) -> dict[str, np.ndarray]:
    """1 where the record gives what a component needs, 0 where it is unknown (for diagnosis:
    an unknown part scores 0, which is not neutral when the others of the pool are known)."""
    checks = {
        "known.mesh": lambda c: c.mesh_headings is not None,
        "known.year": lambda c: c.year is not None,
        "known.journal": lambda c: c.journal is not None,
        "known.pubtypes": lambda c: c.publication_types is not None,
        "known.abstract": lambda c: bool(c.abstract),
    }
    return {name: np.asarray([float(check(c)) for c in citations]) for name, check in checks.items()}


# -- the scorer --------------------------------------------------------------------------------


class Scorer:
    """The ``ebm ask`` pipeline's annotation (with its on-disk cache) and scoring, reused here so
    that the bench measures exactly what ``ebm ask`` ranks by (its default ranker, EBM+, with the
    weights ``ebm ask`` uses: the shipped ones)."""

    def __init__(self, store: Any, resources: Resources, year: int | None = None, cache: bool = True) -> None:
        from ebm.ask import AskConfig, Pipeline

        config = AskConfig(rules=resources.rules_dir, year=year, cache=cache)
        self.pipeline = Pipeline(config, source=store, resources=resources)
        self.pipeline.annotator  # noqa: B018 -- load the models now, not inside the timed loop
        self._annotations: dict[str, Any] = {}
        self.annotation_seconds = 0.0
        self.from_cache = 0

    def close(self) -> None:
        self.pipeline.close()

    @property
    def annotated(self) -> int:
        return len(self._annotations)

    def annotate(self, citations: Sequence[Citation]) -> None:
        todo = [c for c in citations if c.pmid not in self._annotations]
        start = time.perf_counter()
        annotations, cached = self.pipeline.annotate(todo)
        self.annotation_seconds += time.perf_counter() - start
        self.from_cache += cached
        self._annotations.update((a.citation.pmid, a) for a in annotations)

    def score(
        self, frame: Frame, citations: Sequence[Citation], retrieval: Sequence[float] | None = None
    ) -> list[dict[str, float]]:
        """Every component of each citation (annotated before, given in pool order) for ``frame``;
        ``retrieval``: each one's pool score, EBM+'s retrieval feature (as ``ebm ask`` passes the
        store's BM25 of its query)."""
        from ebm.scoring.rankers import rank

        annotations = [self._annotations[c.pmid] for c in citations]
        cands = self.pipeline.candidate_scores(frame, annotations, retrieval=retrieval)
        plus = rank("ebm-plus", cands, self.pipeline.ranker_settings)
        position = {i: r for r, i in enumerate(plus.order, start=1)}
        rows = []
        for i, c in enumerate(cands):
            e, t = c.ebm, c.term
            out = {"pico": e.pico.total, "soe": e.soe.total, "task": e.task.total, "term": t.score}
            out["ebm-plus"] = plus.scores[i]
            out["ebm-plus.rank"] = float(position[i])
            out["lexical"] = float(c.lexical.score)
            for part in PLUS_MATCH_PARTS:
                out[f"match.{part}"] = float(c.match.value(part))
            for part, score in (("pico", e.pico), ("soe", e.soe)):
                for name, value in score.to_dict().items():
                    if name != "total" and isinstance(value, int | float):
                        out[f"{part}.{name}"] = float(value)
            rows.append(out)
        return rows


# -- fingerprint -------------------------------------------------------------------------------


def _hash_files(h: Any, paths: Iterable[Path], root: Path) -> None:
    for p in sorted(paths):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")


def fingerprint(
    frames: Mapping[str, Frame],
    pools: Sequence[Pool],
    citations: Mapping[str, Citation],
    resources: Resources,
    year: int,
    bm25_kind: str,
) -> str:
    """A digest of everything the components depend on: of the rules directory exactly the
    tables annotation and scoring read (``Resources.digest``; not the query tables: the pools
    are given)."""
    from ebm.paths import package_data

    h = hashlib.sha256(FORMAT.encode())
    h.update(json.dumps({q: frames[q].to_dict() for q in sorted(frames)}, sort_keys=True).encode())
    h.update(json.dumps([[p.qid, [[c.pmid, c.pool_score] for c in p.candidates]] for p in pools]).encode())
    for pmid in sorted(citations):
        h.update(json.dumps(citations[pmid].to_dict(), sort_keys=True).encode())
    h.update(resources.digest((*ANNOTATION, SCORER)).encode())
    root = Path(__file__).resolve().parents[2]
    for item in SCORING_CODE:
        p = root / item
        _hash_files(h, p.rglob("*.py") if p.is_dir() else [p], root)
    models = package_data("models")
    _hash_files(h, models.glob("*"), models)
    from ebm.scoring.rankers import WEIGHTS_FILE

    weights = package_data(WEIGHTS_FILE)  # the EBM+ weights ebm ask ranks with
    h.update(weights.read_bytes() if weights.is_file() else b"no EBM+ weights")
    h.update(f"year={year};bm25={bm25_kind}".encode())
    return h.hexdigest()


# -- computing ---------------------------------------------------------------------------------


def fetch_pool_citations(
    store: Any, pools: Sequence[Pool], skip_missing: bool = False
) -> dict[str, Citation]:
    """The citations of every pool from the store; missing ones are an error unless skipped."""
    wanted = list(dict.fromkeys(c.pmid for p in pools for c in p.candidates))
    found = {c.pmid: c for c in store.fetch(wanted)}
    missing = [p for p in wanted if p not in found]
    if missing and not skip_missing:
        shown = ", ".join(missing[:10]) + (f", ... ({len(missing) - 10} more)" if len(missing) > 10 else "")
        raise DataError(
            f"{len(missing)} pooled PMIDs are not in the store {getattr(store, 'path', '')}: {shown} "
            "(ingest them with `ebm corpus ingest`, or pass --skip-missing to leave them out of the pools)"
        )
    return found


def compute_components(
    frames: Mapping[str, Frame],
    pools: Sequence[Pool],
    store: Any,
    *,
    resources: Resources,
    year: int | None = None,
    bm25_kind: str = "question",
    cache: str | Path | None = None,
    recompute: bool = False,
    skip_missing: bool = False,
    progress: bool = True,
    annotation_cache: bool = True,
    say: Callable[[str], None] | None = None,
) -> Components:
    """Components of every pool's candidates; read from ``cache`` when its fingerprint matches.

    ``pools`` decide the questions and the candidates (in pool order); every question needs a
    frame and at least one candidate. With ``skip_missing``, candidates absent from the store are
    left out of their pool (and a pool left empty, of the components).
    """
    from ebm.scoring.soe import current_year

    say = say or (lambda msg: print(f"ebm: {msg}", file=sys.stderr, flush=True))
    year = current_year() if year is None else year
    missing_frames = [p.qid for p in pools if p.qid not in frames]
    if missing_frames:
        raise InputError(f"no frame for question(s) {', '.join(missing_frames)} of the pools")
    citations = fetch_pool_citations(store, pools, skip_missing)
    dropped = {p.qid: [c.pmid for c in p.candidates if c.pmid not in citations] for p in pools}
    # a pool emptied by missing citations has nothing to rank: the question is left out
    pools = [Pool(p.qid, [c for c in p.candidates if c.pmid in citations]) for p in pools]
    pools = [p for p in pools if p.candidates]
    if not pools:
        raise DataError("no pooled citation is in the store")
    digest = fingerprint({p.qid: frames[p.qid] for p in pools}, pools, citations, resources, year, bm25_kind)
    if cache is not None and not recompute and Path(cache).is_file():
        try:
            cached = Components.load(cache)
        except InputError as exc:
            say(f"ignoring the components cache: {exc}")
        else:
            if cached.fingerprint == digest:
                say(f"components from the cache {cache} (same frames, pools, citations, rules and code)")
                cached.meta["cached"] = True
                return cached
            say(f"the components cache {cache} was made from other inputs: recomputing")

    from tqdm import tqdm

    start = time.perf_counter()
    scorer = Scorer(store, resources, year, cache=annotation_cache)
    load_seconds = time.perf_counter() - start
    questions: list[QuestionComponents] = []
    total = sum(len(p.candidates) for p in pools)
    scoring_start = time.perf_counter()
    try:
        distinct = list(citations.values())
        with tqdm(
            total=len(distinct), unit=" citations", desc="annotating", file=sys.stderr, disable=not progress
        ) as bar:
            for i in range(0, len(distinct), 20):
                batch = distinct[i : i + 20]
                scorer.annotate(batch)
                bar.update(len(batch))
        for pool in pools:
            frame = frames[pool.qid]
            rows = scorer.score(
                frame, [citations[p] for p in pool.pmids], [c.pool_score for c in pool.candidates]
            )
            bm25 = bm25_scores(store, bm25_query(frame, resources.stopwords, bm25_kind), pool.pmids)
            names = list(dict.fromkeys(name for row in rows for name in row))
            values = {name: np.asarray([row.get(name, 0.0) for row in rows], dtype=float) for name in names}
            values["bm25"] = np.asarray([bm25.get(p, 0.0) for p in pool.pmids], dtype=float)
            for name, known in metadata_flags([citations[p] for p in pool.pmids]).items():
                values[name] = known
            questions.append(
                QuestionComponents(
                    qid=pool.qid,
                    task=frame.task.value,
                    docnos=pool.pmids,
                    pool_scores=[c.pool_score for c in pool.candidates],
                    years=[citations[p].year for p in pool.pmids],
                    values=values,
                )
            )
    finally:
        scorer.close()
    scoring_seconds = time.perf_counter() - scoring_start
    meta = {
        "year": year,
        "bm25_query": bm25_kind,
        "rules": str(resources.rules_dir),
        "questions": len(questions),
        "candidates": total,
        "citations": scorer.annotated,
        "annotations_from_cache": scorer.from_cache,
        "seconds_loading_models": round(load_seconds, 2),
        "seconds_annotating": round(scorer.annotation_seconds, 2),
        "seconds_scoring_total": round(scoring_seconds, 2),
        "dropped_missing": {q: d for q, d in dropped.items() if d},
        "cached": False,
    }
    components = Components(questions, digest, meta)
    if cache is not None:
        components.save(cache)
    return components
