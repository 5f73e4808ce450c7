"""Normalisation shared by vocabulary keys and text: spellings must meet, senses must not."""

from __future__ import annotations

import pytest

from ebm.concepts.normalize import adjective_keys, normalize_token, term_keys, tokenize


def key(text: str) -> str:
    return " ".join(t.norm for seg in tokenize(text) for t in seg)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("therapies", "therapy"),
        ("diagnoses", "diagnosis"),
        ("viruses", "virus"),
        ("headaches", "headache"),
        ("women", "woman"),
        ("haemorrhage", "hemorrhage"),
        ("oedema", "edema"),
        ("oesophageal", "esophageal"),
        ("tumours", "tumor"),
        ("randomised", "randomized"),
        ("anaesthesia", "anesthesia"),
        ("sulphate", "sulfate"),
        ("Diabetes", "diabetes"),
        ("NSAIDs", "NSAID"),
        ("TNF-α", "TNF alpha"),
        ("IL6", "IL-6"),
        ("Parkinson's disease", "Parkinson disease"),
        ("Crohn’s disease", "Crohn disease"),
        ("naïve", "naive"),
        ("renal failure", "kidney failure"),
        ("hepatic encephalopathy", "liver encephalopathy"),
    ],
)
def test_spellings_meet(a: str, b: str) -> None:
    assert key(a) == key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("AIDS", "aids"),  # the disease is not hearing aids
        ("NO", "no"),  # nitric oxide is not the negation
        ("Ca", "ca"),  # calcium is not circa
        ("ACh", "aches"),  # acetylcholine is not pain
        ("mRNA", "mrna"),
    ],
)
def test_case_keeps_acronyms_and_symbols_apart(a: str, b: str) -> None:
    assert key(a) != key(b)


def test_offsets_point_at_the_original_text() -> None:
    text = "Levels of TNF-α in Crohn's disease."
    toks = [t for seg in tokenize(text) for t in seg]
    assert [text[t.start : t.end] for t in toks] == ["Levels", "of", "TNF", "α", "in", "Crohn", "disease"]


def test_segments_break_at_hard_punctuation_but_not_inside_chemical_names() -> None:
    segs = tokenize("Receptors, dopamine; 1,2-dimethylhydrazine (DMH) and N(G)-nitro-L-arginine")
    assert [[t.norm for t in s] for s in segs] == [
        ["receptor"],
        ["dopamine"],
        ["1", "2", "dimethylhydrazine"],
        ["DMH"],
        ["and", "N", "G", "nitro", "L", "arginine"],
    ]


def test_term_keys_add_the_solid_variant_of_hyphenated_words() -> None:
    assert term_keys("Non-Steroidal Anti-Inflammatory Agents") == [
        "non steroidal anti inflammatory agent",
        "nonsteroidal antiinflammatory agent",
    ]
    assert term_keys("IL-6") == ["IL 6"]  # acronym parts stay apart
    assert term_keys("The Lancet") == ["lancet"]


@pytest.mark.parametrize(
    ("word", "adjective"),
    [
        ("hypertension", "hypertensive"),
        ("epilepsy", "epileptic"),
        ("schizophrenia", "schizophrenic"),
        ("psychosis", "psychotic"),
        ("diabetes", "diabetic"),
        ("asthma", "asthmatic"),
        ("nephrotoxicity", "nephrotoxic"),
        ("alcoholism", "alcoholic"),
    ],
)
def test_adjectives_of_disorder_names(word: str, adjective: str) -> None:
    assert key(adjective) in adjective_keys(key(word))


def test_normalize_token_is_idempotent() -> None:
    for w in ["Pneumonia", "COPD", "β", "3", "Ca", "children", "diagnoses", "Tumours", "NSAIDs"]:
        once = normalize_token(w)
        assert normalize_token(once) == once, w
