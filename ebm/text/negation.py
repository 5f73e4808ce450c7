"""NegEx-style negation of concept spans (Chapman et al. 2001), driven by rules/negation_triggers.tsv.

In each sentence the triggers are found by longest match over lower-cased tokens, so a
pseudo-trigger ("no increase", "not only") hides the shorter trigger inside it. A span is
negated when

- a *pre* trigger ends before it and the span starts within ``window`` word tokens after the
  trigger ("no evidence of [pneumonia]", "without any clinically significant [bleeding]"), or
- a *post* trigger starts after it and the span ends within ``window`` word tokens before the
  trigger ("[infection] was ruled out"),

and no *termination* trigger ("but", "however", ";") or sentence end lies between them.
Punctuation tokens do not count towards the window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from ebm.errors import InputError
from ebm.rules.table import Table, choice, load, text
from ebm.text.document import Document

TriggerType = Literal["pre", "post", "pseudo", "termination"]
TRIGGER_TYPES: tuple[str, ...] = ("pre", "post", "pseudo", "termination")
DEFAULT_WINDOW = 6
RULES_FILE = "negation_triggers.tsv"


class Trigger(NamedTuple):
    """A trigger found in a document: token range ``start..end-1`` and its type."""

    start: int
    end: int
    type: TriggerType
    phrase: str


@dataclass(frozen=True)
class NegationRules:
    """Trigger phrases (as lower-cased token tuples) -> type, from a validated table."""

    phrases: dict[tuple[str, ...], TriggerType]
    source: str

    @property
    def max_len(self) -> int:
        return max((len(p) for p in self.phrases), default=0)


TRIGGER_COLUMNS = (
    text("trigger", help="a trigger phrase, matched case-insensitively on tokens"),
    choice("type", TRIGGER_TYPES, help="pre, post, pseudo or termination"),
    text("comment", required=False, help="a note"),
)


def negation_rules_from_table(table: Table, tokenize: Callable[[str], list[str]]) -> NegationRules:
    """The trigger phrases of a table; errors name the file and line.

    ``tokenize`` splits a trigger into tokens the way documents are tokenized (the text
    pipeline's tokenizer), so "didn't" or "vs." match the document's tokens.
    """
    phrases: dict[tuple[str, ...], TriggerType] = {}
    where: dict[tuple[str, ...], int] = {}
    for row in table:
        trigger, ttype = row["trigger"].lower(), row["type"]
        key = tuple(t.lower() for t in tokenize(trigger))
        if not key:
            raise InputError(f"{table.where(row)}: trigger {trigger!r} has no tokens")
        if key in phrases:
            raise InputError(
                f"{table.where(row)}: trigger {trigger!r} already defined on line {where[key]} "
                f"(as {phrases[key]}); a phrase can have only one type"
            )
        phrases[key] = ttype
        where[key] = row.line
    return NegationRules(phrases, str(table.path))


def load_negation_rules(path: Path, tokenize: Callable[[str], list[str]]) -> NegationRules:
    """Read and validate a trigger table (``negation_rules_from_table``)."""
    return negation_rules_from_table(load(path, TRIGGER_COLUMNS), tokenize)


def _is_word(token_text: str) -> bool:
    return any(c.isalnum() for c in token_text)


class NegationDetector:
    """Finds triggers per sentence (memoised on the Document) and judges spans."""

    def __init__(self, rules: NegationRules, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("window must be >= 1")
        self.rules = rules
        self.window = window
        self._max_len = self.rules.max_len
        self._key = f"negation:{id(self)}"

    def sentence_triggers(self, doc: Document, sentence: int) -> list[Trigger]:
        """Triggers in one sentence, left to right, longest match first."""
        memo: dict[int, list[Trigger]] = doc.cache.setdefault(self._key, {})
        found = memo.get(sentence)
        if found is None:
            found = self._find(doc, sentence)
            memo[sentence] = found
        return found

    def _find(self, doc: Document, sentence: int) -> list[Trigger]:
        s = doc.sentences[sentence]
        words = [t.text.lower() for t in doc.tokens[s.token_start : s.token_end]]
        phrases = self.rules.phrases
        found: list[Trigger] = []
        i = 0
        while i < len(words):
            for n in range(min(self._max_len, len(words) - i), 0, -1):
                key = tuple(words[i : i + n])
                ttype = phrases.get(key)
                if ttype is not None:
                    a = s.token_start + i
                    found.append(Trigger(a, a + n, ttype, " ".join(key)))
                    i += n
                    break
            else:
                i += 1
        return found

    def trigger_for(self, doc: Document, start: int, end: int) -> Trigger | None:
        """The trigger that negates tokens ``start..end-1``, or None (not negated)."""
        if not 0 <= start < end <= len(doc.tokens):
            raise ValueError(f"token span {start}..{end} outside the document (0..{len(doc.tokens)})")
        sent = doc.tokens[start].sentence
        triggers = self.sentence_triggers(doc, sent)
        if not triggers:
            return None
        tokens = doc.tokens
        # pre: nearest trigger before the span, scanning backwards; a terminator stops the search
        for trig in reversed(triggers):
            if trig.end > start:
                continue
            if trig.type == "termination":
                break
            if trig.type == "pre":
                gap = sum(1 for t in tokens[trig.end : start] if _is_word(t.text))
                if gap < self.window:
                    return trig
        # post: nearest trigger after the span
        for trig in triggers:
            if trig.start < end:
                continue
            if trig.type == "termination":
                break
            if trig.type == "post":
                gap = sum(1 for t in tokens[end : trig.start] if _is_word(t.text))
                if gap < self.window:
                    return trig
        return None

    def negated(self, doc: Document, start: int, end: int) -> bool:
        """Whether the concept at tokens ``start..end-1`` is under a negation trigger."""
        return self.trigger_for(doc, start, end) is not None

    def flag(self, doc: Document, spans: Iterable[tuple[int, int]]) -> list[bool]:
        """``negated`` for each ``(start, end)`` token span."""
        return [self.negated(doc, a, b) for a, b in spans]
