"""Derive the tiny MeSH vocabulary the unit tests run on (tests/fixtures/tiny_mesh/), as
scispacy's tests ship a tiny UMLS.

The subset: every descriptor the shipped rule tables name (so ``Resources.load`` validates
them against it), one descriptor at or below each tree number they name, the descriptors the
full matcher and extractors find in the citations the unit tests annotate, and the ancestors
of all of these in every tree (the hierarchy scores need them). Their entry terms and
pharmacological actions come along. Same file format as ``ebm/data/mesh``.

    python scripts/build_tiny_mesh.py            # needs the concept index (ebm setup)
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.store.query import Term, _resolve_descriptor, _resolve_pubtype, parse  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "tiny_mesh"
# the citations the unit tests annotate (tests/test_extractors_*.py, tests/test_scoring_*.py, ...)
PMIDS = (
    "7028532 8101194 9833745 16124442 17954800 20369616 23782653 9842079 8499152 17477785 "
    "3503390 16691061 9626910 3926042 15897310 1376306 404962 1541306 10235220 1778354 6496450 "
    "8519720 17445928 23392460 1621668 9505772 1636026 "
    # the scoring tests' citations (tests/tiny.py: ISCHEMIA_PMIDS, SCORING_PMIDS)
    "15228064 25361765 9070546 29768149 26044300 11056317 29112560 1721246 21434379"
).split()
# descriptors the unit tests name directly
NAMED = (
    "Myocardial Infarction", "Pain", "Pain, Postoperative", "D008376", "D001794", "D013812", "D004636",
    # the scoring tests' frames and MeSH-tree relations (tests/test_scoring_*.py)
    "Depressive Disorder", "Depressive Disorder, Major", "Mood Disorders", "Cyclothymic Disorder",
    "Heart Diseases", "Cardiovascular Diseases", "Myocardial Ischemia", "Airway Extubation",
    "Intubation, Intratracheal", "Allopurinol", "Gout", "Bradycardia", "Adult", "Aged", "Patients",
    "Muscle Cramp", "Leg", "Echocardiography", "Diagnosis", "Hypomagnesemia", "Quinine",
    "Pregnant Women", "Fever", "Ibuprofen", "Acetaminophen", "Child", "Cough", "Gastroesophageal Reflux",
    "Asthma",
)  # fmt: skip
_TREE = re.compile(r"^[A-Z]\d{2}(\.\d{3})*$")
_UI = re.compile(r"^D\d{6,9}$")


def rule_terms(resources) -> tuple[set[str], set[str], set[str]]:  # type: ignore[no-untyped-def]
    """(descriptor names or UIs, tree numbers, [mh] names of the filters) the rules name."""
    names: set[str] = set()
    trees: set[str] = set()
    for r in resources.rules.task_indicators.rows:
        if r.kind in ("descriptor", "explode"):
            names.add(r.term)
        elif r.kind == "tree":
            trees.add(r.term)
    for r in resources.rules.study_types.rows:
        names.add(r.term)
        if r.unless:
            names.add(r.unless)
    for table in ("semantic_groups", "intervention_kinds", "problem_kinds"):
        for row in resources.table(table):
            key = row["key"] if table == "semantic_groups" else row["term"]
            if _UI.match(key):
                names.add(key)
            elif _TREE.match(key) and len(key) > 1:
                trees.add(key)
    for _, cui in resources.value("concept_synonyms"):
        names.add(cui)
    names |= set(resources.value("concept_stoplist").concepts)
    mh: set[str] = set()  # UIs of the MeSH and type names the filters search, as the store reads them
    voc = resources.vocabulary
    for q in resources.rules.clinical_queries.rows:
        for t in _terms(parse(q.pubmed)):
            if t.field not in ("mh", "majr", "pt"):
                continue
            if "*" in t.text:  # a truncation needs one descriptor with its prefix
                prefix = t.text.casefold().rstrip("*")
                mh |= {min(d.ui for d in voc.descriptors.values() if d.name.casefold().startswith(prefix))}
                continue
            d = (_resolve_pubtype if t.field == "pt" else _resolve_descriptor)(voc, t.text)
            if d is not None:
                mh.add(d.ui)
    return names, trees, mh


def _terms(node):  # type: ignore[no-untyped-def]
    if isinstance(node, Term):
        yield node
    else:
        for item in node.items:
            yield from _terms(item)


def found_in_citations(resources) -> set[str]:  # type: ignore[no-untyped-def]
    from ebm.medline import iter_bundled
    from extractors.annotate import Annotator

    annotator = Annotator(resources)
    wanted = set(PMIDS)
    out: set[str] = set()
    for c in iter_bundled():
        if c.pmid not in wanted:
            continue
        a = annotator.annotate(c)
        for concept in a.concepts:
            out.add(concept.cui)
            out.update(concept.alternatives)
        for cand in [*a.problems, *a.interventions, *a.population]:
            out.update(cand.concepts)
        for h in c.mesh_headings or ():
            if h.descriptor_ui:
                out.add(h.descriptor_ui)
        for p in c.publication_types or ():
            if p.ui:
                out.add(p.ui)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from ebm.resources import Resources

    resources = Resources.load()
    voc = resources.vocabulary
    names, trees, mh = rule_terms(resources)
    keep: set[str] = set()
    for n in names | mh | set(NAMED):
        d = voc.get(n) or voc.by_name(n) or voc.resolve(n)
        if d is not None:
            keep.add(d.ui)
    for t in trees:
        below = sorted(voc.tree_descendants(t))
        keep.update(below[:1])
    keep |= {ui for ui in found_in_citations(resources) if ui in voc}
    # every ancestor in every tree, and the category roots
    for ui in list(keep):
        for t in voc.get(ui).tree_numbers:  # type: ignore[union-attr]
            parts = t.split(".")
            for k in range(1, len(parts)):
                anc = voc.by_tree(".".join(parts[:k]))
                if anc is not None:
                    keep.add(anc.ui)
    args.out.mkdir(parents=True, exist_ok=True)
    src = voc.directory
    for name in ("descriptors.tsv.gz", "terms.tsv.gz", "pharm_actions.tsv.gz"):
        with gzip.open(src / name, "rt", encoding="utf-8") as f:
            lines = [ln for ln in f if _keeps(name, ln, keep)]
        with open(args.out / name, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            gz.write("".join(lines).encode("utf-8"))
        print(f"{name}: {len(lines):,} rows", file=sys.stderr)
    print(f"{len(keep)} descriptors written to {args.out}")
    return 0


def _keeps(name: str, line: str, keep: set[str]) -> bool:
    cells = line.rstrip("\n").split("\t")
    return cells[0] in keep  # pharm_actions: the drug (its action may lie outside the subset)


if __name__ == "__main__":
    sys.exit(main())
