"""A bottom line across the ranked answers of a therapy or prevention question.

Input: plain records, one per answer in rank order (``AnswerFindings``: PMID, the findings the
extractor found for the frame, and whatever else is known — evidence grade, study design,
sample size, population phrase). Output: a ``BottomLine``: the findings grouped by outcome
(same concept when the caller maps outcome phrases to concepts, else close wording) and by
direction, each group weighted by evidence grade, sample size and the findings' confidence;
the direction with the most weight is the concurrence, the others are contradictions, with the
population or design difference noted when the records show one. Every statement carries its
PMIDs; when no answer reports a finding the bottom line says "no trial in these results
compares I with C on O".

    bl = build_bottom_line(records, intervention="ibuprofen", comparison="acetaminophen",
                           outcome="fever")
    print(bl.render_text()); json.dumps(bl.to_dict())
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

TASKS = ("therapy", "prevention")  # the tasks a bottom line is built for
GRADE_WEIGHTS = {"A": 3.0, "B": 2.0, "C": 1.0}  # unknown grade: 1.0
UNKNOWN_GRADE_WEIGHT = 1.0
DEFAULT_TOP = 10

# Words of a population phrase that tell populations apart (age group and sex).
POPULATION_WORDS = {
    "infants": "infants",
    "infant": "infants",
    "neonates": "neonates",
    "newborns": "neonates",
    "children": "children",
    "child": "children",
    "pediatric": "children",
    "paediatric": "children",
    "adolescents": "adolescents",
    "adults": "adults",
    "adult": "adults",
    "elderly": "older adults",
    "older": "older adults",
    "women": "women",
    "men": "men",
    "pregnant": "pregnant women",
    "volunteers": "healthy volunteers",
}


class FindingLike(Protocol):
    """What the bottom line reads of a finding (``extractors.findings.Finding`` has it)."""

    @property
    def outcome(self) -> str: ...
    @property
    def direction(self) -> str: ...
    @property
    def significant(self) -> bool: ...
    @property
    def confidence(self) -> float: ...


@dataclass(frozen=True)
class AnswerFindings:
    """One ranked answer: its PMID, its findings for the frame, and what else is known."""

    pmid: str
    findings: Sequence[FindingLike]
    grade: str | None = None  # evidence grade A / B / C (extractors.evidence), None: unknown
    design: str | None = None  # "RCT", "meta-analysis", "cohort study" ... (when extracted)
    sample_size: int | None = None  # patients randomised / studied (when extracted)
    population: str | None = None  # the population phrase (extractors.population)


@dataclass(frozen=True)
class Statement:
    """One direction for one outcome, with the answers that report it."""

    outcome: str
    direction: str  # higher / lower / no_difference, with respect to the intervention
    pmids: tuple[str, ...]
    studies: int
    patients: int | None  # sum of the known sample sizes (None: none known)
    designs: str  # "3 RCTs", "1 RCT and 1 study", "2 studies"
    weight: float
    text: str  # the sentence shown
    note: str = ""  # population / design difference from the concurring studies

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "direction": self.direction,
            "pmids": list(self.pmids),
            "studies": self.studies,
            "patients": self.patients,
            "designs": self.designs,
            "weight": round(self.weight, 3),
            "text": self.text,
            "note": self.note,
        }


@dataclass(frozen=True)
class OutcomeSummary:
    """The statements about one outcome: the concurrence first, then any contradictions."""

    outcome: str
    concurrence: Statement
    contradictions: tuple[Statement, ...] = ()

    @property
    def agreed(self) -> bool:
        return not self.contradictions

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "concurrence": self.concurrence.to_dict(),
            "contradictions": [s.to_dict() for s in self.contradictions],
        }


@dataclass(frozen=True)
class BottomLine:
    intervention: str
    comparison: str
    outcome: str
    outcomes: tuple[OutcomeSummary, ...]  # on the frame's outcome (every outcome without one)
    considered: tuple[str, ...]  # PMIDs of the answers read
    none_text: str = ""  # set when no answer reports a finding on the frame's outcome
    # findings on outcomes other than the frame's (sentences that do not name it)
    other_outcomes: tuple[OutcomeSummary, ...] = ()

    def render_text(self, other_outcomes: bool = False) -> str:
        """The bottom line as text; ``other_outcomes`` adds the findings on outcomes other than
        the frame's (their outcome phrases come from the sentences and are rougher)."""
        lines = [f"Bottom line: {self.none_text}" if not self.outcomes else "Bottom line:"]
        _summary_lines(lines, self.outcomes)
        if other_outcomes and self.other_outcomes:
            lines.append("Other outcomes these answers report:")
            _summary_lines(lines, self.other_outcomes)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "intervention": self.intervention,
            "comparison": self.comparison,
            "outcome": self.outcome,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "other_outcomes": [o.to_dict() for o in self.other_outcomes],
            "considered": list(self.considered),
            "none": self.none_text or None,
            "text": self.render_text(),
        }


