"""S_match (MeSH-tree PICO matching over all problems and mentions) and S_lexical (BM25 of the
question's words among the candidates): EBM+'s components, on real citations of the bundled
corpus (the myocardial ischaemia pool of tests/tiny.py) and the MeSH 2024 trees of the tiny subset."""

from __future__ import annotations

import pytest

from ebm.frame import frame_from_args
from ebm.frame_concepts import frame_concepts
from ebm.scoring.hierarchy import BROADER, NARROWER, SAME, SIBLING, hierarchy
from ebm.scoring.lexical import TITLE_WEIGHT, lexical_scores, term_frequencies
from ebm.scoring.pico import PROBLEM_NO_OVERLAP, PROBLEM_PARTIAL, content_words, score_pico
from ebm.scoring.topical import score_topical
from ebm.text.words import Words
from extractors.annotate import Annotation, Annotator
from tests import tiny
from tests.tiny import vocabulary


def _words() -> Words:
    from ebm.concepts.index import load_stopwords
    from ebm.resources import shipped_rules_dir

    return Words(load_stopwords(shipped_rules_dir() / "stopwords_en.txt"))


WORDS = _words()  # the shipped stop words


def words(text: str) -> list[str]:
    return WORDS.words(text)


@pytest.fixture(scope="module")
def annotator(tiny_resources: object) -> Annotator:
    return tiny.annotator()


@pytest.fixture(scope="module")
def pool(annotator: Annotator) -> dict[str, Annotation]:
    return {k: annotator.annotate(c) for k, c in tiny.ischemia_pool().items()}


def scores(annotator: Annotator, ann: Annotation, task: str = "therapy", **slots):
    """(the paper's S_PICO, S_match) of one citation for a frame built from ``slots``."""
    fc = frame_concepts(frame_from_args(task, **slots), annotator.matcher, vocabulary())
    return score_pico(fc, ann, WORDS), score_topical(fc, ann, vocabulary(), WORDS)


def ui(name: str) -> str:
    d = vocabulary().by_name(name)
    assert d is not None, name
    return d.ui


# --- the MeSH hierarchy ------------------------------------------------------------------------


def test_relations_follow_the_mesh_trees() -> None:
    h = hierarchy(vocabulary())
    depression, major = ui("Depressive Disorder"), ui("Depressive Disorder, Major")
    assert h.relation(depression, depression).strength == SAME
    narrower = h.relation(depression, major)  # F03.600.300 > F03.600.300.375
    assert (narrower.kind, narrower.strength) == ("narrower", NARROWER)
    broader = h.relation(major, depression)
    assert (broader.kind, broader.strength) == ("broader", BROADER)
    # two levels up: half again
    grand = h.relation(major, ui("Mood Disorders"))
    assert (grand.kind, grand.strength) == ("broader", BROADER / 2)
    # Cyclothymic (F03.600.500) and Depressive Disorder share the parent Mood Disorders (F03.600)
    sibling = h.relation(depression, ui("Cyclothymic Disorder"))
    assert (sibling.kind, sibling.strength) == ("sibling", SIBLING)
    # a category root says nothing about the topic: C14 Cardiovascular Diseases is no match
    assert h.relation(ui("Myocardial Ischemia"), ui("Cardiovascular Diseases")) is None
    assert h.relation(ui("Myocardial Ischemia"), ui("Heart Diseases")).kind == "broader"
    # unrelated trees, and IDs that are not MeSH descriptors
    assert h.relation(depression, ui("Myocardial Ischemia")) is None
    assert h.relation("C0011570", "C0011581") is None
    assert h.relation("C0011570", "C0011570").kind == "same"


# --- S_match on real citations ---------------------------------------------------------------------


def test_problem_matches_a_narrower_primary_problem(
    annotator: Annotator, pool: dict[str, Annotation]
) -> None:
    rct = pool["rct"]
    assert rct.primary_problem is not None and rct.primary_problem.names == ("Myocardial Ischemia",)
    # "heart diseases" shares no word with "myocardial ischaemia": the paper scores a mismatch,
    # but Myocardial Ischemia (C14.280.647) is a kind of Heart Diseases (C14.280).
    paper, match = scores(annotator, rct, problem="heart diseases")
    assert paper.problem == PROBLEM_NO_OVERLAP
    assert match.problem == pytest.approx(NARROWER)
    (c,) = [c for c in match.contributions if c.component == "match.problem"]
    assert "narrower" in c.reason and "C14.280 > C14.280.647" in c.reason


def test_problem_found_beyond_the_primary_weighs_by_prominence(
    annotator: Annotator, pool: dict[str, Annotation]
) -> None:
    h = hierarchy(vocabulary())
    checked = 0
    for ann in pool.values():
        primary = ann.primary_problem
        assert primary is not None
        for cand in ann.problems[1:]:
            (cui,) = cand.concepts[:1] or ("",)
            name = cand.names[0] if cand.names else ""
            unrelated = all(h.relation(cui, p) is None for p in primary.concepts)
            if not cui or not unrelated or content_words(name, WORDS) & content_words(primary.text, WORDS):
                continue
            fc = frame_concepts(frame_from_args("therapy", problem=name), annotator.matcher, vocabulary())
            if fc.problem is None or [c.cui for c in fc.problem.concepts] != [cui]:
                continue
            paper, match = score_pico(fc, ann, WORDS), score_topical(fc, ann, vocabulary(), WORDS)
            # the paper compares the primary problem only: a mismatch
            assert paper.problem == PROBLEM_NO_OVERLAP
            # S_match finds it among the other problems, weighed by its extractor score
            assert 0 < match.problem <= 1
            # prominence: its rule score against the most prominent problem's
            assert match.problem >= cand.score / ann.problems[0].score - 1e-9
            checked += 1
    assert checked >= 2


