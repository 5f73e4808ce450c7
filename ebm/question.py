"""A question in plain words -> a PICO frame (issue 16; the paper's section 12 future work).

``parse_question(text, matcher, vocabulary, cues, model)`` reads a clinical question or a few
keywords ("Is ibuprofen better than acetaminophen for fever in children?", "leg cramps
quinine") and fills a ``Frame``:

1. Words are tokenised (Unicode: accented words are words) and the concept matcher marks the
   MeSH concepts and their semantic groups.
2. The cue table (``rules/question_cues.tsv``, ``load_question_cues``) marks task phrases
   ("prevent*", "accuracy", "risk factor"), role phrases ("versus" -> comparison next,
   "X causes" -> intervention before) and ignored function words.
3. The remaining words form chunks: runs of content words, split where the kind of concept
   changes (a disorder next to a drug in "leg cramps quinine"); words without a concept join
   the concept after them ("suspected acute appendicitis").
4. A chunk's role comes from the cue next to it, adjusted to its kind (persons are the
   population); where no cue decides, from a small trained model (``RoleModel``, shipped in
   ``ebm/data/models/question_roles.json.gz``, trained by ``scripts/train_question_model.py``).
5. The task is the one with the most cue weight; no cue, or a tie, is said in ``task_reason``.

Every input word ends up in a slot, in a cue, among the ignored function words, or in
``unplaced`` (a chunk the model gives no role): none is dropped silently.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebm.concepts.groups import CHEMICALS, DEVICES, DISORDERS, LIVING_BEINGS, PERSONS, PROCEDURES
from ebm.errors import DataError, InputError
from ebm.frame import Frame, Task
from ebm.rules.table import Table, choice, load, number, text

if TYPE_CHECKING:
    from ebm.concepts.matcher import ConceptMatch, ConceptMatcher
    from ebm.mesh import MeshVocabulary

ROLES = ("problem", "co_problem", "population", "intervention", "comparison", "outcome")
# What the model may answer: a role, or "other" (the chunk is reported as unplaced).
MODEL_LABELS = ("problem", "population", "intervention", "comparison", "outcome", "other")
CUE_KINDS = ("task", "word", "prior", "before", "after", "ignore")
CHUNK_KINDS = ("disorder", "agent", "person")
CUE_VALUES = (*(t.value for t in Task), *ROLES, "same", "-")

QUESTION_CUE_COLUMNS = (
    choice("kind", CUE_KINDS, help="task, word, prior, before, after or ignore"),
    text("phrase", help="lower-case words; a trailing * matches any ending"),
    choice("value", CUE_VALUES, help="a task (task rows), a role or 'same' (before/after), '-' (ignore)"),
    number("weight", required=False, default=1.0, minimum=0, help="evidence weight of a task row"),
)

# Semantic groups -> the kind of thing a chunk names.
_KIND_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("disorder", frozenset({DISORDERS})),
    ("agent", frozenset({CHEMICALS, PROCEDURES, DEVICES})),
    ("person", frozenset({PERSONS, LIVING_BEINGS})),
)
_RULED_OUT: dict[str, tuple[str, ...]] = {
    "agent": ("problem",),
    "disorder": ("intervention", "comparison"),
}
_CONSUMING = ("task", "before", "after")  # cue kinds whose words fill no slot
_BREAK = re.compile(r"[,;:?!.\[\]{}\"“”]")
_WORD = re.compile(r"[^\W_]+(?:['’\-/+.][^\W_]+)*|\+")


# --- cue table --------------------------------------------------------------------------


@dataclass(frozen=True)
class Cue:
    kind: str  # task, before, after, ignore
    words: tuple[str, ...]  # folded words; "prevent*" keeps its star
    value: str
    weight: float
    where: str  # file:line

    def matches(self, folded: Sequence[str], i: int) -> bool:
        if i + len(self.words) > len(folded):
            return False
        for w, t in zip(self.words, folded[i : i + len(self.words)], strict=False):
            if w.endswith("*"):
                if not t.startswith(w[:-1]):
                    return False
            elif w != t:
                return False
        return True


@dataclass(frozen=True)
class QuestionCues:
    """The cue table: rows by first word, for matching at each word of a question."""

    cues: tuple[Cue, ...]
    table: Table | None = None
    # cues by their first word, and those whose first word ends in * (kept in table order)
    _by_first: dict[str, tuple[Cue, ...]] = field(default_factory=dict, repr=False, compare=False)
    _starred: tuple[Cue, ...] = field(default=(), repr=False, compare=False)
    _order: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    _function_words: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        by_first: dict[str, list[Cue]] = {}
        for c in self.cues:
            if not c.words[0].endswith("*"):
                by_first.setdefault(c.words[0], []).append(c)
        object.__setattr__(self, "_by_first", {k: tuple(v) for k, v in by_first.items()})
        object.__setattr__(self, "_starred", tuple(c for c in self.cues if c.words[0].endswith("*")))
        object.__setattr__(self, "_order", {id(c): i for i, c in enumerate(self.cues)})
        ignored = frozenset(c.words[0] for c in self.cues if c.kind == "ignore" and len(c.words) == 1)
        object.__setattr__(self, "_function_words", ignored)

    def starting(self, first: str) -> list[Cue]:
        """Cues whose first word matches ``first``, longest phrase first."""
        found = list(self._by_first.get(first, ()))
        found += [c for c in self._starred if first.startswith(c.words[0][:-1])]
        return sorted(found, key=lambda c: self._order[id(c)]) if len(found) > 1 else found

    def is_function_word(self, word: str) -> bool:
        return word in self._function_words


def fold(word: str) -> str:
    """Lower case without accents: cue phrases match "Ménière" as "meniere"."""
    d = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in d if not unicodedata.combining(c)).replace("’", "'")


def load_question_cues(path: str | Path) -> QuestionCues:
    """``rules/question_cues.tsv`` (``ebm.rules.table``: typed columns, file:line errors)."""
    return question_cues_from_table(load(path, QUESTION_CUE_COLUMNS))


def question_cues_from_table(table: Table) -> QuestionCues:
    """The cues of a loaded table (a ``TableSpec`` builder); ``InputError`` names file:line."""
    cues: list[Cue] = []
    for row in table:
        where = table.where(row)
        words = tuple(fold(w) for w in row["phrase"].split())
        if not words:
            raise InputError(f"{where}: column 'phrase': empty")
        kind, value = row["kind"], row["value"]
        if kind == "prior" and (len(words) != 1 or words[0] not in CHUNK_KINDS):
            raise InputError(
                f"{where}: column 'phrase': a prior row names a kind of words ({', '.join(CHUNK_KINDS)}), "
                f"not {row['phrase']!r}"
            )
        if kind in ("task", "word", "prior") and value not in {t.value for t in Task}:
            raise InputError(f"{where}: column 'value': a task row needs a task, not {value!r}")
        if kind in ("before", "after") and value not in (*ROLES, "same"):
            raise InputError(f"{where}: column 'value': a {kind} row needs a role or 'same', not {value!r}")
        if kind == "ignore" and value != "-":
            raise InputError(f"{where}: column 'value': an ignore row takes '-', not {value!r}")
        weight = row["weight"] if row["weight"] is not None else 1.0
        cues.append(Cue(kind, words, value, float(weight), where))
    # Longest phrase first ("in reducing" before "in"); at equal length a role cue before a
    # task cue, so that "reduce" marks an outcome after it and still counts for therapy.
    cues.sort(key=lambda c: (-len(c.words), c.kind not in ("before", "after")))
    return QuestionCues(tuple(cues), table)


# --- the role model -----------------------------------------------------------------------


@dataclass(frozen=True)
class RoleModel:
    """Multinomial logistic regression over sparse chunk features (trained with scikit-learn,
    stored as plain JSON weights: no pickle, no scikit-learn at run time)."""

    labels: tuple[str, ...]
    features: dict[str, int]
    coef: tuple[tuple[float, ...], ...]  # [label][feature]
    intercept: tuple[float, ...]
    info: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, feats: Sequence[str]) -> dict[str, float]:
        idx = [self.features[f] for f in feats if f in self.features]
        scores = [b + sum(row[i] for i in idx) for row, b in zip(self.coef, self.intercept, strict=True)]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return {lab: e / total for lab, e in zip(self.labels, exps, strict=True)}

    def to_dict(self) -> dict[str, Any]:
        names = sorted(self.features, key=self.features.__getitem__)
        return {
            "labels": list(self.labels),
            "features": names,
            "coef": [[round(x, 5) for x in row] for row in self.coef],
            "intercept": [round(x, 5) for x in self.intercept],
            "info": self.info,
        }


def load_role_model(path: str | Path) -> RoleModel:
    """The shipped role model (``ebm/data/models/question_roles.json.gz``)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"question role model not found: {p} (python scripts/train_question_model.py)")
    try:
        with gzip.open(p, "rt", encoding="utf-8") as f:
            d = json.load(f)
        labels = tuple(d["labels"])
        model = RoleModel(
            labels,
            {name: i for i, name in enumerate(d["features"])},
            tuple(tuple(float(x) for x in row) for row in d["coef"]),
            tuple(float(x) for x in d["intercept"]),
            dict(d.get("info", {})),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{p}: not a question role model ({exc})") from None
    if len(model.coef) != len(labels) or any(len(r) != len(model.features) for r in model.coef):
        raise DataError(f"{p}: weights do not match labels and features")
    return model


# --- parsing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    text: str
    folded: str


@dataclass
class Chunk:
    """A run of content words that fills one slot value."""

    first: int  # word indices, inclusive
    last: int
    kind: str | None  # disorder, agent, person, or None (no concept of those kinds)
    concepts: list[ConceptMatch]
    role: str | None = None
    how: str = ""  # which cue or the model decided the role
    joined: bool = False  # coordinated with the chunk before ("X or Y") and given its role

    def span(self, words: Sequence[Word]) -> tuple[int, int]:
        return words[self.first].start, words[self.last].end


@dataclass(frozen=True)
class WordUse:
    """What became of one input word."""

    text: str
    start: int
    use: str  # a slot name, "cue", "ignored" or "unplaced"


@dataclass(frozen=True)
class ParsedQuestion:
    frame: Frame
    task_reason: str
    words: tuple[WordUse, ...]
    roles: tuple[tuple[str, str, str], ...]  # (slot value, slot, how decided), in text order
    # slot values that are exactly one concept -> its preferred name ("fever" -> "Fever")
    concept_names: tuple[tuple[str, str], ...] = ()

    @property
    def unplaced(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words if w.use == "unplaced")

    @property
    def ignored(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words if w.use == "ignored")

    @property
    def cue_words(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words if w.use == "cue")

    def to_dict(self) -> dict[str, Any]:
        return {
            "frame": self.frame.to_dict(),
            "task_reason": self.task_reason,
            "unplaced": list(self.unplaced),
            "ignored": list(self.ignored),
            "cues": list(self.cue_words),
            "roles": [{"text": t, "slot": s, "how": h} for t, s, h in self.roles],
            "concept_names": dict(self.concept_names),
        }


def tokenize(text: str) -> list[Word]:
    return [Word(m.start(), m.end(), m.group(), fold(m.group())) for m in _WORD.finditer(text)]


def _kind(groups: set[str]) -> str | None:
    for kind, gs in _KIND_GROUPS:
        if groups & gs:
            return kind
    return None


def _kind_of(m: ConceptMatch | None) -> str | None:
    return _kind(set(m.groups)) if m is not None else None


def _mark_cues(words: list[Word], cues: QuestionCues) -> tuple[list[str | None], list[Cue | None]]:
    """Per word: "cue", "ignored" or None (content); and the role/task cue starting there."""
    marks: list[str | None] = [None] * len(words)
    starts: list[Cue | None] = [None] * len(words)
    folded = [w.folded for w in words]
    i = 0
    while i < len(words):
        found = next(
            (c for c in cues.starting(folded[i]) if c.kind in _CONSUMING and c.matches(folded, i)), None
        )
        if found is not None:
            starts[i] = found
            for j in range(i, i + len(found.words)):
                marks[j] = "cue"
            i += len(found.words)
            continue
        if any(c.kind == "ignore" and c.matches(folded, i) for c in cues.starting(folded[i])):
            marks[i] = "ignored"
        i += 1
    return marks, starts


def _word_concepts(words: list[Word], matches: list[ConceptMatch]) -> list[ConceptMatch | None]:
    """The concept match covering each word (matches and words are both in text order)."""
    out: list[ConceptMatch | None] = [None] * len(words)
    i = 0
    for m in matches:
        if m.nested:
            continue
        while i < len(words) and words[i].end <= m.start:
            i += 1
        j = i
        while j < len(words) and words[j].start < m.end:
            out[j] = m
            j += 1
    return out


def _chunks(
    text: str, words: list[Word], marks: list[str | None], concept_of: list[ConceptMatch | None]
) -> list[Chunk]:
    # A concept spanning a function word ("quality of life") keeps it as content; a concept
    # of the word alone ("patients") does not ...
    def inside_longer(i: int) -> bool:
        m = concept_of[i]
        return m is not None and (m.start < words[i].start or m.end > words[i].end)

    content = [marks[i] is None or (marks[i] == "ignored" and inside_longer(i)) for i in range(len(words))]

    # ... nor does "patients" next to other content ("elderly patients", "patients over 75
    # years"), where it is kept with it
    def next_to_content(i: int, j: int) -> bool:
        return (
            0 <= j < len(words)
            and content[j]
            and not _BREAK.search(text[words[min(i, j)].end : words[max(i, j)].start])
        )

    persons = [
        i
        for i, m in enumerate(concept_of)
        if marks[i] == "ignored" and m is not None and _kind_of(m) == "person"
    ]
    for i in persons:
        if next_to_content(i, i - 1) or next_to_content(i, i + 1):
            content[i] = True
    for i, m in enumerate(concept_of):
        if m is not None and marks[i] == "cue":
            concept_of[i] = None  # cue words are no concepts ("risk factor", "diagnosis")
    runs: list[list[int]] = []
    for i in range(len(words)):
        if not content[i]:
            continue
        glued = runs and runs[-1][-1] == i - 1 and not _BREAK.search(text[words[i - 1].end : words[i].start])
        if glued:
            runs[-1].append(i)
        else:
            runs.append([i])
    chunks: list[Chunk] = []
    for run in runs:
        kinds = [_kind_of(concept_of[i]) for i in run]
        # words without a kind join the next word with one (modifiers come first), else the last
        pieces: list[tuple[list[int], str | None]] = []
        pending: list[int] = []
        for i, k in zip(run, kinds, strict=True):
            if k is None:
                pending.append(i)
                continue
            same_concept = pieces and concept_of[pieces[-1][0][-1]] is concept_of[i]
            if pieces and not pending and (pieces[-1][1] == k or same_concept):
                pieces[-1][0].append(i)
            else:
                pieces.append((pending + [i], k))
            pending = []
        if pending:
            if pieces and pieces[-1][0][-1] == pending[0] - 1:
                pieces[-1][0].extend(pending)
            else:
                pieces.append((pending, None))
        for idx, k in pieces:
            found: list[ConceptMatch] = []
            for i in idx:
                m = concept_of[i]
                if m is not None and m not in found:
                    found.append(m)
            chunks.append(Chunk(idx[0], idx[-1], k, found))
    return _merge_coordinated(words, _merge_of(words, marks, chunks))


def _merge_coordinated(words: list[Word], chunks: list[Chunk]) -> list[Chunk]:
    """ "acute or subacute low back pain": a one-word chunk of no kind coordinated with the
    next one modifies it."""
    out: list[Chunk] = []
    k = 0
    while k < len(chunks):
        c = chunks[k]
        if c.kind is None and c.first == c.last and k + 1 < len(chunks):
            nxt = chunks[k + 1]
            between = [words[i].folded for i in range(c.last + 1, nxt.first)]
            if between in (["or"], ["and"]) and nxt.kind is not None:
                out.append(Chunk(c.first, nxt.last, nxt.kind, c.concepts + nxt.concepts))
                k += 2
                continue
        out.append(c)
        k += 1
    return out


def _merge_of(words: list[Word], marks: list[str | None], chunks: list[Chunk]) -> list[Chunk]:
    """ "fracture of the proximal femur": a kindless chunk after "of (the)" belongs to the one before."""
    out: list[Chunk] = []
    for c in chunks:
        if out and c.kind is None:
            between = [words[i].folded for i in range(out[-1].last + 1, c.first)]
            if (
                between
                and between[0] == "of"
                and all(marks[out[-1].last + 1 + j] == "ignored" for j in range(len(between)))
            ):
                prev = out[-1]
                out[-1] = Chunk(prev.first, c.last, prev.kind, prev.concepts + c.concepts)
                continue
        out.append(c)
    return out


def _cue_before(
    chunk: Chunk, starts: list[Cue | None], marks: list[str | None], folded: list[str], cues: QuestionCues
) -> Cue | None:
    """The role cue ending right before the chunk (only ignored words between): a ``before``
    row, or the ``before`` row with the same words as the task cue there."""
    i = chunk.first - 1
    while i >= 0 and marks[i] == "ignored":
        i -= 1
    if i < 0 or marks[i] != "cue":
        return None
    j = i
    while j >= 0 and starts[j] is None:
        j -= 1
    cue = starts[j] if j >= 0 else None
    if cue is None or j + len(cue.words) - 1 != i:
        return None
    if cue.kind == "before":
        return cue
    return next(
        (
            c
            for c in cues.starting(folded[j])
            if c.kind == "before" and len(c.words) == len(cue.words) and c.matches(folded, j)
        ),
        None,
    )


def _cue_after(
    chunk: Chunk, starts: list[Cue | None], marks: list[str | None], folded: list[str], cues: QuestionCues
) -> Cue | None:
    """The ``after`` role cue right after the chunk, past ignored words and question verbs
    ("What drugs can cause": "can" is passed over)."""
    i = chunk.last + 1
    while i < len(marks):
        if marks[i] == "ignored":
            i += 1
            continue
        cue = starts[i]
        if cue is None:
            return None
        after = next(
            (c for c in cues.starting(folded[i]) if c.kind == "after" and c.matches(folded, i)), None
        )
        if after is not None:
            return after
        if all(cues.is_function_word(w) for w in cue.words):
            i += len(cue.words)
            continue
        return None
    return None


def _adjust(role: str, kind: str | None) -> str | None:
    """A cue's role fitted to what the chunk names: persons are the population, a disorder
    "in" someone is the problem, a drug "for"/"with" is the intervention; "in" before words
    of no known kind ("in the acute phase") decides nothing (None: the model does)."""
    if kind == "person":
        return role if role == "comparison" else "population"
    if role == "population":
        return {"disorder": "problem", "agent": "intervention"}.get(kind or "")
    if kind == "agent" and role == "problem":
        return "intervention"
    return role


def chunk_features(chunks: Sequence[Chunk], k: int, vocabulary: MeshVocabulary | None) -> list[str]:
    """Features of chunk ``k`` for the role model: its kind, groups, MeSH tree categories,
    place among the chunks, and its neighbours' kinds."""
    c = chunks[k]
    feats = [f"kind={c.kind}", f"pos={min(k, 3)}", f"last={k == len(chunks) - 1}", f"n={min(len(chunks), 4)}"]
    feats.append(f"prev={chunks[k - 1].kind if k else 'start'}")
    feats.append(f"next={chunks[k + 1].kind if k + 1 < len(chunks) else 'end'}")
    n_dis = sum(1 for x in chunks[:k] if x.kind == "disorder")
    n_agent = sum(1 for x in chunks[:k] if x.kind == "agent")
    feats += [f"dis_before={min(n_dis, 2)}", f"agent_before={min(n_agent, 2)}"]
    feats.append(f"kind_dis_before={c.kind}:{min(n_dis, 1)}")
    for m in c.concepts:
        feats += [f"group={g}" for g in m.groups]
        d = vocabulary.get(m.cui) if vocabulary is not None else None
        if d is not None:
            feats += sorted({f"tree={t[:1]}" for t in d.tree_numbers})
            feats += sorted({f"tree3={t[:3]}" for t in d.tree_numbers})
    if not c.concepts:
        feats.append("no_concept")
    return sorted(set(feats))


_KIND_WORDS = {"disorder": "a disorder", "agent": "a drug or procedure", "person": "persons"}


def _decide_task(folded: list[str], cues: QuestionCues, kinds: set[str]) -> tuple[Task, str]:
    """The task with the most cue weight (``prior`` rows for the kinds of things named, then
    ``task`` and ``word`` rows, the longest phrase at each word); the reason names the
    evidence, and the runner-up when there is one."""
    scores: dict[str, float] = {}
    evidence: dict[str, list[str]] = {}
    order: dict[str, int] = {}
    for c in cues.cues:
        if c.kind == "prior" and c.words[0] in kinds and c.weight > 0:
            scores[c.value] = scores.get(c.value, 0.0) + c.weight
            evidence.setdefault(c.value, []).append(f"{_KIND_WORDS[c.words[0]]} named")
            order.setdefault(c.value, len(order))
    cue_evidence = False
    i = 0
    while i < len(folded):
        t = next(
            (c for c in cues.starting(folded[i]) if c.kind in ("task", "word") and c.matches(folded, i)), None
        )
        if t is None:
            i += 1
            continue
        scores[t.value] = scores.get(t.value, 0.0) + t.weight
        evidence.setdefault(t.value, []).append(repr(" ".join(folded[i : i + len(t.words)])))
        order.setdefault(t.value, len(order))
        cue_evidence = True
        i += len(t.words)
    if not cue_evidence:
        why = "; ".join(e for v in evidence.values() for e in v) or "nothing else was said"
        return Task.THERAPY, f"therapy: no task words in the question; therapy is the default ({why})"
    ranked = sorted(scores, key=lambda t: (-scores[t], order[t]))
    best = ranked[0]
    said = ", ".join(evidence[best])
    reason = f"{best}: {said} (weight {scores[best]:g})"
    if len(ranked) > 1:
        second = ranked[1]
        other = ", ".join(evidence[second])
        verdict = "a tie: the first named wins" if scores[second] == scores[best] else "less weight"
        reason += f"; ambiguous: {second} had {other} (weight {scores[second]:g}; {verdict})"
    return Task(best), reason


def analyse(
    text: str, matcher: ConceptMatcher, cues: QuestionCues
) -> tuple[str, list[Word], list[str | None], list[Cue | None], list[Chunk]]:
    """Steps 1-3: the question with spaces normalised, its words, each word's mark (cue,
    ignored or content), the cue starting at each word, and the chunks (roles not set)."""
    question = " ".join(text.split())
    words = tokenize(question)
    if not words:
        raise InputError("the question has no words")
    marks, starts = _mark_cues(words, cues)
    concept_of = _word_concepts(words, matcher.match(question))
    return question, words, marks, starts, _chunks(question, words, marks, concept_of)


def parse_question(
    text: str,
    matcher: ConceptMatcher,
    vocabulary: MeshVocabulary | None,
    cues: QuestionCues,
    model: RoleModel | None,
) -> ParsedQuestion:
    """The frame a question or a few keywords ask for (see the module docstring)."""
    question, words, marks, starts, chunks = analyse(text, matcher, cues)
    folded = [w.folded for w in words]
    _assign_roles(chunks, starts, marks, folded, cues, model, vocabulary)
    kinds = {c.kind for c in chunks if c.kind is not None}
    task, reason = _decide_task(folded, cues, kinds)
    return _build(question, words, marks, chunks, task, reason)


def _assign_roles(
    chunks: list[Chunk],
    starts: list[Cue | None],
    marks: list[str | None],
    folded: list[str],
    cues: QuestionCues,
    model: RoleModel | None,
    vocabulary: MeshVocabulary | None,
) -> None:
    for k, c in enumerate(chunks):
        before = _cue_before(c, starts, marks, folded, cues)
        if before is not None and before.value == "same":
            prev = chunks[k - 1] if k else None
            # only things of one known kind coordinate: in keywords "asthma and formoterol"
            # "and" separates a problem from an intervention
            if prev is not None and prev.role and c.kind is not None and prev.kind == c.kind:
                c.role, c.how = prev.role, f"'{' '.join(before.words)}' joins it to the {prev.role}"
                c.joined = True
                continue
            before = None
        cue = before
        after = _cue_after(c, starts, marks, folded, cues)
        # a question verb before ("can X ...") says less than a phrase after ("X be caused by")
        weak = before is not None and all(cues.is_function_word(w) for w in before.words)
        if cue is None or _adjust(cue.value, c.kind) is None or (weak and after is not None):
            cue = after
        role = _adjust(cue.value, c.kind) if cue is not None and cue.value != "same" else None
        if cue is not None and role is not None:
            c.role, c.how = role, f"cue '{' '.join(cue.words)}'"
            continue
        if c.kind == "person":
            c.role, c.how = "population", "names persons"
            continue
        if model is None:
            c.role = {"disorder": "problem", "agent": "intervention"}.get(c.kind or "", None)
            c.how = "kind (no model)"
            continue
        probs = model.probabilities(chunk_features(chunks, k, vocabulary))
        # what the kind rules out: a drug or procedure is no problem, a disorder no
        # intervention (cues still make an exposure of a disorder: "is obesity a risk factor")
        ruled_out = _RULED_OUT.get(c.kind or "", ())
        label = max((lab for lab in probs if lab not in ruled_out), key=probs.__getitem__)
        c.role = None if label == "other" else label
        c.how = f"model ({label} {probs[label]:.2f})"


def _span_text(question: str, words: Sequence[Word], c: Chunk) -> str:
    s, e = c.span(words)
    t = question[s:e]
    if t.count("(") > t.count(")"):
        t += ")"
    return t


def _build(
    question: str, words: list[Word], marks: list[str | None], chunks: list[Chunk], task: Task, reason: str
) -> ParsedQuestion:
    uses: list[str] = ["cue" if m == "cue" else "ignored" if m == "ignored" else "unplaced" for m in marks]
    slots: dict[str, list[str]] = {r: [] for r in ROLES}
    roles: list[tuple[str, str, str]] = []
    names: list[tuple[str, str]] = []
    # one primary problem: the first disorder the cues or the model call a problem (else the
    # first words of no known kind they do); the other problems are co-occurring problems
    called = [c for c in chunks if c.role == "problem"]
    primary = next((c for c in called if c.kind == "disorder"), called[0] if called else None)
    problem_chunk: Chunk | None = None
    previous: Chunk | None = None
    for c in chunks:
        if c.role is None:
            continue
        role = c.role
        if role == "problem" and problem_chunk is None and c is not primary and not c.joined:
            role = "co_problem"
        joined_to_problem = c.joined and problem_chunk is not None and previous is problem_chunk
        previous = c
        if role == "problem" and joined_to_problem and problem_chunk is not None:
            # "schizophrenia or schizophrenia-like psychoses": one problem, named two ways
            merged = Chunk(
                problem_chunk.first, c.last, problem_chunk.kind, problem_chunk.concepts + c.concepts
            )
            slots["problem"][0] = _span_text(question, words, merged)
            problem_chunk = previous = merged
            roles.append((_span_text(question, words, c), role, c.how))
            for i in range(c.first, c.last + 1):
                uses[i] = role
            continue
        if role == "problem" and slots["problem"]:
            role = "co_problem"
        if role == "problem":
            problem_chunk = c
        value = _span_text(question, words, c)
        if value not in slots[role]:
            slots[role].append(value)
        roles.append((value, role, c.how))
        s, e = c.span(words)
        if len(c.concepts) == 1 and c.concepts[0].start <= s and c.concepts[0].end >= e:
            names.append((value, c.concepts[0].name))
        for i in range(c.first, c.last + 1):
            uses[i] = role
    if not slots["intervention"] and slots["comparison"]:
        slots["intervention"] = slots["comparison"][:1]
        slots["comparison"] = slots["comparison"][1:]
    frame_kw: dict[str, Any] = {
        "problem": slots["problem"][0] if slots["problem"] else None,
        "co_problems": tuple(slots["co_problem"]),
        "population": tuple(slots["population"]),
        "intervention": tuple(slots["intervention"]),
        "comparison": tuple(slots["comparison"]),
        "outcome": ", ".join(slots["outcome"]) or None,
    }
    frame = Frame(task=task, question=question, **frame_kw)
    word_uses = tuple(WordUse(w.text, w.start, u) for w, u in zip(words, uses, strict=True))
    return ParsedQuestion(frame, reason, word_uses, tuple(roles), tuple(dict(names).items()))


# --- rendering ----------------------------------------------------------------------------


def understood_as(parsed: ParsedQuestion) -> str:
    """``Understood as: therapy · problem Fever · population children · intervention
    Ibuprofen ...``: problems, interventions and comparisons by their concept's name when the
    words are exactly one concept (else as written), population and outcome as written, then
    the words left out."""
    f = parsed.frame
    names = dict(parsed.concept_names)
    parts = [f.task.value]
    if f.problem:
        parts.append(f"problem {names.get(f.problem, f.problem)}")
    for name, label, by_concept in (
        ("co_problems", "co-problem", True),
        ("population", "population", False),
        ("intervention", "intervention", True),
        ("comparison", "comparison", True),
    ):
        for v in getattr(f, name):
            parts.append(f"{label} {names.get(v, v) if by_concept else v}")
    if f.outcome:
        parts.append(f"outcome {f.outcome}")
    line = "Understood as: " + " · ".join(parts)
    if parsed.unplaced:
        line += f" (not placed: {', '.join(parsed.unplaced)})"
    return line
