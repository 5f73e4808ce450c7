"""The bottom line of a question's ranked answers, for docs/findings.md.

Runs ``ebm ask --frame FRAME --top N --format json`` for the ranked PMIDs and grades, reads each
citation from the local store, extracts its findings for the frame (extractors/findings.py), its
design and sample size (extractors/design.py, extractors/sample_size.py) and its population
(the first population phrase of ``ebm annotate``'s extractor), and prints the bottom line
(ebm/bottom_line.py) followed by each answer's first finding.

    python scripts/bottom_line_example.py questions/fever_acetaminophen_ibuprofen.yaml [--top 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from ebm.mesh import mesh as shipped_mesh

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.bottom_line import AnswerFindings, build_bottom_line  # noqa: E402
from ebm.frame import load_frame  # noqa: E402
from ebm.paths import package_data  # noqa: E402
from ebm.store import open_store  # noqa: E402
from ebm.text.pipeline import TextPipeline  # noqa: E402
from extractors.design import design_json, design_model_path, load_design_model  # noqa: E402
from extractors.findings import (  # noqa: E402
    MODEL_FILE,
    OUTCOME_WORDS_FILE,
    extract_findings,
    load_findings_model,
    load_outcome_words,
)

DESIGN_LABELS = {
    "randomized_controlled_trial": "RCT",
    "rct": "RCT",
    "systematic_review": "systematic review",
    "meta_analysis": "meta-analysis",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("frame", type=Path)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    frame = load_frame(args.frame)
    ask = subprocess.run(
        [
            sys.executable,
            "-m",
            "ebm",
            "ask",
            "--frame",
            str(args.frame),
            "--top",
            str(args.top),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    results = json.loads(ask.stdout)["results"]
    intervention = " or ".join(frame.intervention)
    comparison = " or ".join(frame.comparison)
    outcome = frame.outcome or ""
    model = load_findings_model(package_data(MODEL_FILE))
    words = load_outcome_words(package_data(OUTCOME_WORDS_FILE))
    design_model = load_design_model(design_model_path())
    pipeline = TextPipeline()
    store = open_store(vocabulary=shipped_mesh)
    try:
        citations = {c.pmid: c for c in store.fetch([r["pmid"] for r in results])}
    finally:
        store.close()
    answers = []
    shown = []
    for r in results:
        c = citations[r["pmid"]]
        doc = pipeline.process(c)
        found = extract_findings(doc, intervention, comparison, outcome, model, outcome_words=words)
        d = design_json(c, design_model)
        label = d["design"]["label"]
        size = d["sample_size"]["value"] if d["sample_size"] else None
        answers.append(
            AnswerFindings(
                c.pmid,
                found,
                grade=r.get("grade"),
                design=DESIGN_LABELS.get(label, label.replace("_", " ")),
                sample_size=size,
                population=None,
            )
        )
        shown.append((r["rank"], c, found, label, size))
    bl = build_bottom_line(answers, intervention, comparison, outcome, top=args.top)
    print(f"Question: {frame.question or args.frame}")
    print(f"Frame: I = {intervention}; C = {comparison or '(none)'}; O = {outcome or '(none)'}\n")
    print(bl.render_text(other_outcomes=True))
    print("\nPer answer (rank, PMID, design, sample size, first finding):")
    for rank, c, found, label, size in shown:
        f = found[0] if found else None
        what = (
            f"{f.outcome}: {f.direction} ({f.confidence:.2f}): {f.sentence}"
            if f
            else "no finding for the frame"
        )
        print(f"{rank:>2}. {c.pmid} [{label}, n={size}] {what}")


if __name__ == "__main__":
    main()
