"""The controller-runtime contender of benchmarks/run.py (issue 19): a Go controller
(benchmarks/controller-runtime/main.go, sigs.k8s.io/controller-runtime v0.25.2) running the
converge workload against the same target, over unstructured Widgets or (``--typed``,
typed.go; issue 31) Widgets as Go structs in a typed cache.

It is built with the machine's Go toolchain into
``~/.cache/reconcile-kit/bench/widget-controller-<hash of its sources>`` (a second build
of the same sources costs nothing); without Go the scenario is skipped with a message.
Its CPU time and resident memory are read from /proc while it runs: CPU from its start
(Go's start-up is a few milliseconds) to the last Ready object, RSS when it printed
"started" (before its cache syncs) and once every object is Ready.

    python benchmarks/controller_runtime.py --build   # build only (CI does this)
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

SOURCE = Path(__file__).resolve().parent / "controller-runtime"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reconcile-kit" / "bench"


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go", "typed.go"):
        digest.update((SOURCE / name).read_bytes())
    return digest.hexdigest()[:16]


def build() -> Path | None:
    """The contender's binary, built if needed; None (with a message on stderr) when no Go
    toolchain is on the PATH. Raises CalledProcessError when the build fails."""
    target = CACHE / f"widget-controller-{_sources_hash()}"
    if target.exists():
        return target
    go = shutil.which(os.environ.get("GO", "go"))
    if go is None:
        print("controller-runtime contender: no Go toolchain on PATH: skipped", file=sys.stderr)
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    subprocess.run(
        [go, "build", "-trimpath", "-o", str(partial), "."],
        cwd=SOURCE,
        check=True,
        env={**os.environ, "CGO_ENABLED": "0"},
    )
    partial.rename(target)
    return target


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (from /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident set size of process ``pid`` in bytes (VmRSS of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def run(
    target: Any,
    binary: Path,
    objects: int,
    concurrency: int,
    namespace: str,
    timeout: float,
    *,
    typed: bool = False,
) -> dict[str, Any]:
    """One converge run of the contender on ``target`` (run.py's EmbeddedTarget or
    RealTarget): timings as run.py's other contenders, plus CPU and RSS. ``typed``: Widgets
    as Go structs in a typed cache (typed.go) instead of unstructured objects."""
    conn = await target.fresh(objects)
    proc: asyncio.subprocess.Process | None = None
    try:
        watch = await target.ready_watch(objects)
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            str(binary),
            f"--kubeconfig={conn.kubeconfig}",
            f"--namespace={namespace}",
            f"--concurrency={concurrency}",
            *(["--typed"] if typed else []),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        if line.strip() != b"started":
            assert proc.stderr is not None
            err = await asyncio.wait_for(proc.stderr.read(), timeout)
            raise RuntimeError(f"controller-runtime contender did not start: {err[-2000:]!r}")
        rss_started = rss_bytes(proc.pid)
        await watch.wait(timeout)
        cpu = cpu_seconds(proc.pid)
        rss_converged = rss_bytes(proc.pid)
        requests = await target.requests()
        json = await json_bytes(conn)
    finally:
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await target.release()
    return {
        **watch.timings(objects, started),
        "requests": requests,
        "cpu_seconds": cpu,
        "cpu_ms_per_reconcile": 1000 * cpu / objects,
        "rss_started": rss_started,
        "rss_converged": rss_converged,
        "json_bytes": json,
    }


async def json_bytes(conn: Any) -> int:
    """The JSON size in bytes of the benchmark's Widgets as the server serves them."""
    from targets import COLLECTION

    items = orjson.loads((await conn.call("GET", COLLECTION))[1])["items"]
    return sum(len(orjson.dumps(item)) for item in items)


if __name__ == "__main__":
    if sys.argv[1:] != ["--build"]:
        sys.exit(__doc__)
    built = build()
    print(built if built is not None else "skipped: no Go toolchain")
