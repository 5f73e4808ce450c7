"""The demo corpus shipped inside the package, so a fresh install works offline.

``ebm/data/corpus/citations.jsonl.gz``: one ``Citation.to_dict()`` JSON object per line,
sorted by PMID, built by ``scripts/build_corpus.py`` from ../shared/data (MEDLINE XML samples,
PubMedQA, EvidenceOutcomes, PICO-data, BC5CDR); see docs/corpus.md.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from ebm.citation import Citation
from ebm.errors import DataError
from ebm.paths import package_data

CORPUS_FILE = "corpus/citations.jsonl.gz"


def bundled_corpus_path() -> Path:
    """Path of the shipped corpus file; ``DataError`` if the installation lacks it."""
    path = package_data(CORPUS_FILE)
    if not path.is_file():
        raise DataError(
            f"bundled corpus not found at {path}: the package data is missing "
            "(reinstall ebm, or rebuild it with `python scripts/build_corpus.py`)"
        )
    return path


def iter_bundled(path: Path | None = None) -> Iterator[Citation]:
    """The bundled citations, in PMID order (``path`` overrides the shipped file)."""
    path = path or bundled_corpus_path()
    line_no = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                line_no += 1  # kept outside the loop header: the error messages need it
                if line.strip():
                    yield Citation.from_dict(json.loads(line))
    except FileNotFoundError as exc:
        raise DataError(f"bundled corpus not found at {path}") from exc
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: corrupt bundled corpus after line {line_no}: {exc}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: bad record at line {line_no}: {exc}") from exc