def _summary_lines(lines: list[str], summaries: Sequence[OutcomeSummary]) -> None:
    for o in summaries:
        lines.append(f"- {o.concurrence.text}")
        for c in o.contradictions:
            lines.append(f"  but {c.text}" + (f"; {c.note}" if c.note else ""))


def applies_to(task: str | None) -> bool:
    """Whether a question of this task gets a bottom line (therapy and prevention)."""
    return (task or "").lower() in TASKS


# --- grouping ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of in on with and or to for by at from as was were total mean".split())


def text_key(phrase: str) -> frozenset[str]:
    return frozenset(w[:6] for w in _WORD.findall(phrase.lower()) if w not in _STOP)


def _close(a: frozenset[str], b: frozenset[str]) -> bool:
    """Close wording: half the words of the shorter phrase are in the other."""
    if not a or not b:
        return a == b
    return len(a & b) / min(len(a), len(b)) >= 0.5


def group_outcomes(
    phrases: Sequence[str], concept_of: Callable[[str], str | None] | None = None
) -> list[int]:
    """A group number per outcome phrase: the same concept (``concept_of``) or close wording."""
    groups: list[int] = []
    reps: list[tuple[str | None, frozenset[str]]] = []
    for p in phrases:
        cui = concept_of(p) if concept_of else None
        key = text_key(p)
        for g, (rc, rk) in enumerate(reps):
            if (cui is not None and cui == rc) or _close(key, rk):
                groups.append(g)
                break
        else:
            reps.append((cui, key))
            groups.append(len(reps) - 1)
    return groups


# --- wording ----------------------------------------------------------------------------------------


def answer_weight(a: AnswerFindings, confidence: float) -> float:
    """Evidence grade x log sample size x the finding's confidence."""
    g = GRADE_WEIGHTS.get((a.grade or "").upper(), UNKNOWN_GRADE_WEIGHT)
    n = 1.0 + math.log10(1 + a.sample_size) if a.sample_size else 1.0
    return g * n * max(confidence, 0.05)


def _plural(label: str, n: int) -> str:
    if n == 1:
        return f"1 {label}"
    if label.isupper() or label.endswith(("T", "s")) and label[:-1].isupper():
        return f"{n} {label}s"
    if label.endswith("y"):
        return f"{n} {label[:-1]}ies"
    if label.endswith(("s", "sis")):
        return f"{n} {label}"
    return f"{n} {label}s"


def describe_designs(answers: Sequence[AnswerFindings]) -> str:
    """ "3 RCTs", "1 meta-analysis and 2 RCTs", "2 studies" (design unknown)."""
    counts: dict[str, int] = {}
    for a in answers:
        label = a.design or "study"
        counts[label] = counts.get(label, 0) + 1
    parts = [_plural(k, v) for k, v in sorted(counts.items(), key=lambda kv: (kv[0] == "study", -kv[1]))]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _comparator(comparison: str) -> str:
    return comparison or "the control"


def direction_text(direction: str, outcome: str, intervention: str, comparison: str) -> str:
    c = _comparator(comparison)
    if direction == "higher":
        return f"{outcome} higher with {intervention} than with {c}"
    if direction == "lower":
        return f"{outcome} lower with {intervention} than with {c}"
    return f"no significant difference in {outcome} between {intervention} and {c}"


def population_words(phrase: str | None) -> frozenset[str]:
    return frozenset(
        POPULATION_WORDS[w] for w in _WORD.findall((phrase or "").lower()) if w in POPULATION_WORDS
    )


def difference_note(dissent: Sequence[AnswerFindings], majority: Sequence[AnswerFindings]) -> str:
    """What visibly sets the dissenting answers apart: their population or design."""
    notes = []
    maj_pop = frozenset().union(*(population_words(a.population) for a in majority))
    dis_pop = frozenset().union(*(population_words(a.population) for a in dissent))
    if dis_pop and maj_pop and dis_pop != maj_pop and not dis_pop <= maj_pop:
        who = "it" if len(dissent) == 1 else "they"
        notes.append(f"{who} studied {' and '.join(sorted(dis_pop - maj_pop or dis_pop))}")
    maj_design = {a.design for a in majority if a.design}
    dis_design = {a.design for a in dissent if a.design}
    if dis_design and maj_design and not dis_design & maj_design:
        verb = "it was" if len(dissent) == 1 else "they were"
        notes.append(
            f"{verb} {' and '.join(sorted(dis_design))} rather than {' and '.join(sorted(maj_design))}"
        )
    return "; ".join(notes)


