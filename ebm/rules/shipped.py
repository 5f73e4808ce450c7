"""The tables ``rules/`` ships, as ``TableSpec`` records (``ebm.rules.registry``).

Each record names the module's columns and builder; the validators here add the checks that
need MeSH, the concept index or the text pipeline's tokenizer. Order: the order of
docs/rules.md and of ``ebm rules check``'s messages.
"""

from __future__ import annotations

from typing import Any

from ebm import question
from ebm.concepts import groups, index, matcher
from ebm.rules import tables
from ebm.rules.check import (
    CheckContext,
    Problem,
    check_clinical_queries,
    check_journals,
    check_study_types,
    check_task_indicators,
    problem_from_error,
)
from ebm.rules.registry import EXTRACTORS, INDEX, MATCHER, NEGATION, QUERY, QUESTION, SCORER, TableSpec
from ebm.rules.table import Table
from ebm.text import negation
from extractors import cues, design_grade, intervention, outcome_cues, population, problem, tree_weights

WEIGHT = (-100.0, 100.0)  # S_task, S_study, S_journal: far beyond any sensible weight


def _located(messages: list[str], table: Table) -> list[Problem]:
    return [problem_from_error(Exception(m), table.path) for m in messages]


def _tree_weights(t: Table, _v: Any, ctx: CheckContext) -> list[Problem]:
    return _located(tree_weights.tree_weight_problems(t, ctx.vocabulary), t)


def _design_grades(t: Table, v: Any, _ctx: CheckContext) -> list[Problem]:
    return _located(design_grade.validate(v), t)


def _negation(t: Table, _v: Any, ctx: CheckContext) -> list[Problem]:
    from ebm.errors import EbmError

    try:
        negation.negation_rules_from_table(t, ctx.tokenize)
    except EbmError as exc:
        return [problem_from_error(exc, t.path)]
    return []


SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "task_indicators",
        "task_indicators.tsv",
        tables.TASK_INDICATOR_COLUMNS,
        tables.task_indicators_from_table,
        (SCORER,),
        "S_task: MeSH descriptors, trees and qualifiers weighted per clinical task",
        "add or reweight a MeSH term for a task (main-theme and other weights)",
        lambda t, v, ctx: check_task_indicators(v, ctx.vocabulary),
        ranges={"major": WEIGHT, "minor": WEIGHT},
    ),
    TableSpec(
        "study_types",
        "study_types.tsv",
        tables.STUDY_TYPE_COLUMNS,
        tables.study_types_from_table,
        (EXTRACTORS, SCORER),
        "S_study and the evidence grade (A/B/C) from publication types and design headings",
        "change a study type's S_study, class or grade; add an 'unless' heading",
        lambda t, v, ctx: check_study_types(v, ctx.vocabulary),
        ranges={"s_study": WEIGHT},
    ),
    TableSpec(
        "journals",
        "journals.tsv",
        tables.JOURNAL_COLUMNS,
        tables.journals_from_table,
        (SCORER,),
        "S_journal: the core clinical journals",
        "add a journal or change its S_journal",
        lambda t, v, ctx: check_journals(v),
        ranges={"s_journal": WEIGHT},
    ),
    TableSpec(
        "clinical_queries",
        "clinical_queries.tsv",
        tables.CLINICAL_QUERY_COLUMNS,
        tables.clinical_queries_from_table,
        (QUERY,),
        "the PubMed Clinical Queries filter added to each task's query",
        "edit a task's broad or narrow filter (PubMed syntax, also run by the local store)",
        lambda t, v, ctx: check_clinical_queries(v, ctx.vocabulary),
    ),
    TableSpec(
        "semantic_groups",
        "semantic_groups.tsv",
        groups.GROUP_COLUMNS,
        groups.MeshGroups.from_table,
        (MATCHER, INDEX),
        "semantic group (DISO, CHEM, ...) of MeSH tree branches and descriptors",
        "move a tree branch or one descriptor to another group (disorders are problems, ...)",
    ),
    TableSpec(
        "umls_semantic_groups",
        "umls_semantic_groups.tsv",
        groups.GROUP_COLUMNS,
        groups.UmlsGroups.from_table,
        (INDEX,),
        "semantic group of UMLS semantic types (only for an index built with `ebm setup --umls`)",
        "move a semantic type to another group, then rebuild the UMLS index",
    ),
    TableSpec(
        "concept_synonyms",
        "concept_synonyms.tsv",
        matcher.SYNONYM_COLUMNS,
        matcher.synonyms_from_table,
        (MATCHER,),
        "curated synonyms that win over the vocabulary ('alcohol' is Ethanol)",
        "add a term -> concept ID, or change the concept a term names",
        lambda t, v, ctx: matcher.unknown_descriptors(t, "concept", ctx.vocabulary),
    ),
    TableSpec(
        "concept_adjectives",
        "concept_adjectives.tsv",
        matcher.ADJECTIVE_COLUMNS,
        matcher.adjectives_from_table,
        (MATCHER,),
        "adjectives that name a disorder ('febrile' -> fever -> Fever)",
        "add an adjective and the noun it derives from",
        lambda t, v, ctx: matcher.adjectives_without_disorder(t, ctx.value("concept_synonyms"), ctx.lookup),
        reads=("concept_synonyms",),
        needs_index=True,
    ),
    TableSpec(
        "concept_stoplist",
        "concept_stoplist.tsv",
        matcher.STOPLIST_COLUMNS,
        matcher.stoplist_from_table,
        (MATCHER,),
        "terms, concepts, adjectives and salt words the matcher never reports on their own",
        "stop a generic term ('disease') or a concept; list a salt word ('maleate')",
        lambda t, v, ctx: matcher.unknown_descriptors(t, "value", ctx.vocabulary, ("concept",)),
    ),
    TableSpec(
        "stopwords",
        "stopwords_en.txt",
        index.STOPWORD_COLUMNS,
        index.stopwords_from_table,
        (MATCHER, SCORER, INDEX),
        "function words: no concept key is made only of them; question words skip them",
        "add a word (takes effect at once) or remove one (rebuild the index: `ebm setup`)",
    ),
    TableSpec(
        "negation_triggers",
        "negation_triggers.tsv",
        negation.TRIGGER_COLUMNS,
        lambda t: t,  # compiled with the text pipeline's tokenizer (Resources.negation)
        (NEGATION,),
        "NegEx triggers: a negated concept is no problem or intervention of the study",
        "add a trigger phrase (pre, post, pseudo, termination)",
        _negation,
    ),
    TableSpec(
        "population_words",
        "population_words.tsv",
        population.WORD_COLUMNS,
        population.population_words_from_table,
        (EXTRACTORS,),
        "participant nouns ('patients', 'infants') and measure words for the population",
        "add a participant noun or a measure word",
    ),
    TableSpec(
        "intervention_cues",
        "intervention_cues.tsv",
        cues.CUE_COLUMNS,
        cues.weighted_cues_from_table,
        (EXTRACTORS,),
        "cue phrases that boost an intervention mention ('randomized to receive')",
        "add a cue, change its weight or where it applies",
        ranges={"weight": (0.01, 100.0)},
    ),
    TableSpec(
        "intervention_kinds",
        "intervention_kinds.tsv",
        tree_weights.COLUMNS,
        tree_weights.tree_weights_from_table,
        (EXTRACTORS,),
        "how much a MeSH branch counts as an intervention (drugs 1.0, ...)",
        "reweight a tree branch or descriptor (0 to 2)",
        _tree_weights,
    ),
    TableSpec(
        "intervention_terms",
        "intervention_terms.tsv",
        intervention.TERM_COLUMNS,
        intervention.intervention_terms_from_table,
        (EXTRACTORS,),
        "drug-name stems, intervention words and head nouns no concept covers",
        "add a stem ('-mab'), a word ('placebo') or a head noun, with a weight",
    ),
    TableSpec(
        "problem_kinds",
        "problem_kinds.tsv",
        tree_weights.COLUMNS,
        problem.problem_kinds_from_table,
        (EXTRACTORS,),
        "how much a disorder branch counts as the problem studied",
        "reweight a disorder branch or descriptor (0 to 2)",
        _tree_weights,
    ),
    TableSpec(
        "outcome_cues",
        "outcome_cues.tsv",
        outcome_cues.CUE_COLUMNS,
        outcome_cues.cues_from_table,
        (EXTRACTORS,),
        "cue phrases and patterns of outcome sentences (and of aims, which are not)",
        "add a phrase or regex with a weight in [-1, 1] (retrain the model for large changes)",
    ),
    TableSpec(
        "design_grades",
        "design_grades.tsv",
        design_grade.DESIGN_GRADE_COLUMNS,
        design_grade.design_grades_from_table,
        (EXTRACTORS, SCORER),
        "study class, S_study and grade (A/B/C) of a study design predicted from the text, when "
        "no publication type names one",
        "change a design's class, S_study, grade, minimum probability or the sample size for "
        "higher confidence",
        _design_grades,
        ranges={"s_study": WEIGHT},
    ),
    TableSpec(
        "question_cues",
        "question_cues.tsv",
        question.QUESTION_CUE_COLUMNS,
        question.question_cues_from_table,
        (QUESTION,),
        "task phrases, role phrases ('versus' -> comparison) and ignored words of a question in plain words",
        "add a task phrase with a weight, a role phrase before or after a chunk, an ignored word",
    ),
)
