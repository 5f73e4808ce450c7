"""Weak training questions for EBM-prior from ../shared only, never the benchmark's questions.

PubMedQA (``../shared/data/pubmedqa/ori_pqal.json.gz``): each question was written from one
article, which answers it, and the article is in the bundled corpus. For a seeded sample of
them (the benchmark's own source articles, ``../shared/data/bench/sources.tsv``, left out):

1. the question is parsed into a frame (``ebm.question``, as ``ebm ask "QUESTION"`` does);
2. its pool is the store's top 50 by BM25 of the frame's slot phrases (problem, co-problems,
   population, intervention, comparison, outcome), each quoted, ORed: a keyword query like the
   benchmark's ``pool_query`` (the question's words ORed would put the own article first every
   time: the question was written from its title);
3. the question's own article is labelled relevant (grade 3), every other candidate 0 -- a weak
   label: another article may answer too. This mimics the "few relevant" kind, where EBM+ lost on
   the held-out questions. A question whose own article is not in its pool, or whose pool holds
   fewer than 20 candidates (over-specific phrases), is skipped (counted).

Every candidate gets the columns ``scripts/eval_rankers.py`` reads (``candidate_columns`` and
the question-aware evidence columns), written with the labels to one json.gz file:

    python scripts/weak_questions.py --n 150 --seed 15 --out /tmp/weak.json.gz
    python scripts/eval_rankers.py --prior --weak /tmp/weak.json.gz --cache /tmp/dev.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from ebm.mesh import mesh as shipped_mesh

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.ask import AskConfig, Pipeline  # noqa: E402
from ebm.errors import EbmError  # noqa: E402
from ebm.scoring.question_evidence import EvidenceModels, evidence_columns  # noqa: E402
from ebm.scoring.rankers import candidate_columns  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
POOL = 50
MIN_POOL = 20  # smaller pools (over-specific phrases) are skipped: the benchmark's hold 50


def slot_query(frame: Any) -> str | None:
    """The frame's slot phrases, quoted and ORed (None with fewer than two)."""
    phrases = [frame.problem or "", *frame.co_problems, *frame.population, *frame.intervention]
    phrases += [*frame.comparison, frame.outcome or ""]
    seen: dict[str, str] = {}
    for p in phrases:
        words = " ".join(w for w in "".join(ch if ch.isalnum() or ch in "-'" else " " for ch in p).split())
        if len(words) > 2:
            seen.setdefault(words.casefold(), words)
    return " OR ".join(f'"{w}"[tiab]' for w in seen.values()) if len(seen) >= 2 else None


def bench_sources(path: Path) -> set[str]:
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 3 and fields[2].strip():
            out.add(fields[2].strip())
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=150, help="questions sampled (default 150)")
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("--year", type=int, default=2024)
    p.add_argument("--db", type=Path)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    try:
        return run(args)
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ebm.cli.frame import MODEL
    from ebm.question import load_question_cues, load_role_model, parse_question
    from ebm.resources import Resources
    from ebm.store import open_store

    with gzip.open(SHARED / "pubmedqa" / "ori_pqal.json.gz", "rt", encoding="utf-8") as f:
        pqa: dict[str, Any] = json.load(f)
    excluded = bench_sources(SHARED / "bench" / "sources.tsv")
    pmids = sorted(p for p in pqa if p not in excluded)
    random.Random(args.seed).shuffle(pmids)
    res = Resources.load(None)
    cues = (
        res.value("question_cues")
        if res.has("question_cues")
        else load_question_cues(res.rules_dir / "question_cues.tsv")
    )
    roles = load_role_model(MODEL)
    models = EvidenceModels(res.design_model, res.design_grades)  # as scripts/eval_rankers.py
    questions: dict[str, Any] = {}
    qrels: dict[str, dict[str, int]] = {}
    skipped = {"not in pool": 0, "no frame": 0, "pool under 20": 0}
    start = time.perf_counter()
    with (
        open_store(args.db, vocabulary=shipped_mesh) as store,
        Pipeline(AskConfig(year=args.year), source=store, resources=res) as pipeline,
    ):
        for source in pmids:
            if len(questions) >= args.n:
                break
            text = pqa[source]["QUESTION"]
            try:
                frame = replace(
                    parse_question(text, res.matcher, res.vocabulary, cues, roles).frame, question=text
                )
            except EbmError:
                skipped["no frame"] += 1
                continue
            query = slot_query(frame)
            if query is None:
                skipped["no frame"] += 1
                continue
            hits = [h for h in store.search_hits(query, limit=POOL).hits if h.score is not None]
            pool = [h.pmid for h in hits]
            if len(pool) < MIN_POOL:
                skipped["pool under 20"] += 1
                continue
            if source not in pool:
                skipped["not in pool"] += 1
                continue
            cits = {c.pmid: c for c in store.fetch(pool)}
            kept = [h for h in hits if h.pmid in cits]
            annotations, _ = pipeline.annotate([cits[h.pmid] for h in kept])
            cands = pipeline.candidate_scores(
                frame, annotations, retrieval=[float(h.score or 0.0) for h in kept]
            )
            cols = candidate_columns(cands)
            cols.update(evidence_columns(annotations, models))
            qid = f"PQA{source}"
            questions[qid] = {
                "pmids": [h.pmid for h in kept],
                "cols": cols,
                "years": [cits[h.pmid].year for h in kept],
            }
            qrels[qid] = {h.pmid: 3 if h.pmid == source else 0 for h in kept}
            print(
                f"{len(questions)}/{args.n} {qid} {frame.task.value}: own article at "
                f"{pool.index(source) + 1} of {len(kept)} ({time.perf_counter() - start:.0f} s)",
                file=sys.stderr,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        json.dump({"questions": questions, "qrels": qrels, "skipped": skipped, "seed": args.seed}, f)
    print(f"{len(questions)} weak questions -> {args.out}; skipped {skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
