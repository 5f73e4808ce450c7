"""Age statements ("aged 2 to 12 years", "aged over 75") as MeSH age groups.

"Aged" alone is the MeSH persons concept for people of 65 and over; followed by an age it
states one ("children aged 2 to 12 years"), and the group is the one MeSH defines for that
age. ``age_statement(text, pos)`` parses the statement after "aged"; ``age_groups`` gives the
groups of a range, the main one first:
- a closed range or one age: the group it overlaps most ("2 to 12 years": Child, with
  Child, Preschool as an alternative);
- "over N", "N or older", "N+": the most specific group holding N, or the next one when N is
  that group's last year ("18 years or older": Adult);
- the other groups the range overlaps follow as alternatives.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple


class AgeGroup(NamedTuple):
    ui: str
    name: str
    start: float  # years, inclusive
    end: float  # years, exclusive


# MeSH 2024 age groups (M01.060) with the ages their scope notes give.
AGE_GROUPS = (
    AgeGroup("D007231", "Infant, Newborn", 0.0, 1 / 12),
    AgeGroup("D007223", "Infant", 1 / 12, 2.0),
    AgeGroup("D002675", "Child, Preschool", 2.0, 6.0),
    AgeGroup("D002648", "Child", 6.0, 13.0),
    AgeGroup("D000293", "Adolescent", 13.0, 19.0),
    AgeGroup("D055815", "Young Adult", 19.0, 25.0),
    AgeGroup("D000328", "Adult", 19.0, 45.0),
    AgeGroup("D008875", "Middle Aged", 45.0, 65.0),
    AgeGroup("D000368", "Aged", 65.0, math.inf),
    AgeGroup("D000369", "Aged, 80 and over", 80.0, math.inf),
)
# Young Adult lies inside Adult: an alternative, never the main group.
_MAIN = tuple(g for g in AGE_GROUPS if g.ui != "D055815")

_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {w: 10 * (i + 3) for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split())}
_NUM = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?:years?|yrs?|y|months?|mos?|weeks?|wks?|days?)"
_ABOVE = r"(?:over|above|older\s+than|more\s+than|greater\s+than|at\s+least|>=?|≥)"
_BELOW = r"(?:under|below|younger\s+than|less\s+than|up\s+to|<=?|≤)"
_AGE = re.compile(
    rf"""[\s,]*
    (?:(?P<above>{_ABOVE})|(?P<below>{_BELOW})|between|from)?\s*
    (?P<lo>{_NUM})(?P<plus>\+)?\s*(?:(?P<unit1>{_UNIT})\b\.?)?\s*
    (?:(?:to|and|through|-|–|—)\s*(?P<hi>{_NUM})\s*)?
    (?:(?P<unit>{_UNIT})\b\.?)?
    (?:\s*(?:old|of\s+age))?
    (?:\s*(?:and|or)\s+(?:(?P<older>older|over|above|more)|(?P<younger>younger|under|less))\b)?""",
    re.IGNORECASE | re.VERBOSE,
)
_YEARS = {"y": 1.0, "m": 1 / 12, "w": 1 / 52, "d": 1 / 365}


class AgeStatement(NamedTuple):
    end: int  # offset in the text where the statement ends
    low: float  # years
    high: float  # years, exclusive (inf when open)


def _number(s: str) -> float:
    return float(_WORDS[s.lower()]) if s.lower() in _WORDS else float(s)


def _unit(s: str | None) -> float:
    return _YEARS[s[0].lower()] if s else 1.0


def age_statement(text: str, pos: int) -> AgeStatement | None:
    """The age statement starting at ``pos`` (just after "aged"), or None."""
    m = _AGE.match(text, pos)
    if m is None:
        return None
    lo = _number(m["lo"])
    unit_lo = _unit(m["unit1"] or m["unit"])
    if m["hi"] is not None:
        unit_hi = _unit(m["unit"] or m["unit1"])
        low, high = lo * unit_lo, (_number(m["hi"]) + 1) * unit_hi
    elif m["above"] or m["older"] or m["plus"]:
        low, high = lo * unit_lo, math.inf
    elif m["below"] or m["younger"]:
        low, high = 0.0, lo * unit_lo
    else:
        low, high = lo * unit_lo, (lo + 1) * unit_lo
    end = m.end()
    while end > pos and text[end - 1].isspace():
        end -= 1
    return AgeStatement(end, low, max(high, low)) if high > low or high == math.inf else None


def age_groups(low: float, high: float) -> list[AgeGroup]:
    """The MeSH age groups of ages ``[low, high)`` in years, the main one first."""
    over = [g for g in AGE_GROUPS if g.start < high and low < g.end]
    if not over:
        return []
    if math.isinf(high):
        holding = [g for g in _MAIN if g.start <= low < g.end]
        main = max(holding, key=lambda g: g.start) if holding else over[0]
        if low + 1 >= main.end and not math.isinf(main.end):
            later = [g for g in _MAIN if g.start >= main.end]
            main = later[0] if later else main
    else:

        def overlap(g: AgeGroup) -> float:
            return min(high, g.end) - max(low, g.start)

        main = max((g for g in over if g in _MAIN), key=overlap, default=over[0])
    return [main, *(g for g in over if g != main and (g.start < high and low < g.end))]
