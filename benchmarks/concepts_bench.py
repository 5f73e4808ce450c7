"""Concept recognition speed and memory, against QuickUMLS's plain matcher in the same run.

Builds the full MeSH 2024 index (dictionary + QuickUMLS parts) into a temporary directory,
timing the build and measuring its size, then runs each matcher in its own process over the
same texts (title + abstract of the first ``--n`` bundled citations that have an abstract):

- ``dictionary``: ``DictionaryMatcher.match`` on the raw text (what a frame or query uses);
- ``annotate``: the whole path the extractors use, ``TextPipeline.process`` + ``annotate``
  (sentences, abbreviations, negation) with the dictionary matcher;
- ``quickumls@T``: QuickUMLS 1.4.2's own matcher (``QuickUMLS._match`` on a blank-spaCy doc,
  jaccard, window 5) at threshold T, through ``QuickUMLSMatcher``.

Per core: every worker is one single-threaded process; abstracts/s is given per CPU-second
of that process (robust to other load on the machine) and per wall-clock second. Peak memory
is the worker's maximum resident set size (imports, index and texts included). Load time
(reading the index) is reported apart from matching.

    python benchmarks/concepts_bench.py [--n 1000] [--thresholds 0.7,0.9] [--index DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load_texts(n: int) -> list[tuple[str, str, str]]:
    """(pmid, title, abstract) of the first ``n`` bundled citations with an abstract."""
    from ebm.medline.bundled import iter_bundled

    out = []
    for c in iter_bundled():
        abstract = " ".join(s.text for s in c.abstract or () if s.text)
        if c.title and abstract.strip():
            out.append((c.pmid, c.title, abstract))
            if len(out) >= n:
                break
    return out


def worker(kind: str, index: Path, n: int, threshold: float) -> dict:
    texts = load_texts(n)
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    from ebm.resources import Resources

    res = Resources.load(index_dir=index)
    if kind == "quickumls":
        from ebm.concepts.matcher import QuickUMLSMatcher

        matcher = QuickUMLSMatcher(index, res.value("concept_stoplist"), res.stopwords, threshold=threshold)
    else:
        matcher = res.dictionary_matcher(index)
    pipeline = None
    if kind == "annotate":
        from ebm.citation import AbstractSection, Citation
        from ebm.concepts.annotate import annotate

        pipeline = res.pipeline
        negation = res.negation
        citations = [Citation(pmid=p, title=t, abstract=(AbstractSection(a),)) for p, t, a in texts]
    load_cpu, load_wall = time.process_time() - t_cpu, time.perf_counter() - t_wall
    n_matches = 0
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    if pipeline is not None:
        for c in citations:
            n_matches += len(annotate(pipeline.process(c), matcher, negation))
    else:
        for _pmid, title, abstract in texts:
            n_matches += len(matcher.match(f"{title} {abstract}"))
    cpu, wall = time.process_time() - t_cpu, time.perf_counter() - t_wall
    return {
        "abstracts": len(texts),
        "tokens": sum(len(f"{t} {a}".split()) for _p, t, a in texts),
        "matches": n_matches,
        "load_s": round(load_wall, 2),
        "load_cpu_s": round(load_cpu, 2),
        "cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
        "per_cpu_s": round(len(texts) / cpu, 1),
        "per_wall_s": round(len(texts) / wall, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def peak_rss_mb() -> float:
    """This process's peak resident set size. /proc's VmHWM, because Linux carries ru_maxrss
    over an exec, so a worker would report its parent's peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 0)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0)


def run_worker(kind: str, index: Path, n: int, threshold: float = 0.0) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, "--index", str(index), "--n", str(n)]
    cmd += ["--threshold", str(threshold)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"worker {kind} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def build(index: Path) -> dict:
    from ebm.concepts.index import build_mesh_index

    t_cpu, t_wall = time.process_time(), time.perf_counter()
    from ebm.resources import Resources

    res = Resources.load(index_dir=index)
    stats = build_mesh_index(
        index, res.vocabulary, res.value("semantic_groups"), res.stopwords, with_quickumls=True
    )
    cpu, wall = time.process_time() - t_cpu, time.perf_counter() - t_wall

    def size(p: Path) -> float:
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 1e6

    return {
        "build_wall_s": round(wall, 1),
        "build_cpu_s": round(cpu, 1),
        "strings": stats.strings,
        "concepts": stats.concepts,
        "dictionary_mb": round((index / "lookup.marshal").stat().st_size / 1e6, 1),
        "terms_and_concepts_tsv_mb": round(
            ((index / "terms.tsv.gz").stat().st_size + (index / "concepts.tsv.gz").stat().st_size) / 1e6, 1
        ),
        "quickumls_mb": round(size(index / "quickumls"), 1),
        "rrf_mb": round(size(index / "rrf"), 1),
        "total_mb": round(size(index), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--thresholds", default="0.7,0.9", help="QuickUMLS thresholds to run")
    ap.add_argument("--index", type=Path, help="use this index instead of building one (no build figures)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--threshold", type=float, default=0.9, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.index, args.n, args.threshold)))
        return

    print(f"# {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs (shared)")
    with tempfile.TemporaryDirectory(prefix="ebm-concepts-bench-") as tmp:
        index = args.index
        if index is None:
            index = Path(tmp) / "concepts"
            b = build(index)
            print(
                f"index build (MeSH 2024, {b['strings']:,} strings, {b['concepts']:,} concepts): "
                f"{b['build_wall_s']} s wall, {b['build_cpu_s']} s CPU; size {b['total_mb']} MB = dictionary "
                f"{b['dictionary_mb']} MB + tsv {b['terms_and_concepts_tsv_mb']} MB + QuickUMLS "
                f"{b['quickumls_mb']} MB + RRF {b['rrf_mb']} MB"
            )
        runs = [("dictionary", 0.0), ("annotate", 0.0)]
        runs += [("quickumls", float(t)) for t in args.thresholds.split(",") if t.strip()]
        results = {}
        for kind, threshold in runs:
            name = f"{kind}@{threshold}" if kind == "quickumls" else kind
            r = run_worker(kind, index, args.n, threshold)
            results[name] = r
            print(
                f"{name:15s} {r['abstracts']} abstracts ({r['tokens']:,} tokens), {r['matches']:,} matches: "
                f"{r['per_cpu_s']:7.1f} abstracts/CPU-s ({r['per_wall_s']:.1f}/wall-s); "
                f"load {r['load_s']} s; peak RSS {r['peak_rss_mb']:.0f} MB"
            )
        base = [v for k, v in results.items() if k.startswith("quickumls")]
        if base:
            fastest_ref = max(v["per_cpu_s"] for v in base)
            for name in ("dictionary", "annotate"):
                print(f"{name}: {results[name]['per_cpu_s'] / fastest_ref:.0f}x the fastest QuickUMLS run")


if __name__ == "__main__":
    main()
