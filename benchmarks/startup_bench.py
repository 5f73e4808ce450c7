"""Start-up time of ``ebm`` commands in a new process, against a bare ``python -c pass`` and
against the eager paths measured in the same run.

Commands (each a new process, ``python -m ebm ...`` = the ``ebm`` script):

- reference: ``python -c pass`` (the interpreter alone);
- ``ebm --help``; ``ebm corpus stats`` (the default store of the bundled corpus, built once
  before timing), and the same through ``build_parser()`` with every subcommand module
  imported (what ``ebm`` did before it imported only the named one);
- ``ebm rules check`` and ``Resources.load()`` in three states of the data directory:
  *cold* (a new EBM_HOME: no cached MeSH term index, no remembered passes: the old path plus
  writing the cache), *index cached* (term index cached, every table validated again), *warm*
  (both cached: the usual case).

In-process: the entry-term index built as the old dict, built as a ``TermIndex``, and read
from its cache file; lookups in each; ``suggest`` as before (difflib over all 30k names) and
narrowed by character counts.

Wall times are medians of ``--repeat`` runs (min in brackets); CPU is user+sys of the child,
which varies less on a shared machine.

With ``--before REV`` the four commands also run with the code of git revision REV (extracted
with ``git archive``), e.g. the commit before these changes: ``--before 8ae9f0f``.

    python benchmarks/startup_bench.py [--repeat 5] [--before REV]
"""

from __future__ import annotations

import argparse
import difflib
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_timing import call_times

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

