"""Speed of the outcome extractor against references measured in the same run.

Texts: the first ``--n`` citations with an abstract of the bundled corpus (default 1,000),
processed once by the text pipeline. Measured, each as the best of ``--repeat`` passes after a
warm-up:

- load: reading the shipped model and the cue table (``load_model`` + ``CueTable``), best of 5
- ``OutcomeModel.score`` without concepts (five classifiers), per abstract
- its parts: cue classifier alone, the two naive Bayes classifiers alone
- reference: ``TextPipeline.process`` of the same citations (the step before it)
- with ``--concepts`` (needs ``ebm setup``): scoring with concepts (six classifiers), and the
  concept annotation of the same documents as a second reference

    python benchmarks/outcome_bench.py [--n 1000] [--repeat 3] [--concepts]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_timing import timed  # noqa: E402

from ebm.citation import Citation  # noqa: E402
from ebm.medline.bundled import iter_bundled  # noqa: E402
from ebm.resources import shipped_rules_dir  # noqa: E402
from ebm.text.document import Document  # noqa: E402
from ebm.text.pipeline import TextPipeline  # noqa: E402
from extractors.outcome import load_model, shipped_model_path  # noqa: E402
from extractors.outcome_cues import CueTable, read_cues  # noqa: E402
from extractors.outcome_features import tokenize, words  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--concepts", action="store_true", help="also time the semantic path (needs `ebm setup`)")
    args = ap.parse_args(argv)

    cits: list[Citation] = []
    for c in iter_bundled():
        if c.has_abstract:
            cits.append(c)
            if len(cits) >= args.n:
                break
    pipe = TextPipeline()
    docs: list[Document] = [pipe.process(c) for c in cits]
    n_sent = sum(len(d.sentences) for d in docs) / len(docs)

    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        model = load_model(shipped_model_path())
        table = shipped_rules_dir() / "outcome_cues.tsv"
        cues = CueTable(read_cues(table), table)
        loads.append(time.perf_counter() - t0)
    print(
        f"{len(docs)} bundled abstracts, {n_sent:.1f} sentences each (title included); "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs (one used)"
    )
    print(f"model + cue table load: {1000 * min(loads):.1f} ms (best of 5)")

    def cue_only(d: Document) -> None:
        for s in d.sentences:
            cues.score(s.text)

    def nb_only(d: Document) -> None:
        for s in d.sentences:
            w = words(tokenize(s.text))
            model.unigram.probability(w)
            model.ngram.ngram_probability(w)

    rows: list[tuple[str, Callable[[Any], object], Sequence[Any]]] = [
        ("OutcomeModel.score, no concepts (total)", lambda d: model.score(d, cues), docs),
        ("  part: cue classifier", cue_only, docs),
        ("  part: tokens + unigram and n-gram naive Bayes", nb_only, docs),
        ("reference: TextPipeline.process", pipe.process, cits),
    ]
    if args.concepts:
        from ebm.concepts import annotate
        from ebm.resources import Resources

        res = Resources.load()
        matcher, negation = res.matcher, res.negation
        ann = {id(d): annotate(d, matcher, negation) for d in docs}
        rows.append(("OutcomeModel.score with concepts", lambda d: model.score(d, cues, ann[id(d)]), docs))
        rows.append(("reference: concept annotation", lambda d: annotate(d, matcher, negation), docs))

    print("\n| step | ms per abstract | abstracts/s |\n|---|---|---|")
    for name, fn, items in rows:
        t = timed(fn, items, args.repeat)
        print(f"| {name} | {1000 * t / len(items):.3f} | {len(items) / t:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
