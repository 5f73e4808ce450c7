"""Token normalisation shared by the vocabulary index and the text being matched.

Vocabulary strings and text go through the same functions, so a rule only has to make the
two spellings of a word meet; it never has to produce a "correct" word. Normalisation:
- tokens are runs of letters or digits (letter/digit boundaries split: "IL6" = "IL-6");
  Greek letters become their names ("TNF-α" = "TNF-alpha"); accents are dropped;
- case is kept for acronyms (all capitals: "AIDS" is not "aids") and for one- or
  two-letter tokens with a capital ("Ca", "NO"), and folded otherwise;
- plurals become singulars by suffix rules ("therapies", "diagnoses", "NSAIDs");
- British spellings meet American ones ("haemorrhage", "oedema", "tumour", "-isation");
- possessive 's is dropped ("Parkinson's disease" = "Parkinson disease"); "the" inside a
  term is dropped.

Text is split into segments at hard punctuation (";", or ",.:()[]/" next to whitespace):
a vocabulary term never matches across one.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu",
    "ν": "nu", "ξ": "xi", "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma",
    "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
}  # fmt: skip
_GREEK_CHARS = "".join(GREEK) + "".join(g.upper() for g in GREEK)

# A token: digits, one Greek letter, or a run of other letters.
_TOKEN = re.compile(rf"[0-9]+|[{_GREEK_CHARS}]|[^\W\d_{_GREEK_CHARS}]+")
_APOSTROPHES = "'’`´"
_ALWAYS_BREAK = set(";!?")
_BREAK_NEAR_SPACE = set(",.:()[]{}/")

IRREGULAR_PLURALS = {
    "women": "woman", "men": "man", "children": "child", "feet": "foot", "teeth": "tooth",
    "mice": "mouse", "lice": "louse", "geese": "goose", "oxen": "ox", "people": "person",
}  # fmt: skip
# Organ adjectives and nouns name the same thing in MeSH terms ("Renal Insufficiency" has the
# entry "Kidney Insufficiency"; "Kidney Papillary Necrosis" has no "renal" form).
ORGAN_ADJECTIVES = {"renal": "kidney", "hepatic": "liver", "cardiac": "heart", "pulmonary": "lung"}
_NO_PLURAL = ("ss", "us", "is", "os")  # "-os" plurals: measured worse on BC5CDR train
# Singular words ending in -s that the suffix rules would otherwise strip.
SINGULAR_IN_S = frozenset(
    {"pancreas", "atlas", "bias", "alias", "canvas", "chaos", "ethos", "pathos", "vas", "lens", "series",
     "species", "diabetes", "herpes", "rabies", "scabies", "caries", "mumps", "measles", "rickets", "tetanus",
     "biceps", "triceps", "forceps", "news", "physics", "genetics", "ethics", "economics", "statistics"}
)  # fmt: skip
_BRITISH = [
    (re.compile(r"(?<!^)ae|^ae(?!r)"), "e"),  # haem, anaemia, aetiology; not aerobic
    (re.compile(r"oe"), "e"),  # oedema, oesophagus, foetus, diarrhoea, oestrogen
    (re.compile(r"our(al|ed|ing|ite|able)?$"), r"or\1"),  # tumour, behavioural
    (re.compile(r"(?<=[a-z]{2})is(e|ed|es|ing|ation|ations|er|ers)$"), r"iz\1"),  # -ise, -isation
    (re.compile(r"(?<=[a-z])yse(d|s)?$"), r"yze\1"),  # analyse, dialysed
    (re.compile(r"sulph"), "sulf"),
    (re.compile(r"(?<=[a-z][tb])re$"), "er"),  # fibre, centre, litre
    (re.compile(r"ageing"), "aging"),
    (re.compile(r"lling$"), "ling"),  # labelling, modelling
    (re.compile(r"lled$"), "led"),
]


class Token(NamedTuple):
    start: int
    end: int
    norm: str


def _strip_accents(s: str) -> str:
    if s.isascii():
        return s
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def singular(w: str) -> str:
    """A lowercase word's singular by suffix rules (only has to be consistent)."""
    if w in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[w]
    if w in SINGULAR_IN_S:
        return w
    n = len(w)
    if n < 4:
        return w
    if w.endswith("ies") and n > 4:
        return w[:-3] + "y"
    if w.endswith("sis"):  # diagnosis / diagnoses -> diagnose
        return w[:-2] + "e"
    if w.endswith("uses"):  # viruses -> virus
        return w[:-2]
    if w.endswith("aches"):  # headaches -> headache, not headach
        return w[:-1]
    if w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return w[:-2]
    if w.endswith("ae") and n > 4:  # vertebrae, larvae
        return w[:-1]
    if w.endswith("s") and not w.endswith(_NO_PLURAL):
        return w[:-1]
    return w


