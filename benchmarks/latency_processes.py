"""Change-to-reconcile latency of controllers in their own processes (issue 31).

run.py's "latency" scenario times reconcile_kit in the harness's own process; this one
times every contender alike: each controller runs in its own process and prints a line
per reconcile once it holds the object ("reconcile <name> <spec.seq> <unix nanoseconds>":
``run.py --child probe`` for reconcile_kit, ``-probe`` for the controller-runtime
contender). The contenders of a run watch the same Widgets at once, so every change is
timed for each of them under the same conditions (the server's latency, the machine's
other work: interleaved change by change). After every Widget is Ready and every
contender reconciled each once, the harness changes one Widget's ``spec.seq`` once
(a warm-up, not counted), then ``updates`` times, one change at a time (10 ms apart),
and takes each delay from just before its PATCH (wall clock) to each controller's line
for that seq; then the same while LOAD_WRITERS writers change other Widgets at LOAD_RATE
changes/s (every contender sees that load). The processes read the same clock
(CLOCK_REALTIME). Reported per contender: p50 and p99, idle and loaded; run.json keeps
every delay.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
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
    target: Any,
    commands: Mapping[str, Sequence[str]],
    objects: int,
    updates: int,
    timeout: float,
) -> dict[str, Any]:
    """One run: the controllers of ``commands`` (prefix -> a command printing probe lines;
    ``{kubeconfig}`` in an argument is replaced), all at once over the same ``objects``
    fresh Widgets on ``target``, every change timed to each one's line for it. Keys
    ``{prefix}_latency_{idle|load}_{p50|p99}_ms`` and ``{prefix}_latency_{idle|load}_ms``
    (every delay, ms, sorted)."""
    conn = await target.fresh(objects)
    procs: list[asyncio.subprocess.Process] = []
    try:
        watch = await target.ready_watch(objects)
        lines: dict[str, Lines] = {}
        for prefix, command in commands.items():
            proc = await asyncio.create_subprocess_exec(
                *(arg.replace("{kubeconfig}", str(conn.kubeconfig)) for arg in command),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            procs.append(proc)
            assert proc.stdout is not None
            lines[prefix] = Lines(proc.stdout)
        await watch.wait(timeout)
        # each contender through its first reconcile of every Widget: Ready may be the
        # other's work, while this one still works through its initial list
        for i in range(objects):
            for theirs in lines.values():
                await theirs.wait(name_of(i), 0, timeout)
        result: dict[str, Any] = {}
        async with conn.session() as session:
            for label, writers in (("idle", 0), ("load", LOAD_WRITERS)):
                delays = await _probe(session, conn.url, lines, objects, updates, writers)
                for prefix, mine in delays.items():
                    key = f"{prefix}_latency_{label}"
                    result[f"{key}_p50_ms"] = percentile(mine, 50) * 1e3
                    result[f"{key}_p99_ms"] = percentile(mine, 99) * 1e3
                    # every delay, for run.json: a p99 of 200 is the second-largest of them
                    result[f"{key}_ms"] = [round(d * 1e3, 3) for d in mine]
        return result
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
                await asyncio.wait_for(proc.wait(), 10)
        await target.release()


async def _probe(
    session: Any, url: str, lines: Mapping[str, Lines], objects: int, updates: int, writers: int
) -> dict[str, list[float]]:
    """Delays in seconds of ``updates`` changes of Widget 1 to each controller's line for
    it, sorted, while ``writers`` change other Widgets."""
    stop = asyncio.Event()
    loaders = [asyncio.create_task(_load(session, url, objects, i, stop)) for i in range(writers)]
    base = 1_000_000 * (writers + 1)  # seqs no earlier phase used
    delays: dict[str, list[float]] = {prefix: [] for prefix in lines}
    try:
        if writers:
            await asyncio.sleep(0.5)
        for seq in range(base, base + updates + 1):  # the first, a warm-up, is not counted
            sent = time.time_ns()
            await patch_spec(session, url, name_of(1), seq)
            for prefix, theirs in lines.items():
                delay = (await theirs.wait(name_of(1), seq, 10.0) - sent) / 1e9
                if seq > base:
                    delays[prefix].append(delay)
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await asyncio.gather(*loaders)
    return {prefix: sorted(mine) for prefix, mine in delays.items()}


async def _load(session: Any, url: str, objects: int, offset: int, stop: asyncio.Event) -> None:
    """LOAD_RATE / LOAD_WRITERS changes/s of Widgets other than 1."""
    seq, next_at = 0, time.perf_counter()
    while not stop.is_set():
        seq += 1
        index = 2 + (seq * 7 + offset) % max(objects - 2, 1)
        await patch_spec(session, url, name_of(index), 2_000_000_000 + seq)
        next_at += LOAD_WRITERS / LOAD_RATE
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
