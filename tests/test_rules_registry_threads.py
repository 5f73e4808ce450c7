"""The table registry fills itself once, whole, even when threads ask for it at the same time
(``ebm serve --workers 0`` loads its question reader while its worker thread answers: a half
registry made every question fail with KeyError 'semantic_groups')."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import ROOT

PROGRAM = """
import threading
from ebm.rules import registry

barrier = threading.Barrier(8)
seen = []

def ask():
    barrier.wait()
    seen.append(len(registry.specs()))

threads = [threading.Thread(target=ask) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(sorted(seen))
"""


def test_threads_never_see_a_half_registry() -> None:
    for _ in range(3):  # a fresh interpreter each time: the registry is filled on first use
        proc = subprocess.run(
            [sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=ROOT, check=True
        )
        seen = ast.literal_eval(proc.stdout)
        assert len(set(seen)) == 1 and seen[0] >= 19, seen
