"""Change-to-reconcile latency of controllers in their own processes (issue 31).

run.py's "latency" scenario times reconcile_kit in the harness's own process; this one
times every contender alike: the controller runs in its own process and prints a line per
reconcile once it holds the object ("reconcile <name> <spec.seq> <unix nanoseconds>":
``run.py --child probe`` for reconcile_kit, ``-probe`` for the controller-runtime
contender). After every Widget is Ready, the harness changes one Widget's ``spec.seq``
``updates`` times, one change at a time (10 ms apart), and takes each delay from just
before its PATCH (wall clock) to the controller's line for that seq; then the same while
LOAD_WRITERS writers change other Widgets at LOAD_RATE changes/s. Both processes read
the same clock (CLOCK_REALTIME). Reported per contender: p50 and p99, idle and loaded;
run.json keeps every delay.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from apiserver import percentile
from targets import name_of, patch_spec

LOAD_RATE = 100.0  # changes/s of other Widgets while "loaded"
LOAD_WRITERS = 4


class Lines:
    """The probe lines of a controller process: the first start of each (name, seq)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.started: dict[tuple[str, int], int] = {}
        self._waiters: dict[tuple[str, int], asyncio.Future[int]] = {}
        self.task = asyncio.create_task(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            parts = line.split()
            if len(parts) != 4 or parts[0] != b"reconcile":
                continue
            key, at = (parts[1].decode(), int(parts[2])), int(parts[3])
            self.started.setdefault(key, at)
            waiter = self._waiters.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(self.started[key])

    async def wait(self, name: str, seq: int, timeout: float) -> int:
        """Unix nanoseconds at which a reconcile of ``name`` first held ``seq``."""
        if (name, seq) in self.started:
            return self.started[name, seq]
        waiter = self._waiters.setdefault((name, seq), asyncio.get_running_loop().create_future())
        return await asyncio.wait_for(asyncio.shield(waiter), timeout)


async def run(
    target: Any, command: Sequence[str], objects: int, updates: int, timeout: float
) -> dict[str, Any]:
    """One run: ``command`` (a controller printing probe lines; ``{kubeconfig}`` in an
    argument is replaced) over ``objects`` fresh Widgets on ``target``; the delays' p50
    and p99 in milliseconds, idle and loaded, and every delay (ms, sorted)."""
    conn = await target.fresh(objects)
    proc: asyncio.subprocess.Process | None = None
    try:
        watch = await target.ready_watch(objects)
        proc = await asyncio.create_subprocess_exec(
            *(arg.replace("{kubeconfig}", str(conn.kubeconfig)) for arg in command),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        lines = Lines(proc.stdout)
        await watch.wait(timeout)
        async with conn.session() as session:
            result: dict[str, Any] = {}
            for label, writers in (("idle", 0), ("load", LOAD_WRITERS)):
                delays = await _probe(session, conn.url, lines, objects, updates, writers)
                result[f"latency_{label}_p50_ms"] = percentile(delays, 50) * 1e3
                result[f"latency_{label}_p99_ms"] = percentile(delays, 99) * 1e3
                # every delay, for run.json: a p99 of 200 is the second-largest of them
                result[f"latency_{label}_ms"] = [round(d * 1e3, 3) for d in delays]
        return result
    finally:
        if proc is not None and proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)
        await target.release()


async def _probe(
    session: Any, url: str, lines: Lines, objects: int, updates: int, writers: int
) -> list[float]:
    """Delays in seconds of ``updates`` changes of Widget 1, sorted, while ``writers``
    change other Widgets."""
    stop = asyncio.Event()
    loaders = [asyncio.create_task(_load(session, url, objects, i, stop)) for i in range(writers)]
    base = 1_000_000 * (writers + 1)  # seqs no earlier phase used
    delays: list[float] = []
    try:
        if writers:
            await asyncio.sleep(0.5)
        for seq in range(base + 1, base + updates + 1):
            sent = time.time_ns()
            await patch_spec(session, url, name_of(1), seq)
            delays.append((await lines.wait(name_of(1), seq, 10.0) - sent) / 1e9)
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await asyncio.gather(*loaders)
    return sorted(delays)


async def _load(session: Any, url: str, objects: int, offset: int, stop: asyncio.Event) -> None:
    """LOAD_RATE / LOAD_WRITERS changes/s of Widgets other than 1."""
    seq, next_at = 0, time.perf_counter()
    while not stop.is_set():
        seq += 1
        index = 2 + (seq * 7 + offset) % max(objects - 2, 1)
        await patch_spec(session, url, name_of(index), 2_000_000_000 + seq)
        next_at += LOAD_WRITERS / LOAD_RATE
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
