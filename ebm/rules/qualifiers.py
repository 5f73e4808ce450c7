"""MeSH qualifiers (subheadings): the 76 current names and the retired ones older records carry.

No qualifier vocabulary file ships with ebm (the shared MeSH 2024 data has descriptors
only), so the names are listed here. Sources: the 76 topical qualifiers of MeSH 2020
(NLM's ``q2020.bin`` as listed in the public pmidcite package, ``qualifiers.py``),
taken as the 2024 set too: no newer qualifier list is available offline. Every qualifier that occurs in the
real MEDLINE samples in ``../shared/data/medline`` (2006 and 2016 baselines, current
records) is either in that list or in ``RETIRED`` (``radiography``,
``radionuclide imaging``, ``ultrasonography``, ``diagnostic use``, ``secretion``,
``utilization``), which ``tests/test_rules.py`` checks. UIs are given where the real
records show them.
"""

from __future__ import annotations

import difflib

# name -> two-letter abbreviation (as in PubMed's ``/dt`` short forms and MEDLINE text)
QUALIFIERS: dict[str, str] = {
    "abnormalities": "AB",
    "administration & dosage": "AD",
    "adverse effects": "AE",
    "agonists": "AG",
    "analogs & derivatives": "AA",
    "analysis": "AN",
    "anatomy & histology": "AH",
    "antagonists & inhibitors": "AI",
    "biosynthesis": "BI",
    "blood": "BL",
    "blood supply": "BS",
    "cerebrospinal fluid": "CF",
    "chemical synthesis": "CS",
    "chemically induced": "CI",
    "chemistry": "CH",
    "classification": "CL",
    "complications": "CO",
    "congenital": "CN",
    "cytology": "CY",
    "deficiency": "DF",
    "diagnosis": "DI",
    "diagnostic imaging": "DG",
    "diet therapy": "DH",
    "drug effects": "DE",
    "drug therapy": "DT",
    "economics": "EC",
    "education": "ED",
    "embryology": "EM",
    "enzymology": "EN",
    "epidemiology": "EP",
    "ethics": "ES",
    "ethnology": "EH",
    "etiology": "ET",
    "genetics": "GE",
    "growth & development": "GD",
    "history": "HI",
    "immunology": "IM",
    "injuries": "IN",
    "innervation": "IR",
    "instrumentation": "IS",
    "isolation & purification": "IP",
    "legislation & jurisprudence": "LJ",
    "metabolism": "ME",
    "methods": "MT",
    "microbiology": "MI",
    "mortality": "MO",
    "nursing": "NU",
    "organization & administration": "OG",
    "parasitology": "PS",
    "pathogenicity": "PY",
    "pathology": "PA",
    "pharmacokinetics": "PK",
    "pharmacology": "PD",
    "physiology": "PH",
    "physiopathology": "PP",
    "poisoning": "PO",
    "prevention & control": "PC",
    "psychology": "PX",
    "radiation effects": "RE",
    "radiotherapy": "RT",
    "rehabilitation": "RH",
    "secondary": "SC",
    "standards": "ST",
    "statistics & numerical data": "SN",
    "supply & distribution": "SD",
    "surgery": "SU",
    "therapeutic use": "TU",
    "therapy": "TH",
    "toxicity": "TO",
    "transmission": "TM",
    "transplantation": "TR",
    "trends": "TD",
    "ultrastructure": "UL",
    "urine": "UR",
    "veterinary": "VE",
    "virology": "VI",
}

# Retired qualifiers that older MEDLINE records still carry (the 2006 and 2016 samples do),
# with a note for messages. Absent from the 2020 list; the imaging ones were replaced by
# "diagnostic imaging" in 2016.
RETIRED: dict[str, str] = {
    "radiography": "retired in 2016; current records use 'diagnostic imaging'",
    "radionuclide imaging": "retired in 2016; current records use 'diagnostic imaging'",
    "ultrasonography": "retired in 2016; current records use 'diagnostic imaging'",
    "diagnostic use": "retired (not in the 2020 list)",
    "secretion": "retired (not in the 2020 list)",
    "utilization": "retired (not in the 2020 list)",
    "manpower": "retired (not in the 2020 list)",
    "contraindications": "retired (not in the 2020 list)",
}

# UIs as the real records of ../shared/data/medline give them (medline16n0902.xml.gz,
# test_current_medline.xml.gz, pubmed-29768149.xml); others are unknown here.
UIS: dict[str, str] = {
    "administration & dosage": "Q000008",
    "adverse effects": "Q000009",
    "analogs & derivatives": "Q000031",
    "analysis": "Q000032",
    "antagonists & inhibitors": "Q000037",
    "biosynthesis": "Q000096",
    "blood": "Q000097",
    "chemistry": "Q000737",
    "complications": "Q000150",
    "cytology": "Q000166",
    "deficiency": "Q000172",
    "diagnosis": "Q000175",
    "diet therapy": "Q000178",
    "drug effects": "Q000187",
    "drug therapy": "Q000188",
    "education": "Q000193",
    "enzymology": "Q000201",
    "epidemiology": "Q000453",
    "ethnology": "Q000208",
    "etiology": "Q000209",
    "genetics": "Q000235",
    "growth & development": "Q000254",
    "immunology": "Q000276",
    "innervation": "Q000294",
    "instrumentation": "Q000295",
    "metabolism": "Q000378",
    "methods": "Q000379",
    "microbiology": "Q000382",
    "mortality": "Q000401",
    "pathogenicity": "Q000472",
    "pathology": "Q000473",
    "pharmacology": "Q000494",
    "physiology": "Q000502",
    "physiopathology": "Q000503",
    "prevention & control": "Q000517",
    "psychology": "Q000523",
    "radiation effects": "Q000528",
    "radiography": "Q000530",
    "radionuclide imaging": "Q000531",
    "rehabilitation": "Q000534",
    "secondary": "Q000556",
    "secretion": "Q000557",
    "standards": "Q000592",
    "statistics & numerical data": "Q000706",
    "surgery": "Q000601",
    "therapeutic use": "Q000627",
    "therapy": "Q000628",
    "transmission": "Q000635",
    "transplantation": "Q000637",
    "trends": "Q000639",
    "ultrastructure": "Q000648",
    "utilization": "Q000656",
    "virology": "Q000821",
}


def normalize(name: str) -> str:
    """Case-folded, '&' and 'and' unified: 'Prevention and Control' -> 'prevention & control'."""
    s = " ".join(name.casefold().replace(" and ", " & ").split())
    return s


def canonical(name: str) -> str | None:
    """The qualifier's MeSH name (current or retired), or None if it is not a qualifier."""
    n = normalize(name)
    if n in QUALIFIERS or n in RETIRED:
        return n
    for q, abbr in QUALIFIERS.items():
        if n == abbr.casefold():
            return q
    for q, ui in UIS.items():
        if n == ui.casefold():
            return q
    return None


def suggest(name: str, n: int = 2) -> list[str]:
    return difflib.get_close_matches(normalize(name), list(QUALIFIERS), n=n, cutoff=0.7)