def _statement(
    outcome: str,
    direction: str,
    answers: Sequence[AnswerFindings],
    weight: float,
    intervention: str,
    comparison: str,
    contradiction: bool,
    note: str = "",
) -> Statement:
    pmids = tuple(a.pmid for a in answers)
    sizes = [a.sample_size for a in answers if a.sample_size]
    patients = sum(sizes) if sizes else None
    designs = describe_designs(answers)
    cite = "[PMID " + ", ".join(pmids) + "]"
    what = direction_text(direction, outcome, intervention, comparison)
    if contradiction:
        text = f"{designs} found {what} {cite}"
    else:
        head = designs + (f", {patients:,} patients" if patients else "")
        text = f"{head}: {what} {cite}"
    return Statement(outcome, direction, pmids, len(answers), patients, designs, weight, text, note)


def build_bottom_line(
    answers: Sequence[AnswerFindings],
    intervention: str,
    comparison: str = "",
    outcome: str = "",
    *,
    top: int = DEFAULT_TOP,
    concept_of: Callable[[str], str | None] | None = None,
    min_confidence: float = 0.0,
) -> BottomLine:
    """The bottom line of the first ``top`` answers (rank order) for the frame's I, C and O.

    Each answer votes once per outcome group, with its most confident finding there.
    ``concept_of`` maps an outcome phrase to a concept ID (e.g. the first MeSH concept the
    matcher finds) so that "fever" and "body temperature" can share a group when they name one.
    """
    read = list(answers[:top])
    on: list[tuple[AnswerFindings, FindingLike]] = []
    off: list[tuple[AnswerFindings, FindingLike]] = []
    for a in read:
        for f in a.findings:
            if f.confidence >= min_confidence and f.direction in ("higher", "lower", "no_difference"):
                # a finding that does not name the frame's outcome is about another one
                (on if not outcome or getattr(f, "on_frame_outcome", True) else off).append((a, f))
    summaries = _summaries(on, outcome, intervention, comparison, concept_of)
    others = _summaries(off, "", intervention, comparison, concept_of)
    none = ""
    if not summaries:
        what = f" on {outcome}" if outcome else ""
        none = (
            f"no trial in these results compares {intervention} with {_comparator(comparison)}{what} "
            f"({len(read)} answers read)"
        )
    return BottomLine(
        intervention, comparison, outcome, tuple(summaries), tuple(a.pmid for a in read), none, tuple(others)
    )


def _summaries(
    votes: list[tuple[AnswerFindings, FindingLike]],
    outcome: str,
    intervention: str,
    comparison: str,
    concept_of: Callable[[str], str | None] | None,
) -> list[OutcomeSummary]:
    """Votes grouped by outcome (all one group under ``outcome`` when given), each group's
    directions weighed: the heaviest is the concurrence, the others contradictions."""
    groups = [0] * len(votes) if outcome else group_outcomes([f.outcome for _, f in votes], concept_of)
    by_group: dict[int, dict[str, tuple[AnswerFindings, FindingLike]]] = {}
    for g, (a, f) in zip(groups, votes, strict=True):
        best = by_group.setdefault(g, {})
        if a.pmid not in best or f.confidence > best[a.pmid][1].confidence:
            best[a.pmid] = (a, f)
    summaries = []
    for by_pmid in by_group.values():  # groups in order of first appearance
        chosen = list(by_pmid.values())
        name = outcome or chosen[0][1].outcome
        by_dir: dict[str, list[tuple[AnswerFindings, FindingLike]]] = {}
        for a, f in chosen:
            by_dir.setdefault(f.direction, []).append((a, f))
        weights = {d: sum(answer_weight(a, f.confidence) for a, f in v) for d, v in by_dir.items()}
        order = sorted(by_dir, key=lambda d: (-weights[d], d))
        major = [a for a, _ in by_dir[order[0]]]
        conc = _statement(name, order[0], major, weights[order[0]], intervention, comparison, False)
        contra = []
        for d in order[1:]:
            dissent = [a for a, _ in by_dir[d]]
            note = difference_note(dissent, major)
            contra.append(_statement(name, d, dissent, weights[d], intervention, comparison, True, note))
        summaries.append(OutcomeSummary(name, conc, tuple(contra)))
    summaries.sort(key=lambda o: -(o.concurrence.weight + sum(c.weight for c in o.contradictions)))
    return summaries