def test_intervention_same_and_sibling_concepts(annotator: Annotator, pool: dict[str, Annotation]) -> None:
    rct = pool["rct"]
    paper, match = scores(annotator, rct, problem="myocardial ischemia", intervention=["tracheal extubation"])
    assert paper.intervention == 1.0 and match.intervention == SAME
    # Intubation, Intratracheal (E02.041.500) and Airway Extubation (E02.041.249): siblings
    paper, match = scores(
        annotator, rct, problem="myocardial ischemia", intervention=["intratracheal intubation"]
    )
    assert paper.intervention == 0.0
    assert match.intervention == pytest.approx(SIBLING)
    # the mean over the frame's interventions and comparisons
    _, both = scores(
        annotator,
        rct,
        problem="myocardial ischemia",
        intervention=["tracheal extubation"],
        comparison=["allopurinol"],
    )
    assert both.intervention == pytest.approx(0.5)


def test_outcome_counts_only_sentences_about_the_question(
    annotator: Annotator, pool: dict[str, Annotation]
) -> None:
    rct = pool["rct"]
    paper, match = scores(annotator, rct, problem="myocardial ischemia", intervention=["tracheal extubation"])
    assert 0 < match.outcome <= paper.outcome
    # a frame about something the abstract never mentions: the paper's S_outcome is the same
    # (independent of the question), S_match's outcome is 0
    other_paper, other = scores(annotator, rct, problem="gout", intervention=["allopurinol"])
    assert other_paper.outcome == paper.outcome > 0
    assert other.outcome == 0.0 and other.problem == 0.0 and other.intervention == 0.0


def test_co_problems_and_population_count_for_every_task(
    annotator: Annotator, pool: dict[str, Annotation]
) -> None:
    case = pool["case_report"]
    names = {c.name for c in case.concepts if not c.negated}
    assert {"Bradycardia", "Adult"} <= names
    slots = {"problem": "myocardial ischemia", "co_problems": ["bradycardia"], "population": ["adults"]}
    paper, match = scores(annotator, case, **slots)
    assert paper.co_problems == 0.0  # therapy: the paper scores co-occurring problems for Dx/etiology only
    assert match.co_problems == SAME and match.population == SAME
    _, none = scores(annotator, case, problem="myocardial ischemia", co_problems=["gout"])
    assert none.co_problems == 0.0


def test_problem_without_a_concept_falls_back_to_its_words(
    annotator: Annotator, pool: dict[str, Annotation]
) -> None:
    rct = pool["rct"]
    fc = frame_concepts(
        frame_from_args("therapy", problem="late extubation failure"), annotator.matcher, vocabulary()
    )
    assert fc.problem is not None and not fc.problem.concepts
    match = score_topical(fc, rct, vocabulary(), WORDS)
    wanted = content_words("late extubation failure", WORDS)
    present = {w for s in rct.document.sentences for w in words(s.text)}
    assert wanted & present  # "early vs late extubation"
    assert match.problem == pytest.approx(PROBLEM_PARTIAL * len(wanted & present) / len(wanted))


# --- S_lexical ---------------------------------------------------------------------------------------


def test_lexical_rewards_words_that_set_a_candidate_apart(pool: dict[str, Annotation]) -> None:
    anns = list(pool.values())
    keys = list(pool)
    tfs = [term_frequencies(a, WORDS) for a in anns]
    common = [w for w in tfs[0] if all(w in tf for tf in tfs)]
    assert common, "a word every candidate has"
    only_rct = [
        w
        for w in tfs[keys.index("rct")]
        if all(w not in tf for k, tf in zip(keys, tfs, strict=True) if k != "rct")
    ]
    assert "extubation" in only_rct
    got = lexical_scores(["extubation", common[0], "zorbitis"], anns, WORDS)
    rct = got[keys.index("rct")]
    assert rct.score == max(s.score for s in got)
    parts = dict(rct.matches)
    assert "zorbitis" not in parts  # in no candidate: adds nothing
    # a word in one candidate weighs more than one in all of them (pool document frequency)
    assert parts["extubation"] > parts[common[0]] > 0
    assert [t for t, _ in rct.matches] == sorted(parts, key=lambda t: -parts[t])
    # an empty pool, and no question terms
    assert lexical_scores(["extubation"], [], WORDS) == []
    assert all(s.score == 0 for s in lexical_scores([], anns, WORDS))


def test_title_words_count_five_times(pool: dict[str, Annotation]) -> None:
    rct = pool["rct"]
    sentences = rct.document.sentences
    assert sentences[0].position == "title" and "extubation" in words(sentences[0].text)
    expected = sum(
        words(s.text).count("extubation") * (TITLE_WEIGHT if s.position == "title" else 1) for s in sentences
    )
    assert term_frequencies(rct, WORDS)["extubation"] == expected > TITLE_WEIGHT
