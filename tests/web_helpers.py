"""What the web tests share: the app on the tests' EBM_HOME, following a question's progress page
to its answer, and ``ebm serve`` started as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from ebm.ask import AskConfig
from ebm.web.app import create_app


def web_app(
    concept_index: Path, tmp_path_factory: pytest.TempPathFactory, name: str, **options: Any
) -> Iterator[Flask]:
    """A module's app (for a ``scope="module"`` fixture to yield from): its own annotation cache,
    the worker(s) opening the store in the tests' EBM_HOME; stopped afterwards."""
    mp = pytest.MonkeyPatch()
    mp.setenv("EBM_HOME", str(concept_index.parent))  # the worker opens the store there
    cache = tmp_path_factory.mktemp(name) / "annotations.sqlite"
    app = create_app(AskConfig(cache_path=cache), warm=False, **options)
    yield app
    app.extensions["ebm_runner"].stop()
    mp.undo()


def follow(client: FlaskClient, location: str, timeout: float) -> str:
    """The page at ``location`` once it no longer refreshes itself (the answer or the error)."""
    deadline = time.monotonic() + timeout
    while True:
        page = client.get(location)
        text = page.get_data(as_text=True)
        if 'http-equiv="refresh"' not in text:
            assert page.status_code == 200, text[:1000]
            return text
        assert page.status_code == 200
        assert time.monotonic() < deadline, "no answer in time"
        time.sleep(0.2)


def ask_page(client: FlaskClient, form: dict[str, str], timeout: float) -> tuple[str, str]:
    """Submit the form; (the results page once answered, its location)."""
    r = client.post("/ask", data=form)
    assert r.status_code == 303, r.get_data(as_text=True)[:500]
    location = r.headers["Location"]
    return follow(client, location, timeout), location


def start_serve(
    args: list[str], env: dict[str, str], ready: Callable[[dict[str, Any]], bool], within: float, waiting: str
) -> tuple[subprocess.Popen[str], str, list[str]]:
    """``python -m ebm serve *args`` with ``env``: (process, URL, its log so far) once ``ready`` holds
    for its /api/status document; ``waiting`` names what it waits for in the failure message. The
    caller stops the process; a server that fails to start is killed here."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ebm", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", **env),
    )
    log: list[str] = []
    # Drain stderr (the server's log) so the pipe never fills up; keep it for failure messages.
    threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        m = re.search(r"serving on (http://127\.0\.0\.1:\d+/)", line)
        assert m, f"ebm serve did not start: {line!r} {''.join(log)[-2000:]}"
        url = m.group(1)
        deadline = time.monotonic() + within
        while not ready(status := _status(url)):
            assert not status["status"].startswith("not ready"), status
            assert proc.poll() is None, f"ebm serve exited: {''.join(log)[-2000:]}"
            assert time.monotonic() < deadline, f"{waiting} in {within:g} s: {''.join(log)[-2000:]}"
            time.sleep(0.3)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, url, log


def _status(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "api/status", timeout=30) as r:  # loopback only (network guard)
        doc: dict[str, Any] = json.loads(r.read())
        return doc
