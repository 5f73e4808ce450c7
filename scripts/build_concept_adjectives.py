"""Derive rules/concept_adjectives.tsv: adjectives of disorder names, from WordNet.

MeSH names disorders with nouns ("Fever", "Obesity", "Gout"); clinicians also write the
adjective ("febrile", "obese", "gouty"), which suffix rules cannot produce when the two
words differ in their stem (febrile/fever). WordNet 3.0 links adjectives to the nouns they
derive from or pertain to (its "+" derivation and "\\" pertainym pointers). This script keeps
the links whose noun is a one-word key of a disorder concept in the concept index and whose
adjective is not itself a vocabulary key, then drops:
- adjectives adding a prefix the noun lacks ("afebrile", "anicteric", "anticancer",
  "precancerous"): the prefix negates or shifts the meaning;
- "-less" adjectives whose noun is not the "-lessness" one ("stingless");
- the adjectives in EXCLUDED: another sense dominates in clinical text ("blind" in
  double-blind, "sterile" saline, "sciatic" nerve, "tartaric" acid), checked by reading
  (entries measured to mislead on the BC5CDR training set go to concept_stoplist.tsv);
- for an adjective linked to several nouns, all but the one sharing its longest prefix.
The table lists nouns, not concept IDs: the matcher resolves them in whatever index it loads.

WordNet: `apt-get install wordnet-base` (/usr/share/wordnet) or NLTK's wordnet corpus; WordNet
3.0 licence (Princeton University), kept in the table's header.

Usage:
  python scripts/build_concept_adjectives.py [--wordnet DIR] [--out rules/concept_adjectives.tsv]
Needs a concept index (`ebm setup`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.errors import DataError, EbmError  # noqa: E402

WORDNET_DIRS = (
    Path("/usr/share/wordnet"),
    Path.home() / "nltk_data/corpora/wordnet",
    Path("/usr/share/nltk_data/corpora/wordnet"),
)
PREFIXES = ("anti", "non", "un", "pre", "post", "an", "a")
# Another sense dominates in clinical abstracts (each read in context).
EXCLUDED = frozenset(
    {
        "aural",  # of the ear, not an epileptic aura
        "blind",  # double-blind
        "cadaveric",
        "cadaverous",
        "callous",
        "carcinogenic",  # causing cancer, not a carcinoma
        "catarrhal",
        "convalescent",
        "corny",
        "deathly",
        "emergent",
        "fugal",
        "incendiary",
        "injurious",
        "lean",  # lean body mass
        "malignant",  # qualifies a named tumour ("malignant melanoma")
        "mongoloid",
        "mortuary",
        "recrudescent",
        "recurrent",  # qualifies a named disorder ("recurrent seizures")
        "rosaceous",
        "schizoid",  # schizoid personality, not schizophrenia
        "sciatic",  # sciatic nerve
        "shingly",
        "sterile",  # sterile saline
        "strenuous",
        "tartaric",  # tartaric acid
        "thin",  # thin layer
    }
)


def find_wordnet(given: Path | None) -> Path:
    env = [Path(p) for p in os.environ.get("WORDNET", "").split(":") if p]
    for d in [given] if given else [*env, *WORDNET_DIRS]:
        if d and (d / "data.adj").is_file() and (d / "data.noun").is_file():
            return d
    raise DataError("WordNet 3.0 not found (data.adj, data.noun): pass --wordnet DIR")


def read_synsets(path: Path) -> dict[str, tuple[list[str], list[tuple[str, str, str, int, int]]]]:
    """WordNet data file -> offset -> (words, pointers (symbol, offset, pos, source, target))."""
    out = {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):  # licence header
                continue
            parts = line.split(" | ", 1)[0].split()
            n_words = int(parts[3], 16)
            words = [re.sub(r"\(.*\)$", "", parts[4 + 2 * i]).lower() for i in range(n_words)]
            k = 4 + 2 * n_words
            n_ptrs = int(parts[k])
            k += 1
            ptrs = []
            for _ in range(n_ptrs):
                sym, off, pos, st = parts[k : k + 4]
                k += 4
                ptrs.append((sym, off, pos, int(st[:2], 16), int(st[2:], 16)))
            out[parts[0]] = (words, ptrs)
    return out


def adjective_nouns(wordnet: Path) -> dict[str, set[str]]:
    """One-word adjective -> the one-word nouns WordNet derives it from or relates it to."""
    adj = read_synsets(wordnet / "data.adj")
    noun = read_synsets(wordnet / "data.noun")
    out: dict[str, set[str]] = defaultdict(set)
    for words, ptrs in adj.values():
        for sym, off, pos, source, target in ptrs:
            if pos != "n" or sym not in ("+", "\\"):
                continue
            targets = noun[off][0]
            for a in words if source == 0 else [words[source - 1]]:
                for n in targets if target == 0 else [targets[target - 1]]:
                    if "_" not in a and "_" not in n and "-" not in a:
                        out[a].add(n)
    return out


def _common_prefix(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def derive(wordnet: Path) -> list[tuple[str, str, str]]:
    from ebm.concepts.groups import DISORDERS
    from ebm.concepts.index import index_dir, read_lookup
    from ebm.concepts.matcher import load_synonyms
    from ebm.concepts.normalize import term_keys

    lookup = read_lookup(index_dir())
    entries, concepts = lookup["entries"], lookup["concepts"]
    synonyms = dict(load_synonyms())
    rows = []
    for a, nouns in sorted(adjective_nouns(wordnet).items()):
        if a in EXCLUDED or a.endswith("less") and not any(n.endswith("lessness") for n in nouns):
            continue
        akey = term_keys(a)
        if not akey or akey[0] in entries:
            continue
        kept = []
        for n in sorted(nouns):
            if any(a.startswith(p) and not n.startswith(p) for p in PREFIXES):
                continue
            nkey = term_keys(n)[0] if term_keys(n) else ""
            cuis = (synonyms[nkey],) if nkey in synonyms else entries.get(nkey, ())
            names = [concepts[c][0] for c in cuis if c in concepts and DISORDERS in concepts[c][1]]
            if names:
                kept.append((n, names[0]))
        if kept:
            n, name = max(kept, key=lambda x: (_common_prefix(a, x[0]), -len(x[0])))
            rows.append((a, n, name))
    return rows


HEADER = """\
# Adjectives of disorder names ("febrile" -> fever -> Fever), used by the dictionary matcher
# where the adjective is not itself a vocabulary term; also before a generic head noun
# ("acute febrile illness" -> Fever).
#
# Format: ADJECTIVE <TAB> NOUN <TAB> the MeSH concept the noun names when derived (a note).
# The noun is looked up in the loaded index (curated synonyms first) and only its disorder
# concepts are used. Edits take effect the next time a matcher is loaded.
#
# Derived by scripts/build_concept_adjectives.py from WordNet 3.0 ("+" derivation and "\\"
# pertainym links; see the script for the filters). Drop an entry that misleads with a
# `term` line in concept_stoplist.tsv, or regenerate.
#
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS SOFTWARE AND
# DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES,
# EXPRESS OR IMPLIED. (WordNet licence: https://wordnet.princeton.edu/license-and-commercial-use)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wordnet", type=Path, default=None, help="directory with data.adj and data.noun")
    ap.add_argument("--out", type=Path, default=ROOT / "rules" / "concept_adjectives.tsv")
    args = ap.parse_args()
    try:
        rows = derive(find_wordnet(args.wordnet))
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    body = "".join(f"{a}\t{n}\t{name}\n" for a, n, name in rows)
    args.out.write_text(HEADER + "\n" + body, encoding="utf-8")
    print(f"{len(rows)} adjectives -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
