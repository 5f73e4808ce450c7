"""Train the outcome-sentence extractor and write the model shipped in ebm/data/models.

Reads EvidenceOutcomes (gold), PubMedQA and MEDLINE structured abstracts (weak labels) from
../shared/data (see scripts/outcome_corpus.py), splits EvidenceOutcomes by PMID with a seeded
hash into train/dev/test (60/20/20), fits the ensemble (extractors/outcome_training.py) on the
chosen splits plus the weak abstracts, and writes a gzip JSON model with the splits in its
metadata. The test split is never used here. Same seed, same data -> byte-identical model.
The semantic classifier needs the concept index (`ebm setup`, in EBM_HOME or the per-user
data directory); --no-concepts trains without it.

Usage:
  ebm setup --no-quickumls                                       # once: the concept index
  python scripts/train_outcome_model.py                          # ship: fit on train+dev
  python scripts/train_outcome_model.py --fit-on train --out /tmp/outcome-train.json.gz
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import outcome_corpus as oc  # noqa: E402

from ebm.errors import EbmError  # noqa: E402
from ebm.mesh import mesh  # noqa: E402
from ebm.text.pipeline import TextPipeline  # noqa: E402
from extractors.outcome import MODEL_FILE  # noqa: E402
from extractors.outcome_features import semantic_features, words  # noqa: E402
from extractors.outcome_training import Example, TrainingConfig, describe, round_model, train  # noqa: E402

DEFAULT_SEED = 2007


def disease_ngrams() -> frozenset[str]:
    """Names of specific diseases (MeSH C and F03, not C23 signs and symptoms) as n-gram features.

    The paper removed disease-specific terms ("rheumatoid arthritis") from the n-gram features
    by hand; this does it with MeSH. Signs and symptoms ("headache", "weight gain") stay: they
    are measured outcomes in any disease.
    """
    voc = mesh()
    out: set[str] = set()
    for t in voc.terms:
        d = voc.get(t.descriptor_ui)
        trees = d.tree_numbers if d else ()
        if any(x.startswith(("C", "F03")) for x in trees) and not any(x.startswith("C23") for x in trees):
            toks = words(t.text)
            if 1 <= len(toks) <= 2:
                out.add(" ".join(toks))
    return frozenset(out)


def build_examples(
    records: list[oc.LabelledAbstract], pipeline: TextPipeline, resources: object | None = None
) -> list[Example]:
    """Processed, labelled abstracts; with ``resources`` (``ebm.resources.Resources``: the
    concept matcher and extractors), also their semantic features."""
    examples = []
    for p in oc.process_all(records, pipeline):
        sem = None
        if resources is not None:
            ctx = oc.semantic_context(p.document, resources)
            sem = semantic_features(p.document, ctx.concepts, ctx.primary_problem, ctx.interventions)
        examples.append(Example(p.document, p.labels, p.record.gold, sem))
    return examples


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--fit-on", choices=["train", "train+dev"], default="train+dev")
    ap.add_argument("--no-weak", action="store_true", help="gold abstracts only")
    ap.add_argument(
        "--no-concepts",
        action="store_true",
        help="no semantic classifier (default: use the concept index built by `ebm setup`)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "ebm" / "data" / MODEL_FILE)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    records, splits = oc.load_corpora(args.shared, args.seed, weak=not args.no_weak)
    fit_splits = args.fit_on.split("+")
    allowed = {p for s in fit_splits for p in splits[s]}
    chosen = [r for r in records if (r.pmid in allowed) if r.gold] + [r for r in records if not r.gold]
    print(
        f"{sum(r.gold for r in chosen)} gold + {sum(not r.gold for r in chosen)} weak abstracts",
        file=sys.stderr,
    )
    from ebm.resources import Resources

    resources = Resources.load()  # the shipped rules; the index: a clear DataError without `ebm setup`
    examples = build_examples(chosen, TextPipeline(), None if args.no_concepts else resources)
    config = TrainingConfig(exclude_ngrams=disease_ngrams())
    result = train(
        examples, args.seed, config, cues=resources.outcome_cues, progress=lambda m: print(m, file=sys.stderr)
    )
    model = result.model
    model.meta = {
        "seed": args.seed,
        "fit_on": fit_splits,
        "weak": not args.no_weak,
        "command": "python scripts/train_outcome_model.py"
        + (f" --seed {args.seed}" if args.seed != DEFAULT_SEED else "")
        + (f" --fit-on {args.fit_on}" if args.fit_on != "train+dev" else "")
        + (" --no-weak" if args.no_weak else "")
        + (" --no-concepts" if args.no_concepts else ""),
        "concepts": not args.no_concepts,
        "abstracts": {
            "gold": sum(r.gold for r in chosen),
            **{src: sum(r.source == src for r in chosen) for src in sorted({r.source for r in chosen})},
        },
        "config": {k: v for k, v in vars(config).items() if k != "exclude_ngrams"},
        "splits": splits,
        **describe(result),
    }
    model = round_model(model)
    model.save(args.out)
    print(
        f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - t0:.0f} s; "
        f"stacking weights: intercept {model.stack.intercept:.3f} "
        + " ".join(f"{k} {v:.3f}" for k, v in model.stack.weights.items())
        + (
            f"; with semantic: intercept {model.stack_semantic.intercept:.3f} "
            + " ".join(f"{k} {v:.3f}" for k, v in model.stack_semantic.weights.items())
            if model.stack_semantic
            else ""
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
