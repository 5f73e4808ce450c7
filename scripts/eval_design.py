"""Evaluate the study-design model, the design grades and the sample-size extractor (docs/design.md).

    python scripts/build_design_corpus.py && python scripts/eval_design.py

Held-out sets (never trained on; see scripts/build_design_corpus.py):
  eval       half of the records whose publication types come with MeSH (the indexer's)
  eval_rct   one tenth of the RCTs by construction (PICO-data, EvidenceOutcomes, Evidence Inference)
  eval_mesh  one quarter of the PubMedQA records labelled by design MeSH headings
Thresholds are fixed in advance (0.1 sensitive, 0.5 balanced, 0.9 high precision), not tuned here.
The anchor (a linear SVM on tf-idf word n-grams, RCT vs not, as RobotReviewer's baseline) is
trained on the same training split in the same run.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from build_design_corpus import DEFAULT_OUT as CORPUS  # noqa: E402
from build_design_corpus import read_corpus  # noqa: E402

from ebm.citation import Citation, MeshHeading, PublicationType  # noqa: E402
from extractors.design import DESIGN_CLASSES, MODEL_FILE, DesignModel, load_design_model  # noqa: E402
from extractors.design_grade import grade_from_design, load_design_grades  # noqa: E402
from extractors.sample_size import extract_sample_size  # noqa: E402

RCT = "randomized_controlled_trial"
THRESHOLDS = (("sensitive", 0.1), ("balanced", 0.5), ("high precision", 0.9))


def auroc(scores: np.ndarray, y: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, scores))


def binary_at(scores: np.ndarray, y: np.ndarray, t: float) -> dict[str, float]:
    pred = scores >= t
    tp = int((pred & (y == 1)).sum())
    fp = int((pred & (y == 0)).sum())
    fn = int((~pred & (y == 1)).sum())
    tn = int((~pred & (y == 0)).sum())
    return {
        "sensitivity": tp / max(tp + fn, 1),
        "specificity": tn / max(tn + fp, 1),
        "precision": tp / max(tp + fp, 1),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def anchor_svm(train: list[dict[str, Any]], tests: list[list[dict[str, Any]]]) -> list[np.ndarray]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=40000)
    x = vec.fit_transform([r["title"] + "\n" + r["abstract"] for r in train])
    y = np.asarray([r["label"] == RCT for r in train], dtype=int)
    svm = LinearSVC(C=1.0, class_weight="balanced", random_state=13).fit(x, y)
    return [
        svm.decision_function(vec.transform([r["title"] + "\n" + r["abstract"] for r in t])) for t in tests
    ]


def per_class(gold: list[str], pred: list[str]) -> list[tuple[str, int, float, float, float]]:
    rows = []
    for c in DESIGN_CLASSES:
        tp = sum(g == c and p == c for g, p in zip(gold, pred, strict=True))
        n_gold = sum(g == c for g in gold)
        n_pred = sum(p == c for p in pred)
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        rows.append((c, n_gold, prec, rec, f1))
    return rows


def reliability(
    conf: np.ndarray, correct: np.ndarray, bins: int = 10
) -> tuple[list[tuple[float, float, int]], float]:
    edges = np.linspace(0, 1, bins + 1)
    out = []
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (conf >= lo) & ((conf < hi) if hi < 1 else (conf <= hi))
        if m.sum():
            out.append((float(conf[m].mean()), float(correct[m].mean()), int(m.sum())))
            ece += m.sum() / len(conf) * abs(conf[m].mean() - correct[m].mean())
    return out, float(ece)


def plot_reliability(panels: list[tuple[str, list[tuple[float, float, int]], float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.5))
    for ax, (title, pts, ece) in zip(np.atleast_1d(axes), panels, strict=True):
        ax.plot([0, 1], [0, 1], "--", color="grey", lw=1)
        xs, ys, ns = zip(*pts, strict=True) if pts else ((), (), ())
        ax.plot(xs, ys, "o-", color="C0")
        for x, yv, n in pts:
            ax.annotate(str(n), (x, yv), textcoords="offset points", xytext=(4, -10), fontsize=7)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("predicted probability (bin mean)")
        ax.set_ylabel("observed frequency")
        ax.set_title(f"{title}\nECE {ece:.3f}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def pt_grade(r: dict[str, Any], study_types: Any, vocabulary: Any) -> str | None:
    c = Citation(
        pmid=r["pmid"],
        publication_types=tuple(PublicationType(None, p) for p in r["pts"]),
        mesh_headings=tuple(MeshHeading(None, m) for m in r["mesh"]),
    )
    return study_types.classify(c, vocabulary).grade  # type: ignore[no-any-return]


def predict_all(model: DesignModel, recs: list[dict[str, Any]]) -> list[Any]:
    return [model.predict(r["title"], r["abstract"]) for r in recs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--model", type=Path, default=ROOT / "ebm" / "data" / MODEL_FILE)
    ap.add_argument("--grades", type=Path, default=ROOT / "rules" / "design_grades.tsv")
    ap.add_argument("--study-types", type=Path, default=ROOT / "rules" / "study_types.tsv")
    ap.add_argument("--gold", type=Path, default=ROOT / "tests" / "fixtures" / "sample_size_gold.tsv")
    ap.add_argument("--plot", type=Path, default=ROOT / "docs" / "design-reliability.png")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)

    from ebm.rules.tables import load_study_types

    recs = read_corpus(args.corpus)
    split = {s: [r for r in recs if r["split"] == s] for s in ("train", "eval", "eval_rct", "eval_mesh")}
    model = load_design_model(args.model)
    grades = load_design_grades(args.grades)
    figures: dict[str, Any] = {}

    preds = {s: predict_all(model, split[s]) for s in ("eval", "eval_rct", "eval_mesh")}
    svm_scores = anchor_svm(split["train"], [split["eval"], split["eval"] + split["eval_rct"]])

    print("## RCT vs not (probability of randomized_controlled_trial)\n")
    sets = (
        ("eval", split["eval"], preds["eval"], svm_scores[0]),
        (
            "eval + eval_rct",
            split["eval"] + split["eval_rct"],
            preds["eval"] + preds["eval_rct"],
            svm_scores[1],
        ),
    )
    for name, rs, ps, svm in sets:
        y = np.asarray([r["label"] == RCT for r in rs], dtype=int)
        s = np.asarray([p.probabilities[RCT] for p in ps])
        a, a_svm = auroc(s, y), auroc(svm, y)
        print(f"{name}: {len(rs)} records, {int(y.sum())} RCTs; AUROC {a:.4f} (anchor SVM {a_svm:.4f})")
        figures[f"rct_auroc[{name}]"] = a
        figures[f"rct_auroc_svm[{name}]"] = a_svm
        for tname, t in THRESHOLDS:
            m = binary_at(s, y, t)
            figures[f"rct@{t}[{name}]"] = m
            print(
                f"  {tname} (p >= {t}): sensitivity {m['sensitivity']:.3f} "
                f"specificity {m['specificity']:.3f} "
                f"precision {m['precision']:.3f} (tp {m['tp']} fp {m['fp']} fn {m['fn']} tn {m['tn']})"
            )
    print()

    for name in ("eval", "eval_mesh"):
        gold = [r["label"] for r in split[name]]
        pred = [p.label for p in preds[name]]
        acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
        figures[f"accuracy[{name}]"] = acc
        print(f"## Per class on {name} ({len(gold)} records, accuracy {acc:.3f})\n")
        print("| class | n | precision | recall | F1 |\n|---|---|---|---|---|")
        for c, n, p, rcl, f1 in per_class(gold, pred):
            if n or any(x == c for x in pred):
                print(f"| {c} | {n} | {p:.2f} | {rcl:.2f} | {f1:.2f} |")
        print()

    allr = split["eval"] + split["eval_rct"] + split["eval_mesh"]
    allp = preds["eval"] + preds["eval_rct"] + preds["eval_mesh"]
    conf = np.asarray([p.probability for p in allp])
    correct = np.asarray([p.label == r["label"] for p, r in zip(allp, allr, strict=True)], dtype=float)
    top_pts, top_ece = reliability(conf, correct)
    ev = split["eval"]
    rct_p = np.asarray([p.probabilities[RCT] for p in preds["eval"]])
    rct_y = np.asarray([r["label"] == RCT for r in ev], dtype=float)
    rct_pts, rct_ece = reliability(rct_p, rct_y)
    plot_reliability(
        [
            (f"top label, all held-out sets (n={len(allr)})", top_pts, top_ece),
            (f"P(RCT), eval (n={len(ev)})", rct_pts, rct_ece),
        ],
        args.plot,
    )
    figures["ece_top"] = top_ece
    figures["ece_rct_eval"] = rct_ece
    print(
        f"## Calibration: ECE top label {top_ece:.3f} (all held-out), "
        f"P(RCT) on eval {rct_ece:.3f}; plot {args.plot}\n"
    )

    from ebm.mesh import mesh

    study_types = load_study_types(args.study_types)
    vocabulary = mesh()
    agree = known = 0
    rows = []
    for r, p in zip(ev, preds["eval"], strict=True):
        g_pt = pt_grade(r, study_types, vocabulary)
        g_pred, _, _ = grade_from_design(p, extract_sample_size(r["abstract"]), grades)
        if g_pt is not None:
            known += 1
            agree += g_pt == g_pred
            rows.append((r["pmid"], g_pt, g_pred, p.label))
    figures["grade_agreement"] = agree / max(known, 1)
    print(
        f"## Grade agreement on eval records whose publication types/headings give a grade: "
        f"{agree}/{known} = {agree / max(known, 1):.3f}"
    )
    for pmid, g_a, g_b, lab in rows:
        if g_a != g_b:
            print(f"   PMID {pmid}: publication types {g_a}, predicted {g_b} ({lab})")
    print()

    from ebm.medline.bundled import iter_bundled

    n = have_pt = have_any = 0
    for cit in iter_bundled():
        n += 1
        indexed = cit.publication_types or cit.mesh_headings
        g = study_types.classify(cit, vocabulary).grade if indexed else None
        if g is not None:
            have_pt += 1
            have_any += 1
            continue
        if not (cit.title or cit.has_abstract):
            continue
        guess = model.predict(cit.title, cit.abstract_text)
        g2, _, _ = grade_from_design(guess, extract_sample_size(cit.abstract_text), grades)
        have_any += g2 is not None
    figures["bundled_known_grade_pt"] = have_pt / n
    figures["bundled_known_grade_with_design"] = have_any / n
    print(
        f"## Bundled corpus ({n} citations): known grade from publication types/headings "
        f"{have_pt / n:.3f}; with the predicted design filling in {have_any / n:.3f}\n"
    )

    if args.gold.is_file():
        figures.update(sample_size_figures(args.gold))
    if args.json:
        print(json.dumps(figures, indent=1, default=float))
    return 0


def sample_size_figures(gold_path: Path) -> dict[str, float]:
    """Coverage (answers) and accuracy where it answers, per split of the gold file and design."""
    with open(gold_path, encoding="utf-8") as f:
        gold = [r for r in csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t")]
    texts = _gold_texts({r["pmid"] for r in gold})
    out: dict[str, float] = {}
    print("## Sample size (gold: tests/fixtures/sample_size_gold.tsv)\n")
    print(
        "| part | design | abstracts | with a gold value | answered | coverage "
        "| correct where answered | accuracy |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for part in ("dev", "test"):
        for kind in ("rct", "other", "all"):
            rs = [r for r in gold if r["part"] == part and (kind == "all" or r["design"] == kind)]
            if not rs:
                continue
            answered = correct = with_value = 0
            for r in rs:
                got = extract_sample_size(texts[r["pmid"]])
                with_value += r["value"] != "none"
                if got is not None:
                    answered += 1
                    correct += r["value"] != "none" and got.value == int(r["value"])
            cov = answered / len(rs)
            acc = correct / answered if answered else 0.0
            out[f"sample_size_coverage[{part},{kind}]"] = cov
            out[f"sample_size_accuracy[{part},{kind}]"] = acc
            print(
                f"| {part} | {kind} | {len(rs)} | {with_value} | {answered} | {cov:.3f} "
                f"| {correct} | {acc:.3f} |"
            )
    print()
    c: Counter[str] = Counter(r["part"] for r in gold)
    print(f"(dev {c['dev']} abstracts: rules tuned on these; test {c['test']}: reported, never tuned on)\n")
    return out


def _gold_texts(pmids: set[str]) -> dict[str, str]:
    from ebm.medline.bundled import iter_bundled

    found = {c.pmid: c.abstract_text or "" for c in iter_bundled() if c.pmid in pmids}
    missing = pmids - set(found)
    if missing:
        raise SystemExit(f"gold PMIDs not in the bundled corpus: {sorted(missing)[:5]}")
    return found


if __name__ == "__main__":
    raise SystemExit(main())
