"""Sample size: the number of participants randomised or enrolled, from the abstract (issue 13).

Rules, not a model: every count of people in the abstract ("120 children", "n = 120",
"One hundred twenty women", "a total of 1,024 patients") is a candidate, scored by what the
sentence says about it: a randomisation or enrolment verb, "a total of", the total of the
group sizes of a randomisation sentence. Counts that are followed by a unit, preceded by
"aged", or say who was screened, excluded, lost or who died are not candidates. The best
candidate wins when its score reaches ``MIN_SCORE``; otherwise the extractor abstains (None):
a wrong number is worse than none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["SampleSize", "extract_sample_size", "parse_number"]


@dataclass(frozen=True)
class SampleSize:
    value: int
    sentence: str
    start: int  # character offsets of the count in the abstract text
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "sentence": self.sentence}


_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_WORD = "|".join(sorted(list(_UNITS) + list(_TENS) + ["hundred", "thousand"], key=len, reverse=True))
_NUM_WORDS = rf"(?:(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD}))*)"
_NUM_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?![.,]\d)"
NUMBER = rf"(?:{_NUM_DIGITS}|\b{_NUM_WORDS}\b)"

# Words naming people counted as participants.
_PEOPLE = (
    r"patients?|participants?|subjects?|children|child|infants?|neonates?|newborns?|babies|"
    r"women|men|adults?|adolescents?|volunteers?|individuals?|persons?|people|girls?|boys?|"
    r"mothers?|pregnan\w+|smokers?|students?|residents?|veterans?|elderly|outpatients?|"
    r"inpatients?|survivors?|recipients?|families|couples?|nurses?|physicians?|workers?|"
    r"athletes?|pairs?|dyads?|cases?|users?|employees?|teenagers?|youths?|toddlers?|"
    r"preterm|neonates|eyes|teeth|donors?|caregivers?|parents?|households?|runners?|"
    r"drinkers?|cancer survivors|controls?|members?|clients?|candidates?|enrollees?|"
    r"respondents?|twins?|schoolchildren|primigravidae|multiparas?|nulliparas?|primiparas?"
)
_PERSON_AFTER = re.compile(rf"^\s+(?:[A-Za-z][\w'/-]*[\s,]+){{0,5}}?(?:{_PEOPLE})\b", re.I)
_NUMBER_RE = re.compile(NUMBER, re.I)
_N_EQUALS = re.compile(rf"\b[nN]\s*=\s*({_NUM_DIGITS})")

_RANDOMIZED = re.compile(r"\brandom(?:i[sz]ed|i[sz]ation|ly (?:assigned|allocated|divided)|i[sz]e)", re.I)
_ENROLLED = re.compile(
    r"\b(?:enroll?(?:ed|ment)?|recruited|included|entered|participated|took part|studied|"
    r"underwent|received|treated|allocated|assigned|completed|"
    r"were (?:evaluated|investigated|examined|analy[sz]ed))\b",
    re.I,
)
_TOTAL = re.compile(r"\b(?:a total of|total of|overall,?|in total|altogether)\s*$", re.I)
_BAD_BEFORE = re.compile(
    r"(?:\baged?|\bage of|\bmean|\bmedian|\bday|\bweek|\bmonth|\bvisit|\bphase|\bgrade|\bstage|\btype|"
    r"[<>≥≤±]|\bthan|\bto|-)\s*$",
    re.I,
)
_BAD_SENTENCE_WORDS = re.compile(
    r"\b(?:screened|assessed for eligibility|excluded|withdr[ae]w|withdrawn|lost to follow|dropped out|"
    r"died|deaths?|discontinued|ineligible|declined|refused)\b",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?;]*(?:[.!?;](?!\d)|$)")
MIN_SCORE = 3.0


def parse_number(text: str) -> int | None:
    """An integer from digits ("1,024") or English number words ("One hundred twenty")."""
    t = text.strip().lower()
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+|\d+", t):
        return int(t.replace(",", ""))
    total = current = 0
    seen = False
    for w in re.split(r"[\s-]+", t):
        if w == "and" or not w:
            continue
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w == "thousand":
            total += (current or 1) * 1000
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


@dataclass(frozen=True)
class _Candidate:
    value: int
    score: float
    start: int
    end: int
    sentence: str


def _sentences(text: str) -> list[tuple[int, str]]:
    out = []
    for m in _SENTENCE.finditer(text):
        if m.group().strip():
            out.append((m.start(), m.group()))
    return out


def _candidates(text: str) -> list[_Candidate]:
    found: list[_Candidate] = []
    half = len(text) * 0.6
    for s_start, sent in _sentences(text):
        randomized = bool(_RANDOMIZED.search(sent))
        enrolled = bool(_ENROLLED.search(sent))
        bad_sentence = bool(_BAD_SENTENCE_WORDS.search(sent))
        for m in _NUMBER_RE.finditer(sent):
            value = parse_number(m.group())
            if value is None or value < 2 or value > 500000:
                continue
            before = sent[: m.start()]
            if (
                _BAD_BEFORE.search(before)
                or re.search(r"\b(?:in|of|from|since|during)\s*$", before)
                and 1900 <= value <= 2030
            ):
                continue
            after = sent[m.end() :]
            if re.match(
                r"\s*(?:%|percent|per\b|mg|g\b|kg|ml|mmol|µ|years?|months?|weeks?|days?|hours?|h\b|min|times)",
                after,
                re.I,
            ):
                continue
            if not _PERSON_AFTER.match(after):
                if not re.match(
                    r"\s+(?:were|was|had) (?:randomi|randomly|enroll|recruit|included|assigned|allocated)",
                    after,
                    re.I,
                ):
                    continue
            score = 1.0
            if randomized:
                score += 2.0
            if enrolled:
                score += 2.0
            if not before.strip():
                score += 2.0  # "37 otherwise healthy children aged 2 to 12 years": a participants section
            clause = re.split(r"[,;:(]", after, maxsplit=1)[0][:60]
            if _RANDOMIZED.search(clause) or re.match(
                r"\s+(?:\w+\s+){0,4}(?:were|was) (?:enroll|recruit|included)", after, re.I
            ):
                score += 1.0  # the count is the subject of the randomisation / enrolment
            if _TOTAL.search(before):
                score += 2.0
            if re.search(r"\b(?:of|among)\s*$", before) and not randomized:
                score -= 0.5
            if bad_sentence:
                score -= 2.0
            if s_start + m.start() > half:
                score -= 0.5  # results tend to count subgroups
            found.append(_Candidate(value, score, s_start + m.start(), s_start + m.end(), sent.strip()))
        groups = [int(g.replace(",", "")) for g in _N_EQUALS.findall(sent)]
        if groups:
            ns = list(_N_EQUALS.finditer(sent))
            value = sum(groups) if randomized and len(groups) > 1 else groups[0]
            score = (
                1.5
                + (2.0 if randomized else 0.0)
                + (1.0 if enrolled else 0.0)
                - (2.0 if bad_sentence else 0.0)
            )
            if len(groups) == 1 and (randomized or enrolled):
                score += 0.5
            found.append(
                _Candidate(value, score, s_start + ns[0].start(1), s_start + ns[-1].end(1), sent.strip())
            )
    return found


def extract_sample_size(abstract: str | None) -> SampleSize | None:
    """The number of participants randomised or enrolled, or None (abstain)."""
    if not abstract:
        return None
    cands = _candidates(abstract)
    if not cands:
        return None
    best = max(cands, key=lambda c: (c.score, -c.start))
    if best.score < MIN_SCORE:
        return None
    return SampleSize(best.value, best.sentence, best.start, best.end)
