"""A question in plain words, read into a PICO frame for the web form and the JSON API (issue 16).

The server reads the words itself (``ebm.question.parse_question`` takes well under a
millisecond once loaded), so the form can show the frame for review at once and the API can
refuse a question with nothing in it as a 400 before anything is queued. What it needs — the
concept matcher, the MeSH vocabulary, the cue table and the role model, all held by
``ebm.resources.Resources`` — is loaded ONCE per server process, by ``Readers`` on first use,
from the same rules directory the workers answer with (``AskConfig.rules``).

``Asked`` is what the page and the JSON document say about the reading: the text, the
"Understood as" line (after the fields given beside the question replaced their slots, like
``ebm ask "QUESTION" --problem X``), why this task, and every word that was not placed or was
ignored, so no word of the user's is dropped silently.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebm.errors import InputError
from ebm.frame import CONTENT_FIELDS, FIELDS, Frame, frame_from_dict

if TYPE_CHECKING:
    from ebm.concepts.matcher import ConceptMatcher
    from ebm.mesh import MeshVocabulary
    from ebm.question import ParsedQuestion, QuestionCues, RoleModel

# The frame's slots a field beside the question may set (``ebm.cli.frame.OVERRIDES``).
SLOTS = ("task", "problem", "co_problems", "population", "intervention", "comparison", "outcome")


@dataclass(frozen=True)
class Asked:
    """How a question in words was read (picklable: it travels with the job to the worker)."""

    text: str
    understood_as: str  # "Understood as: therapy · problem Fever · ..."
    task_reason: str
    unplaced: tuple[str, ...]  # words no slot took (shown, never dropped)
    ignored: tuple[str, ...]  # function words
    cue_words: tuple[str, ...]  # words that said the task or a role ("versus", "in")
    from_fields: tuple[str, ...] = ()  # slots given beside the question, which replaced the reading
    roles: tuple[tuple[str, str, str], ...] = ()  # (words, slot, how decided)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "understood_as": self.understood_as,
            "task_reason": self.task_reason,
            "unplaced": list(self.unplaced),
            "ignored": list(self.ignored),
            "cue_words": list(self.cue_words),
            "from_fields": list(self.from_fields),
            "roles": [{"text": t, "slot": s, "how": h} for t, s, h in self.roles],
        }


@dataclass(frozen=True)
class Reading:
    """A question read, with the given fields in their slots."""

    frame: Frame
    asked: Asked
    parsed: ParsedQuestion


@dataclass(frozen=True)
class QuestionReader:
    """The resources ``parse_question`` needs, loaded once."""

    matcher: ConceptMatcher
    vocabulary: MeshVocabulary
    cues: QuestionCues
    model: RoleModel

    @classmethod
    def load(cls, rules: Path | None) -> QuestionReader:
        """From the rules directory the workers use (default: the shipped one): its validated
        ``question_cues`` table and the shipped role model, as ``ebm.resources.Resources``
        holds them (``default_resources``: loaded once per process and directory)."""
        from ebm.ask import default_resources

        res = default_resources(rules)
        return cls(res.matcher, res.vocabulary, res.question_cues, res.role_model)

    def read(self, text: str, fields: Mapping[str, Any] | None = None) -> Reading:
        """``text`` as a frame; each slot in ``fields`` (frame keys, values as a frame file has
        them, None or [] to empty a slot) replaces what the words filled. ``InputError`` for an
        empty question or a bad field."""
        from ebm.question import parse_question, understood_as

        text = " ".join(text.split())
        if not text:
            raise InputError("the question is empty")
        parsed = parse_question(text, self.matcher, self.vocabulary, self.cues, self.model)
        data = parsed.frame.to_dict()
        given = [name for name in SLOTS if fields is not None and name in fields]
        for name in given:
            assert fields is not None
            data[name] = fields[name]
        where = "the question" + (f" with {', '.join(given)} from the request" if given else "")
        content = [name for name in CONTENT_FIELDS if data.get(name) not in (None, [], "")]
        if not content:
            raise NothingFound(parsed)
        frame = frame_from_dict({k: v for k, v in data.items() if v not in (None, [], "")}, where)
        asked = Asked(
            text=text,
            understood_as=understood_as(replace(parsed, frame=frame)),
            task_reason=parsed.task_reason,
            unplaced=parsed.unplaced,
            ignored=parsed.ignored,
            cue_words=parsed.cue_words,
            from_fields=tuple(given),
            roles=parsed.roles,
        )
        return Reading(frame, asked, parsed)


class NothingFound(InputError):
    """The words fill no problem, population or intervention: the message names what became of
    each word (not placed, cue words, ignored), so the user sees why."""

    def __init__(self, parsed: ParsedQuestion) -> None:
        said: list[str] = []
        if parsed.unplaced:
            said.append(f"not placed: {', '.join(parsed.unplaced)}")
        if parsed.cue_words:
            said.append(f"cue words: {', '.join(parsed.cue_words)}")
        if parsed.ignored:
            said.append(f"ignored: {', '.join(parsed.ignored)}")
        detail = f" ({'; '.join(said)})" if said else ""
        super().__init__(
            f"no problem, population or intervention found in {parsed.frame.question!r}{detail}; "
            "fill the fields instead"
        )
        self.parsed = parsed


class Readers:
    """One ``QuestionReader`` per server process, loaded on first use (a second request
    waiting meanwhile waits for the same load)."""

    def __init__(self, rules: Path | None) -> None:
        self._rules = rules
        self._reader: QuestionReader | None = None
        self._lock = threading.Lock()

    def get(self) -> QuestionReader:
        with self._lock:
            if self._reader is None:
                self._reader = QuestionReader.load(self._rules)
            return self._reader


assert set(SLOTS) <= set(FIELDS)
