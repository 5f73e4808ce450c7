"""Words physicians type into the PICO form: disorder adjectives, general names, ages, and every
slot of the shipped and benchmark frames, mapped by the dictionary matcher."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ebm.concepts.ages import age_groups, age_statement
from ebm.concepts.matcher import DictionaryMatcher, load_adjectives
from ebm.errors import InputError
from ebm.frame import load_frame
from ebm.frame_concepts import slot_concepts
from ebm.mesh import mesh
from ebm.resources import shipped_rules_dir
from tests.conftest import load_script
from tests.shipped import resources

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def matcher(concept_index: Path) -> DictionaryMatcher:
    return resources().matcher


def names(matcher: DictionaryMatcher, text: str) -> list[tuple[str, str]]:
    return [(m.text, m.name) for m in matcher.match(text)]


# --- the phrases of the paper's questions -------------------------------------------------


def test_acute_febrile_illness_is_fever(matcher: DictionaryMatcher) -> None:
    assert names(matcher, "acute febrile illness") == [("febrile illness", "Fever")]
    assert names(matcher, "febrile children") == [("febrile", "Fever"), ("children", "Child")]
    # longer vocabulary terms still win over the adjective
    assert names(matcher, "febrile seizures") == [("febrile seizures", "Seizures, Febrile")]


def test_hypomagnesemia_is_magnesium_deficiency(matcher: DictionaryMatcher) -> None:
    assert names(matcher, "What are the causes of hypomagnesemia?") == [
        ("hypomagnesemia", "Magnesium Deficiency")
    ]
    assert names(matcher, "hypomagnesaemia") == [("hypomagnesaemia", "Magnesium Deficiency")]


def test_lupus_erythematosus_is_the_general_lupus(matcher: DictionaryMatcher) -> None:
    (m,) = matcher.match("lupus erythematosus")
    assert (m.cui, m.name) == ("D008180", "Lupus Erythematosus, Systemic")
    assert m.alternatives == ("D008178",)  # Lupus Erythematosus, Cutaneous
    # the specific descriptors keep their own names
    assert names(matcher, "discoid lupus erythematosus") == [
        ("discoid lupus erythematosus", "Lupus Erythematosus, Discoid")
    ]


def test_aged_followed_by_an_age_is_an_age_statement(matcher: DictionaryMatcher) -> None:
    (child, ages) = matcher.match("children aged 2 to 12 years")
    assert child.name == "Child"
    assert (ages.text, ages.name, ages.alternatives) == ("aged 2 to 12 years", "Child", ("D002675",))
    assert "Aged" not in [m.name for m in matcher.match("children aged 2 to 12 years")]
    assert names(matcher, "patients aged over 75 years")[-1] == ("aged over 75 years", "Aged")
    assert names(matcher, "infants aged 6 months") == [("infants", "Infant"), ("aged 6 months", "Infant")]
    # without an age it is still the elderly group
    assert names(matcher, "aged patients")[0] == ("aged", "Aged")
    assert names(matcher, "care of the aged")[-1] == ("aged", "Aged")


@pytest.mark.parametrize(
    ("text", "low", "high", "main"),
    [
        ("aged 2 to 12 years", 2, 13, "Child"),
        ("aged over 75 years", 75, float("inf"), "Aged"),
        ("aged 18 years or older", 18, float("inf"), "Adult"),
        ("aged 65 and over", 65, float("inf"), "Aged"),
        ("aged 80+", 80, float("inf"), "Aged, 80 and over"),
        ("aged between 40 and 60 years", 40, 61, "Middle Aged"),
        ("aged 12-18 years", 12, 19, "Adolescent"),
        ("aged under 5", 0, 5, "Child, Preschool"),
        ("aged 6 months to 5 years", 0.5, 6, "Child, Preschool"),
    ],
)
def test_age_statements(text: str, low: float, high: float, main: str) -> None:
    stated = age_statement(text, len("aged"))
    assert stated is not None and stated.end == len(text)
    assert (stated.low, stated.high) == (low, high)
    groups = age_groups(stated.low, stated.high)
    assert groups[0].name == main
    assert all(mesh().get(g.ui).name == g.name for g in groups)


def test_no_age_statement_without_a_number() -> None:
    assert age_statement("aged patients", 4) is None
    assert age_statement("aged rats were", 4) is None


# --- adjectives of disorders ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("adjective", "disorder"),
    [
        ("febrile", "Fever"),
        ("anemic", "Anemia"),
        ("anaemic", "Anemia"),
        ("diabetic", "Diabetes Mellitus"),
        ("asthmatic", "Asthma"),
        ("hypertensive", "Hypertension"),
        ("septic", "Sepsis"),
        ("obese", "Obesity"),
        ("gouty", "Gout"),
        ("edematous", "Edema"),
        ("nephrotoxic", "Kidney Diseases"),  # through the synonym nephrotoxicity
        ("epileptic", "Epilepsy"),
    ],
)
def test_disorder_adjectives(matcher: DictionaryMatcher, adjective: str, disorder: str) -> None:
    assert names(matcher, f"{adjective} patients")[0] == (adjective, disorder)
    assert names(matcher, f"a {adjective} illness") == [(f"{adjective} illness", disorder)]


def test_negating_prefix_blocks_the_term(matcher: DictionaryMatcher) -> None:
    assert names(matcher, "non-obese") == []
    assert names(matcher, "afebrile") == []  # the table leaves out prefixed adjectives
    assert names(matcher, "non-small cell lung cancer") == [
        ("non-small cell lung cancer", "Carcinoma, Non-Small-Cell Lung")
    ]


def test_general_names_and_episodes(matcher: DictionaryMatcher) -> None:
    assert names(matcher, "unstable angina") == [("unstable angina", "Angina, Unstable")]
    assert names(matcher, "angina") == [("angina", "Angina Pectoris")]
    assert names(matcher, "multiple fractures") == [("multiple fractures", "Fractures, Multiple")]
    assert names(matcher, "fractures") == [("fractures", "Fractures, Bone")]
    assert names(matcher, "major depressive episode") == [
        ("major depressive episode", "Depressive Disorder, Major")
    ]
    # a general name that misleads is stoplisted ("ECG abnormalities")
    assert names(matcher, "abnormalities") == []


def test_adjective_table_rows_name_disorders(matcher: DictionaryMatcher) -> None:
    """Every row of the shipped table gives its adjective a disorder (else it is dead)."""
    rows = load_adjectives(shipped_rules_dir() / "concept_adjectives.tsv")
    assert len(rows) > 200
    dead = [adj for adj, _ in rows if adj not in matcher.entries and adj not in matcher.stoplist.keys]
    assert dead == []
    for adj, _ in rows:
        if adj in matcher.entries:
            assert all("DISO" in matcher.concepts[c].groups for c in matcher.entries[adj])


def test_adjective_table_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "adj.tsv"
    bad.write_text("# header\nfebrile\tfever\nvery febrile\tfever\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"adj.tsv:3: the adjective is one word"):
        load_adjectives(bad)
    bad.write_text("febrile\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"adj.tsv:1: column 'noun' is missing"):
        load_adjectives(bad)


def test_adjectives_keep_disease_precision_on_bc5cdr_train(concept_index: Path, shared: Path) -> None:
    """Document-level Disease precision on 300 BC5CDR training abstracts does not fall by more
    than a point with the adjectives (table, suffix rules, head nouns) against without them,
    and recall rises."""
    ev = load_script("eval_bc5cdr")
    docs = ev.read_pubtator(shared / "concepts" / "bc5cdr" / "CDR_TrainingSet.PubTator.txt.gz")[:300]
    scores = {}
    for adjectives in (True, False):
        m = resources().dictionary_matcher(concept_index, adjectives=adjectives)
        preds = {d.pmid: [(x.start, x.end, x.cui, x.groups) for x in m.match(d.text)] for d in docs}
        scores[adjectives] = ev.evaluate(docs, preds)["Disease"]["document"]
    assert scores[True]["P"] >= scores[False]["P"] - 0.01
    assert scores[True]["R"] > scores[False]["R"]


# --- the frames -----------------------------------------------------------------------------


def _frames(shared: Path) -> list[Path]:
    paths = sorted((ROOT / "questions").glob("*.yaml")) + sorted((shared / "bench" / "frames").glob("*.json"))
    assert len(paths) >= 20
    return paths


def test_every_problem_and_population_of_the_frames_maps_to_a_concept(
    matcher: DictionaryMatcher, shared: Path
) -> None:
    vocab = mesh()
    for path in _frames(shared):
        frame = load_frame(path)
        for slot in ("problem", "co_problems", "population"):
            value = getattr(frame, slot)
            for v in (value,) if isinstance(value, str) else tuple(value or ()):
                sv = slot_concepts(slot, v, matcher, vocab)
                assert sv.concepts, (path.name, slot, v)
                if slot != "population":
                    assert any("DISO" in c.groups for c in sv.concepts), (path.name, slot, v)


def test_paper_frames_map_to_the_expected_concepts(matcher: DictionaryMatcher) -> None:
    vocab = mesh()
    expected = {
        "fever_acetaminophen_ibuprofen.yaml": ("problem", "D005334"),  # Fever
        "hypomagnesemia_causes.yaml": ("problem", "D008275"),  # Magnesium Deficiency
        "lupoid_sclerosis_prognosis.yaml": ("problem", "D008180"),  # Lupus Erythematosus, Systemic
        "quinine_leg_cramps.yaml": ("intervention", "D011803"),  # Quinine
    }
    for name, (slot, cui) in expected.items():
        frame = load_frame(ROOT / "questions" / name)
        value = getattr(frame, slot)
        value = value if isinstance(value, str) else value[0]
        assert cui in {c.cui for c in slot_concepts(slot, value, matcher, vocab).concepts}, name


def test_frame_coverage_script(concept_index: Path, shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = load_script("eval_frame_concepts")
    sys.argv = ["eval_frame_concepts.py", "--shared", str(shared.parent)]
    assert ev.main() == 0
    rows = {
        line.split()[0]: list(map(int, line.split()[1:])) for line in capsys.readouterr().out.splitlines()[1:]
    }
    assert set(rows) == {"problem", "co_problems", "population", "intervention", "comparison", "all"}
    for slot in ("problem", "co_problems", "population"):
        values, mapped, grouped = rows[slot]
        assert values > 0 and mapped == grouped == values, slot
    assert rows["all"][0] == sum(r[0] for s, r in rows.items() if s != "all")
