"""Speed of ``Annotator.annotate`` (citations/s on one core) against the concept matcher alone, same run.

Citations: the first ``--n`` (default 1,000) bundled citations with an abstract, spread over
the corpus (every k-th), so every source is represented. Each measurement is the best of
``--repeat`` passes after a warm-up pass, in one process on one core:

- ``annotate``: the whole annotation (text pipeline, concepts, every extractor, outcome model)
- its stages: text pipeline; concepts (``ebm.concepts.annotate``: matcher + abbreviations +
  negation); each extractor on the prepared document and concepts
- reference: the concept matcher alone (``matcher.match`` over each sentence of the prepared
  documents), the cost any concept-based extractor pays at least once

    python benchmarks/annotate_bench.py [--n 1000] [--repeat 3]

Needs the concept index (``ebm setup --no-quickumls``) in the data directory (EBM_HOME).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_timing import timed  # noqa: E402

from ebm.citation import Citation  # noqa: E402
from ebm.concepts.annotate import annotate as annotate_concepts  # noqa: E402
from ebm.medline import iter_bundled  # noqa: E402
from ebm.resources import Resources  # noqa: E402
from extractors.annotate import Annotator  # noqa: E402
from extractors.evidence import grade_evidence  # noqa: E402
from extractors.intervention import extract_interventions  # noqa: E402
from extractors.outcome import extract_outcomes  # noqa: E402
from extractors.population import extract_population  # noqa: E402


def load_citations(n: int) -> list[Citation]:
    with_text = [c for c in iter_bundled() if c.has_abstract]
    step = max(1, len(with_text) // n)
    return with_text[::step][:n]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="citations (default 1000)")
    ap.add_argument("--repeat", type=int, default=3, help="passes; the best counts (default 3)")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core

    t0 = time.perf_counter()
    res = Resources.load()
    annotator = Annotator(res)
    ranker, matcher, negation, voc = res.problem_ranker, res.matcher, res.negation, res.vocabulary
    words, kinds = res.value("population_words"), res.value("problem_kinds")
    interventions = {
        "vocabulary": voc,
        "cues": res.value("intervention_cues"),
        "kinds": res.value("intervention_kinds"),
        "terms": res.value("intervention_terms"),
        "words": words,
    }
    citations = load_citations(args.n)
    print(f"setup (models, index, {len(citations)} citations): {time.perf_counter() - t0:.1f} s")
    docs = [res.pipeline.process(c) for c in citations]
    concepts = [annotate_concepts(d, matcher, negation) for d in docs]
    sentences = sum(len(d.sentences) for d in docs)
    print(f"{len(citations)} citations, {sentences} sentences, {sum(map(len, concepts))} concepts")
    print(f"python {platform.python_version()}, {platform.machine()}, one core, best of {args.repeat}\n")

    prepared = list(zip(citations, docs, concepts, strict=True))
    rows: list[tuple[str, float]] = [
        ("annotate (everything)", timed(annotator.annotate, citations, args.repeat)),
        ("  text pipeline", timed(res.pipeline.process, citations, args.repeat)),
        (
            "  concepts (matcher, abbreviations, negation)",
            timed(lambda d: annotate_concepts(d, matcher, negation), docs, args.repeat),
        ),
        ("  population", timed(lambda x: extract_population(x[1], x[2], words), prepared, args.repeat)),
        # the rules' problems in three scopes and the learned primary problem
        (
            "  problems",
            timed(lambda x: ranker.primary(x[1], x[2], vocabulary=voc, kinds=kinds), prepared, args.repeat),
        ),
        (
            "  interventions",
            timed(lambda x: extract_interventions(x[1], x[2], **interventions), prepared, args.repeat),
        ),
        (
            "  outcomes",
            timed(
                lambda x: extract_outcomes(x[1], x[2], model=res.outcome_model, cues=res.outcome_cues),
                prepared,
                args.repeat,
            ),
        ),
        (
            "  evidence",
            timed(lambda x: grade_evidence(x[0], res.value("study_types"), voc), prepared, args.repeat),
        ),
        (
            "reference: concept matcher alone",
            timed(lambda d: [matcher.match(s.text) for s in d.sentences], docs, args.repeat),
        ),
    ]
    n = len(citations)
    ref = rows[-1][1]
    print(f"{'':48s} {'citations/s':>12s} {'ms/citation':>12s} {'x matcher time':>15s}")
    for name, secs in rows:
        print(f"{name:48s} {n / secs:12.1f} {1000 * secs / n:12.2f} {secs / ref:15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
