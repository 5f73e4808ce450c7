"""Population extractor (Demner-Fushman & Lin 2007, section 5.1).

Looks for the paper's patterns around GROUP concepts (persons, MeSH M01) and participant
nouns (``rules/population_words.tsv``):

- ``GROUP (n = 234)``           "5-6-year-old French children (n = 234)"
- ``number* GROUP``             "forty-nine infants"
- ``number* DISORDER* GROUP``   "44 HIV-infected children"

A number followed by a measure ("12 years", "30 mg") is skipped and the search goes on.
Confidence falls with the distance between number and group and with the clause's position
(section heading in structured abstracts, distance from the start otherwise); the best match
wins. The phrase runs from the number to the group and on through a trailing "(n = N)",
"aged ... years" or "with/who/undergoing ..." clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ebm.concepts.annotate import Concept
from ebm.errors import InputError
from ebm.rules.table import Table, choice, load, text
from ebm.text.document import Document, Sentence, Token
from ebm.text.roles import sentence_role
from extractors.candidate import Candidate

GROUP = "GRUP"
DISORDER = "DISO"

_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS |= {
    w: 10 * (i + 3) for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split())
}
_NUMBER_WORDS |= {"hundred": 100, "thousand": 1000, "dozen": 12}
_DIGITS = re.compile(r"^\d{1,3}(?:[,\s]\d{3})*$|^\d+$")
_N_EQUALS = re.compile(r"^\(?\s*[nN]\s*=\s*\d[\d,]*\s*\)?")

# Tokens that end the clause a number and its group must share.
_CLAUSE_BREAK = {
    ",",
    ";",
    ":",
    ".",
    "(",
    ")",
    "[",
    "]",
    "were",
    "was",
    "are",
    "is",
    "had",
    "have",
    "of",
    "to",
    # a preposition between number and group: "3 strategies for pharmacy students" counts strategies
    "for",
    "in",
    "with",
    "from",
    "by",
    "at",
    "on",
    "per",
    "after",
    "during",
}
# Words after the group that continue the population description.
_CONTINUE = {
    "with",
    "who",
    "undergoing",
    "receiving",
    "suffering",
    "having",
    "aged",
    "age",
    "from",
    "admitted",
}
_STOP_RIGHT = {
    ";",
    ".",
    ":",
    "[",
    "]",
    "were",
    "was",
    "are",
    "is",
    "had",
    "have",
    "has",
    "did",
    "could",
    "would",
    "will",
    "may",
    "received",
    "underwent",
    "completed",
    "comprised",
    "participated",
    "entered",
    "took",
    "showed",
    "experienced",
    "developed",
    "met",
    "agreed",
    "consented",
    "volunteered",
    "randomized",
    "randomised",
    "randomly",
    "assigned",
    "allocated",
}
# Words a phrase never ends on ("81 patients with epilepsy who" is cut at the window's edge).
_TRAILING = {
    "who",
    "which",
    "that",
    "and",
    "or",
    "of",
    "to",
    "with",
    "in",
    "on",
    "at",
    "for",
    "from",
    "by",
    "the",
    "a",
    "an",
    "de",
    "than",
    "were",
    "was",
    ",",
    "(",
    # modifiers cut off from their noun by a comma ("with acute, intercurrent, febrile illness")
    "acute",
    "chronic",
    "severe",
    "mild",
    "moderate",
    "recurrent",
    "persistent",
    "intercurrent",
    "advanced",
    "uncomplicated",
}
_MAX_LEFT = 6  # tokens between number and group
_MAX_RIGHT = 10  # tokens of trailing description

# Weight of a sentence of a structured abstract by its role (``ebm.text.roles``); a section
# labelled for the participants weighs most, one for the outcome measures as results.
ROLE_WEIGHTS: dict[str, float] = {
    "methods": 0.95,
    "objective": 0.8,
    "background": 0.8,
    "results": 0.7,
    "conclusions": 0.4,
    "other": 0.7,
}
FACET_WEIGHTS: dict[str, float] = {"participants": 1.0, "outcomes": 0.7}


@dataclass(frozen=True)
class PopulationWords:
    participants: frozenset[str]
    measures: frozenset[str]


WORD_COLUMNS = (
    choice("kind", ("participant", "measure"), help="participant or measure"),
    text("word", help="one word, matched case-insensitively"),
)


def load_population_words(path: Path) -> PopulationWords:
    """Read ``rules/population_words.tsv``; ``InputError`` naming file and line for a bad row."""
    return population_words_from_table(load(path, WORD_COLUMNS))


def population_words_from_table(table: Table) -> PopulationWords:
    kinds: dict[str, set[str]] = {"participant": set(), "measure": set()}
    for row in table:
        word = row["word"]
        if not word or any(ch.isspace() for ch in word):
            raise InputError(
                f"{table.where(row)}: {word!r} is not one word (the table matches single tokens)"
            )
        kinds[row["kind"]].add(word.casefold())
    return PopulationWords(frozenset(kinds["participant"]), frozenset(kinds["measure"]))


def number_value(text: str) -> int | None:
    """Head count written as digits ("1,234") or words ("forty-nine"); None otherwise."""
    t = text.casefold()
    if _DIGITS.match(t):
        return int(re.sub(r"[,\s]", "", t))
    parts = t.split("-")
    if all(p in _NUMBER_WORDS for p in parts):
        return sum(_NUMBER_WORDS[p] for p in parts)
    return None


def position_weight(sentence: Sentence, n_sentences: int) -> tuple[float, str]:
    role = sentence_role(sentence)
    if role.role == "title":
        return 0.75, "title"
    if role.structured:
        w = FACET_WEIGHTS.get(role.facet or "", ROLE_WEIGHTS.get(role.role, 0.7))
        return w, role.why()
    # Unstructured: the population is usually stated early (aims, methods).
    w = max(0.4, 1.0 - 0.05 * max(sentence.index - 1, 0))
    return w, f"sentence {sentence.index} of {n_sentences}"


def _heads(doc: Document, sentence: Sentence, concepts: list[Concept], words: PopulationWords) -> list[tuple]:
    """(first token, last token + 1, concept or None) of each group mention in the sentence."""
    heads: list[tuple[int, int, Concept | None]] = []
    covered: set[int] = set()
    for c in concepts:
        if c.sentence == sentence.index and GROUP in c.groups:
            heads.append((c.token_start, c.token_end, c))
            covered.update(range(c.token_start, c.token_end))
    for i in range(sentence.token_start, sentence.token_end):
        if i not in covered and doc.tokens[i].text.casefold() in words.participants:
            heads.append((i, i + 1, None))
    return sorted(heads, key=lambda h: h[0])


def _is_measured(tokens: list[Token], i: int, end: int, words: PopulationWords) -> bool:
    nxt = tokens[i + 1].text.casefold() if i + 1 < end else ""
    return nxt in words.measures or nxt.startswith("%")


def _left_number(
    doc: Document, sentence: Sentence, h0: int, words: PopulationWords
) -> tuple[int, int] | None:
    """(token index, distance) of the head count before the group, if any."""
    toks = doc.tokens
    lo = max(sentence.token_start, h0 - _MAX_LEFT - 1)
    for i in range(h0 - 1, lo - 1, -1):
        t = toks[i].text
        if t.casefold() in _CLAUSE_BREAK:
            return None
        if number_value(t) is not None:
            if _is_measured(toks, i, sentence.token_end, words):
                continue  # "12 years", "30 mg": keep looking further left
            return i, h0 - i - 1
    return None


def _n_equals_after(doc: Document, sentence: Sentence, h1: int) -> int | None:
    """End token of a "(n = 234)" right after the group."""
    toks = doc.tokens
    end = min(sentence.token_end, h1 + 7)
    if h1 >= end:
        return None
    window = doc.text[toks[h1].start : toks[end - 1].end]
    m = _N_EQUALS.match(window)
    if not m:
        return None
    stop = toks[h1].start + m.end()
    j = h1
    while j < end and toks[j].end <= stop:
        j += 1
    return j


def _extend_right(doc: Document, sentence: Sentence, j: int) -> int:
    """Carry the phrase on through "aged 2 to 12 years", "with acute febrile illness", ..."""
    toks = doc.tokens
    if j >= sentence.token_end or toks[j].text.casefold() not in _CONTINUE:
        return j
    k = j
    limit = min(sentence.token_end, j + _MAX_RIGHT)
    while k < limit:
        t = toks[k].text.casefold()
        if t in _STOP_RIGHT or (t in {",", "(", ")"} and k > j + 1):
            break
        k += 1
    while k > j and toks[k - 1].text.casefold() in _TRAILING:
        k -= 1
    return k if k > j + 1 else j  # a lone "with" or "aged" describes nothing


def _number_start(doc: Document, sentence: Sentence, i: int) -> int:
    """First token of a head count written over several tokens: "One hundred and sixty", "1 000"."""
    toks = doc.tokens
    while i > sentence.token_start:
        prev = toks[i - 1].text.casefold()
        if re.fullmatch(r"\d{3}", toks[i].text) and re.fullmatch(r"\d{1,3}", prev):
            i -= 1  # "1 000 participants": a digit group separated by a space
        elif prev in _NUMBER_WORDS or (
            prev == "and" and i - 2 >= sentence.token_start and toks[i - 2].text.casefold() in _NUMBER_WORDS
        ):
            i -= 1
        else:
            break
    return i


def extract_population(
    doc: Document, concepts: list[Concept], words: PopulationWords
) -> list[Candidate]:
    """All population candidates, best first (the first is the population); ``words``:
    rules/population_words.tsv."""
    toks = doc.tokens
    out: list[Candidate] = []
    n_sent = len(doc.sentences)
    for s in doc.sentences:
        pos_w, pos_why = position_weight(s, n_sent)
        for h0, h1, concept in _heads(doc, s, concepts, words):
            start_tok, end_tok = h0, h1
            why: list[str] = []
            n_eq = _n_equals_after(doc, s, h1)
            left = _left_number(doc, s, h0, words)
            if n_eq is not None:
                base = 1.0
                end_tok = n_eq
                why.append("pattern GROUP (n = N)")
                if left is not None and left[1] <= 3:
                    start_tok = _number_start(doc, s, left[0])
            elif left is not None:
                i, dist = left
                base = 0.8 / (1.0 + 0.25 * dist)
                start_tok = _number_start(doc, s, i)
                why.append(f"pattern number* GROUP, {dist} token(s) between number and group")
                if start_tok == i and (number_value(toks[i].text) or 0) < 3:
                    base *= 0.5  # "One subject withdrew": a count of one or two is an event, not the sample
                    why.append("count below 3 x0.5")
            else:
                base = 0.2
                why.append("group without a head count")
            if h1 < s.token_end and toks[h1].text.casefold() in words.measures:
                continue  # "three North American centres": the number counts centres
            if concept is None:
                base *= 0.9
                why.append(f"participant noun {toks[h0].text!r}")
            else:
                why.append(f"GROUP concept {concept.name} ({concept.cui})")
            # "elderly patients", "healthy volunteers": swallow the group nouns that follow.
            while end_tok < s.token_end and toks[end_tok].text.casefold() in words.participants:
                end_tok += 1
            head_end = end_tok
            end_tok = _extend_right(doc, s, end_tok)
            late_n = _n_equals_after(doc, s, end_tok) if n_eq is None and end_tok > head_end else None
            if late_n is not None:
                # "Participants with MS (n = 54)": the count follows the description
                base = max(base, 0.9)
                end_tok = late_n
                why = [w for w in why if w != "group without a head count"]
                why.append("pattern GROUP ... (n = N) after the description")
            elif left is None and n_eq is None and end_tok > head_end:
                base *= 1.25  # "patients with acute otitis media" says more than "patients"
                why.append("described group x1.25")
            score = base * pos_w
            why.append(f"position {pos_why} x{pos_w:.2f}")
            a, b = toks[start_tok].start, toks[end_tok - 1].end
            while b > a + 1 and doc.text[b - 1] in ".,;:":
                b -= 1  # "patients with chronic hepatitis B and C."
            out.append(
                Candidate(
                    text=doc.text[a:b],
                    start=a,
                    end=b,
                    score=score,
                    sentence=s.index,
                    concepts=(concept.cui,) if concept else (),
                    names=(concept.name,) if concept else (),
                    evidence=tuple(why),
                )
            )
    # Several heads can yield the same phrase ("elderly" and "patients"): keep the best of each.
    best: dict[tuple[int, int], Candidate] = {}
    for c in out:
        if (c.start, c.end) not in best or c.score > best[(c.start, c.end)].score:
            best[(c.start, c.end)] = c
    return sorted(best.values(), key=lambda c: (-c.score, c.start))
