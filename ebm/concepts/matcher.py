"""Concept matchers: text -> concept mentions (span, concept ID, preferred name, groups).

``ConceptMatcher`` is the interface. Two implementations over the same index:
- ``DictionaryMatcher`` (default): exact lookup of normalised token n-grams
  (``ebm.concepts.normalize``) in a dict of the vocabulary's keys; longest match first.
  Thousands of abstracts per second.
- ``QuickUMLSMatcher``: QuickUMLS approximate (simstring) matching, run offline with a
  blank spaCy pipeline and the shipped stopword list; the reference and the fuzzy component.

Both drop what ``rules/concept_stoplist.tsv`` lists (generic words such as "drug", "disease").
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ebm.concepts.ages import age_groups, age_statement
from ebm.concepts.groups import CHEMICALS, DISORDERS
from ebm.concepts.index import ConceptInfo, read_concepts, read_lookup, read_meta, usable_key
from ebm.concepts.normalize import DROPPED_IN_TERMS, Token, adjective_keys, term_keys, tokenize
from ebm.errors import DataError, InputError
from ebm.rules.table import Table, choice, load, text

if TYPE_CHECKING:
    from ebm.rules.check import Problem


@dataclass(frozen=True)
class ConceptMatch:
    start: int  # character offsets into the matched text
    end: int
    text: str  # the text as written
    cui: str  # concept ID: a MeSH descriptor UI (or a UMLS CUI with a UMLS index)
    name: str  # the concept's preferred name
    groups: tuple[str, ...]  # semantic groups (ebm.concepts.groups), e.g. ("DISO",)
    similarity: float  # 1.0 for an exact (normalised) match
    alternatives: tuple[str, ...] = ()  # other concept IDs the same string names equally well
    # inside a longer match ("dopamine" in "dopamine receptor"); only from matchers asked for them
    nested: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "cui": self.cui,
            "name": self.name,
            "groups": list(self.groups),
            "similarity": round(self.similarity, 3),
            "alternatives": list(self.alternatives),
            "nested": self.nested,
        }


class ConceptMatcher(Protocol):
    name: str

    def match(self, text: str) -> list[ConceptMatch]:
        """Concept mentions in ``text`` in text order; they do not overlap, except those
        flagged ``nested`` (inside a longer match), which only some matchers give on request."""
        ...

    def concept(self, cui: str) -> ConceptInfo | None:
        """Preferred name and groups of a concept ID."""
        ...


# --- stoplist -----------------------------------------------------------------------------

_STOP_KINDS = ("term", "concept", "adjective", "salt")


@dataclass(frozen=True)
class Stoplist:
    keys: frozenset[str]  # normalised term keys never matched
    concepts: frozenset[str]  # concept IDs never reported
    # one-word keys not matched in the singular, where they are adjectives ("anticholinergic
    # effects"); the plural is the noun ("anticholinergics") and still matches
    adjectives: frozenset[str] = frozenset()
    # salt and ester words ("maleate", "hydrochloride", "sodium"): right after a chemical they
    # are part of its name ("enalapril maleate" is enalapril), not a concept of their own
    salts: frozenset[str] = frozenset()


_CONCEPT_ID = re.compile(r"[A-Z]\d+")

SYNONYM_COLUMNS = (
    text("term", help="the text to match"),
    text("concept", help="a concept ID (MeSH descriptor UI D000001 or UMLS CUI C0000001)"),
    text("note", required=False, help="a note"),
)
ADJECTIVE_COLUMNS = (
    text("adjective", help="one word"),
    text("noun", help="the noun it derives from, a vocabulary term"),
    text("note", required=False, help="a note"),
)
STOPLIST_COLUMNS = (
    choice("kind", _STOP_KINDS, help="term, concept, adjective or salt"),
    text("value", help="the text, word or concept ID"),
    text("note", required=False, help="the reason"),
)


def synonyms_from_table(table: Table) -> list[tuple[str, str]]:
    """``rules/concept_synonyms.tsv``: ``TERM<TAB>CONCEPT_ID[<TAB>note]`` -> (key, concept ID)."""
    out: list[tuple[str, str]] = []
    for row in table:
        if not _CONCEPT_ID.fullmatch(row["concept"]):
            raise InputError(
                f"{table.where(row)}: {row['concept']!r} is not a concept ID (D000001, C0000001)"
            )
        keys = term_keys(row["term"])
        if not keys:
            raise InputError(f"{table.where(row)}: {row['term']!r} has no letters or digits to match")
        out.extend((k, row["concept"]) for k in keys)
    return out


def adjectives_from_table(table: Table) -> list[tuple[str, str]]:
    """``rules/concept_adjectives.tsv``: ``ADJECTIVE<TAB>NOUN[<TAB>note]`` -> (adjective key,
    noun key). The matcher gives the adjective the disorder concepts its noun names."""
    out: list[tuple[str, str]] = []
    for row in table:
        adj, noun = term_keys(row["adjective"]), term_keys(row["noun"])
        if len(adj) != 1 or " " in adj[0]:
            raise InputError(f"{table.where(row)}: the adjective is one word, not {row['adjective']!r}")
        if not noun:
            raise InputError(f"{table.where(row)}: {row['noun']!r} has no letters or digits to match")
        out.append((adj[0], noun[0]))
    return out


def stoplist_from_table(table: Table) -> Stoplist:
    """``rules/concept_stoplist.tsv``: ``term<TAB>TEXT``, ``adjective<TAB>WORD``,
    ``salt<TAB>WORD`` or ``concept<TAB>ID``, then a reason."""
    keys: set[str] = set()
    concepts: set[str] = set()
    adjectives: set[str] = set()
    salts: set[str] = set()
    for row in table:
        kind, value = row["kind"], row["value"]
        if kind == "term":
            keys.update(term_keys(value))
        elif kind in ("adjective", "salt"):
            words = term_keys(value)
            if len(words) != 1 or " " in words[0]:
                raise InputError(f"{table.where(row)}: {kind} entries are one word, not {value!r}")
            (adjectives if kind == "adjective" else salts).add(words[0])
        else:
            if not _CONCEPT_ID.fullmatch(value):
                raise InputError(f"{table.where(row)}: {value!r} is not a concept ID (D000001, C0000001)")
            concepts.add(value)
    return Stoplist(frozenset(keys), frozenset(concepts), frozenset(adjectives), frozenset(salts))


def load_synonyms(path: Path) -> list[tuple[str, str]]:
    return synonyms_from_table(load(path, SYNONYM_COLUMNS))


def load_adjectives(path: Path) -> list[tuple[str, str]]:
    return adjectives_from_table(load(path, ADJECTIVE_COLUMNS))


def load_stoplist(path: Path) -> Stoplist:
    return stoplist_from_table(load(path, STOPLIST_COLUMNS))


def unknown_descriptors(
    table: Table, column: str, vocabulary: Any, kinds: tuple[str, ...] | None = None
) -> list[Problem]:
    """Rows naming a MeSH descriptor UI (D...) the vocabulary lacks."""
    from ebm.rules.check import Problem

    out = []
    for row in table:
        if kinds is not None and row.get("kind") not in kinds:
            continue
        cui = row[column]
        if cui.startswith("D") and cui not in vocabulary:
            out.append(Problem(str(table.path), row.line, f"{cui} is not a MeSH 2024 descriptor UI"))
    return out


def adjectives_without_disorder(
    table: Table, synonyms: list[tuple[str, str]], lookup: dict[str, Any] | None
) -> list[Problem]:
    """Adjective rows whose noun names no disorder in the concept index (nor through a curated
    synonym): such rows match nothing. Without an index only the format is checked."""
    from ebm.rules.check import Problem

    if lookup is None:
        return []
    entries, concepts = lookup["entries"], lookup["concepts"]
    syn = dict(synonyms)
    out = []
    for row, (_, noun) in zip(table, adjectives_from_table(table), strict=True):
        cuis = (syn[noun],) if noun in syn else entries.get(noun, ())
        if not any(c in concepts and DISORDERS in concepts[c][1] for c in cuis):
            out.append(Problem(str(table.path), row.line, f"{noun!r} names no disorder in the concept index"))
    return out


# --- dictionary matcher -------------------------------------------------------------------


class DictionaryMatcher:
    """Exact matching of normalised n-grams against the vocabulary's keys, longest first."""

    name = "dictionary"

    def __init__(
        self,
        directory: Path,
        stoplist: Stoplist,
        synonyms: list[tuple[str, str]],
        adjective_table: list[tuple[str, str]],
        *,
        adjectives: bool = True,
        nested: bool | Collection[str] = False,
        stopwords: frozenset[str] | None = None,
        regroup: Callable[[str], tuple[str, ...] | None] | None = None,
    ) -> None:
        """``adjectives``: match adjectives of disorders ("febrile" -> Fever), from
        ``adjective_table`` (``rules/concept_adjectives.tsv``) and the index's suffix
        rules. ``nested``: also report matches inside longer ones: True for all, or a set of
        groups (``{"CHEM"}``: chemicals named inside chemical names such as "dopamine
        receptor"), reported only when both the inner and the outer match are in them.
        ``stopwords``: a rules directory's stopwords, when they differ from those the index was
        built with (keys made only of stopwords are dropped); ``regroup``: concept ID -> its
        semantic groups under a rules directory's group table (None: keep the index's)."""
        self.directory = directory
        self.nested = bool(nested)
        self.nested_groups = None if nested is True or not nested else frozenset(nested)
        self.meta = read_meta(self.directory)
        self.stoplist = stoplist
        lookup = read_lookup(self.directory)
        self.concepts = {
            cui: ConceptInfo(cui, name, groups) for cui, (name, groups) in lookup["concepts"].items()
        }
        if regroup is not None:
            for cui, info in self.concepts.items():
                g = regroup(cui)
                if g is not None and g != info.groups:
                    self.concepts[cui] = ConceptInfo(cui, info.name, g)
        # key -> concept IDs of the best rank for that key (ties kept, in ID order)
        entries: dict[str, tuple[str, ...]] = lookup["entries"]
        if stopwords is not None:
            for key in [k for k in entries if not usable_key(k, stopwords)]:
                del entries[key]
        if adjectives:
            self._add_adjectives(entries, lookup["adjectives"], synonyms, adjective_table)
        # General names MeSH has only as heads of inverted names ("lupus erythematosus",
        # "angina"), found at build time (ebm.concepts.index.general_names).
        for key, cuis in lookup.get("general", {}).items():
            entries.setdefault(key, cuis)
        # An episode of a disorder names the disorder ("major depressive episode").
        episodes = {
            key[: -len("disorder")] + "episode": cuis
            for key, cuis in entries.items()
            if key.endswith(" disorder") and any(DISORDERS in self.concepts[c].groups for c in cuis)
        }
        for key, cuis in episodes.items():
            entries.setdefault(key, cuis)
        for key in self.stoplist.keys:
            entries.pop(key, None)
        if self.stoplist.concepts:
            # A stoplisted concept leaves its keys to the other concepts of the same rank.
            for key, cuis in list(entries.items()):
                if any(c in self.stoplist.concepts for c in cuis):
                    kept = tuple(c for c in cuis if c not in self.stoplist.concepts)
                    if kept:
                        entries[key] = kept
                    else:
                        del entries[key]
        # Curated synonyms win over the vocabulary for the same key.
        for key, cui in synonyms:
            if cui in self.concepts:
                entries[key] = (cui,)
        self.entries = entries
        self.max_len: dict[str, int] = {}
        for key in self.entries:
            toks = key.split(" ")
            if len(toks) > self.max_len.get(toks[0], 0):
                self.max_len[toks[0]] = len(toks)

    def _add_adjectives(
        self,
        entries: dict[str, tuple[str, ...]],
        derived: dict[str, tuple[str, ...]],
        synonyms: list[tuple[str, str]],
        table: list[tuple[str, str]],
    ) -> None:
        """Adjectives of disorders as keys, where the adjective is not a vocabulary term:
        first the table's (a lexicon's derivations: "febrile" -> "fever" -> Fever), then the
        index's suffix rules ("hypertensive" -> Hypertension). Each also names its disorder
        before a generic head noun ("febrile illness", "diabetic disease")."""
        syn = {k: c for k, c in synonyms if c in self.concepts}
        found: dict[str, tuple[str, ...]] = {}
        for adj, noun in table:
            if adj in entries or adj in found:
                continue
            cuis = (syn[noun],) if noun in syn else entries.get(noun, ())
            diso = tuple(c for c in cuis if DISORDERS in self.concepts[c].groups)
            if diso:
                found[adj] = diso
        for adj, cuis in derived.items():
            found.setdefault(adj, cuis)
        # the same suffix rules on one-word synonyms ("nephrotoxicity" -> "nephrotoxic")
        for key, cui in syn.items():
            if DISORDERS in self.concepts[cui].groups:
                for adj in adjective_keys(key):
                    if adj not in entries:
                        found.setdefault(adj, (cui,))
        for adj, cuis in found.items():
            entries.setdefault(adj, cuis)
            for head in DISORDER_HEADS:
                entries.setdefault(f"{adj} {head}", cuis)

    def concept(self, cui: str) -> ConceptInfo | None:
        return self.concepts.get(cui)

    def _matches_at(self, norms: list[str], i: int) -> list[tuple[int, tuple[str, ...]]]:
        """Vocabulary matches starting at token ``i``: (end token, concept IDs), longest first;
        only the longest unless nested matches are wanted."""
        longest = self.max_len.get(norms[i])
        if longest is None:
            return []
        out = []
        for j in range(min(len(norms), i + longest), i, -1):
            cuis = self.entries.get(" ".join(norms[i:j]))
            if cuis:
                out.append((j, cuis))
                if not self.nested:
                    break
        return out

    def match(self, text: str) -> list[ConceptMatch]:
        out: list[ConceptMatch] = []
        for segment in tokenize(text):
            seg: list[Token] = [t for t in segment if t.norm not in DROPPED_IN_TERMS]
            norms = [t.norm for t in seg]
            at = [
                [] if i and _glued_to_previous(text, seg, i) else self._matches_at(norms, i)
                for i in range(len(norms))
            ]
            for i, norm in enumerate(norms):
                if norm == "aged":
                    self._age_statement(text, seg, i, at)
            if self.stoplist.adjectives:
                for i, found in enumerate(at):
                    if norms[i] in self.stoplist.adjectives and text[seg[i].end - 1] not in "sS":
                        at[i] = [(j, c) for j, c in found if j != i + 1]
            selected = _select([(i, m[0][0], m[0][1]) for i, m in enumerate(at) if m])
            if self.stoplist.salts:
                selected = self._with_salts(text, seg, selected)
            for i, j, cuis in selected:
                outer = self._make(text, seg, i, j, cuis, False)
                out.append(outer)
                if self.nested and j - i > 1 and self._nests(outer.groups):
                    inner = []
                    for k in range(i, j):
                        best = next(((jj, c) for jj, c in at[k] if jj <= j and (k, jj) != (i, j)), None)
                        if best:
                            inner.append((k, best[0], best[1]))
                    for a, b, c in _select(inner):
                        m = self._make(text, seg, a, b, c, True)
                        if self._nests(m.groups):
                            out.append(m)
        out.sort(key=lambda m: (m.start, -m.end))
        return out

    def _with_salts(
        self, text: str, seg: list[Token], selected: list[tuple[int, int, tuple[str, ...]]]
    ) -> list[tuple[int, int, tuple[str, ...]]]:
        """A salt word right after a chemical joins its span ("fluticasone propionate" is
        Fluticasone; "maleate" there is no Maleates), and its own match is dropped."""
        ends = {i: j for i, j, _ in selected}
        out: list[tuple[int, int, tuple[str, ...]]] = []
        absorbed: set[int] = set()
        for i, j, cuis in selected:
            if i in absorbed:
                continue
            while (
                j < len(seg)
                and seg[j].norm in self.stoplist.salts
                and ends.get(j, j + 1) == j + 1  # not the start of a longer term ("sodium chloride")
                and not text[seg[j - 1].end : seg[j].start].strip()
                and CHEMICALS in self.concepts[cuis[0]].groups
            ):
                absorbed.add(j)
                j += 1
            out.append((i, j, cuis))
        return out

    def _age_statement(
        self, text: str, seg: list[Token], i: int, at: list[list[tuple[int, tuple[str, ...]]]]
    ) -> None:
        """ "children aged 2 to 12 years" states an age: not the Aged group (people of 65 and
        over) but the MeSH age groups of that age (``ebm.concepts.ages``), over the whole
        statement. Longer vocabulary terms starting on "aged" ("aged 80 and over") stay."""
        stated = age_statement(text, seg[i].end)
        if stated is None:
            return
        j = i + 1
        while j < len(seg) and seg[j].end <= stated.end:
            j += 1
        cuis = tuple(g.ui for g in age_groups(stated.low, stated.high) if g.ui in self.concepts)
        kept = [(k, c) for k, c in at[i] if k > j]
        at[i] = kept + ([(j, cuis)] if cuis and j > i + 1 else [])

    def _nests(self, groups: tuple[str, ...]) -> bool:
        return self.nested_groups is None or any(g in self.nested_groups for g in groups)

    def _make(
        self, text: str, seg: list[Token], i: int, j: int, cuis: tuple[str, ...], nested: bool
    ) -> ConceptMatch:
        start, end = seg[i].start, seg[j - 1].end
        info = self.concepts[cuis[0]]
        return ConceptMatch(
            start, end, text[start:end], info.cui, info.name, info.groups, 1.0, cuis[1:], nested
        )


