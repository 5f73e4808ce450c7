"""Bounded load on ``ebm serve``: throughput and latency of ``POST /api/ask`` at N concurrent
clients, and how fast pages answer meanwhile, for the worker processes (after) against the
previous design (before: one worker thread inside the server, ``--workers 0``) in the same run.

For each mode the script starts ``python -m ebm serve --host 127.0.0.1 --port 0`` (loopback
only: every URL it requests is on 127.0.0.1), waits until every worker has loaded its models,
asks each question of ``questions/`` once (so both modes find the same annotations in the
cache), then sends ``--requests`` questions from ``--clients`` threads (the six paper
questions in turn, local store) while one more thread fetches ``GET /`` and ``/api/status``
every 50 ms. It stops by itself after ``--requests`` questions or ``--max-seconds`` per mode,
whichever comes first, and stops the server.

    python benchmarks/web_load.py [--requests 200] [--clients 8] [--max-seconds 300] [--before REV]
                                  [--also-not-niced]

``--before REV`` adds a first row: the server of git revision REV as it was (extracted with
``git archive``), e.g. the commit before the worker processes, ``--before eff2558`` (one worker
thread, 4 request threads, API calls waiting up to 600 s).

Prints one row per mode and the ratios; uses the data directory of the environment
(EBM_HOME, or the per-user one: run ``ebm setup`` first).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.frame import load_frames  # noqa: E402


@dataclass
class Figures:
    mode: str
    workers: int
    asked: int = 0
    ok: int = 0
    errors: list[str] = field(default_factory=list)
    ask_seconds: list[float] = field(default_factory=list)
    page_seconds: list[float] = field(default_factory=list)
    idle_page_seconds: list[float] = field(default_factory=list)
    wall: float = 0.0

    @property
    def throughput(self) -> float:
        return self.ok / self.wall if self.wall else 0.0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def request(url: str, body: dict | None = None, timeout: float = 180.0) -> tuple[int, bytes]:
    assert url.startswith("http://127.0.0.1:"), url  # loopback only
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def start_server(
    workers: int | None, code: Path = ROOT, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen, str, list[str]]:
    """``ebm serve`` from the source tree ``code``; ``workers`` None: the revision's own design."""
    command = [sys.executable, "-m", "ebm", "serve", "--host", "127.0.0.1", "--port", "0"]
    proc = subprocess.Popen(
        command + ([] if workers is None else ["--workers", str(workers)]) + list(extra),
        cwd=code,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(code)),
    )
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
    line = proc.stdout.readline()  # type: ignore[union-attr]
    m = re.search(r"serving on (http://127\.0\.0\.1:\d+/)", line)
    if not m:
        proc.kill()
        raise SystemExit(f"ebm serve did not start: {line!r} {''.join(log)[-2000:]}")
    url = m.group(1)
    end = time.monotonic() + 300
    while True:
        status = json.loads(request(url + "api/status")[1])
        if status.get("workers_ready", 1 if status["status"] == "ready" else 0) >= status.get("workers", 1):
            return proc, url, log
        if status["status"].startswith("not ready") or proc.poll() is not None or time.monotonic() > end:
            proc.kill()
            raise SystemExit(f"ebm serve not ready: {status} {''.join(log)[-2000:]}")
        time.sleep(0.3)