LOAD_RULES = "from ebm.resources import Resources; Resources.load()"
EAGER_STATS = (
    "import sys; from ebm.cli import build_parser; "
    "a = build_parser().parse_args(['corpus', 'stats']); sys.exit(a.func(a))"
)


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_process(
    argv: list[str],
    env: dict[str, str],
    repeat: int,
    before: Callable[[], None] | None = None,
    cwd: Path = ROOT,
) -> tuple[float, float, float]:
    """(median wall s, min wall s, median CPU s) of ``argv`` run ``repeat`` times."""
    walls, cpus = [], []
    for _ in range(repeat):
        if before:
            before()
        c, t = _child_cpu(), time.perf_counter()
        subprocess.run(
            argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        walls.append(time.perf_counter() - t)
        cpus.append(_child_cpu() - c)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def time_call(fn: Callable[[], object], repeat: int) -> float:
    return statistics.median(call_times(fn, repeat, clock=time.process_time))


def row(name: str, figures: tuple[float, float, float], ref: tuple[float, float, float]) -> None:
    wall, low, cpu = figures
    print(f"  {name:<44} {wall:6.2f} s [{low:5.2f}]  cpu {cpu:5.2f} s   +{wall - ref[0]:5.2f} s over python")


def extract(rev: str, dest: Path) -> Path:
    """The ebm, extractors and rules packages of git revision ``rev``, extracted into ``dest``."""
    tar = subprocess.run(
        ["git", "archive", rev, "ebm", "extractors", "rules"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(dest, filter="data")
    return dest


def processes(repeat: int, before_rev: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="ebm-startup-") as tmp:
        home = Path(tmp) / "home"
        env = dict(os.environ, EBM_HOME=str(home))
        subprocess.run(
            [PY, "-m", "ebm", "corpus", "stats"], env=env, cwd=ROOT, check=True, capture_output=True
        )
        cache = home / "cache"

        def cold() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        def index_only() -> None:
            shutil.rmtree(cache / "rule-verdicts", ignore_errors=True)

        ref = time_process([PY, "-c", "pass"], env, repeat)
        print(f"new processes (median of {repeat}; [min]; EBM_HOME={home}):")
        row("python -c pass  (reference)", ref, ref)
        row("ebm --help", time_process([PY, "-m", "ebm", "--help"], env, repeat), ref)
        row("ebm corpus stats", time_process([PY, "-m", "ebm", "corpus", "stats"], env, repeat), ref)
        row(
            "ebm corpus stats, every CLI module imported",
            time_process([PY, "-c", EAGER_STATS], env, repeat),
            ref,
        )
        slow = max(3, repeat // 2)
        for label, argv in (
            ("ebm rules check", [PY, "-m", "ebm", "rules", "check"]),
            ("Resources.load()", [PY, "-c", LOAD_RULES]),
        ):
            row(f"{label}, cold", time_process(argv, env, slow, before=cold), ref)
            row(f"{label}, term index cached", time_process(argv, env, slow, before=index_only), ref)
            time_process(argv, env, 1)  # make sure everything is remembered
            row(f"{label}, warm", time_process(argv, env, repeat), ref)
        if before_rev:
            old = extract(before_rev, Path(tmp) / "before")
            # PYTHONPATH comes before the editable install's finder, so these run the old code
            old_env = dict(env, PYTHONPATH=str(old))
            where = subprocess.run(
                [PY, "-c", "import ebm; print(ebm.__file__)"],
                env=old_env,
                cwd=old,
                capture_output=True,
                text=True,
            ).stdout.strip()
            assert where.startswith(str(old)), where
            print(f"the same with the code of {before_rev} (git archive, PYTHONPATH):")
            for label, argv in (
                ("ebm --help", [PY, "-m", "ebm", "--help"]),
                ("ebm corpus stats", [PY, "-m", "ebm", "corpus", "stats"]),
                ("ebm rules check", [PY, "-m", "ebm", "rules", "check"]),
                ("Resources.load()", [PY, "-c", LOAD_RULES]),
            ):
                n = repeat if "rules" not in label else max(3, repeat // 2)
                row(f"{label}, before", time_process(argv, old_env, n, cwd=old), ref)


def in_process(repeat: int) -> None:
    from ebm.mesh import MeshVocabulary, TermIndex, term_index_cache

    with tempfile.TemporaryDirectory(prefix="ebm-startup-") as tmp:
        os.environ["EBM_HOME"] = tmp
        voc = MeshVocabulary()
        terms = [(t.text, t.descriptor_ui) for t in voc.terms]

        def old_dict() -> dict[str, list[str]]:  # ebm.mesh before: a dict over Term objects
            index: dict[str, list[str]] = {}
            for t in MeshVocabulary(voc.directory).terms:
                uis = index.setdefault(t.text.casefold(), [])
                if t.descriptor_ui not in uis:
                    uis.append(t.descriptor_ui)
            return index

        old = old_dict()
        built = TermIndex.build(terms)
        _ = MeshVocabulary().term_index  # writes the cache file
        data = term_index_cache().read_bytes()
        print(f"\nin process (CPU s, median of {repeat}):")
        t_old = time_call(old_dict, 1)
        t_build = time_call(lambda: TermIndex.build(terms), 1)
        t_read = time_call(lambda: TermIndex.from_bytes(term_index_cache().read_bytes()), repeat)
        print(f"  term index as a dict over Term objects (before)   {t_old:7.3f} s")
        print(f"  TermIndex built from already parsed rows          {t_build:7.3f} s")
        print(f"  TermIndex read from its cache file ({len(data) / 1e6:.1f} MB)     {t_read:7.3f} s")
        keys = list(old)[::50]
        lookups = len(keys)
        t_dict = time_call(lambda: [old.get(k) for k in keys], repeat) / lookups * 1e6
        t_idx = time_call(lambda: [built.get(k) for k in keys], repeat) / lookups * 1e6
        print(f"  lookup: dict {t_dict:.2f} µs, TermIndex {t_idx:.2f} µs ({lookups:,} keys)")

        names = [d.name for d in voc.descriptors.values()]
        words = ["Diagnosis, Diferential", "Random Alocation", "Population at Risk", "Myocardial infarctions"]
        words += [n[:3] + n[4:] for n in names[1000:30000:3000]]
        first = time_call(lambda: voc.suggest("warm up"), 1)  # numpy import, count matrix: once
        before = time_call(lambda: [difflib.get_close_matches(w, names, n=3, cutoff=0.75) for w in words], 1)
        after = time_call(lambda: [voc.suggest(w) for w in words], repeat)
        same = all(voc.suggest(w) == difflib.get_close_matches(w, names, n=3, cutoff=0.75) for w in words)
        print(
            f"  suggest, {len(words)} words: difflib over all names {before / len(words) * 1e3:.0f} ms/word, "
            f"narrowed {after / len(words) * 1e3:.1f} ms/word (same results: {same}); "
            f"first call in a process +{first:.2f} s"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", metavar="REV", help="also time these commands with the code of git REV")
    args = ap.parse_args(argv)
    processes(args.repeat, args.before)
    in_process(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
