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
from functools import cached_property
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
    "fourty": 40,  # a common misspelling
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
_NUM_DIGITS = r"(?<![\d,.])(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+(?![\d.,])|\d+)(?![.,]\d)"
NUMBER = rf"(?:{_NUM_DIGITS}|\b{_NUM_WORDS}\b)"

# Words naming people counted as participants.
_PEOPLE = (
    r"patients?|participants?|subjects?|children|child|infants?|neonates?|newborns?|babies|"
    r"women|men|adults?|adolescents?|volunteers?|individuals?|persons?|people|girls?|boys?|"
    r"mothers?|pregnan\w+|smokers?|students?|residents?|veterans?|elderly|outpatients?|"
    r"inpatients?|survivors?|recipients?|families|couples?|nurses?|physicians?|workers?|"
    r"athletes?|pairs?|dyads?|cases?|users?|employees?|teenagers?|youths?|toddlers?|"
    r"preterm|neonates|donors?|caregivers?|parents?|households?|runners?|"
    r"drinkers?|cancer survivors|controls?|members?|clients?|candidates?|enrollees?|"
    r"respondents?|twins?|schoolchildren|primigravidae|multiparas?|nulliparas?|primiparas?|"
    r"diabetics|asthmatics|phobics|parturients|hypertensives|consumers|subjects"
)
# Up to four words (not "and", "of", "with", ...) between the count and the people it counts.
_GAP_WORD = r"(?!(?:and|of|with|in|from|who|were|was|to|for|at|by)\b)[A-Za-z][\w'/-]*"
_PAIR = re.compile(rf"(\s+(?:{_GAP_WORD}\s+){{0,3}}(?:{_PEOPLE}))?,?\s+(?:and|or)\s+({NUMBER})(?=\s)", re.I)
_PERSON_AFTER = re.compile(rf"^\s+(?:{_GAP_WORD}[\s,]+){{0,4}}?(?:{_PEOPLE})\b", re.I)
_UNIT_AFTER = r"\s*(?:%|percent|per\b|mg|g\b|kg|ml|mmol|µ|years?|months?|weeks?|days?|hours?|h\b|min|times)"
_SUBJECT_VERB = (
    r"\s+(?:(?:were|was|had) (?:randomi|randomly|enroll|recruit|included|assigned|allocated)|received\b)"
)
_SUBJECT_ENROLLED = r"\s+(?:\w+\s+){0,4}(?:were|was) (?:enroll|recruit|included)"
_NUMBER_RE = re.compile(NUMBER, re.I)
_NUMBER_LOW = re.compile(NUMBER)
_IN_THE = re.compile(rf"({_NUM_DIGITS}) in the\b")
_N_EQUALS = re.compile(rf"\b[nN]\s*=\s*({_NUM_DIGITS})")