@lru_cache(maxsize=200_000)
def normalize_token(tok: str) -> str:
    """The normalised form of one token (see module docstring)."""
    if tok in GREEK:
        return GREEK[tok]
    if tok.lower() in GREEK:
        return GREEK[tok.lower()]
    if tok.isdigit():
        return tok
    tok = _strip_accents(tok)
    if len(tok) >= 3 and tok[-1] == "s" and tok[:-1].isupper():  # NSAIDs -> NSAID
        return tok[:-1]
    if tok.isupper() or (len(tok) <= 2 and not tok.islower()) or not tok[1:].islower():
        return tok  # acronyms, symbols and mixed case ("AIDS", "Ca", "ACh", "mRNA") keep case
    w = singular(tok.lower())
    for pattern, repl in _BRITISH:
        w = pattern.sub(repl, w)
    return ORGAN_ADJECTIVES.get(w, w)


def tokenize(text: str) -> list[list[Token]]:
    """Normalised tokens of ``text`` grouped into segments no term may cross."""
    segments: list[list[Token]] = []
    current: list[Token] = []
    prev_end = 0
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        word = m.group()
        if word == "s" and start > 0 and text[start - 1] in _APOSTROPHES:
            prev_end = end
            continue  # possessive
        if current:
            gap = text[prev_end:start]
            if gap and _is_break(gap):
                segments.append(current)
                current = []
        current.append(Token(start, end, normalize_token(word)))
        prev_end = end
    if current:
        segments.append(current)
    return segments


def _is_break(gap: str) -> bool:
    if any(c in _ALWAYS_BREAK for c in gap):
        return True
    if gap.isspace():
        return False
    has_space = any(c.isspace() for c in gap)
    return has_space and any(c in _BREAK_NEAR_SPACE for c in gap)


DROPPED_IN_TERMS = frozenset({"the"})
# Two words of 3+ letters joined by a hyphen ("Non-Steroidal", not "Advantage-S" or "IL-6").
_SOLID_HYPHEN = re.compile(r"\b([^\W\d_]{3,})-([^\W\d_]{3,})\b")


def _solid(m: re.Match[str]) -> str:
    a, b = m.group(1), m.group(2)
    if a.isupper() or b.isupper():
        return m.group(0)
    return (a + b).lower()


def term_keys(term: str) -> list[str]:
    """Lookup keys of a vocabulary string: its normalised tokens joined by spaces, plus the
    variant with hyphenated parts written solid ("Non-Steroidal" also as "nonsteroidal")."""
    toks = [t.norm for seg in tokenize(term) for t in seg]
    toks = [t for t in toks if t not in DROPPED_IN_TERMS] or toks
    keys = [" ".join(toks)] if toks else []
    if "-" in term:
        solid = [t.norm for seg in tokenize(_SOLID_HYPHEN.sub(_solid, term)) for t in seg]
        solid = [t for t in solid if t not in DROPPED_IN_TERMS] or solid
        key = " ".join(solid)
        if solid and key not in keys:
            keys.append(key)
    return keys


# Adjectives of disorder names ("hypertensive", "epileptic", "diabetic", "nephrotoxic"), made
# from normalised single-word keys; rules that produce non-words only add dead keys.
_ADJECTIVE_RULES = [
    (re.compile(r"ion$"), "ive"),  # hypertension -> hypertensive
    (re.compile(r"se$"), "tic"),  # psychosis (normalised "psychose") -> psychotic, sepsis -> septic
    (re.compile(r"sia$"), "tic"),  # dyskinesia -> dyskinetic
    (re.compile(r"ia$"), "ic"),  # ischemia -> ischemic, schizophrenia -> schizophrenic
    (re.compile(r"sy$"), "tic"),  # epilepsy -> epileptic
    (re.compile(r"y$"), "ic"),  # allergy -> allergic, neuropathy -> neuropathic
    (re.compile(r"a$"), "atic"),  # asthma -> asthmatic, trauma -> traumatic
    (re.compile(r"etes$"), "etic"),  # diabetes -> diabetic
    (re.compile(r"ism$"), "ic"),  # alcoholism -> alcoholic
    (re.compile(r"itis$"), "itic"),  # arthritis -> arthritic
    (re.compile(r"icity$"), "ic"),  # nephrotoxicity -> nephrotoxic
]


def adjective_keys(key: str) -> list[str]:
    """Adjective forms of a one-word (normalised) disorder key."""
    if " " in key or not key.isalpha() or not key.islower() or len(key) < 5:
        return []
    out = []
    for pattern, repl in _ADJECTIVE_RULES:
        if pattern.search(key):
            adj = pattern.sub(repl, key)
            if adj != key and adj not in out:
                out.append(adj)
    return out
