"""S_task: task-specific indicators among a citation's MeSH terms (paper section 6.3, equation 7).

S_task = sum over the citation's MeSH descriptors and qualifiers of the weight the task's
indicator table gives them (``rules/task_indicators.tsv``, compiled by
``ebm.rules.TaskIndicators.weights``): main-theme (starred) terms take the MAJOR weight,
others the MINOR one. Each weighted term is kept with the table row that gave its weight
(file:line), and, for a row that borrows another task's terms, the row it borrowed.

Terms the vocabulary does not know (a descriptor renamed since the record was indexed)
weigh 0 and are listed as notes; so are citations without MeSH headings (not indexed yet)
and records whose main-theme flags are unknown (PubMedQA gives none: every term counts as
a minor one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ebm.citation import Citation
from ebm.mesh import MeshVocabulary
from ebm.rules import RuleSet
from ebm.scoring.contribution import Contribution


@dataclass(frozen=True)
class TaskScore:
    task: str  # the indicator task used (therapy, prevention, diagnosis, prognosis, etiology)
    score: float
    contributions: tuple[Contribution, ...]

    @property
    def total(self) -> float:
        return self.score

    def to_dict(self) -> dict[str, Any]:
        return {"total": round(self.score, 6), "task": self.task}


def score_task(citation: Citation, task: str, rules: RuleSet, vocabulary: MeshVocabulary) -> TaskScore:
    """S_task of ``citation`` for a frame task ("therapy", "diagnostic test", ...)."""
    weights = rules.task_indicators.weights(task, vocabulary)
    headings = citation.mesh_headings
    out: list[Contribution] = []
    if headings is None:
        out.append(Contribution("task", 0.0, "no MeSH headings (not indexed): S_task 0", None))
        return TaskScore(weights.task, 0.0, tuple(out))
    for h in headings:
        known = (h.descriptor_ui and vocabulary.get(h.descriptor_ui)) or vocabulary.by_name(h.descriptor_name)
        if not known:
            out.append(
                Contribution(
                    "task", 0.0, f"MeSH heading {h.descriptor_name!r} is not in MeSH 2024: weight 0", None
                )
            )
    for hit in weights.hits(headings, vocabulary):
        row = hit.indicator
        theme = "main theme" if hit.major else "not main theme"
        rule = f"{row.task} {row.kind} {row.term!r} ({row.major:g} / {row.minor:g})"
        if hit.via is not None:
            v = hit.via
            rule += f", the {v.task} row {v.kind} {v.term!r} (line {v.line})"
        out.append(Contribution("task", hit.weight, f"{hit.kind} {hit.term!r}, {theme}: {rule}", row.where))
    if citation.extra.get("mesh_major_unknown"):
        out.append(
            Contribution(
                "task", 0.0, "main-theme flags unknown for this record: every term weighed as minor", None
            )
        )
    score = sum((c.points for c in out), 0.0)
    return TaskScore(weights.task, score, tuple(out))


def capped(score: float, scale: float = 1.0) -> float:
    """S_task squashed into (-scale, scale) by tanh (beyond the paper): the sum over every
    weighted MeSH term reaches 8-9 for a richly indexed trial and then outweighs a -1 problem
    mismatch; capped, indexing richness stops counting once a citation clearly fits the task."""
    return scale * math.tanh(score / scale)
