"""Study-design speed: designs per second against annotation in the same run (issue 13).

Over the title + abstract of the first ``--n`` bundled citations with an abstract, in one process
(CPU seconds, single thread), after loading everything:

- ``annotate``: the whole extractor path, ``Annotator.annotate`` (the reference);
- ``concepts``: concept recognition alone, ``TextPipeline.process`` + ``annotate``;
- ``design``: ``DesignModel.predict`` alone;
- ``design_json``: the design, sample size and human record of ``ebm annotate --json``.

The added cost is ``design_json`` time as a share of ``annotate`` time (target: at most 20 %).
Model load time is measured apart.

    python benchmarks/design_bench.py [--n 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load_citations(n: int) -> list[Any]:
    from ebm.medline.bundled import iter_bundled

    out = []
    for c in iter_bundled():
        if c.title and c.has_abstract:
            out.append(c)
            if len(out) >= n:
                break
    return out


def timed(fn: Callable[[Any], Any], items: list[Any]) -> float:
    """CPU seconds for ``fn`` over every item."""
    t = time.process_time()
    for x in items:
        fn(x)
    return time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args(argv)

    from extractors.design import design_json, design_model_path, load_design_model

    citations = load_citations(args.n)
    t = time.perf_counter()
    model = load_design_model(design_model_path())
    load_s = time.perf_counter() - t

    from ebm.concepts.annotate import annotate
    from ebm.resources import Resources
    from extractors.annotate import Annotator

    resources = Resources.load()
    annotator = Annotator(resources)
    pipeline, matcher, negation = resources.pipeline, resources.matcher, resources.negation
    annotator.annotate(citations[0])  # warm every lazy resource before timing

    rows = [
        ("annotate (reference)", timed(annotator.annotate, citations)),
        ("concepts", timed(lambda c: annotate(pipeline.process(c), matcher, negation), citations)),
        ("design", timed(lambda c: model.predict(c.title, c.abstract_text), citations)),
        ("design_json", timed(lambda c: design_json(c, model), citations)),
    ]
    n = len(citations)
    print(f"{n} bundled abstracts; design model loads in {load_s * 1000:.0f} ms (wall)")
    print("| step | ms per abstract | abstracts per CPU-second |")
    print("|---|---|---|")
    for name, secs in rows:
        print(f"| {name} | {secs / n * 1000:.2f} | {n / secs:,.0f} |")
    ref = rows[0][1]
    added = rows[3][1]
    print(f"\ndesign_json adds {added / ref:.1%} to annotation time (target <= 20 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
