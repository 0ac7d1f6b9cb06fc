"""The scale scenario of issue 19: 100,000 small objects in one controller process.

The embedded API server runs in a process of its own (``reconcile-kit apiserver``) and is
filled with N ConfigMaps of about 0.5 KB through HTTP; then a child process runs a
Controller over them (a reconcile that only counts) and reports:

- sync: seconds from the controller's start to its reflector's initial sync, and to the
  last object reconciled once;
- stalls: the longest event-loop stall (the lag of a 5 ms sleep) during the sync (start to
  all reconciled) and in the 10 s after;
- memory: RSS growth per object from before the controller started to after it converged,
  and against the objects' JSON size.

Targets (issue 19): sync within 10 s, stalls <= 250 ms during it and <= 100 ms after;
RSS growth <= 3x the objects' JSON (issue 19 sets it at 50,000 objects of 0.5 KB:
``--objects 50000``).

    python benchmarks/scale.py [--objects 100000]   (also: python benchmarks/run.py --scale)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
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
AFTER_SECONDS = 10.0
TARGETS = (
    ("sync seconds (to all reconciled)", "converged_seconds", 10.0),
    ("stall max during sync, ms", "stall_sync_ms", 250.0),
    ("stall max after sync, ms", "stall_after_ms", 100.0),
    ("RSS growth / JSON (goal at 50,000 objects)", "rss_per_json", 3.0),
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


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class GcPauses:
    """The longest garbage-collection pass, per generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.worst: dict[int, float] = {}
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            generation = int(info["generation"])
            pause = time.perf_counter() - self._began
            self.worst[generation] = max(self.worst.get(generation, 0.0), pause)


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


async def child(kubeconfig: str, objects: int) -> dict[str, Any]:
    """Runs in the measured process: a Controller over the ConfigMaps; one JSON line."""
    import kr8s.asyncio
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller
    from reconcile_kit.runtime.config import ControllerConfig
    from reconcile_kit.runtime.sources import ReflectorPool

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
        monitor.phase = "after"
        await asyncio.sleep(AFTER_SECONDS)
        gc.collect()
        result["rss_growth"] = rss_bytes() - rss0
        result["cached"] = len(controller.reflector.store.list())
    finally:
        await monitor.stop()
        await controller.shutdown(10)
        await runner
    result["stall_sync_ms"] = 1000 * monitor.worst.get("sync", 0.0)
    result["stall_after_ms"] = 1000 * monitor.worst.get("after", 0.0)
    gc.callbacks.remove(pauses)
    result["gc_pause_ms"] = {str(g): round(1000 * p, 1) for g, p in sorted(pauses.worst.items())}
    return result


async def measure(objects: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rk-scale-") as tmp:
        server = ServerProcess(Path(tmp), None)
        await server.start()
        try:
            began = time.perf_counter()
            await populate(server.url, objects)
            filled = time.perf_counter() - began
            async with (
                aiohttp.ClientSession() as session,
                session.get(server.url + COLLECTION) as reply,
            ):
                items = orjson.loads(await reply.read())["items"]
            json_bytes = sum(len(orjson.dumps(item)) for item in items)
            output = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    "--kubeconfig",
                    str(server.kubeconfig),
                    "--objects",
                    str(objects),
                ],
                capture_output=True,
                check=True,
                timeout=1800,
            )
        finally:
            server.stop()
    data: dict[str, Any] = json.loads(output.stdout.decode().strip().splitlines()[-1])
    data.update(objects=objects, json_bytes=json_bytes, fill_seconds=filled)
    data["rss_per_object"] = data["rss_growth"] / objects
    data["rss_per_json"] = data["rss_growth"] / json_bytes
    return data


def report(data: dict[str, Any]) -> None:
    print(
        f"{data['objects']} ConfigMaps ({data['json_bytes'] / data['objects']:.0f} bytes of "
        f"JSON each; filled in {data['fill_seconds']:.1f} s)"
    )
    print(f"initial sync (reflector synced): {data['synced_seconds']:.2f} s")
    print(
        f"RSS growth: {data['rss_per_object']:.0f} bytes/object, "
        f"{data['rss_per_json']:.2f}x the JSON ({data['cached']} cached)"
    )
    print(f"longest garbage-collection pass per generation, ms: {data['gc_pause_ms']}")
    for label, key, target in TARGETS:
        value = data[key]
        verdict = "PASS" if value <= target else "MISS"
        print(f"{label}: {value:.1f} (target <= {target:g}): {verdict}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(asyncio.run(child(args.kubeconfig, args.objects))))
        return
    report(asyncio.run(measure(args.objects)))


if __name__ == "__main__":
    main()
