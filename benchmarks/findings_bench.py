"""Speed of the findings extractor for one question's candidates, against the outcome model on
the same citations in the same run.

Candidates: the bundled corpus's citations that mention ibuprofen or acetaminophen/paracetamol
and have an abstract (the fever question's pool), the first ``--n`` (default 50), processed once
by the text pipeline (as ``ebm ask`` does before any extractor). Measured, each as the best of
``--repeat`` passes after a warm-up:

- ``extract_findings`` for the fever frame (I acetaminophen, C ibuprofen, O reducing fever) over
  the ``n`` documents, without and with the outcome prior;
- reference: ``OutcomeModel.score`` (no concepts) over the same documents;
- the model load (best of 5).

    python benchmarks/findings_bench.py [--n 50] [--repeat 5]
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

from ebm.medline.bundled import iter_bundled  # noqa: E402
from ebm.paths import package_data  # noqa: E402
from ebm.text.pipeline import TextPipeline  # noqa: E402
from extractors.findings import MODEL_FILE, extract_findings, load_findings_model  # noqa: E402
from extractors.outcome import load_model, shipped_model_path  # noqa: E402
from extractors.outcome_cues import CueTable, read_cues  # noqa: E402

WORDS = ("ibuprofen", "acetaminophen", "paracetamol")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    cits = []
    for c in iter_bundled():
        text = f"{c.title or ''} {' '.join(s.text for s in c.abstract or ())}".lower()
        if c.has_abstract and any(w in text for w in WORDS):
            cits.append(c)
            if len(cits) >= args.n:
                break
    pipe = TextPipeline()
    docs = [pipe.process(c) for c in cits]

    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        model = load_findings_model(package_data(MODEL_FILE))
        loads.append(time.perf_counter() - t0)
    outcome_model = load_model(shipped_model_path())
    cue_path = ROOT / "rules" / "outcome_cues.tsv"
    cues = CueTable(read_cues(cue_path), cue_path)
    priors = {id(d): {o.sentence: o.probability for o in outcome_model.score(d, cues)} for d in docs}

    def all_docs(fn):  # one pass over the candidates = one item
        return lambda _: [fn(d) for d in docs]

    rows = [
        (
            "findings (no prior)",
            all_docs(lambda d: extract_findings(d, "acetaminophen", "ibuprofen", "reducing fever", model)),
        ),
        (
            "findings with the outcome prior",
            all_docs(
                lambda d: extract_findings(
                    d, "acetaminophen", "ibuprofen", "reducing fever", model, prior=priors[id(d)]
                )
            ),
        ),
        ("reference: OutcomeModel.score (no concepts)", all_docs(lambda d: outcome_model.score(d, cues))),
    ]
    print(
        f"{len(docs)} bundled candidates of the fever question, "
        f"{sum(len(d.sentences) for d in docs) / len(docs):.1f} sentences each; "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs (one used)"
    )
    print(f"findings model load: {1000 * min(loads):.1f} ms (best of 5)")
    print(f"\n| step | ms for {len(docs)} candidates | ms per candidate |\n|---|---|---|")
    for name, fn in rows:
        t = timed(fn, [0], args.repeat)
        print(f"| {name} | {1000 * t:.1f} | {1000 * t / len(docs):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
