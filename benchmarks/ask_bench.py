"""Time to answer one question from the local store: ``ebm ask`` cold and warm, against
retrieval alone measured in the same run.

For each frame (default: every questions/*.yaml), with N candidates (default 50):

- retrieval: ``ebm.query.retrieve`` alone (query formulation, relaxation, search) -- the
  reference: what any answer costs before a single citation is read;
- cold: ``Pipeline.ask`` with an empty annotation cache (fetch, annotate every candidate,
  score, rerank);
- warm: ``Pipeline.ask`` again, annotations read from the on-disk cache;
- warm, no findings: the same with ``AskConfig(findings=False)`` (issue 14: no findings, no
  question-aware S_outcome, no bottom line), runs interleaved with the warm ones so both see the
  same machine load; "findings +" is the difference of the medians, and "(in ask)" the median
  of the time ask itself reports for the findings and the bottom line (``Timings.findings``),
  and "(cpu)" the CPU time of the findings alone (``Pipeline.findings`` over the candidates'
  annotations: process time, so it does not count other processes on a loaded machine).

Times are medians of ``--repeat`` runs (cold: one run per question, a fresh cache each time
is the point). Resources (rule tables, concept matcher, text pipeline, outcome model) are
loaded once before timing and reported separately as start-up; ``--cli`` also times the
whole ``ebm ask`` command in a new process with a warm cache, start-up included.

    python benchmarks/ask_bench.py [--frame F.yaml ...] [--candidates 50] [--repeat 5] [--cli]

Needs the concept index (``ebm setup``) and the local store (the default one is built from
the bundled corpus on first use) in the data directory (EBM_HOME).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench_timing import call_times

ROOT = Path(__file__).resolve().parents[1]


def median_time(fn, repeat: int) -> float:
    return statistics.median(call_times(fn, repeat))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frame", action="append", type=Path, help="frame files (default: questions/*.yaml)")
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cli", action="store_true", help="also time `ebm ask` in a new process (warm cache)")
    args = ap.parse_args(argv)

    from ebm.ask import AskConfig, Pipeline
    from ebm.frame import load_frame
    from ebm.query import retrieve

    frames = [load_frame(f) for f in (args.frame or sorted((ROOT / "questions").glob("*.yaml")))]

    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ebm-ask-bench-") as tmp:
        probe = Pipeline(AskConfig(cache=False))
        probe.source, probe.matcher, probe.annotator  # noqa: B018 -- load everything once
        probe.resources.findings_model, probe.resources.outcome_words  # noqa: B018
        startup = time.perf_counter() - t
        print(
            f"start-up (rules, MeSH, store, concept matcher, text pipeline, outcome model): {startup:.2f} s"
        )
        print(f"{args.candidates} candidates per question; medians of {args.repeat} runs (cold: 1 run)\n")
        header = (
            f"{'question':<26} {'cands':>5} {'retrieval':>9} {'cold':>7} {'(annot.)':>8} "
            f"{'warm':>7} {'(annot.)':>8} {'warm/retr':>9} {'no find.':>8} {'findings +':>10} "
            f"{'(in ask)':>8} {'(cpu)':>6}"
        )
        print(header)
        print("-" * len(header))
        totals: dict[str, list[float]] = {
            "retrieval": [],
            "cold": [],
            "warm": [],
            "plain": [],
            "inask": [],
            "cpu": [],
        }
        for i, frame in enumerate(frames):
            name = frame.id or f"frame {i + 1}"
            retrieval = median_time(
                lambda f=frame: retrieve(
                    f,
                    probe.source,
                    min_hits=args.candidates,
                    limit=args.candidates,
                    rules=probe.rules,
                    vocabulary=probe.vocabulary,
                ),
                args.repeat,
            )
            config = AskConfig(candidates=args.candidates, cache_path=Path(tmp) / f"cache-{i}.sqlite")
            shared = {"source": probe.source, "resources": probe.resources, "annotator": probe.annotator}
            pipe = Pipeline(config, **shared)
            plain = Pipeline(replace(config, findings=False), **shared)
            t = time.perf_counter()
            cold_result = pipe.ask(frame)
            cold = time.perf_counter() - t
            warm_runs, plain_runs, in_ask = [], [], []
            for _ in range(args.repeat):
                t = time.perf_counter()
                warm_result = pipe.ask(frame)
                warm_runs.append((time.perf_counter() - t, warm_result.timings.annotate))
                in_ask.append(warm_result.timings.findings)
                t = time.perf_counter()
                plain.ask(frame)
                plain_runs.append(time.perf_counter() - t)
            anns, _ = pipe.annotate(pipe.source.fetch([a.pmid for a in warm_result.answers]))
            cpu_runs = []
            for _ in range(args.repeat):
                t = time.process_time()
                pipe.findings(frame, anns)
                cpu_runs.append(time.process_time() - t)
            cpu = statistics.median(cpu_runs)
            pipe.close()
            plain.close()
            warm = statistics.median(w for w, _ in warm_runs)
            warm_annot = statistics.median(a for _, a in warm_runs)
            no_findings = statistics.median(plain_runs)
            inask = statistics.median(in_ask)
            assert warm_result.cached == len(warm_result.answers)
            n = len(cold_result.answers)
            print(
                f"{name:<26} {n:>5} {retrieval:>8.2f}s {cold:>6.2f}s {cold_result.timings.annotate:>7.2f}s "
                f"{warm:>6.2f}s {warm_annot:>7.2f}s {warm / retrieval:>8.1f}x "
                f"{no_findings:>7.3f}s {1000 * (warm - no_findings):>8.0f}ms "
                f"{1000 * inask:>6.0f}ms {1000 * cpu:>4.0f}ms"
            )
            totals["cpu"].append(cpu)
            totals["retrieval"].append(retrieval)
            totals["cold"].append(cold)
            totals["warm"].append(warm)
            totals["plain"].append(no_findings)
            totals["inask"].append(inask)
        print("-" * len(header))
        keys = ("retrieval", "cold", "warm", "plain", "inask", "cpu")
        r, c, w, nf, ia, cp = (statistics.mean(totals[k]) for k in keys)
        print(
            f"{'mean':<26} {'':>5} {r:>8.2f}s {c:>6.2f}s {'':>8} {w:>6.2f}s {'':>8} {w / r:>8.1f}x "
            f"{nf:>7.3f}s {1000 * (w - nf):>8.0f}ms {1000 * ia:>6.0f}ms {1000 * cp:>4.0f}ms"
        )
        probe.close()

        if args.cli:
            frame_file = args.frame[0] if args.frame else sorted((ROOT / "questions").glob("*.yaml"))[0]
            cmd = [sys.executable, "-m", "ebm", "ask", "--frame", str(frame_file), "--format", "json"]
            cmd += ["--candidates", str(args.candidates)]
            subprocess.run(cmd, check=True, capture_output=True)  # warms the default cache
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                times.append(time.perf_counter() - t)
            ref = [sys.executable, "-c", "import ebm.cli"]
            base = median_time(lambda: subprocess.run(ref, check=True), args.repeat)
            print(
                f"\n`ebm ask` in a new process, warm cache ({frame_file.name}): "
                f"{statistics.median(times):.2f} s (python + import ebm.cli alone: {base:.2f} s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
