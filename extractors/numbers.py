"""Numbers a results sentence reports: effect size and its kind, confidence interval, p value.

``parse_numbers(sentence) -> dict`` with any of these keys (absent when not in the sentence):

- ``effect``: ``{"kind": "OR"|"RR"|"HR"|"MD"|"SMD"|"RD"|"ARR"|"NNT", "value": float}`` — the
  first named effect size ("odds ratio 0.85", "OR = 0.85", "HR, 0.62", "mean difference -1.2");
- ``ci``: ``{"level": 95, "low": float, "high": float}`` — the first confidence interval;
- ``p``: ``{"relation": "<"|"="|">"|"<="|">=", "value": float}`` — the first p value
  (``p_values`` lists every one when there are several);
- ``percentages``: the percentages in text order (``[4.3, 5.1]``).

Plain regular expressions: no model, microseconds per sentence.
"""

from __future__ import annotations

import re
from typing import Any

_NUM = r"[-−–]?\s?(?:\d+(?:[.·,]\d+)?|[.·]\d+)"

EFFECT_KINDS: dict[str, str] = {
    "odds ratio": "OR",
    "or": "OR",
    "aor": "OR",
    "adjusted odds ratio": "OR",
    "relative risk": "RR",
    "risk ratio": "RR",
    "rate ratio": "RR",
    "rr": "RR",
    "hazard ratio": "HR",
    "hr": "HR",
    "mean difference": "MD",
    "md": "MD",
    "wmd": "MD",
    "weighted mean difference": "MD",
    "standardized mean difference": "SMD",
    "standardised mean difference": "SMD",
    "smd": "SMD",
    "risk difference": "RD",
    "rd": "RD",
    "absolute risk reduction": "ARR",
    "arr": "ARR",
    "number needed to treat": "NNT",
    "nnt": "NNT",
}

_KIND_ALT = "|".join(sorted((re.escape(k) for k in EFFECT_KINDS), key=len, reverse=True))
_EFFECT = re.compile(
    rf"(?<![A-Za-z])(?P<kind>{_KIND_ALT})(?![A-Za-z])\s*(?:\([^)]{{0,30}}\)\s*)?[:=,]?\s*(?:of|was|were|is)?\s*(?P<value>{_NUM})",
    re.IGNORECASE,
)
_CI = re.compile(
    rf"(?:(?P<level>\d{{2}}(?:\.\d)?)\s?%\s*)?(?:CI|confidence interval)s?\s*[:=,]?\s*(?:was|of)?\s*[\[(]?\s*"
    rf"(?P<low>{_NUM})\s*(?:-|–|−|to|,|;|\.\.)\s*(?P<high>{_NUM})",
    re.IGNORECASE,
)
_P = re.compile(
    rf"(?<![A-Za-z])p\s*(?:-?value)?\s*(?P<rel>[<>=≤≥]=?|&lt;|&gt;)\s*(?P<value>{_NUM})",
    re.IGNORECASE,
)
_PCT = re.compile(rf"(?P<value>{_NUM})\s?%(?!\s*(?:CI|confidence))", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_REL = {"&lt;": "<", "&gt;": ">", "≤": "<=", "≥": ">="}


def _float(text: str) -> float | None:
    t = text.replace(" ", "").replace("−", "-").replace("–", "-").replace("·", ".")
    if "," in t and "." not in t and re.fullmatch(r"-?\d+,\d{1,2}", t):
        t = t.replace(",", ".")  # decimal comma ("0,85")
    t = t.replace(",", "")
    if t.startswith("."):
        t = "0" + t
    elif t.startswith("-."):
        t = "-0" + t[1:]
    try:
        return float(t)
    except ValueError:
        return None


def parse_p_values(sentence: str) -> list[dict[str, Any]]:
    out = []
    for m in _P.finditer(sentence):
        v = _float(m.group("value"))
        if v is not None and 0.0 <= v <= 1.0:
            rel = m.group("rel")
            out.append({"relation": _REL.get(rel, rel), "value": v})
    return out


def parse_numbers(sentence: str) -> dict[str, Any]:
    """Effect size, CI, p values and percentages found in ``sentence`` (see the module doc)."""
    out: dict[str, Any] = {}
    if not _DIGIT.search(sentence):
        return out  # most sentences: no number to find
    for m in _EFFECT.finditer(sentence):
        v = _float(m.group("value"))
        kind = m.group("kind")
        # "OR" is also the English word: only the upper-case abbreviation counts
        if v is None or (kind.lower() in ("or", "md", "rd") and not kind.isupper()):
            continue
        out["effect"] = {"kind": EFFECT_KINDS[kind.lower()], "value": v}
        break
    ci = _CI.search(sentence)
    if ci:
        low, high = _float(ci.group("low")), _float(ci.group("high"))
        if low is not None and high is not None:
            level = float(ci.group("level")) if ci.group("level") else 95.0
            out["ci"] = {"level": int(level) if level.is_integer() else level, "low": low, "high": high}
    ps = parse_p_values(sentence)
    if ps:
        out["p"] = ps[0]
        if len(ps) > 1:
            out["p_values"] = ps
    pct = (
        [v for v in (_float(x.group("value")) for x in _PCT.finditer(sentence)) if v is not None]
        if "%" in sentence
        else []
    )
    if pct:
        out["percentages"] = pct
    return out


def p_significant(numbers: dict[str, Any], alpha: float = 0.05) -> bool | None:
    """True when the first p value says p < alpha, False when it says p >= alpha (or "NS"
    spelled as p > x), None without a p value."""
    p = numbers.get("p")
    if not p:
        return None
    rel, v = p["relation"], p["value"]
    if rel in ("<", "<="):
        return bool(v <= alpha)
    if rel in (">", ">="):
        return False if v >= alpha else None
    return bool(v < alpha)
