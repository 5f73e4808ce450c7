"""PICO-index pools against the BM25 pools of the judged benchmark (issue 17 part 3).

For each development question (../shared/data/bench/frames), the pool ``ebm bench --retrieval
pico`` retrieves from the stored annotations' PICO index (``ebm.pico_retrieval``) is compared
with the benchmark's BM25 pool (pools.run): its size, its overlap with the BM25 pool, and the
judged relevant citations (qrels, lenient: grade >= 2; strict: grade 3) each pool holds.
Only BM25-pooled citations are judged, so a PICO candidate outside the BM25 pool counts as
unjudged, not as irrelevant: "relevant found" is a lower bound for PICO and exact for BM25.

    ebm corpus annotate --db STORE          # every citation annotated first
    python benchmarks/pico_pools.py --db STORE [--size 50]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ebm.evaluation.bench import load_frames_dir, read_pools, retrieve_pools
from ebm.evaluation.trec import read_qrels
from ebm.resources import Resources
from ebm.store.sqlite import MedlineStore

BENCH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bench"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True, help="an annotated store (ebm corpus annotate)")
    ap.add_argument("--bench", type=Path, default=BENCH)
    ap.add_argument("--size", type=int, default=50)
    args = ap.parse_args(argv)
    resources = Resources.load()
    frames = load_frames_dir(args.bench / "frames")
    judged = read_qrels(args.bench / "qrels.txt")
    bm25 = {p.qid: p.pmids for p in read_pools(args.bench / "pools.run")}
    with MedlineStore(args.db, create=False, vocabulary=resources.vocabulary) as store:
        pools, queries = retrieve_pools(frames, store, args.size, resources, retrieval="pico")
    rows = []
    for pool in pools:
        q = judged.get(pool.qid, {})
        base = bm25.get(pool.qid, [])
        pico = pool.pmids
        rows.append({
            "qid": pool.qid,
            "pico": len(pico),
            "overlap": len(set(pico) & set(base)),
            "lenient_bm25": sum(q.get(p, 0) >= 2 for p in base),
            "lenient_pico": sum(q.get(p, 0) >= 2 for p in pico),
            "strict_bm25": sum(q.get(p, 0) == 3 for p in base),
            "strict_pico": sum(q.get(p, 0) == 3 for p in pico),
            "query": queries[pool.qid],
        })  # fmt: skip
    totals = {k: sum(r[k] for r in rows) for k in rows[0] if k not in ("qid", "query")}
    totals["questions"] = len(rows)
    totals["empty_pico_pools"] = sum(r["pico"] == 0 for r in rows)
    totals["bm25_pooled"] = sum(len(bm25.get(r["qid"], [])) for r in rows)
    print(json.dumps({"questions": rows, "totals": totals}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
