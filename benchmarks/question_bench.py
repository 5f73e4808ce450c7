"""Speed of ``ebm.question.parse_question`` (ms per question after start-up) against the
concept matcher alone on the same questions, same run.

Questions: the 23 bench development questions and CLIREC's distinct keyword queries
(``../shared/data``), so both long questions and short keywords count. Each figure is the best
of ``--repeat`` passes after a warm-up pass, in one process; start-up (rules, vocabulary,
concept index, model) is timed once, apart. Target (issue 16): under 50 ms per question.

    python benchmarks/question_bench.py [--shared ../shared] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_timing import timed  # noqa: E402

from ebm.question import load_question_cues, load_role_model, parse_question  # noqa: E402


def questions(shared: Path) -> list[str]:
    bench = sorted((shared / "data" / "bench" / "frames").glob("*.json"))
    out = [json.loads(p.read_text(encoding="utf-8"))["question"] for p in bench]
    root = ET.parse(shared / "data" / "clirec" / "clirec.queries.xml").getroot()
    out += sorted({q.attrib["keywords"] for q in root.iter("query")})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from ebm.resources import Resources

    t0 = time.perf_counter()
    res = Resources.load()
    matcher, vocabulary = res.matcher, res.vocabulary
    cues = load_question_cues(res.rules_dir / "question_cues.tsv")
    model = load_role_model(ROOT / "ebm" / "data" / "models" / "question_roles.json.gz")
    startup = time.perf_counter() - t0
    qs = questions(args.shared)
    n = len(qs)

    def parse(q: str) -> object:
        return parse_question(q, matcher, vocabulary, cues, model)

    ref = timed(matcher.match, qs, args.repeat)
    full = timed(parse, qs, args.repeat)
    slowest = 0.0
    for q in qs:
        t = time.perf_counter()
        parse(q)
        slowest = max(slowest, time.perf_counter() - t)
    print(f"python {platform.python_version()} on {platform.machine()}; {n} questions, best of {args.repeat}")
    print(f"start-up (rules, vocabulary, index, cue table, model): {startup:.2f} s")
    print(f"reference: matcher.match alone      {1000 * ref / n:7.3f} ms/question")
    ratio = full / ref
    print(f"parse_question                      {1000 * full / n:7.3f} ms/question ({ratio:.1f}x matcher)")
    print(f"slowest single question             {1000 * slowest:7.3f} ms (target: under 50 ms)")


if __name__ == "__main__":
    main()
