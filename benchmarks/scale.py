"""The scale scenario of issues 19 and 31: 100,000 (or 1,000,000) small objects in one
controller process.

The embedded API server runs in a process of its own (``reconcile-kit apiserver``) and is
filled with N ConfigMaps of about 0.9 KB through HTTP; then a child process runs a
Controller over them (a reconcile that only counts) and reports:

- sync: seconds from the controller's start to its reflector's initial sync, and to the
  last object reconciled once (reconciles keep flowing);
- stalls: the longest event-loop stall (the lag of a 5 ms sleep) during the sync (start to
  all reconciled) and in the 10 s after;
- garbage collection: the longest pass per generation, the generation-2 passes per phase,
  and what the collector tracks (and holds frozen) once settled;
- memory: RSS growth per object from before the controller started to after it converged,
  and against the objects' JSON size.

``--gc off,synced,chunk`` runs the controller once per mode of
``reconcile_kit.runtime.reflector.GC_FREEZE``, in alternation, ``--repeats`` times over
one filled server (A/B interleaved); each mode's medians get PASS/MISS.

Targets: sync within 10 s (issue 19, 100,000 objects); no stall over 100 ms during or
after the sync (issue 31); RSS growth <= 3x the objects' JSON (issue 19, at 50,000
objects: ``--objects 50000``) and <= 2x (issue 31, at 1,000,000: ``--objects 1000000``).

    python benchmarks/scale.py [--objects 100000] [--gc default] [--repeats 1]
    (also: python benchmarks/run.py --scale, 3 repeats)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from apiserver import ServerProcess

COLLECTION = "/api/v1/namespaces/default/configmaps"
GC_MODES: dict[str, Any] = {"off": "off", "synced": "synced", "chunk": "chunk"}
"""``--gc`` modes besides ``default``: values of ``reconcile_kit.runtime.reflector.GC_FREEZE``
(``off``: the library before issue 31)."""
AFTER_SECONDS = 10.0
TARGETS = (
    ("sync seconds (to all reconciled)", "converged_seconds", 10.0),
    ("stall max during sync, ms (issue 31)", "stall_sync_ms", 100.0),
    ("stall max after sync, ms (issue 31)", "stall_after_ms", 100.0),
    ("RSS growth / JSON (issue 19: at 50,000 objects)", "rss_per_json", 3.0),
    ("RSS growth / JSON (issue 31: at 1,000,000 objects)", "rss_per_json", 2.0),
)


def configmap(i: int) -> dict[str, Any]:
    """A ConfigMap of about 0.5 KB of JSON as the server stores it."""
    data = {f"key{j}": f"value-{i:06d}-{j}-" + "x" * 40 for j in range(6)}
    return {"metadata": {"name": f"cm-{i:06d}", "labels": {"bench": "scale"}}, "data": data}


async def populate(url: str, count: int, concurrency: int = 32) -> None:
    """Create ``count`` ConfigMaps in ``default`` through HTTP."""
    pending = list(range(count))
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession() as session:

        async def worker() -> None:
            while pending:
                body = orjson.dumps(configmap(pending.pop()))
                async with session.post(url + COLLECTION, data=body, headers=headers) as reply:
                    if reply.status != 201:
                        raise RuntimeError(f"create: {reply.status} {await reply.text()}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))


async def collection_json_bytes(url: str, page: int = 5000) -> int:
    """The objects' JSON size as the server serves them, listed page by page (a million
    objects in one answer would hold gigabytes in this process)."""
    total, token = 0, ""
    async with aiohttp.ClientSession() as session:
        while True:
            params = {"limit": str(page), **({"continue": token} if token else {})}
            async with session.get(url + COLLECTION, params=params) as reply:
                body = orjson.loads(await reply.read())
            total += sum(len(orjson.dumps(item)) for item in body["items"])
            token = body.get("metadata", {}).get("continue") or ""
            if not token:
                return total


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class GcPauses:
    """Garbage-collection passes (``gc.callbacks``): the longest per generation, and the
    generation-2 passes (count, longest) per phase of the run."""

    def __init__(self) -> None:
        self.worst: dict[int, float] = {}
        self.phase = "sync"
        self.full: dict[str, list[float]] = {}
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            generation = int(info["generation"])
            pause = time.perf_counter() - self._began
            self.worst[generation] = max(self.worst.get(generation, 0.0), pause)
            if generation == 2:
                self.full.setdefault(self.phase, []).append(pause)


def census(top: int = 6) -> dict[str, Any]:
    """Objects the garbage collector tracks (what a generation-2 pass walks), by type."""
    counts: dict[str, int] = {}
    tracked = gc.get_objects()
    for obj in tracked:
        name = type(obj).__name__
        counts[name] = counts.get(name, 0) + 1
    frozen = gc.get_freeze_count()
    largest = sorted(counts.items(), key=lambda item: -item[1])[:top]
    return {"tracked": len(tracked), "frozen": frozen, "types": dict(largest)}


class StallMonitor:
    """The longest lag of a 5 ms sleep on this event loop, per named phase."""

    def __init__(self) -> None:
        self.phase = "sync"
        self.worst: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.005)
            lag = loop.time() - before - 0.005
            self.worst[self.phase] = max(self.worst.get(self.phase, 0.0), lag)

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def child(kubeconfig: str, objects: int, gc_mode: str) -> dict[str, Any]:
    """Runs in the measured process: a Controller over the ConfigMaps; one JSON line."""
    import kr8s.asyncio
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller
    from reconcile_kit.runtime import reflector as reflector_module
    from reconcile_kit.runtime.config import ControllerConfig
    from reconcile_kit.runtime.sources import ReflectorPool

    if gc_mode != "default":
        reflector_module.GC_FREEZE = GC_MODES[gc_mode]
    api = await kr8s.asyncio.api(kubeconfig=kubeconfig)
    seen: set[str] = set()
    converged = asyncio.Event()

    async def reconcile(obj: Any, ctx: Any) -> None:
        seen.add(obj.name)
        if len(seen) >= objects:
            converged.set()

    gc.collect()
    rss0 = rss_bytes()
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    monitor = StallMonitor()
    controller = Controller(
        ConfigMap,
        api=api,
        namespace="default",
        concurrency=10,
        config=ControllerConfig(pool=ReflectorPool()),
    )
    started = time.perf_counter()
    monitor.start()
    runner = asyncio.create_task(controller.run(reconcile))
    result: dict[str, Any] = {}
    try:
        while controller.reflector is None:
            await asyncio.sleep(0.01)
        await asyncio.wait_for(controller.reflector.wait_synced(), 600)
        result["synced_seconds"] = time.perf_counter() - started
        await asyncio.wait_for(converged.wait(), 600)
        result["converged_seconds"] = time.perf_counter() - started
        monitor.phase = pauses.phase = "after"
        await asyncio.sleep(AFTER_SECONDS)
        monitor.phase = pauses.phase = "end"  # what follows stalls the loop on purpose
        gc.collect()
        result["rss_growth"] = rss_bytes() - rss0
        result["census_converged"] = census()
        result["cached"] = len(controller.reflector.store.list())
    finally:
        await monitor.stop()
        await controller.shutdown(10)
        await runner
    result["stall_sync_ms"] = 1000 * monitor.worst.get("sync", 0.0)
    result["stall_after_ms"] = 1000 * monitor.worst.get("after", 0.0)
    gc.callbacks.remove(pauses)
    result["gc_pause_ms"] = {str(g): round(1000 * p, 1) for g, p in sorted(pauses.worst.items())}
    result["gc_full"] = {
        phase: {"count": len(passes), "max_ms": round(1000 * max(passes), 1)}
        for phase, passes in pauses.full.items()
    }
    return result


def run_child(kubeconfig: Path, objects: int, gc_mode: str) -> dict[str, Any]:
    """One measured controller process over the filled server."""
    command = [sys.executable, __file__, "--child", "--kubeconfig", str(kubeconfig)]
    command += ["--objects", str(objects), "--gc", gc_mode]
    output = subprocess.run(command, capture_output=True, check=True, timeout=1800)
    data: dict[str, Any] = json.loads(output.stdout.decode().strip().splitlines()[-1])
    data["gc"] = gc_mode
    return data


async def measure(
    objects: int, modes: list[str] | None = None, repeats: int = 1
) -> list[dict[str, Any]]:
    """Fill one server, then run the controller ``repeats`` times per garbage-collector
    mode, the modes in alternation (A/B interleaved); one result per run."""
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rk-scale-") as tmp:
        server = ServerProcess(Path(tmp), None)
        await server.start()
        try:
            began = time.perf_counter()
            await populate(server.url, objects)
            filled = time.perf_counter() - began
            json_bytes = await collection_json_bytes(server.url)
            for _ in range(repeats):
                for mode in modes or ["default"]:
                    data = run_child(server.kubeconfig, objects, mode)
                    data["load"] = os.getloadavg()
                    runs.append(data)
        finally:
            server.stop()
    for data in runs:
        data.update(objects=objects, json_bytes=json_bytes, fill_seconds=filled)
        data["rss_per_object"] = data["rss_growth"] / objects
        data["rss_per_json"] = data["rss_growth"] / json_bytes
    return runs


def report(runs: list[dict[str, Any]]) -> None:
    """Each run's figures, then per mode the medians and the targets' PASS/MISS."""
    first = runs[0]
    print(
        f"{first['objects']} ConfigMaps ({first['json_bytes'] / first['objects']:.0f} bytes "
        f"of JSON each; filled in {first['fill_seconds']:.1f} s)"
    )
    for data in runs:
        load = ", ".join(f"{x:.2f}" for x in data["load"])
        print(
            f"[{data['gc']}] synced {data['synced_seconds']:.2f} s, all reconciled "
            f"{data['converged_seconds']:.2f} s, stall during/after {data['stall_sync_ms']:.1f}"
            f" / {data['stall_after_ms']:.1f} ms, RSS {data['rss_per_json']:.2f}x JSON; "
            f"gc passes per generation, longest ms {data['gc_pause_ms']}; generation-2 "
            f"{data['gc_full']}; load {load}"
        )
        print(f"    tracked by the collector at the end: {data['census_converged']}")
    modes = list(dict.fromkeys(data["gc"] for data in runs))
    for mode in modes:
        mine = [data for data in runs if data["gc"] == mode]
        print(f"gc mode {mode!r}: medians of {len(mine)} run(s)")
        synced = statistics.median(data["synced_seconds"] for data in mine)
        print(f"  initial sync (reflector synced): {synced:.2f} s")
        for label, key, target in TARGETS:
            value = statistics.median(data[key] for data in mine)
            verdict = "PASS" if value <= target else "MISS"
            print(f"  {label}: {value:.1f} (target <= {target:g}): {verdict}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--gc",
        default="default",
        help="comma-separated garbage-collector modes, run in alternation: default (the "
        "library's), off (no freezing: the library before issue 31), synced (freeze once "
        "synced), chunk (freeze while storing the LIST, too)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(asyncio.run(child(args.kubeconfig, args.objects, args.gc))))
        return
    report(asyncio.run(measure(args.objects, args.gc.split(","), args.repeats)))


if __name__ == "__main__":
    main()
