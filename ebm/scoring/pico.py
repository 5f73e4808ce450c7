"""S_PICO: how well a citation's extracted PICO elements match the frame (paper section 6.1).

S_PICO = S_problem + S_population + S_intervention + S_outcome (equation 4), where

- S_problem compares the frame's primary problem with the abstract's primary problem (the
  problem extractor's top candidate): 1 for the same concept ID, 0.5 for a partial string
  match (a content word in common), -1 for no overlap, -0.5 when the extractor found no
  problem in the abstract (0 when the frame has no problem). For differential diagnosis and
  etiology, each co-occurring problem of the frame found in the citation adds 3 when it is
  in the title, 1 when only elsewhere ("knowledge of the problems is typically incomplete in
  these scenarios"); other tasks do not score co-occurring problems.
- S_population: +1 for each population concept of the frame found in the abstract's
  population (the concepts inside the population extractor's top phrase).
- S_intervention: +1 for each intervention or comparison concept of the frame among the
  interventions the extractor found (comparisons are interventions under study too).
- S_outcome: the probability of the best outcome sentence (the title is never one),
  independent of the question, as in the paper.

Every decision, scoring or not, is kept as a ``Contribution`` for ``ebm explain``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.concepts.normalize import tokenize
from ebm.frame import Task
from ebm.frame_concepts import FrameConcepts, SlotValue
from ebm.scoring.contribution import Contribution
from ebm.text.words import Words

if TYPE_CHECKING:
    from extractors.annotate import Annotation

PROBLEM_SAME = 1.0
PROBLEM_PARTIAL = 0.5
PROBLEM_NO_OVERLAP = -1.0
PROBLEM_NOT_FOUND = -0.5
CO_PROBLEM_TITLE = 3.0
CO_PROBLEM_ELSEWHERE = 1.0
MATCH_POINT = 1.0
CO_PROBLEM_TASKS = frozenset({Task.DIFFERENTIAL_DIAGNOSIS, Task.ETIOLOGY})

# Words two problem names may share without being about the same problem ("acute otitis
# media" and "acute febrile illness"); compared after ebm.concepts.normalize (singular forms).
GENERIC_PROBLEM_WORDS = frozenset(
    "acute chronic disease disorder syndrome illness condition primary secondary severe mild moderate "
    "recurrent type patient complication".split()
)


@dataclass(frozen=True)
class PicoScore:
    problem: float
    co_problems: float
    population: float
    intervention: float
    outcome: float
    contributions: tuple[Contribution, ...]

    @property
    def total(self) -> float:
        return self.problem + self.co_problems + self.population + self.intervention + self.outcome

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": round(self.total, 6),
            "problem": self.problem,
            "co_problems": self.co_problems,
            "population": self.population,
            "intervention": self.intervention,
            "outcome": round(self.outcome, 6),
        }


def content_words(text: str, words: Words) -> frozenset[str]:
    """Normalised words of ``text`` that can say what a problem is."""
    return words.distinct(text, GENERIC_PROBLEM_WORDS)


def _phrase_in(words: list[str], sentence_text: str) -> bool:
    """The normalised word sequence ``words`` occurs in ``sentence_text``."""
    if not words:
        return False
    toks = [t.norm.casefold() for seg in tokenize(sentence_text) for t in seg]
    n = len(words)
    return any(toks[i : i + n] == words for i in range(len(toks) - n + 1))


def score_problem(fc: FrameConcepts, ann: Annotation, words: Words) -> list[Contribution]:
    if fc.problem is None:
        return [Contribution("problem", 0.0, "the frame has no primary problem", "frame")]
    wanted = fc.problem
    primary = ann.primary_problem
    if primary is None:
        return [
            Contribution(
                "problem",
                PROBLEM_NOT_FOUND,
                f"frame problem {wanted.value!r}: the problem extractor found no problem in the abstract",
                "extractors.problem",
            )
        ]
    names = ", ".join(f"{n} ({c})" for n, c in zip(primary.names, primary.concepts, strict=False))
    found = f"{primary.text!r} = {names}"
    why = f"; extractor: {'; '.join(primary.evidence[:3])}" if primary.evidence else ""
    ids = frozenset().union(*(c.ids for c in wanted.concepts)) if wanted.concepts else frozenset()
    same = [c for c in primary.concepts if c in ids]
    if same:
        concept = next(c for c in wanted.concepts if same[0] in c.ids)
        return [
            Contribution(
                "problem",
                PROBLEM_SAME,
                f"frame problem {wanted.value!r} ({concept.label()}) is the abstract's primary problem "
                f"{found}: same concept{why}",
                "extractors.problem",
            )
        ]
    frame_words = content_words(wanted.value, words).union(
        *(content_words(c.name, words) for c in wanted.concepts)
    )
    abstract_words = content_words(primary.text, words).union(
        *(content_words(n, words) for n in primary.names)
    )
    shared = sorted(frame_words & abstract_words)
    if shared:
        return [
            Contribution(
                "problem",
                PROBLEM_PARTIAL,
                f"frame problem {wanted.value!r} and the abstract's primary problem {found} share "
                f"{', '.join(repr(w) for w in shared)}: partial string match{why}",
                "extractors.problem",
            )
        ]
    concepts = ", ".join(c.label() for c in wanted.concepts) or "no concept found"
    return [
        Contribution(
            "problem",
            PROBLEM_NO_OVERLAP,
            f"frame problem {wanted.value!r} ({concepts}) does not overlap the abstract's primary "
            f"problem {found}{why}",
            "extractors.problem",
        )
    ]


def _score_co_problem(value: SlotValue, ann: Annotation) -> Contribution:
    """Where the citation mentions one co-occurring problem: by concept, else by its words
    (so "cough" also finds "chronic cough", a concept of its own)."""
    sentences = ann.document.sentences
    in_title = elsewhere = None
    how = "no concept found"
    if value.concepts:
        ids = frozenset().union(*(c.ids for c in value.concepts))
        for c in ann.concepts:
            if c.negated or not (ids & {c.cui, *c.alternatives}):
                continue
            if sentences[c.sentence].position == "title":
                in_title = in_title or c.text
            else:
                elsewhere = elsewhere or c.text
        how = f"concept {', '.join(c.label() for c in value.concepts)}"
    if not in_title:
        words = [t.norm.casefold() for seg in tokenize(value.value) for t in seg]
        for s in sentences:
            if (s.position == "title" or not elsewhere) and _phrase_in(words, s.text):
                if s.position == "title":
                    in_title = f"{value.value} (the words)"
                else:
                    elsewhere = f"{value.value} (the words)"
    if in_title:
        return Contribution(
            "co-problem", CO_PROBLEM_TITLE, f"{value.value!r} ({how}) in the title as {in_title!r}", "title"
        )
    if elsewhere:
        return Contribution(
            "co-problem",
            CO_PROBLEM_ELSEWHERE,
            f"{value.value!r} ({how}) in the abstract as {elsewhere!r}",
            "abstract",
        )
    return Contribution("co-problem", 0.0, f"{value.value!r} ({how}) not mentioned", None)


def score_co_problems(fc: FrameConcepts, ann: Annotation) -> list[Contribution]:
    if not fc.co_problems:
        return []
    if fc.frame.task not in CO_PROBLEM_TASKS:
        return [
            Contribution(
                "co-problem",
                0.0,
                f"co-occurring problems are scored for differential diagnosis and etiology only, "
                f"not {fc.frame.task.value}",
                "paper section 6.1",
            )
        ]
    return [_score_co_problem(v, ann) for v in fc.co_problems]


def score_population(fc: FrameConcepts, ann: Annotation) -> list[Contribution]:
    wanted = fc.concepts("population")
    if not wanted:
        if fc.population:
            return [Contribution("population", 0.0, "no concept found in the frame's population", "frame")]
        return []
    pop = ann.population[0] if ann.population else None
    if pop is None:
        return [
            Contribution(
                "population",
                0.0,
                f"frame population {c.label()}: the population extractor found no population",
                "extractors.population",
            )
            for c in wanted
        ]
    inside = {
        cui: c.text
        for c in ann.concepts
        if pop.start <= c.start and c.end <= pop.end
        for cui in (c.cui, *c.alternatives)
    }
    for cui, name in zip(pop.concepts, pop.names, strict=False):
        inside.setdefault(cui, name)
    out = []
    for c in wanted:
        hit = next((cui for cui in c.ids if cui in inside), None)
        if hit:
            out.append(
                Contribution(
                    "population",
                    MATCH_POINT,
                    f"frame population {c.label()} in the abstract's population {pop.text!r} "
                    f"(as {inside[hit]!r})",
                    "extractors.population",
                )
            )
        else:
            out.append(
                Contribution(
                    "population",
                    0.0,
                    f"frame population {c.label()} not in the abstract's population {pop.text!r}",
                    "extractors.population",
                )
            )
    return out


def score_intervention(fc: FrameConcepts, ann: Annotation) -> list[Contribution]:
    wanted = fc.concepts("intervention", "comparison")
    notes = [
        Contribution("intervention", 0.0, f"no concept found in the frame's {v.slot} {v.value!r}", "frame")
        for v in (*fc.intervention, *fc.comparison)
        if not v.concepts
    ]
    found: dict[str, tuple[int, str]] = {}
    for rank, cand in enumerate(ann.interventions, start=1):
        for cui in cand.concepts:
            found.setdefault(cui, (rank, cand.text))
    out = []
    for c in wanted:
        hit = next((cui for cui in c.ids if cui in found), None)
        role = "comparison" if c.slot == "comparison" else "intervention"
        if hit:
            rank, text = found[hit]
            out.append(
                Contribution(
                    "intervention",
                    MATCH_POINT,
                    f"frame {role} {c.label()} among the abstract's interventions as {text!r} "
                    f"(extractor rank {rank} of {len(ann.interventions)})",
                    "extractors.intervention",
                )
            )
        else:
            out.append(
                Contribution(
                    "intervention",
                    0.0,
                    f"frame {role} {c.label()} not among the abstract's "
                    f"{len(ann.interventions)} interventions",
                    "extractors.intervention",
                )
            )
    return notes + out


def score_outcome(ann: Annotation) -> list[Contribution]:
    best = ann.top_outcomes(1)
    if not best:
        return [
            Contribution("outcome", 0.0, "no abstract sentence to score as an outcome", "extractors.outcome")
        ]
    o = best[0]
    return [
        Contribution(
            "outcome",
            o.probability,
            f"best outcome sentence (sentence {o.sentence}, probability {o.probability:.3f}): {o.text!r}",
            "extractors.outcome",
        )
    ]


def score_pico(fc: FrameConcepts, ann: Annotation, words: Words) -> PicoScore:
    problem = score_problem(fc, ann, words)
    co = score_co_problems(fc, ann)
    population = score_population(fc, ann)
    intervention = score_intervention(fc, ann)
    outcome = score_outcome(ann)

    def s(items: list[Contribution]) -> float:
        return sum((c.points for c in items), 0.0)

    return PicoScore(
        problem=s(problem),
        co_problems=s(co),
        population=s(population),
        intervention=s(intervention),
        outcome=s(outcome),
        contributions=tuple(problem + co + population + intervention + outcome),
    )
