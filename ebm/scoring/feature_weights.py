"""A ranker's weights by feature name, validated, read from and written to TOML.

One record for every weighted ranker (EBM+'s ``PlusWeights``, EBM-prior's ``PriorWeights``): a
subclass names its TOML table, the features it knows and the range of a weight.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from ebm.errors import DataError, InputError


@dataclass(frozen=True)
class FeatureWeights:
    """Weights by feature name, and where they came from."""

    weights: Mapping[str, float]
    source: str = "built in"
    note: str = ""

    TABLE: ClassVar[str]  # the TOML table holding ``feature = weight``
    LABEL: ClassVar[str]  # the ranker, as error messages name it
    KNOWN: ClassVar[Mapping[str, object]]  # the features a weight may name
    BOUNDS: ClassVar[tuple[float, float] | None] = None  # a weight's range (None: any finite number)
    ALLOW_EMPTY: ClassVar[bool] = True  # an empty table is valid (no weight at all)

    def __post_init__(self) -> None:
        for name, w in self.weights.items():
            if name not in self.KNOWN:
                raise InputError(
                    f"{self.source}: unknown {self.LABEL} feature {name!r} (known: {', '.join(self.KNOWN)})"
                )
            if self.BOUNDS is None:
                if not math.isfinite(w):
                    raise InputError(f"{self.source}: weight of {name!r} is not a finite number")
            elif not (math.isfinite(w) and self.BOUNDS[0] <= w <= self.BOUNDS[1]):
                lo, hi = self.BOUNDS
                raise InputError(f"{self.source}: weight of {name!r} must be in [{lo:g}, {hi:g}], got {w!r}")

    @classmethod
    def read(cls, path: str | Path) -> Self:
        """A TOML file with the weights table (feature = weight) and an optional ``note``."""
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"ranker weights file not found: {path}") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"{path}: not a TOML weights file: {exc}") from None
        table = data.get(cls.TABLE)
        if not isinstance(table, dict) or not (table or cls.ALLOW_EMPTY):
            raise InputError(f"{path}: no [{cls.TABLE}] table (feature = weight)")
        weights = {}
        for name, w in table.items():
            if isinstance(w, bool) or not isinstance(w, int | float):
                raise InputError(f"{path}: weight of {name!r} must be a number, not {w!r}")
            weights[name] = float(w)
        return cls(weights, str(path), str(data.get("note", "")))

    @classmethod
    def read_shipped(cls, name: str, remedy: str) -> Self:
        """The weights file ``name`` shipped in ``ebm/data``; a ``DataError`` saying how to make
        it (``remedy``: the command) when it is missing."""
        from ebm.paths import package_data

        path = package_data(name)
        if not path.is_file():
            raise DataError(f"{cls.LABEL} weights missing: {path} (run {remedy})")
        return cls.read(path)

    def to_toml(self, note: str = "") -> str:
        lines = [f"# {line}".rstrip() for line in (note or self.note).splitlines()]
        lines += ["", f"[{self.TABLE}]"]
        lines += [f"{name} = {w!r}" for name, w in self.weights.items()]
        return "\n".join(lines) + "\n"
