"""Where the store lives, and the default store built from the bundled corpus on first use.

Location: an explicit path (``--db PATH``), else ``EBM_HOME/medline.sqlite``, else
``medline.sqlite`` in the per-user data directory (both through ``ebm.paths.data_dir()``).
An explicit path must exist (except for ingest, which creates it); the default store is created
from the bundled corpus the first time it is needed, which takes a few seconds.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ebm.errors import DataError
from ebm.mesh import MeshVocabulary
from ebm.paths import data_dir
from ebm.store.sqlite import MedlineStore

DB_FILE = "medline.sqlite"
BUILD_BATCH = 5000  # the build is one throw-away file: large batches, no journal


def default_store_path() -> Path:
    return data_dir() / DB_FILE


def open_store(
    db: str | os.PathLike[str] | None = None,
    *,
    vocabulary: MeshVocabulary | Callable[[], MeshVocabulary],
    create: bool = False,
    quiet: bool = False,
) -> MedlineStore:
    """The store at ``db``, or the default store (built from the bundled corpus if missing).

    ``vocabulary``: the MeSH vocabulary the store maps names with, or a function returning it
    (see ``MedlineStore``).

    ``create=True`` makes a new empty store at an explicit ``db`` that does not exist yet
    (``ebm corpus ingest --db NEW``); otherwise a missing explicit store is a ``DataError``.
    """
    if db is not None:
        path = Path(db)
        if path.is_dir():
            raise DataError(f"--db {path} is a directory; give the store's file name")
        if not path.exists() and not create:
            raise DataError(
                f"no MEDLINE store at {path} (create one with `ebm corpus ingest --db {path} FILE...`, "
                "or leave out --db to use the default store)"
            )
        return MedlineStore(path, vocabulary=vocabulary)
    path = default_store_path()
    if not path.exists():
        build_default_store(path, vocabulary=vocabulary, quiet=quiet)
    return MedlineStore(path, vocabulary=vocabulary)


def build_default_store(
    path: Path,
    *,
    vocabulary: MeshVocabulary | Callable[[], MeshVocabulary],
    quiet: bool = False,
    bundle: Path | None = None,
) -> None:
    """Build the store of the bundled corpus at ``path``.

    Built in a temporary file beside it and renamed into place, so an interrupted build
    leaves no half store and concurrent first uses do not clash.
    """
    from ebm.medline.bundled import bundled_corpus_path, iter_bundled

    source = bundle or bundled_corpus_path()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    say = (lambda msg: None) if quiet else (lambda msg: print(f"ebm: {msg}", file=sys.stderr, flush=True))
    say(f"no MEDLINE store at {path} yet: creating it from the bundled corpus ...")
    start = time.perf_counter()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        with MedlineStore(tmp, bulk=True, vocabulary=vocabulary) as store:
            report = store.ingest(iter_bundled(source), batch_size=BUILD_BATCH)
            store.optimize()
            store.set_meta("origin", f"bundled corpus {source.name} ({source.stat().st_size} bytes)")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DataError(
            f"cannot create the default store at {path}: {exc} (set EBM_HOME to a writable directory, "
            "or give --db FILE)"
        ) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    say(f"created {path} with {report.stored:,} citations in {time.perf_counter() - start:.1f} s")
