"""One manager, many clusters (issue 32): a uniform controller over N embedded clusters of
M ConfigMaps each, in one process.

The N embedded API servers run in one process of their own (``--serve``; filled through
the server's own write path, not HTTP, to keep the set-up short), so that what is measured
here is the controller process alone. A MultiClusterManager (StaticProvider) runs one
ConfigMap controller per cluster whose reconcile only counts; then:

- sync: seconds from ``run()`` to every cluster's caches synced, and to the last object
  reconciled once;
- memory: RSS growth of the controller process per object (before the manager started,
  after everything was reconciled);
- CPU per reconcile: the process's CPU seconds from start to converged over the objects
  reconciled, against the same controller in a plain single-cluster Manager over one
  cluster holding M objects (the baseline);
- idle: requests each cluster's server received over ``--idle`` seconds after convergence
  (no change made), per cluster per minute, and the controller process's CPU over them
  (percent of one core).

Targets (none in the issue; ours): sync within 60 s, CPU per reconcile within 2x the
single-cluster baseline, idle requests per cluster per minute <= 1 (a watch re-opened
every 300 s per kind: 0.2), idle CPU <= 1% of a core.

    python benchmarks/multicluster.py [--clusters 50] [--objects 1000] [--idle 60] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SYNC_TARGET = 60.0
CPU_RATIO_TARGET = 2.0
IDLE_TARGET = 1.0
IDLE_CPU_TARGET = 1.0


def configmap(i: int) -> dict[str, Any]:
    """A ConfigMap of about 0.5 KB of JSON (as benchmarks/scale.py's)."""
    data = {f"key{j}": f"value-{i:06d}-{j}-" + "x" * 40 for j in range(6)}
    return {"metadata": {"name": f"cm-{i:06d}", "labels": {"bench": "mc"}}, "data": data}


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


# --- the servers' process --------------------------------------------------------------------


async def serve(clusters: int, objects: int) -> None:
    """Start ``clusters`` embedded servers with ``objects`` ConfigMaps each; print their
    kubeconfigs as one JSON line; then answer each stdin line with the request counts."""
    from reconcile_kit.testing import APIServer
    from reconcile_kit.testing.apiserver.cluster import WriteOptions

    servers = []
    for _ in range(clusters):
        server = await APIServer(garbage_collection=False, bookmark_interval=60.0).start()
        rt = server.cluster.registry.lookup("", "v1", "configmaps")
        assert rt is not None
        for i in range(objects):
            server.cluster.create(rt, "default", configmap(i), WriteOptions())
        servers.append(server)
    print(json.dumps([s.kubeconfig for s in servers]), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.readline():
        counts = [len(s.requests) for s in servers]
        print(json.dumps(counts), flush=True)
    for server in servers:
        await server.stop()


class Servers:
    """The servers' process, driven over its stdin and stdout."""

    def __init__(self, clusters: int, objects: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(clusters), str(objects)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.kubeconfigs: list[str] = json.loads(self.proc.stdout.readline())

    def requests(self) -> list[int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        counts: list[int] = json.loads(self.proc.stdout.readline())
        return counts

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


# --- the controller process ------------------------------------------------------------------


async def close_session(api: Any) -> None:
    from reconcile_kit.client.transport import close_session as close

    await close(api)


async def run_fleet(
    kubeconfigs: list[str], objects: int, idle: float, servers: Servers
) -> dict[str, float]:
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller, Manager
    from reconcile_kit.multicluster import Kubeconfig, MultiClusterManager, StaticProvider

    total = len(kubeconfigs) * objects
    reconciled = 0
    done = asyncio.Event()

    async def reconcile(cm: Any, ctx: Any) -> None:
        nonlocal reconciled
        reconciled += 1
        if reconciled >= total:
            done.set()

    provider = StaticProvider({f"c{i}": Kubeconfig(k) for i, k in enumerate(kubeconfigs)})
    # the management cluster: the first server (its manager runs no controller of its own)
    import kr8s.asyncio

    management = await kr8s.asyncio.Api(kubeconfig=kubeconfigs[0], bypass_factory=True)
    mcm = MultiClusterManager(provider, Manager(management, handle_signals=False))
    mcm.add(Controller(ConfigMap, namespace="default", concurrency=4), reconcile)
    gc.collect()
    rss0, cpu0, t0 = rss_bytes(), time.process_time(), time.monotonic()
    task = asyncio.create_task(mcm.run())
    synced_at = 0.0
    async with asyncio.timeout(600):
        while not synced_at:
            controllers = [c for name in mcm.engaged() for c in mcm.controllers_of(name)]
            if len(controllers) == len(kubeconfigs) and all(c.synced for c in controllers):
                synced_at = time.monotonic() - t0
            else:
                await asyncio.sleep(0.05)
        await done.wait()
    converged = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    gc.collect()
    rss = rss_bytes() - rss0
    before = servers.requests()
    idle_cpu0 = time.process_time()
    await asyncio.sleep(idle)
    idle_cpu = time.process_time() - idle_cpu0
    after = servers.requests()
    per_cluster = [(b - a) * 60.0 / idle for a, b in zip(before, after, strict=True)]
    mcm.stop()
    await asyncio.wait_for(task, 60)
    await close_session(management)
    return {
        "synced_seconds": synced_at,
        "converged_seconds": converged,
        "rss_per_object": rss / total,
        "cpu_per_reconcile_us": cpu / reconciled * 1e6,
        "idle_requests_per_cluster_minute": max(per_cluster),
        "idle_requests_per_cluster_minute_mean": statistics.mean(per_cluster),
        "idle_cpu_percent": idle_cpu / idle * 100.0,
    }


async def run_single(kubeconfig: str, objects: int) -> dict[str, float]:
    import kr8s.asyncio
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller, Manager

    reconciled = 0
    done = asyncio.Event()

    async def reconcile(cm: Any, ctx: Any) -> None:
        nonlocal reconciled
        reconciled += 1
        if reconciled >= objects:
            done.set()

    api = await kr8s.asyncio.Api(kubeconfig=kubeconfig, bypass_factory=True)
    manager = Manager(api, handle_signals=False)
    manager.add(Controller(ConfigMap, namespace="default", concurrency=4), reconcile)
    cpu0, t0 = time.process_time(), time.monotonic()
    task = asyncio.create_task(manager.run())
    async with asyncio.timeout(600):
        await done.wait()
    cpu = time.process_time() - cpu0
    converged = time.monotonic() - t0
    manager.stop()
    await asyncio.wait_for(task, 60)
    await close_session(api)
    return {"converged_seconds": converged, "cpu_per_reconcile_us": cpu / reconciled * 1e6}


def child(mode: str, payload: str) -> None:
    """One measurement in a fresh interpreter (its RSS and CPU its own)."""
    logging.basicConfig(level=logging.WARNING)
    args = json.loads(payload)
    if mode == "single":
        result = asyncio.run(run_single(args["kubeconfig"], args["objects"]))
    else:
        servers = _Attached()
        result = asyncio.run(
            run_fleet(args["kubeconfigs"], args["objects"], args["idle"], servers)  # type: ignore[arg-type]
        )
    print(json.dumps(result), flush=True)


class _Attached:
    """The servers' process as seen from a measuring child: request counts through the
    parent (which owns the servers' pipes), over this child's stdin/stdout."""

    def requests(self) -> list[int]:
        print("COUNT", flush=True, file=sys.stderr)
        line = sys.stdin.readline()
        counts: list[int] = json.loads(line)
        return counts


def measure(mode: str, payload: dict[str, Any], servers: Servers) -> dict[str, float]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", mode, json.dumps(payload)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    for line in proc.stderr:
        if line.strip() == "COUNT":
            proc.stdin.write(json.dumps(servers.requests()) + "\n")
            proc.stdin.flush()
        elif line.strip():
            sys.stderr.write(line)
    out = proc.stdout.read()
    if proc.wait(60) != 0:
        raise RuntimeError(f"{mode} measurement failed")
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=50)
    parser.add_argument("--objects", type=int, default=1000, help="ConfigMaps per cluster")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle counting")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--serve", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(*args.serve))
        return
    if args.child:
        child(*args.child)
        return
    started = time.monotonic()
    servers = Servers(args.clusters, args.objects)
    print(
        f"{args.clusters} embedded clusters x {args.objects} ConfigMaps ready in "
        f"{time.monotonic() - started:.1f} s (one server process)"
    )
    try:
        fleet = [
            measure(
                "fleet",
                {"kubeconfigs": servers.kubeconfigs, "objects": args.objects, "idle": args.idle},
                servers,
            )
            for _ in range(args.repeats)
        ]
        single = [
            measure(
                "single", {"kubeconfig": servers.kubeconfigs[0], "objects": args.objects}, servers
            )
            for _ in range(args.repeats)
        ]
    finally:
        servers.close()

    def median(results: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in results)

    ratio = median(fleet, "cpu_per_reconcile_us") / median(single, "cpu_per_reconcile_us")
    rows = [
        ("caches synced in every cluster, s", median(fleet, "synced_seconds"), None),
        ("every object reconciled once, s", median(fleet, "converged_seconds"), SYNC_TARGET),
        ("RSS growth per object, bytes", median(fleet, "rss_per_object"), None),
        ("CPU per reconcile, fleet, us", median(fleet, "cpu_per_reconcile_us"), None),
        ("CPU per reconcile, one cluster, us", median(single, "cpu_per_reconcile_us"), None),
        ("CPU per reconcile, fleet / one cluster", ratio, CPU_RATIO_TARGET),
        (
            "idle requests per cluster per minute (max)",
            median(fleet, "idle_requests_per_cluster_minute"),
            IDLE_TARGET,
        ),
        ("idle CPU of the manager process, %", median(fleet, "idle_cpu_percent"), IDLE_CPU_TARGET),
    ]
    print(f"medians of {args.repeats} runs ({args.clusters} x {args.objects}, idle {args.idle} s):")
    for label, value, target in rows:
        verdict = "" if target is None else ("  PASS" if value <= target else "  MISS")
        bound = "" if target is None else f" (target <= {target})"
        print(f"  {label:<45} {value:>12.2f}{bound}{verdict}")


if __name__ == "__main__":
    main()
