"""S_match: how well a citation is *about* the frame's PICO elements (beyond the paper).

The paper's S_PICO (``ebm.scoring.pico``) compares the frame's primary problem with the
abstract's primary problem only, by identical concept ID, and counts population and
intervention concepts only inside what the extractors picked. On the development benchmark
(``../shared/data/bench``) that loses relevant citations whose extractor ranked another problem
first, or that name a narrower or broader concept. Each part here is in [0, 1]:

- ``problem``: for each problem concept of the frame, the best match among *all* the problems
  the extractor found, each weighted by its prominence (its extractor score over the top
  problem's: the primary problem weighs 1, a problem mentioned once in passing little); a match
  is the MeSH relation of ``ebm.scoring.hierarchy`` (same 1, narrower 0.8, parent 0.5,
  sibling 0.3). Mean over the frame's problem concepts. A frame problem with no concept falls
  back to the paper's partial string match: 0.5 x the share of its content words in the text.
- ``intervention``: for each intervention and comparison concept of the frame, the best MeSH
  relation among the concepts mentioned anywhere in the citation (not negated); mean.
- ``population``, ``co_problems``: the same over the frame's population and co-occurring
  problem concepts (co-occurring problems for every task, not only diagnosis and etiology).
- ``outcome``: the probability of the best outcome sentence *among those that mention the
  frame's problem or intervention* (a same or narrower concept, or one of their content
  words): an outcome about something else answers another question.

Slots the frame leaves empty score 0 for every citation (no information, no effect on rank).
Every decision is kept as a ``Contribution`` (component ``match.<part>``) for ``ebm explain``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.frame_concepts import FrameConcepts, SlotConcept
from ebm.mesh import MeshVocabulary
from ebm.scoring.contribution import Contribution
from ebm.scoring.hierarchy import NARROWER, Hierarchy, Relation, hierarchy
from ebm.scoring.pico import PROBLEM_PARTIAL, content_words
from ebm.text.words import Words

if TYPE_CHECKING:
    from extractors.annotate import Annotation

PARTS = ("problem", "intervention", "population", "co_problems", "outcome")


@dataclass(frozen=True)
class TopicalScore:
    problem: float
    intervention: float
    population: float
    co_problems: float
    outcome: float
    contributions: tuple[Contribution, ...]

    @property
    def total(self) -> float:
        return self.problem + self.intervention + self.population + self.co_problems + self.outcome

    def value(self, part: str) -> float:
        return float(getattr(self, part))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"total": round(self.total, 6)}
        d.update({p: round(self.value(p), 6) for p in PARTS})
        return d


def _best_mention(
    h: Hierarchy, wanted: SlotConcept, ann: Annotation
) -> tuple[Relation | None, str | None, int | None]:
    """The strongest relation between one frame concept and the citation's concept mentions,
    with the mention's words and sentence."""
    best: tuple[Relation | None, str | None, int | None] = (None, None, None)
    for c in ann.concepts:
        if c.negated:
            continue
        r = h.best(wanted.ids, (c.cui, *c.alternatives))
        if r is not None and (best[0] is None or r.strength > best[0].strength):
            best = (r, f"{c.text!r} = {c.name} ({c.cui})", c.sentence)
            if r.strength >= 1.0:
                break
    return best


def _words_in(ann: Annotation, words: Words) -> set[str]:
    return {w for s in ann.document.sentences for w in words.words(s.text)}


def score_problem(
    fc: FrameConcepts, ann: Annotation, h: Hierarchy, words: Words
) -> tuple[float, list[Contribution]]:
    if fc.problem is None:
        return 0.0, [Contribution("match.problem", 0.0, "the frame has no problem", "frame")]
    value = fc.problem
    if not value.concepts:
        cw = content_words(value.value, words)
        found = sorted(cw & _words_in(ann, words)) if cw else []
        share = len(found) / len(cw) if cw else 0.0
        pts = PROBLEM_PARTIAL * share
        why = (
            f"frame problem {value.value!r} names no concept: partial string match, "
            f"{len(found)} of its {len(cw)} content words in the citation ({', '.join(found) or 'none'})"
        )
        return pts, [Contribution("match.problem", pts, why, "frame words")]
    if not ann.problems:
        return 0.0, [
            Contribution(
                "match.problem",
                0.0,
                f"frame problem {value.value!r}: the problem extractor found no problem",
                "extractors.problem",
            )
        ]
    top = ann.problems[0].score or 1.0
    out: list[Contribution] = []
    total = 0.0
    for wanted in value.concepts:
        best = 0.0
        why = f"{wanted.label()}: no related problem among the {len(ann.problems)} found"
        for rank, cand in enumerate(ann.problems, start=1):
            r = h.best(wanted.ids, cand.concepts)
            if r is None:
                continue
            prominence = max(0.0, min(1.0, cand.score / top))
            pts = r.strength * prominence
            if pts > best:
                best = pts
                names = ", ".join(cand.names) or "no name"
                why = (
                    f"{wanted.label()}: problem {rank} of {len(ann.problems)} {cand.text!r} = {names}, "
                    f"{r.describe()} x prominence {prominence:.2f} (extractor score {cand.score:.2f} of "
                    f"top {top:.2f})"
                )
        share = best / len(value.concepts)
        total += share
        out.append(Contribution("match.problem", share, why, "extractors.problem"))
    return total, out


