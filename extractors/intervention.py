"""Intervention (and comparison) extractor (Demner-Fushman & Lin 2007, section 5.5).

Interventions are concepts of the kinds that can treat, prevent or diagnose: drugs, therapeutic
and diagnostic procedures, health care activities, devices, psychotherapy, education, exercise.
Interventions and comparisons share these kinds, so all interventions under study are returned,
best first. Each mention scores

    kind x position x cue

- kind: how much the concept looks like an intervention, from its MeSH trees
  (``rules/intervention_kinds.tsv``): drugs and therapeutic procedures weigh most; chemicals that
  are usually measured (glucose, hormones, enzymes), vital signs, study methods and facilities
  weigh little or nothing; category roots ("treatment", "therapy") are too generic to name one;
- position: by how often a sentence there names the intervention (``POSITION_WEIGHTS``): the
  title most, then the aims (or the first two sentences), conclusions, background, results and,
  least, methods (measured on EBM-NLP; the paper favours methods too);
- cue: the strongest cue phrase of ``rules/intervention_cues.tsv`` that applies, either to the
  whole sentence ("we compared", "were randomized") or to the mention itself ("randomized to
  receive X", "efficacy of X", "X or placebo").

Interventions the concept index does not know are found through ``rules/intervention_terms.tsv``:
words with a drug-name stem ("imidafenacin", "olmesartan"), comparison words ("placebo"), and
phrases right after a cue ("effects of a psycho-educational intervention on ...") or right
before one ("remaxol vs placebo"), and title phrases ending in an intervention head noun
("Home-based reach-to-grasp training for ..."), weighted by their head noun; a phrase made only
of a disorder or persons ("the ASD group") or of a measure ("Gy/fraction") is none.

A candidate's score is the sum over its mentions; its span is its best mention.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

from ebm.concepts.annotate import Concept
from ebm.errors import InputError
from ebm.mesh import MeshVocabulary
from ebm.rules.table import Table, choice, load, number, text
from ebm.text.document import Document, Sentence
from ebm.text.roles import SentenceRole, sentence_role
from extractors.candidate import Candidate
from extractors.cues import CueSet, WeightedCue, cue_set
from extractors.population import PopulationWords
from extractors.tree_weights import TreeWeights

# Concepts without MeSH trees (UMLS CUIs) are interventions by semantic group.
INTERVENTION_GROUPS = ("CHEM", "PROC", "DEVI")
FOREIGN_GROUPS = ("DISO", "LIVB")  # disorders, persons: what a phrase before "group" must not be
LOCAL_WINDOW = 8  # tokens before a mention searched for a "before" cue
AFTER_CHARS = 30  # characters after a mention searched for an "after" cue

# Where a sentence stands: a key of ``POSITION_WEIGHTS`` by its role (``ebm.text.roles``),
# from its section (structured abstracts) or its place (unstructured).
_ROLE_CLASS = {"objective": "aims", "other": "other section"}
_GUESSED_CLASS = {"objective": "first two sentences", "conclusions": "last sentences"}
# How much a mention weighs by where it stands: by how often a sentence there names an
# intervention under study on the EBM-NLP development half A (``scripts/eval_extractors.py
# --positions``: title 90 %, aims 78 %, first two sentences 75 %, conclusions and last
# sentences 66 %, background 65 %, body 56 %, results 49 %, methods 40 %, other sections 29 %),
# squared and scaled to the title's 2.5. Methods sentences weigh little although the paper
# favours them: most describe measurements, doses and follow-up, or name co-interventions.
POSITION_WEIGHTS: dict[str, float] = {
    "title": 2.5,
    "aims": 1.9,
    "first two sentences": 1.7,
    "conclusions": 1.3,
    "last sentences": 1.3,
    "background": 1.3,
    "body": 0.9,
    "results": 0.7,
    "methods": 0.5,
    "other section": 0.3,
}


TERM_KINDS = ("stem", "word", "head")
TERM_COLUMNS = (
    choice("kind", TERM_KINDS, help="stem, word or head"),
    text("term", help="a drug-name ending, a word or phrase, or a head noun"),
    number("weight", minimum=0, maximum=2, help="0 to 2"),
)
REPEAT = 0.5
PHRASE_WEIGHT = 0.5  # a phrase after a cue whose head is no known intervention noun
COVERING_KIND = 0.3  # a concept of at least this kind weight leaves no room for a phrase over it
MIN_STEM_WORD = 6  # letters in a word before its ending counts as a drug stem
MAX_PHRASE = 6  # tokens
# Words skipped at the start of a phrase after a cue ("randomized to receive either a ...").
_PHRASE_SKIP = frozenset("a an the either both receive received receiving be being one two".split())
# Words that alone make no phrase: function words and the vocabulary of study reports.
_FUNCTION_WORDS = frozenset(
    """the both since other others type types same this these those such another their its effect
    effects efficacy effectiveness safety combination combinations crossover use study studies trial
    trials dose doses dosage group groups arm arms response responses administration comparison
    evaluation outcome outcomes result results patients subjects control controls experimental active
    first second third two three four each early late high low short long new immediate delayed
    significant difference differences change changes level levels""".split()
)
# Words that end a phrase after a cue (or start one before a cue).
_PHRASE_STOP = frozenset(
    """in on for among with to versus vs compared or and at during after before was were is are has
    have had by from as than who which that of plus alone may can could will would should did does
    be been being not no all each per every when where while whereas if because although since then
    also but so between""".split()
)


@dataclass(frozen=True)
class InterventionTerms:
    """The ``rules/intervention_terms.tsv`` rows, ready for matching."""

    stems: tuple[tuple[str, float], ...]  # longest first
    words: dict[tuple[str, ...], float]  # lower-cased token sequence -> weight
    heads: dict[str, float]
    stem_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    first_words: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        alternatives = "|".join(re.escape(s) for s, _ in self.stems) or "(?!)"
        object.__setattr__(self, "stem_pattern", re.compile(rf"\w{{3,}}?({alternatives})"))
        object.__setattr__(self, "first_words", frozenset(w[0] for w in self.words))

    def stem(self, word: str) -> tuple[float, str] | None:
        """(weight, why) when ``word`` ends in a drug stem after at least 3 letters."""
        if len(word) < MIN_STEM_WORD or not word.isalpha():
            return None
        m = self.stem_pattern.fullmatch(word.casefold())
        if m is None:
            return None
        stem = m.group(1)
        return next(w for s, w in self.stems if s == stem), f"drug name (stem -{stem})"


def load_intervention_terms(path: Path) -> InterventionTerms:
    """Read a terms table; ``InputError`` with file and line for a malformed row."""
    return intervention_terms_from_table(load(path, TERM_COLUMNS))


def intervention_terms_from_table(table: Table) -> InterventionTerms:
    path = table.path
    stems: list[tuple[str, float]] = []
    words: dict[tuple[str, ...], float] = {}
    heads: dict[str, float] = {}
    for row in table:
        term = row["term"].casefold()
        if not re.fullmatch(r"[\w-]+( [\w-]+)*", term):
            raise InputError(
                f"{path}:{row.line}: term {row['term']!r}: letters, digits, hyphens and spaces only"
            )
        if row["kind"] == "stem":
            if " " in term:
                raise InputError(f"{path}:{row.line}: a stem is one word ending, got {row['term']!r}")
            stems.append((term, row["weight"]))
        elif row["kind"] == "word":
            words[tuple(term.split())] = row["weight"]
        else:
            heads[term] = row["weight"]
    stems.sort(key=lambda x: -len(x[0]))
    return InterventionTerms(tuple(stems), words, heads)


@dataclass(frozen=True)
class Mention:
    """One scored occurrence: a concept, or a term the concept index does not know."""

    key: str  # concept ID, or the lower-cased term
    start: int
    end: int
    sentence: int
    token_start: int
    token_end: int
    kind: float
    kind_why: str
    concept: Concept | None = None


def _concept_mentions(concepts: list[Concept], voc: MeshVocabulary, kinds: TreeWeights) -> list[Mention]:
    out: list[Mention] = []
    for c in concepts:
        # Negation is ignored on purpose: "with or without streptokinase" names an intervention.
        if len(c.text) < 3 and c.long_form is None:
            continue  # "K", "EA": one- and two-letter matches are too often something else
        kind = kinds.weight(c.cui, voc)
        if kind is None:
            if not any(g in c.groups for g in INTERVENTION_GROUPS):
                continue
            kind = (1.0, "intervention group")
        if kind[0] > 0:
            out.append(
                Mention(c.cui, c.start, c.end, c.sentence, c.token_start, c.token_end, kind[0], kind[1], c)
            )
    return out


def _term_mentions(doc: Document, terms: InterventionTerms, covered: set[int]) -> list[Mention]:
    """Drug-stem words and listed words outside concept mentions."""
    out: list[Mention] = []
    toks = doc.tokens
    longest = max((len(w) for w in terms.words), default=0)
    i = 0
    while i < len(toks):
        if i in covered:
            i += 1
            continue
        hit: Mention | None = None
        first = toks[i].text.casefold() in terms.first_words
        for n in range(min(longest, len(toks) - i) if first else 0, 0, -1):
            key = tuple(t.text.casefold() for t in toks[i : i + n])
            if key in terms.words and toks[i + n - 1].sentence == toks[i].sentence:
                t0, t1 = toks[i], toks[i + n - 1]
                hit = Mention(
                    " ".join(key), t0.start, t1.end, t0.sentence, i, i + n, terms.words[key], "listed term"
                )
                break
        if hit is None:
            stem = terms.stem(toks[i].text)
            if stem:
                t = toks[i]
                hit = Mention(t.text.casefold(), t.start, t.end, t.sentence, i, i + 1, stem[0], stem[1])
        if hit:
            out.append(hit)
            i = hit.token_end
        else:
            i += 1
    return out


def _phrase_mentions(
    doc: Document,
    before: CueSet,
    after: CueSet,
    terms: InterventionTerms,
    covered: set[int],
    population_words: PopulationWords,
    foreign: frozenset[int] = frozenset(),
) -> list[Mention]:
    """Phrases right after a ``before`` cue or right before an ``after`` cue that no concept covers
    (``foreign``: tokens of disorders and persons, which alone make no phrase)."""
    toks = doc.tokens
    starts = [t.start for t in toks]
    out: list[Mention] = []
    seen: set[tuple[int, int]] = set()
    for s in doc.sentences:
        found = [("before", span) for span in before.positions(s.text)]
        # A capitalised cue word inside a sentence belongs to a name ("the German Myeloma Treatment
        # Group"), not to the report's wording.
        found += [("after", span) for span in after.positions(s.text) if not _in_name(s.text, span[0])]
        if s.position == "title":  # "Home-based reach-to-grasp training for people after stroke"
            found += [
                ("head", (toks[k].start - s.start, toks[k].end - s.start))
                for k in range(s.token_start, s.token_end)
                if toks[k].text.casefold() in terms.heads
            ]
        for where, (m_start, m_end) in found:
            if where == "head":
                j = bisect.bisect_left(starts, s.start + m_end, s.token_start, s.token_end)
                i = j - 1
                while (
                    i > s.token_start
                    and j - i < MAX_PHRASE
                    and _phrase_word(toks[i - 1].text, population_words)
                ):
                    i -= 1
            elif where == "before":
                i = bisect.bisect_left(starts, s.start + m_end, s.token_start, s.token_end)
                skipped = 0
                while i < s.token_end and _skipped_first(toks[i].text) and skipped < 3:
                    i += 1
                    skipped += 1
                j = i
                while j < s.token_end and j - i < MAX_PHRASE and _phrase_word(toks[j].text, population_words):
                    j += 1
            else:
                j = bisect.bisect_left(starts, s.start + m_start, s.token_start, s.token_end)
                i = j
                while (
                    i > s.token_start
                    and j - i < MAX_PHRASE
                    and _phrase_word(toks[i - 1].text, population_words)
                ):
                    i -= 1
            while i < j and (toks[i].text.casefold() in _PHRASE_SKIP or toks[i].text.isdigit()):
                i += 1  # "the postconditioning group", "2 tobacco use cessation interventions"
            if j <= i or (i, j) in seen or any(k in covered for k in range(i, j)):
                continue
            seen.add((i, j))
            words = [t.text for t in toks[i:j]]
            if not any(len(w) >= 3 and w.casefold() not in _FUNCTION_WORDS for w in words):
                continue
            if all(k in foreign for k in range(i, j)):
                continue  # "the ASD group": a disorder or persons, not what they received
            if all(
                p in population_words.measures or not p.isalpha()
                for w in words
                for p in re.split(r"[/-]", w.casefold())
            ):
                continue  # "3 Gy/fraction": a measure
            stem = next((x for w in words if (x := terms.stem(w))), None)
            if stem:
                kind = stem
                key = next(w for w in words if terms.stem(w)).casefold()
            elif words[-1].casefold() in terms.heads:
                said = "title phrase" if where == "head" else "phrase after a cue"
                kind = (terms.heads[words[-1].casefold()], f"{said}, head {words[-1]!r}")
                key = " ".join(words).casefold()
            else:
                kind = (PHRASE_WEIGHT, "phrase after a cue")
                key = " ".join(words).casefold()
            if all(w.casefold() in terms.heads for w in words):
                continue  # "treatment", "the intervention": names nothing in particular
            a, b = toks[i].start, toks[j - 1].end
            out.append(Mention(key, a, b, s.index, i, j, kind[0], kind[1]))
    return out


def _in_name(text: str, start: int) -> bool:
    return start > 0 and text[start].isupper() and text[:start].rstrip()[-1:] not in (".", ":", ";", "")


def _recurring(doc: Document, phrases: list[Mention], taken: set[int]) -> list[Mention]:
    """The phrases with their other occurrences in the document. A phrase known by nothing but
    its cue ("treated with the objective of ...") must occur twice to count: a name recurs."""
    if not phrases:
        return []
    toks = doc.tokens
    folded = [t.text.casefold() for t in toks]
    where: dict[str, list[int]] = {}
    for i, t in enumerate(folded):
        where.setdefault(t, []).append(i)
    by_key: dict[str, list[Mention]] = {}
    for m in phrases:
        by_key.setdefault(m.key, []).append(m)
    out: list[Mention] = []
    for key, ms in by_key.items():
        first = ms[0]
        words = [t.casefold() for t in doc.text[first.start : first.end].split()]
        n = first.token_end - first.token_start
        spans = {(m.token_start, m.token_end) for m in ms}
        used = set(taken)
        for m in ms:
            used.update(range(m.token_start, m.token_end))
        for i in where.get(folded[first.token_start], ()):
            if i + n > len(toks) or (i, i + n) in spans:
                continue
            if folded[i : i + n] != folded[first.token_start : first.token_end]:
                continue
            if any(k in used for k in range(i, i + n)) or toks[i + n - 1].sentence != toks[i].sentence:
                continue
            used.update(range(i, i + n))
            a, b = toks[i].start, toks[i + n - 1].end
            ms.append(
                Mention(key, a, b, toks[i].sentence, i, i + n, first.kind, first.kind_why + ", repeated")
            )
        if len(ms) >= 2 or first.kind > PHRASE_WEIGHT or len(words) > 1:
            out.extend(ms)
    return out


def _skipped_first(token: str) -> bool:
    return token.casefold() in _PHRASE_SKIP or token.isdigit()


def _phrase_word(token: str, words: PopulationWords) -> bool:
    t = token.casefold()
    return t not in _PHRASE_STOP and t not in words.participants and any(ch.isalpha() for ch in t)


def position_class(sentence: Sentence) -> str:
    """Where a sentence stands: a key of ``POSITION_WEIGHTS``."""
    return _position_class(sentence_role(sentence))


def _position_class(role: SentenceRole) -> str:
    if role.structured:
        return _ROLE_CLASS.get(role.role, role.role)
    return _GUESSED_CLASS.get(role.role, role.role)  # title, body


def position_weight(sentence: Sentence) -> tuple[float, str]:
    # The title and the aims (the first sentences of an unstructured abstract) name what is tested.
    role = sentence_role(sentence)
    where = _position_class(role)
    return POSITION_WEIGHTS[where], role.why() if role.structured else where


def _text_before(doc: Document, c: Mention) -> str:
    """The sentence's text up to ``LOCAL_WINDOW`` tokens before a mention, where cues that
    precede it are looked for."""
    s = doc.sentences[c.sentence]
    return doc.text[doc.tokens[max(s.token_start, c.token_start - LOCAL_WINDOW)].start : c.start]


def _mention_cue(doc: Document, c: Mention, before: CueSet, after: CueSet) -> WeightedCue | None:
    s = doc.sentences[c.sentence]
    cue_b = before.best(_text_before(doc, c))
    cue_a = after.best(doc.text[c.end : min(s.end, c.end + AFTER_CHARS)])
    if cue_a and (cue_b is None or cue_a.weight > cue_b.weight):
        return cue_a
    return cue_b


def extract_interventions(
    doc: Document,
    concepts: list[Concept],
    *,
    vocabulary: MeshVocabulary,
    cues: list[WeightedCue],
    kinds: TreeWeights,
    terms: InterventionTerms,
    words: PopulationWords,
) -> list[Candidate]:
    """All interventions under study, best first; each candidate's span is its best mention.

    ``cues``, ``kinds``, ``terms``: rules/intervention_cues.tsv, intervention_kinds.tsv and
    intervention_terms.tsv; ``words``: rules/population_words.tsv (participants end a phrase,
    measures are not interventions)."""
    voc = vocabulary
    whole = cue_set(tuple(c for c in cues if c.where == "sentence"))
    before = cue_set(tuple(c for c in cues if c.where == "before"))
    after = cue_set(tuple(c for c in cues if c.where == "after"))
    measured = cue_set(tuple(c for c in cues if c.where == "outcome"))
    mentions = _concept_mentions(concepts, voc, kinds)
    # Tokens of any concept the index knows: a term or phrase there is that concept's business.
    covered = {k for c in concepts for k in range(c.token_start, c.token_end)}
    strong = {k for m in mentions if m.kind >= COVERING_KIND for k in range(m.token_start, m.token_end)}
    mentions += _term_mentions(doc, terms, covered)
    taken = strong | {k for m in mentions if m.concept is None for k in range(m.token_start, m.token_end)}
    foreign = frozenset(
        k
        for c in concepts
        if any(g in c.groups for g in FOREIGN_GROUPS) and not any(g in c.groups for g in INTERVENTION_GROUPS)
        for k in range(c.token_start, c.token_end)
    )
    mentions += _recurring(doc, _phrase_mentions(doc, before, after, terms, taken, words, foreign), taken)
    sentence_cue: dict[int, WeightedCue | None] = {}
    totals: dict[str, float] = {}
    best: dict[str, tuple[float, Mention]] = {}
    reasons: dict[str, list[str]] = {}
    for m in mentions:
        s = doc.sentences[m.sentence]
        pw, where = position_weight(s)
        if m.sentence not in sentence_cue:
            sentence_cue[m.sentence] = whole.best(s.text)
        cue = sentence_cue[m.sentence]
        local = _mention_cue(doc, m, before, after)
        if local and (cue is None or local.weight > cue.weight):
            cue = local
        cw = cue.weight if cue else 1.0
        damp = measured.best(_text_before(doc, m))  # the study changes or measures it
        if damp:
            cw *= damp.weight
        w = m.kind * pw * cw
        totals[m.key] = totals.get(m.key, 0.0) + w
        if m.key not in best or w > best[m.key][0]:
            best[m.key] = (w, m)
        why = f"{doc.text[m.start : m.end]!r} in {where} x{pw:g}, {m.kind_why} x{m.kind:g}"
        if cue:
            why += f", cue {cue.phrase!r} ({cue.where}) x{cue.weight:g}"
        if damp:
            why += f", outcome cue {damp.phrase!r} x{damp.weight:g}"
        reasons.setdefault(m.key, []).append(why)
    # The best mention counts in full, repetitions less: a concept named often is not always the one tested.
    totals = {k: best[k][0] + REPEAT * (v - best[k][0]) for k, v in totals.items()}
    ranked = sorted(totals, key=lambda k: (-totals[k], best[k][1].start))
    out: list[Candidate] = []
    for key in ranked:
        m = best[key][1]
        out.append(
            Candidate(
                text=doc.text[m.start : m.end],
                start=m.start,
                end=m.end,
                score=totals[key],
                sentence=m.sentence,
                concepts=(m.concept.cui,) if m.concept else (),
                names=(m.concept.name,) if m.concept else (),
                evidence=tuple(reasons[key]),
            )
        )
    return out
