"""Shared test set-up: no network but loopback, paths to ../shared data."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests import netguard

netguard.install()

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EBM_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ../shared data directory (CI clones the repo beside it)."""
    if not (SHARED / "data").is_dir():
        pytest.fail(f"shared data not found at {SHARED} (set EBM_SHARED)")
    return SHARED / "data"


def _test_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "EBM_TEST_HOME" not in os.environ:
        os.environ["EBM_TEST_HOME"] = str(tmp_path_factory.mktemp("ebm_home"))
    return Path(os.environ["EBM_TEST_HOME"])


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch the user's real data directory unless they set EBM_HOME themselves."""
    monkeypatch.setenv("EBM_HOME", str(_test_home(tmp_path_factory)))


@pytest.fixture(scope="session")
def concept_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The MeSH concept index (no QuickUMLS part), built once per session in the tests' EBM_HOME,
    where ``Resources.load()`` finds it (~15 s)."""
    from ebm.concepts.index import build_mesh_index
    from ebm.resources import Resources

    out = _test_home(tmp_path_factory) / "concepts"
    if not (out / "meta.json").is_file():
        r = Resources.load(index_dir=out)
        build_mesh_index(out, r.vocabulary, r.value("semantic_groups"), r.stopwords, with_quickumls=False)
    return out


@pytest.fixture(scope="session")
def resources(concept_index: Path):  # -> ebm.resources.Resources
    """The shipped rules with the real MeSH vocabulary and the tests' concept index."""
    return shipped_resources(concept_index)


def shipped_resources(index: Path):  # -> ebm.resources.Resources
    """One ``Resources`` of the shipped rules per index directory (shared by tests)."""
    from ebm.resources import Resources

    key = str(index)
    if key not in _RESOURCES:
        _RESOURCES[key] = Resources.load(index_dir=index)
    return _RESOURCES[key]


_RESOURCES: dict = {}


def bundled_citations(pmids: set[str]) -> dict:
    """The bundled corpus's citations for ``pmids`` (all of them must be there)."""
    from ebm.medline.bundled import iter_bundled

    found = {c.pmid: c for c in iter_bundled() if c.pmid in pmids}
    assert set(found) == pmids, f"missing from the bundled corpus: {sorted(pmids - set(found))}"
    return found


def load_script(name: str) -> ModuleType:
    """A module of ``scripts/`` (imported once; the scripts import each other by these names)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


TINY_MESH = ROOT / "tests" / "fixtures" / "tiny_mesh"


@pytest.fixture(scope="session")
def tiny_resources():  # -> ebm.resources.Resources
    """The shipped rules over the tiny MeSH subset of tests/fixtures/tiny_mesh (made by
    scripts/build_tiny_mesh.py) and a concept index built from it (about a second): what unit
    tests of extractors and scoring run on, without the 15-second full index."""
    return tiny()


def tiny():  # -> ebm.resources.Resources
    """``tiny_resources``, built once per session (in a temporary directory)."""
    if "tiny" not in _RESOURCES:
        import tempfile

        from ebm.concepts.index import build_mesh_index
        from ebm.mesh import MeshVocabulary
        from ebm.resources import Resources, shipped_rules_dir

        vocabulary = MeshVocabulary(TINY_MESH)
        index = Path(tempfile.mkdtemp(prefix="ebm-tiny-index-")) / "concepts"
        shipped = Resources.load(shipped_rules_dir(), vocabulary=vocabulary, index_dir=index)
        build_mesh_index(
            index,
            vocabulary,
            shipped.value("semantic_groups"),
            shipped.stopwords,
            with_quickumls=False,
            source="tiny MeSH subset (tests)",
        )
        _RESOURCES["tiny"] = Resources.load(vocabulary=vocabulary, index_dir=index)
    return _RESOURCES["tiny"]