# Generic head nouns after a disorder adjective: "acute febrile illness" names Fever.
DISORDER_HEADS = ("illness", "disease", "disorder", "condition")

# "clonidine-induced hypotension": the participle belongs to the compound before it, so no
# term starts on it ("induced hypotension" is the anaesthetic procedure Hypotension, Controlled).
PARTICIPLES = frozenset({"induced", "associated", "related", "mediated", "dependent", "treated", "exposed"})


# "non-obese" is not obese: no term starts after a glued "non-" (terms starting on "non",
# "non-small cell lung cancer", still match).
NEGATING_PREFIXES = frozenset({"non"})


def _glued_to_previous(text: str, seg: list[Token], i: int) -> bool:
    """No term starts on token ``i``: a participle glued to the word before it, or a word
    glued to a negating prefix."""
    t, prev = seg[i], seg[i - 1]
    if prev.end != t.start - 1 or text[t.start - 1] != "-":
        return False
    return t.norm in PARTICIPLES or prev.norm.lower() in NEGATING_PREFIXES


def _select(cands: list[tuple[int, int, tuple[str, ...]]]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Non-overlapping token spans, longest first, then leftmost."""
    taken: list[tuple[int, int]] = []
    chosen = []
    for i, j, cuis in sorted(cands, key=lambda c: (c[0] - c[1], c[0])):
        if any(i < b and a < j for a, b in taken):
            continue
        taken.append((i, j))
        chosen.append((i, j, cuis))
    chosen.sort()
    return chosen


# --- QuickUMLS ----------------------------------------------------------------------------


class QuickUMLSMatcher:
    """QuickUMLS's approximate matcher, offline: no spaCy model, no NLTK download.

    Candidates for a span are ranked by similarity first (QuickUMLS adds 1 for a preferred
    term, so a preferred fuzzy match would beat an exact synonym).
    """

    name = "quickumls"

    def __init__(
        self,
        directory: Path,
        stoplist: Stoplist,
        stopwords: frozenset[str],
        threshold: float = 0.9,
        similarity: str = "jaccard",
        window: int = 5,
    ) -> None:
        self.directory = directory
        self.meta = read_meta(self.directory)
        if not self.meta.get("quickumls"):
            raise DataError(f"the concept index at {self.directory} was built without QuickUMLS")
        self.stoplist = stoplist
        self.concepts = read_concepts(self.directory)
        self.threshold = threshold
        self._qu = _offline_quickumls(self.directory / "quickumls", threshold, similarity, window, stopwords)

    def concept(self, cui: str) -> ConceptInfo | None:
        return self.concepts.get(cui)

    def match(self, text: str) -> list[ConceptMatch]:
        out = []
        for group in self._qu.match(text, best_match=True, ignore_syntax=False):
            best = group[0]
            cui = best["cui"]
            if cui in self.stoplist.concepts or any(k in self.stoplist.keys for k in term_keys(best["term"])):
                continue
            info = self.concepts.get(cui)
            if info is None:
                continue
            alts = tuple(m["cui"] for m in group[1:] if m["similarity"] == best["similarity"])
            out.append(
                ConceptMatch(
                    best["start"],
                    best["end"],
                    text[best["start"] : best["end"]],
                    cui,
                    info.name,
                    info.groups,
                    float(best["similarity"]),
                    tuple(dict.fromkeys(a for a in alts if a != cui)),
                )
            )
        out.sort(key=lambda m: m.start)
        return out


def _offline_quickumls(
    path: Path, threshold: float, similarity: str, window: int, stop: frozenset[str]
) -> Any:
    import nltk
    import spacy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # quickumls_simstring imports `imp`
        from quickumls import QuickUMLS

    class _QuickUMLS(QuickUMLS):  # type: ignore[misc]
        def _get_all_matches(self, ngrams: Any) -> list[list[dict[str, Any]]]:
            groups = super()._get_all_matches(ngrams)
            return [sorted(g, key=lambda m: (m["similarity"], m["preferred"]), reverse=True) for g in groups]

    nltk_dir = str(path / "nltk_data")
    if nltk_dir not in nltk.data.path:
        nltk.data.path.insert(0, nltk_dir)
    qu = _QuickUMLS(
        str(path),
        threshold=threshold,
        similarity_name=similarity,
        window=window,
        accepted_semtypes=None,
        spacy_component=True,  # skips spacy.load of a model we do not have
    )
    qu._stopwords = set(stop) | {"time"}
    qu.nlp = spacy.blank("en")
    return qu


# --- loading ------------------------------------------------------------------------------

MATCHERS = ("dictionary", "quickumls")