_RANDOMIZED = re.compile(r"\brandom(?:i[sz]ed|i[sz]ation|ly (?:assigned|allocated|divided)|i[sz]e)")
_ENROLLED = re.compile(
    r"\b(?:enroll?(?:ed|ment)?|recruited|included|entered|participated|took part|studied|"
    r"underwent|received|treated|allocated|assigned|completed|"
    r"were (?:evaluated|investigated|examined|analy[sz]ed))\b",
)
_TOTAL = re.compile(r"\b(?:a total of|total of|overall,?|in total|altogether)\s*$", re.I)
_BAD_BEFORE = re.compile(
    r"(?:\baged?|\bage of|\bmean|\bmedian|\bday|\bweek|\bmonth|\bvisit|\bphase|\bgrade|\bstage|\btype|"
    r"[<>≥≤±]|\bthan|\d\s*(?:to|-|–))\s*$",
    re.I,
)
_BAD_SENTENCE_WORDS = re.compile(
    r"\b(?:screened|assessed for eligibility|excluded|withdr[ae]w|withdrawn|lost to follow|dropped out|"
    r"died|deaths?|discontinued|ineligible|declined|refused|invited|not randomi[sz]ed)\b",
)
# Sentence-level patterns (_RANDOMIZED ... _PLANNED, _SUBSET) are lower case, searched in the
# lower-cased sentence.
# A count of people that a study verb or preposition introduces: "in 12 healthy volunteers",
# "involved 86 patients", "The study included 171 patients", "Participants were 52 families".
_INTRO_BEFORE = re.compile(
    r"\b(?:in|on|involv\w*|includ\w*|enroll?\w*|recruit\w*|stud\w+|evaluat\w*|examin\w*|compris\w*|"
    r"consist\w* of|identified|analy[sz]ed|sample of|total of|were|was|of|among|assigned|randomi[sz]ed|"
    r"in which|where)\s*$",
    re.I,
)
_STUDY_WORDS = re.compile(
    r"\b(?:study|trial|we|investigat\w*|compar\w*|conduct\w*|perform\w*|evaluat\w*|examin\w*|sample|"
    r"participants|subjects|enroll?\w*|recruit\w*|includ\w*|involv\w*|consist\w*|compris\w*|records?|cohort|"
    r"reviewed|charts)\b",
)
_PER_GROUP = re.compile(
    r"^\s*(?:[\w-]+\s+){0,4}?(?:in (?:both|each) (?:groups?|arms?)|per (?:group|arm)|each)\b", re.I
)
_SUBGROUP_AFTER = re.compile(r"^[^.;,]{0,40}?\(\s*\d+(?:\.\d+)?\s*%", re.I)  # "13 patients (45%) had ..."
# Words that make the counts of a sentence parts of one another, not groups to add up.
_SUBSET = re.compile(
    r"\b(?:completed|finished|analy[sz]ed|evaluable|responded|remained|had|developed|achieved|"
    r"experienced|reported|showed|occurred)\b",
)
_COMPLETERS = re.compile(
    r"\b(?:(?:completed|finished) (?:the )?(?:study|trial|treatment|intervention|follow-up|protocol)|"
    r"had usable|were (?:analy[sz]ed|evaluable))\b",
    re.I,
)
_PLANNED = re.compile(
    r"\b(?:will be|will include|will recruit|will enrol+|aims? to recruit|to be recruited)\b"
)
_NESTED_BEFORE = re.compile(r"(?:^|[:.]\s*)(?:of|among|from)\s+(?:the|these|all|a total of)?\s*$", re.I)
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_YEAR_BEFORE = re.compile(rf"(?:\b{_MONTHS}|\b(?:in|from|since|between|until|during|to|and|of)|,)\s*$", re.I)
MIN_SCORE = 3.0


def parse_number(text: str) -> int | None:
    """An integer from digits ("1,024") or English number words ("One hundred twenty")."""
    t = text.strip().lower()
    if re.fullmatch(r"\d{1,3}(?:[, ]\d{3})+|\d+", t):
        return int(t.replace(",", "").replace(" ", ""))
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
    """Sentences with their offsets: split after . ! ? ; followed by white space, and at line breaks."""
    out = []
    pos = 0
    for m in re.finditer(r"(?<=[.!?;])\s+|\n+", text):
        chunk = text[pos : m.start()]
        if chunk.count("(") > chunk.count(")") and "\n" not in m.group():
            continue  # "(control group; n=14)": not a sentence end
        if chunk.strip():
            out.append((pos, text[pos : m.start()]))
        pos = m.end()
    if text[pos:].strip():
        out.append((pos, text[pos:]))
    return out


def _is_year(value: int, before: str, after: str) -> bool:
    if not 1900 <= value <= 2030:
        return False
    return bool(_YEAR_BEFORE.search(before) or re.match(r"\s*(?:and|to|-|–)\s*\d{4}", after))


class _Flags:
    """What a sentence says about its counts, searched only when a count needs it (lower case)."""

    def __init__(self, low: str) -> None:
        self.low = low

    @cached_property
    def randomized(self) -> bool:
        return bool(_RANDOMIZED.search(self.low))

    @cached_property
    def enrolled(self) -> bool:
        return bool(_ENROLLED.search(self.low))

    @cached_property
    def study(self) -> bool:
        return bool(_STUDY_WORDS.search(self.low))

    @cached_property
    def bad_sentence(self) -> bool:
        return bool(_BAD_SENTENCE_WORDS.search(self.low))

    @cached_property
    def planned(self) -> bool:
        return bool(_PLANNED.search(self.low))


