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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, NamedTuple

from ebm.errors import DataError
from ebm.paths import rules_dir
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


def load_negation_rules(
    path: Path | None = None, tokenize: Callable[[str], list[str]] | None = None
) -> NegationRules:
    """Read and validate a trigger table; errors name the file and line.

    ``tokenize`` splits a trigger into tokens the way documents are tokenized (default: the
    text pipeline's tokenizer), so "didn't" or "vs." match the document's tokens.
    """
    path = path or rules_dir() / RULES_FILE
    if tokenize is None:
        tokenize = _pipeline_tokenize
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise DataError(f"{path}: cannot read negation triggers ({e.strerror})") from e
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e})") from e
    phrases: dict[tuple[str, ...], TriggerType] = {}
    where: dict[tuple[str, ...], int] = {}
    header_seen = False
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.split("\t")
        if not header_seen:
            if [c.strip().lower() for c in cols[:2]] != ["trigger", "type"]:
                raise DataError(f"{path}, line {lineno}: expected the header 'trigger<TAB>type<TAB>comment'")
            header_seen = True
            continue
        if len(cols) not in (2, 3):
            raise DataError(
                f"{path}, line {lineno}: expected 2 or 3 tab-separated columns (trigger, type, comment), "
                f"got {len(cols)}"
            )
        trigger, ttype = cols[0].strip().lower(), cols[1].strip().lower()
        if not trigger:
            raise DataError(f"{path}, line {lineno}: empty trigger")
        if ttype not in TRIGGER_TYPES:
            raise DataError(
                f"{path}, line {lineno}: unknown type {cols[1].strip()!r} for {trigger!r} "
                f"(expected one of {', '.join(TRIGGER_TYPES)})"
            )
        key = tuple(t.lower() for t in tokenize(trigger))
        if key in phrases:
            raise DataError(
                f"{path}, line {lineno}: trigger {trigger!r} already defined on line {where[key]} "
                f"(as {phrases[key]}); a phrase can have only one type"
            )
        phrases[key] = ttype  # type: ignore[assignment]
        where[key] = lineno
    if not header_seen:
        raise DataError(f"{path}: no header line and no triggers")
    return NegationRules(phrases, str(path))


def _pipeline_tokenize(text: str) -> list[str]:
    from ebm.text.pipeline import default_pipeline

    return [t.text for t in default_pipeline().nlp.tokenizer(text) if not t.is_space]


def _is_word(token_text: str) -> bool:
    return any(c.isalnum() for c in token_text)


class NegationDetector:
    """Finds triggers per sentence (memoised on the Document) and judges spans."""

    def __init__(self, rules: NegationRules | None = None, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("window must be >= 1")
        self.rules = rules or load_negation_rules()
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


@lru_cache(maxsize=1)
def default_detector() -> NegationDetector:
    """The detector with the shipped trigger table and the default window."""
    return NegationDetector()


def negated(doc: Document, start: int, end: int) -> bool:
    """Whether tokens ``start..end-1`` of ``doc`` are negated (shipped rules, default window)."""
    return default_detector().negated(doc, start, end)


def negated_spans(doc: Document, spans: Sequence[tuple[int, int]]) -> list[bool]:
    """``negated`` for each ``(start, end)`` token span (shipped rules, default window)."""
    return default_detector().flag(doc, spans)
