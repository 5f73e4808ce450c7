"""Editable rule tables (``rules/``): generic loader, typed tables, registry, MeSH validation.

Every table is declared in ``ebm.rules.registry``; ``ebm.resources.Resources.load(DIR)``
reads and validates all of them from one directory (an edited copy of ``rules/``, as
``--rules DIR`` gives, or the shipped tables) and raises ``InputError`` listing every
problem with file, line and a suggestion.
"""

from __future__ import annotations

from ebm.rules.tables import (
    ClinicalQueries,
    Journals,
    RuleSet,
    StudyEvidence,
    StudyTypes,
    TaskHit,
    TaskIndicators,
    TaskWeights,
)

__all__ = [
    "ClinicalQueries",
    "Journals",
    "RuleSet",
    "StudyEvidence",
    "StudyTypes",
    "TaskHit",
    "TaskIndicators",
    "TaskWeights",
]