def _candidates(text: str) -> list[_Candidate]:
    found: list[_Candidate] = []
    late = len(text) * 0.6
    for s_start, sent in _sentences(text):
        flags = _Flags(sent.lower())
        in_parens: list[_Candidate] = []
        people: list[_Candidate] = []
        skip_until = -1
        scan = re.sub(r"\b((?:19|20)\d\d),(?=\d)", r"\1 ", sent)  # "February 2011,157 patients"
        scan = scan.replace("- and ", "--and-")  # "17 age- and gender-matched subjects" (same length)
        breakdown = False
        scan_low = scan.lower()
        # without re.I on the lower-cased copy (faster); offsets agree unless lower() changed the length
        numbers = _NUMBER_LOW.finditer(scan_low) if len(scan_low) == len(scan) else _NUMBER_RE.finditer(scan)
        for m in numbers:
            if m.start() < skip_until:
                continue
            value = parse_number(m.group())
            if value is None or value < 2 or value > 500000:
                continue
            before, after = scan[: m.start()], scan[m.end() :]
            tail = before[-60:]  # the end-anchored context patterns need no more (and are slow on more)
            if _BAD_BEFORE.search(tail) or _is_year(value, tail, after):
                continue
            if re.match(_UNIT_AFTER, after, re.I):
                continue
            # "15 and 19 healthy women", "381 girls and 375 boys": two groups in one phrase
            pair = _PAIR.match(after)
            if pair and not _PERSON_AFTER.match(after[pair.end() :]):
                pair = None
            noun_after = after[pair.end() :] if pair and not pair.group(1) else after
            if not _PERSON_AFTER.match(noun_after) and not re.match(_SUBJECT_VERB, after, re.I):
                continue
            score = 1.0
            if flags.randomized:
                score += 2.0
            if flags.enrolled:
                score += 2.0
            if not before.strip() or re.search(r"(?:PARTICIPANTS|PATIENTS|SUBJECTS)\s*:?\s*$", before):
                score += 2.0  # "37 otherwise healthy children aged 2 to 12 years": a participants section
            elif _INTRO_BEFORE.search(tail) and flags.study:
                score += 2.0
            if _TOTAL.search(tail):
                score += 2.0
            clause = re.split(r"[,;:(]", after, maxsplit=1)[0][:60]
            if _RANDOMIZED.search(clause.lower()) or re.match(_SUBJECT_ENROLLED, after, re.I):
                score += 1.0  # the count is the subject of the randomisation / enrolment
            if _COMPLETERS.search(clause):
                score -= 2.0  # "94 participants had usable data": who was analysed, not enrolled
            if flags.bad_sentence:
                score -= 2.0
            if _PER_GROUP.match(noun_after) or _SUBGROUP_AFTER.match(after):
                score -= 3.0
            if s_start + m.start() > late:
                score -= 0.5  # results tend to count subgroups
            if flags.planned:
                score -= 5.0  # a protocol: "130 patients will be randomly allocated"
            end = m.end()
            if pair and (second := parse_number(pair.group(2))):
                value += second  # "administered to 15 and 19 healthy women"
                end = m.end() + pair.end()
                skip_until = end
                score += 0.5
            cand = _Candidate(value, score, s_start + m.start(), s_start + end, sent.strip())
            found.append(cand)
            if _SUBGROUP_AFTER.match(after):
                breakdown = True  # "1795 rural residents (53.5%)": a share of a total, not a group
            elif before.count("(") > before.count(")"):
                in_parens.append(cand)  # "282 participants (100 women, 182 men)": a breakdown
            elif not _NESTED_BEFORE.search(before):  # "Of 1,024 patients, 512 ...": a total, not a group
                people.append(cand)
        if not people:
            people = in_parens  # "Subjects (128 boys, 21 girls)"
        if len(people) >= 2 and not breakdown and not flags.bad_sentence and not _SUBSET.search(flags.low):
            # Several groups counted in one sentence and no total: their sum is the sample.
            total = sum(c.value for c in people)
            top = max(c.score for c in people)
            found.append(_Candidate(total, top + 0.5, people[0].start, people[-1].end, sent.strip()))
        groups = [parse_number(g) or 0 for g in _N_EQUALS.findall(sent)]
        if groups:
            ns = list(_N_EQUALS.finditer(sent))
            value = (
                sum(groups)
                if len(groups) > 1 and (flags.randomized or flags.enrolled or flags.study)
                else groups[0]
            )
            score = 1.5 + (2.0 if flags.randomized else 0.0) + (1.0 if flags.enrolled else 0.0)
            score -= (2.0 if flags.bad_sentence else 0.0) + (3.0 if flags.planned else 0.0)
            if len(groups) == 1 and (flags.randomized or flags.enrolled):
                score += 0.5
            if len(groups) > 1:
                score += 0.5
            span = (s_start + ns[0].start(1), s_start + ns[-1].end(1))
            found.append(_Candidate(value, score, span[0], span[1], sent.strip()))
        in_groups = _IN_THE.findall(sent)
        if len(in_groups) >= 2 and re.search(r"\bgroups?\b", sent):
            i0 = sent.find(in_groups[0])
            total = sum(parse_number(g) or 0 for g in in_groups)
            found.append(_Candidate(total, 4.0, s_start + i0, s_start + i0 + len(in_groups[0]), sent.strip()))
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