def page_latencies(url: str, n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        status, _ = request(url + ("api/status" if i % 2 else ""), timeout=30)
        out.append(time.perf_counter() - t)
        assert status == 200, status
        time.sleep(0.05)
    return out


def run_mode(
    mode: str,
    workers: int | None,
    bodies: list[dict],
    args: argparse.Namespace,
    code: Path = ROOT,
    extra: tuple[str, ...] = (),
) -> Figures:
    proc, url, log = start_server(workers, code, extra)
    fig = Figures(mode, workers or 0)
    try:
        fig.idle_page_seconds = page_latencies(url, 20)
        for body in bodies:  # the same annotations in the cache for every mode
            status, raw = request(url + "api/ask", body)
            if status != 200:
                raise SystemExit(f"{mode}: warm-up question failed: {status} {raw[:300]!r}")
        lock = threading.Lock()
        counter = iter(range(args.requests))
        stop = threading.Event()
        started = time.perf_counter()
        end = started + args.max_seconds

        def client() -> None:
            while not stop.is_set() and time.perf_counter() < end:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                t = time.perf_counter()
                status, raw = request(url + "api/ask", bodies[i % len(bodies)])
                took = time.perf_counter() - t
                with lock:
                    fig.asked += 1
                    if status == 200:
                        fig.ok += 1
                        fig.ask_seconds.append(took)
                    else:
                        fig.errors.append(f"{status} {raw[:120]!r}")

        def prober() -> None:
            while not stop.is_set():
                t = time.perf_counter()
                status, _ = request(url + ("api/status" if len(fig.page_seconds) % 2 else ""), timeout=30)
                fig.page_seconds.append(time.perf_counter() - t)
                stop.wait(0.05)

        clients = [threading.Thread(target=client) for _ in range(args.clients)]
        probe = threading.Thread(target=prober)
        probe.start()
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        fig.wall = time.perf_counter() - started
        stop.set()
        probe.join()
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return fig


def report(fig: Figures) -> Figures:
    print(
        f"{fig.mode:32} {fig.ok:4d}/{fig.asked:<4d} ok in {fig.wall:6.1f} s  {fig.throughput:5.2f} q/s  "
        f"ask p50 {pct(fig.ask_seconds, 0.5):5.2f} s p95 {pct(fig.ask_seconds, 0.95):5.2f} s  "
        f"page idle p50 {1000 * pct(fig.idle_page_seconds, 0.5):5.1f} ms  under load p50 "
        f"{1000 * pct(fig.page_seconds, 0.5):6.1f} ms p95 {1000 * pct(fig.page_seconds, 0.95):6.1f} ms "
        f"max {1000 * max(fig.page_seconds, default=0):6.1f} ms ({len(fig.page_seconds)} pages)",
        flush=True,
    )
    for e in fig.errors[:5]:
        print(f"    error: {e}")
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=200, help="questions per mode (default 200)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    ap.add_argument("--max-seconds", type=float, default=300, help="time limit per mode (default 300)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes after (default: 1 per core)")
    ap.add_argument("--before", metavar="REV", help="also measure the server of this git revision, first")
    ap.add_argument(
        "--also-not-niced", action="store_true", help="also measure the workers at the server's CPU priority"
    )
    args = ap.parse_args()
    if not (1 <= args.requests <= 2000 and 1 <= args.clients <= 32 and 0 < args.max_seconds <= 1800):
        ap.error("--requests 1..2000, --clients 1..32, --max-seconds up to 1800")
    frames = load_frames([ROOT / "questions"])
    bodies = [{"frame": f.to_dict(), "source": "local", "top": 10} for f in frames]
    from ebm.web.jobs import default_workers

    after = args.workers or default_workers()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores", flush=True)
    modes: list[tuple[str, int | None, Path, tuple[str, ...]]] = [
        ("reference: 1 worker thread", 0, ROOT, ()),
        (f"after: {after} worker processes", after, ROOT, ()),
    ]
    if args.also_not_niced:  # on a machine shared with other work, niced workers get less CPU
        modes.insert(1, (f"after: {after} workers, nice 0", after, ROOT, ("--worker-nice", "0")))
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            old = Path(tmp) / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", args.before], cwd=ROOT, check=True, capture_output=True
            )
            tarfile.open(fileobj=io.BytesIO(archive.stdout)).extractall(old, filter="data")
            modes.insert(0, (f"before: {args.before}", None, old, ()))
        rows = [report(run_mode(m, workers, bodies, args, code, extra)) for m, workers, code, extra in modes]
    after_fig = rows[-1]
    for base in rows[:-1]:
        ratio = after_fig.throughput / base.throughput if base.throughput else float("nan")
        print(f"throughput {after_fig.mode} / {base.mode}: {ratio:.2f}x")
    print(f"page p95 under load after: {1000 * pct(after_fig.page_seconds, 0.95):.1f} ms")
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) at the end")
    return 0 if not any(r.errors for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