def score_mentions(
    part: str, wanted: list[SlotConcept], empty: str, ann: Annotation, h: Hierarchy
) -> tuple[float, list[Contribution]]:
    """Mean over ``wanted`` of the best MeSH relation among the citation's concept mentions."""
    if not wanted:
        return 0.0, [Contribution(f"match.{part}", 0.0, empty, "frame")]
    out = []
    total = 0.0
    for c in wanted:
        r, text, sentence = _best_mention(h, c, ann)
        if r is None:
            out.append(Contribution(f"match.{part}", 0.0, f"{c.label()} ({c.slot}): not mentioned", None))
            continue
        pts = r.strength / len(wanted)
        total += pts
        where = "title" if sentence is not None and _is_title(ann, sentence) else f"sentence {sentence}"
        out.append(
            Contribution(
                f"match.{part}",
                pts,
                f"{c.label()} ({c.slot}): {r.describe()} as {text} in the {where}",
                "concepts",
            )
        )
    return total, out


def _is_title(ann: Annotation, sentence: int) -> bool:
    return ann.document.sentences[sentence].position == "title"


def score_outcome(
    fc: FrameConcepts, ann: Annotation, h: Hierarchy, words: Words
) -> tuple[float, list[Contribution]]:
    """The best outcome sentence among those about the frame's problem or intervention."""
    wanted = fc.concepts("problem", "intervention", "comparison")
    texts = [v.value for name in ("problem", "intervention", "comparison") for v in fc.slot(name)]
    frame_words = set().union(*(content_words(t, words) for t in texts)) if texts else set()
    if not wanted and not frame_words:
        return 0.0, [Contribution("match.outcome", 0.0, "the frame has no problem or intervention", "frame")]
    about: dict[int, str] = {}
    for c in ann.concepts:
        if c.negated or c.sentence in about:
            continue
        ids = (c.cui, *c.alternatives)
        for w in wanted:
            r = h.best(w.ids, ids)
            if r is not None and r.strength >= NARROWER:
                about[c.sentence] = f"{c.text!r} ({r.kind} of {w.name})"
                break
    for s in ann.document.sentences:
        if s.index not in about:
            shared = frame_words & set(words.words(s.text))
            if shared:
                about[s.index] = f"the words {', '.join(sorted(shared))}"
    for o in ann.outcomes:  # most probable first
        if _is_title(ann, o.sentence) or o.sentence not in about:
            continue
        return o.probability, [
            Contribution(
                "match.outcome",
                o.probability,
                f"best outcome sentence about the question (sentence {o.sentence}, probability "
                f"{o.probability:.3f}, mentions {about[o.sentence]}): {o.text!r}",
                "extractors.outcome",
            )
        ]
    return 0.0, [
        Contribution(
            "match.outcome", 0.0, "no outcome sentence mentions the frame's problem or intervention", None
        )
    ]


def score_topical(
    fc: FrameConcepts, ann: Annotation, vocabulary: MeshVocabulary, words: Words
) -> TopicalScore:
    """S_match of one annotated citation for one frame (every part in [0, 1]); ``words``: the
    word normaliser (``Resources.words``)."""
    h = hierarchy(vocabulary)
    problem, c_problem = score_problem(fc, ann, h, words)
    intervention, c_int = score_mentions(
        "intervention",
        fc.concepts("intervention", "comparison"),
        "no intervention or comparison concept in the frame",
        ann,
        h,
    )
    population, c_pop = score_mentions(
        "population", fc.concepts("population"), "no population concept in the frame", ann, h
    )
    co, c_co = score_mentions(
        "co_problems", fc.concepts("co_problems"), "no co-occurring problem concept in the frame", ann, h
    )
    outcome, c_out = score_outcome(fc, ann, h, words)
    return TopicalScore(
        problem=problem,
        intervention=intervention,
        population=population,
        co_problems=co,
        outcome=outcome,
        contributions=tuple(c_problem + c_int + c_pop + c_co + c_out),
    )
