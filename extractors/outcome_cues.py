"""The cue-phrase classifier of the outcome extractor, driven by ``rules/outcome_cues.tsv``.

As in the reference system, the score of a sentence is the sum of the weights of the cue
phrases found in it divided by the number of phrases in the sentence (the maximum possible
score if every phrase were a cue), here clipped to [-1, 1]. Negative weights mark statements of
aims and methods ("were randomized", "the aim of"), which mention outcomes without reporting
them.

Table format (tab separated, ``#`` starts a comment line, blank lines ignored)::

    KIND <TAB> PATTERN <TAB> WEIGHT [<TAB> comment]

KIND is ``phrase`` (whole words, case-insensitive, any spacing between them; ``<num>`` stands
for any number, and numbers are written that way; see ``cue_tokens`` for what a word is) or
``regex`` (a Python regular expression in lower case, matched against the lower-cased
sentence; each one scans every sentence, so phrases are preferred). WEIGHT is a number in
[-1, 1], not 0. Errors name the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ebm.errors import InputError
from ebm.rules.table import Table, choice, load, number, text
from extractors.outcome_features import NUMBER, Tokens, phrase_count, tokenize, words

KINDS = ("phrase", "regex")


@dataclass(frozen=True)
class Cue:
    kind: str
    pattern: str
    weight: float
    comment: str
    line: int


@dataclass(frozen=True)
class CueMatch:
    cue: str  # the pattern as written in the table
    text: str  # the matched text
    start: int  # offsets in the sentence
    end: int
    weight: float


CUE_COLUMNS = (
    choice("kind", KINDS, help="phrase or regex"),
    text("pattern", help="words (<num>: any number) or a lower-case regular expression"),
    number("weight", minimum=-1.0, maximum=1.0, help="in [-1, 1], not 0"),
    text("comment", required=False, default="", help="a note"),
)


def cues_from_table(table: Table) -> list[Cue]:
    """The validated cues of a table; errors name the file and line."""
    cues: list[Cue] = []
    seen: dict[tuple[str, str], int] = {}
    for row in table:
        kind, pattern, weight = row["kind"], row["pattern"], row["weight"]
        at = table.where(row)
        if weight == 0.0:
            raise InputError(f"{at}: weight {weight} must be in [-1, 1] and not 0")
        if kind == "regex":
            if any(ch.isupper() for ch in re.sub(r"\\.", "", pattern)):
                raise InputError(f"{at}: write regex cues in lower case (they see the lower-cased sentence)")
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise InputError(f"{at}: bad regular expression {pattern!r}: {exc}") from None
            if compiled.groups:
                raise InputError(f"{at}: use (?:...) instead of capturing groups in {pattern!r}")
            if compiled.match(""):
                raise InputError(f"{at}: regular expression {pattern!r} matches the empty string")
        if kind == "phrase":
            toks = _pattern_tokens(pattern)
            if not toks:
                raise InputError(f"{at}: phrase {pattern!r} has no words")
            if any(ch.isdigit() for ch in pattern.replace(NUMBER, "")):
                raise InputError(f"{at}: write numbers in phrases as {NUMBER} (any number matches)")
        key = (kind, " ".join(_pattern_tokens(pattern)) if kind == "phrase" else pattern)
        if key in seen:
            raise InputError(f"{at}: {kind} {pattern!r} already given on line {seen[key]}")
        seen[key] = row.line
        cues.append(Cue(kind, pattern, weight, row["comment"] or "", row.line))
    if not cues:
        raise InputError(f"{table.path}: no cues")
    return cues


def read_cues(path: Path) -> list[Cue]:
    """Parse and validate a cue table."""
    return cues_from_table(load(path, CUE_COLUMNS))


def _pattern_tokens(pattern: str) -> tuple[str, ...]:
    """Tokens of a phrase cue as the sentence tokenizer sees them (``<num>`` kept whole)."""
    out: list[str] = []
    for k, piece in enumerate(pattern.split(NUMBER)):
        if k:
            out.append(NUMBER)
        out.extend(tokenize(piece).norm)
    return tuple(out)


class CueTable:
    """Phrase cues matched on tokens (a dictionary lookup per token), regex cues one by one.

    Phrases: at each token the longest phrase starting there wins and matching resumes after
    it. Regular expressions: each scans the lower-cased sentence; where two regex matches
    overlap the earlier (then longer) one is kept. A phrase and a regex may both count.
    """

    def __init__(self, cues: list[Cue], path: Path) -> None:
        self.path = path
        self.cues = cues
        self._phrases: dict[str, list[tuple[tuple[str, ...], Cue]]] = {}
        self._regexes: list[tuple[re.Pattern[str], re.Pattern[str], Cue]] = []
        for c in self.cues:
            if c.kind == "phrase":
                toks = _pattern_tokens(c.pattern)
                self._phrases.setdefault(toks[0], []).append((toks, c))
            else:
                # the lower-case pattern runs on the lower-cased sentence (faster than
                # IGNORECASE); the case-insensitive one only where lowering changes the length
                self._regexes.append((re.compile(c.pattern), re.compile(c.pattern, re.IGNORECASE), c))
        for cands in self._phrases.values():
            cands.sort(key=lambda tc: -len(tc[0]))

    def matches(self, sentence: str, tokens: Tokens | None = None) -> list[CueMatch]:
        tokens = tokens or tokenize(sentence)
        norm, spans = tokens.norm, tokens.spans
        phrases = self._phrases
        out: list[CueMatch] = []
        n = len(norm)
        resume = 0  # matching resumes after the last phrase found
        for i in [i for i, w in enumerate(norm) if w in phrases]:
            if i < resume:
                continue
            for phrase, cue in phrases[norm[i]]:
                j = i + len(phrase)
                if j <= n and (j == i + 1 or tuple(norm[i:j]) == phrase):
                    a, b = spans[i][0], spans[j - 1][1]
                    out.append(CueMatch(cue.pattern, sentence[a:b], a, b, cue.weight))
                    resume = j
                    break
        if self._regexes:
            lowered = sentence.lower()
            same_length = len(lowered) == len(sentence)
            found: list[tuple[int, int, Cue]] = []
            for rx, rx_i, cue in self._regexes:
                for m in rx.finditer(lowered) if same_length else rx_i.finditer(sentence):
                    if m.end() > m.start():
                        found.append((m.start(), m.end(), cue))
            found.sort(key=lambda f: (f[0], -f[1]))
            last_end = -1
            for a, b, cue in found:
                if a >= last_end:
                    out.append(CueMatch(cue.pattern, sentence[a:b], a, b, cue.weight))
                    last_end = b
        return out

    def score(self, sentence: str, tokens: Tokens | None = None) -> tuple[float, list[CueMatch]]:
        """Cue score of a sentence in [-1, 1] and the cues behind it."""
        tokens = tokens or tokenize(sentence)
        found = self.matches(sentence, tokens)
        if not found:
            return 0.0, found
        total = sum(m.weight for m in found)
        return max(-1.0, min(1.0, total / phrase_count(words(tokens)))), found
