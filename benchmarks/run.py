"""reconcile_kit against the raw client (the ceiling), controller-runtime (the Go reference)
and kopf (the Python peer).

Scenarios (issue 8), each repeated against a fresh embedded API server:

1. converge: N custom resources exist; a Controller writes a Ready condition through
   PatchHelper; time until every object is Ready (seen in the server's store), reconciles/s,
   API requests per reconcile.
2. ceiling: a plain kr8s loop sending the same status merge PATCHes (no GET), same
   concurrency. Also run with kr8s over reconcile_kit's aiohttp transport (which the
   controller uses by default), to show the toolkit's own overhead on equal terms.
   ceiling-raw (issue 31): the controller's requests on one plain aiohttp session (paged
   LIST, WATCH with every line decoded, the same PATCHes): its CPU per object is the floor
   the toolkit's CPU per reconcile is compared with. ceiling-raw-uvloop: the same loop on
   uvloop, the floor of converge-uvloop (``reconcile-kit run --loop auto``'s choice when
   the [uvloop] extra is installed).
3. kopf: an equivalent kopf handler (subprocess) writing the same status; its CPU per
   object is counted from its launch (kopf's imports included).
   controller-runtime: the same controller in Go (benchmarks/controller_runtime.py; built
   with the machine's Go toolchain, skipped without one). CPU per reconcile and RSS growth
   per object (and its ratio to the objects' JSON) are measured for it and for converge.
   Every contender of 1-3 reports its Ready latency p50/p99: from the client's first
   request (else its launch) to each object's first Ready.
4. coalesce: 100 rapid updates to one object; how many reconciles run.
5. latency: write of an update -> start of its reconcile, p50/p99, idle and under load.
   latency-processes (issue 31): the same for reconcile_kit and typed controller-runtime
   alike, each in its own process, both watching the same Widgets at once so that each
   change is timed for both (benchmarks/latency_processes.py); again with reconcile_kit
   on uvloop.
6. memory: RSS growth of a reflector cache per object (subprocess, server in another process);
   memory-controller: the same for a controller that reconciled every object once (a status
   patch each through PatchHelper) and has converged: cache, work queue, read-your-writes.
7. idle: CPU of a controller process with N synced objects and no changes.
8. no-op: a second controller over the converged objects issues zero writes.

Throughput (1-3) is taken from the client's first request to the last Ready object: the
controller's start (listing, cache sync) counts, the interpreter's start-up and imports do
not. Also kept: the window from the first to the last Ready object (start excluded) and
the wall time from the process launch.
In 1-3 the client (controller, loop or kopf) runs in its own process and the server in
this one; in 4 and 5 both run here, on one event loop.

Every scenario runs on a fresh embedded API server and, when scripts/build-control-plane
has built it, on the real control plane (kube-apiserver and etcd; see targets.py for what
differs in counting there).

Usage: python benchmarks/run.py [--objects 1000] [--repeats 3] [--quick]
                                [--only SCENARIO[,SCENARIO...]] [--backend embedded|real|both]
Results: a table per backend on stdout and benchmarks/results/run.json.
Benchmark-only requirements (not dependencies of reconcile_kit):
    pip install kopf==1.38.0 pyinstrument==5.1.3
Without kopf the kopf scenario is skipped.
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
import textwrap
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import controller_runtime
import latency_processes
from apiserver import (
    ServerProcess,
    machine_info,
    percentile,
    process_cpu_seconds,
    version_of,
)
from targets import (
    COLLECTION,
    GROUP,
    KIND,
    NAMESPACE,
    PLURAL,
    VERSION,
    Connection,
    EmbeddedTarget,
    RealTarget,
    name_of,
    patch_spec,
    populate,
)

Target = EmbeddedTarget | RealTarget

MERGE = "application/merge-patch+json"
RESULTS = Path(__file__).resolve().parent / "results" / "run.json"
SCENARIOS = (
    "converge",
    "converge-uvloop",
    "ceiling",
    "ceiling-aiohttp",
    "ceiling-raw",
    "ceiling-raw-uvloop",
    "kopf",
    "controller-runtime",
    "controller-runtime-typed",
    "coalesce",
    "latency",
    "latency-processes",
    "memory",
    "memory-controller",
    "idle",
    "noop",
)
KOPF_PIN = "kopf==1.38.0"  # benchmarks only, never a dependency of the package
UVLOOP_CR = "reconcile_kit on uvloop/controller-runtime typed"
LOAD_RATE = 100.0  # updates/s of other objects during "latency under load"
LOAD_WRITERS = 4
CONDITION = {"type": "Ready", "status": "True", "reason": "Reconciled", "message": "bench"}


def summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": float("nan"), "min": float("nan"), "max": float("nan")}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


# ---------------------------------------------------------------------------------------
# Server setup
# ---------------------------------------------------------------------------------------


def converge_timeout(objects: int) -> float:
    return 60.0 + objects / 20


# ---------------------------------------------------------------------------------------
# 1 converge, 8 no-op
# ---------------------------------------------------------------------------------------


async def ready_reconcile(obj: Any, ctx: Any) -> None:
    from reconcile_kit import PatchHelper, set_condition

    async with PatchHelper(obj):
        set_condition(obj, "Ready", "True", "Reconciled", "bench")


class Counted:
    """A reconcile that runs ``inner`` (if any), then records the object's name; ``all_seen``
    is set once ``objects`` distinct names were reconciled."""

    def __init__(
        self, objects: int, inner: Callable[[Any, Any], Awaitable[None]] | None = None
    ) -> None:
        self.objects = objects
        self.inner = inner
        self.seen: set[str] = set()
        self.all_seen = asyncio.Event()

    async def reconcile(self, obj: Any, ctx: Any) -> None:
        if self.inner is not None:
            await self.inner(obj, ctx)
        self.seen.add(ctx.key.name)  # as the Go contender reads req.Name
        if len(self.seen) >= self.objects:
            self.all_seen.set()

    async def wait(self) -> None:
        await asyncio.wait_for(self.all_seen.wait(), converge_timeout(self.objects))


async def run_controller_until(
    api: Any,
    reconcile: Callable[[Any, Any], Awaitable[Any]],
    done: Callable[[], Awaitable[None]],
    concurrency: int,
) -> Any:
    from reconcile_kit import Controller, generation_changed
    from reconcile_kit.runtime.config import ControllerConfig
    from reconcile_kit.runtime.sources import ReflectorPool

    controller = Controller(
        f"{KIND}.{GROUP}",
        api=api,
        namespace=NAMESPACE,
        concurrency=concurrency,
        predicates=[generation_changed],
        config=ControllerConfig(pool=ReflectorPool()),
    )
    runner = asyncio.create_task(controller.run(reconcile))
    try:
        await done()
    finally:
        await controller.shutdown(10)
        await runner
    return controller


def child_result(stdout: bytes) -> dict[str, Any]:
    """The JSON line a child printed (py-spy, when profiling, prints after it)."""
    lines = [line for line in stdout.decode().splitlines() if line.startswith("{")]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


async def spawn_child(
    mode: str, kubeconfig: Path, objects: int, concurrency: int, seconds: float = 0.0
) -> asyncio.subprocess.Process:
    # $RECONCILE_KIT_BENCH_PROFILE=DIR: each child runs under py-spy (collapsed stacks in DIR)
    profile = os.environ.get("RECONCILE_KIT_BENCH_PROFILE")
    spy = []
    if profile:
        output = str(Path(profile) / f"{mode}-{time.time_ns()}.txt")
        spy = ["py-spy", "record", "--rate", "250", "--format", "raw", "--nonblocking"]
        spy += ["-o", output, "--"]
    return await asyncio.create_subprocess_exec(
        *spy,
        sys.executable,
        __file__,
        "--child",
        mode,
        "--kubeconfig",
        str(kubeconfig),
        "--objects",
        str(objects),
        "--concurrency",
        str(concurrency),
        "--seconds",
        str(seconds),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def client_process(
    target: Target, mode: str, objects: int, concurrency: int
) -> dict[str, Any]:
    """1 (converge) or 2 (ceiling): the client in a child process."""
    conn = await target.fresh(objects)
    try:
        watch = await target.ready_watch(objects)
        started = time.perf_counter()
        proc = await spawn_child(mode, conn.kubeconfig, objects, concurrency)
        try:
            await watch.wait(converge_timeout(objects))
        except TimeoutError:
            proc.kill()
            raise
        requests = await target.requests()
        json_bytes = await controller_runtime.json_bytes(conn)
        out, err = await asyncio.wait_for(proc.communicate(), converge_timeout(objects))
        if proc.returncode != 0:
            raise RuntimeError(f"{mode} child failed:\n{err.decode()[-3000:]}")
        data: dict[str, Any] = child_result(out)
    finally:
        await target.release()
    reconciles = int(data.pop("reconciles", objects))
    if "cpu_seconds" in data:
        data["cpu_ms_per_reconcile"] = 1000 * data["cpu_seconds"] / objects
        data["json_bytes"] = json_bytes
    return {
        **watch.timings(objects, started),
        "reconciles": reconciles,
        "requests": requests,
        "requests_per_reconcile": requests / max(reconciles, 1),
        **data,
    }


async def noop_run(target: Target, objects: int, concurrency: int) -> dict[str, float]:
    """8: after converging, a second controller over the Ready objects writes nothing."""
    await target.fresh(objects)
    try:
        api = await target.api()
        watch = await target.ready_watch(objects)
        await run_controller_until(
            api, ready_reconcile, lambda: watch.wait(converge_timeout(objects)), concurrency
        )
        await target.mark()
        noop = Counted(objects, ready_reconcile)
        await run_controller_until(api, noop.reconcile, noop.wait, concurrency)
        writes = await target.writes()
    finally:
        await target.release()
    return {"noop_reconciles": len(noop.seen), "noop_writes": writes}


async def child_converge(api: Any, objects: int, concurrency: int) -> dict[str, Any]:
    """1: the Controller; also its CPU (after imports, to the last reconcile) and RSS."""
    import reconcile_kit.runtime.sources  # noqa: F401  imports are start-up, not reconciles
    from reconcile_kit import Controller, PatchHelper, generation_changed  # noqa: F401

    counted = Counted(objects, ready_reconcile)
    collector = CollectorTimes()
    cpu0, rss0 = time.process_time(), rss_bytes()
    measured: dict[str, Any] = {}

    async def done() -> None:
        await counted.wait()
        measured.update(cpu_seconds=time.process_time() - cpu0, rss_converged=rss_bytes())
        measured.update(collector.stop())

    controller = await run_controller_until(api, counted.reconcile, done, concurrency)
    return {"reconciles": controller.stats.reconciles, "rss_started": rss0, **measured}


class CollectorTimes:
    """Time spent in the garbage collector (``gc.callbacks``), per generation: seconds
    and the number of collections, from construction to :meth:`stop`."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.counts = [0, 0, 0]
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds[info["generation"]] += time.perf_counter() - self._start
            self.counts[info["generation"]] += 1

    def stop(self) -> dict[str, Any]:
        gc.callbacks.remove(self._callback)
        return {
            "gc_seconds": sum(self.seconds),
            "gc_seconds_by_generation": self.seconds,
            "gc_collections": self.counts,
        }


async def child_ceiling(api: Any, objects: int, concurrency: int) -> dict[str, Any]:
    """2: the same status merge PATCHes with kr8s's raw call, no GET."""
    names = [name_of(i) for i in range(objects)]

    async def worker() -> None:
        while names:
            name = names.pop()
            condition = {
                **CONDITION,
                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            async with api.call_api(
                "PATCH",
                version=f"{GROUP}/{VERSION}",
                base="/apis",
                namespace=NAMESPACE,
                url=f"{PLURAL}/{name}/status",
                content=orjson.dumps({"status": {"conditions": [condition]}}),
                headers={"Content-Type": MERGE},
            ) as response:
                response.raise_for_status()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {"reconciles": objects}


async def child_raw(kubeconfig: str, objects: int, concurrency: int) -> dict[str, Any]:
    """2, raw: the controller's requests on one plain aiohttp session, no toolkit and no
    kr8s: the Widgets LISTed in pages of 500 and WATCHed from there (every line decoded),
    the same status merge PATCH sent for each listed Widget (answer read whole); CPU from
    the first request until the watch delivered the change of every Widget."""
    conn = Connection.from_kubeconfig(kubeconfig)
    headers = {"Content-Type": MERGE}
    async with conn.session() as session:
        collector = CollectorTimes()
        cpu0 = time.process_time()
        names, version = await _raw_list(session, conn.url)
        changed: set[str] = set()
        everything = asyncio.Event()

        async def watch() -> None:
            url = f"{conn.url}{COLLECTION}?watch=1&allowWatchBookmarks=true"
            async with session.get(f"{url}&resourceVersion={version}") as response:
                async for line in response.content:
                    event = orjson.loads(line)
                    if event["type"] == "MODIFIED":
                        changed.add(event["object"]["metadata"]["name"])
                        if len(changed) >= objects:
                            everything.set()
                            return

        async def worker() -> None:
            while names:
                url = f"{conn.url}{COLLECTION}/{names.pop()}/status"
                condition = {**CONDITION, "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
                body = orjson.dumps({"status": {"conditions": [condition]}})
                async with session.patch(url, data=body, headers=headers) as response:
                    await response.read()
                    response.raise_for_status()

        watching = asyncio.create_task(watch())
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        await asyncio.wait_for(everything.wait(), converge_timeout(objects))
        cpu = time.process_time() - cpu0
        watching.cancel()
    return {"reconciles": objects, "cpu_seconds": cpu, **collector.stop()}


async def _raw_list(session: Any, url: str) -> tuple[list[str], str]:
    """The Widgets' names and the list's resourceVersion, LISTed in pages of 500."""
    names: list[str] = []
    token = ""
    while True:
        async with session.get(f"{url}{COLLECTION}?limit=500&continue={token}") as response:
            listed = orjson.loads(await response.read())
        names += [item["metadata"]["name"] for item in listed["items"]]
        token = listed["metadata"].get("continue") or ""
        if not token:
            return names, listed["metadata"]["resourceVersion"]


async def probe_reconcile(obj: Any, ctx: Any) -> None:
    """ready_reconcile, after printing the probe line of benchmarks/latency_processes.py."""
    seq = obj.raw["spec"].get("seq", 0)
    sys.stdout.write(f"reconcile {obj.name} {seq} {time.time_ns()}\n")
    sys.stdout.flush()
    await ready_reconcile(obj, ctx)


# ---------------------------------------------------------------------------------------
# 3 kopf
# ---------------------------------------------------------------------------------------

KOPF_HANDLER = textwrap.dedent(f"""
    import datetime
    import kopf

    @kopf.on.startup()
    def configure(settings, **_):
        settings.posting.enabled = False
        settings.persistence.progress_storage = kopf.AnnotationsProgressStorage()
        settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage()

    # kopf's default login goes through the kubernetes client, whose kubeconfig token kopf
    # 1.38 does not find with kubernetes 37 (it connects anonymously): read the file itself
    @kopf.on.login()
    def login(**kwargs):
        return kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.resume("{GROUP}", "{VERSION}", "{PLURAL}")
    @kopf.on.create("{GROUP}", "{VERSION}", "{PLURAL}")
    def ready(patch, **_):
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        patch.status["conditions"] = [dict({CONDITION!r}, lastTransitionTime=now)]
""")


async def kopf_run(
    target: Target, objects: int, concurrency: int, workdir: Path
) -> dict[str, float]:
    conn = await target.fresh(objects)
    handler = workdir / "kopf_handler.py"
    handler.write_text(KOPF_HANDLER)  # kopf default: one worker per object, no limit
    log_path = workdir / "kopf.log"
    proc: subprocess.Popen[bytes] | None = None
    try:
        watch = await target.ready_watch(objects)
        started = time.perf_counter()
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kopf",
                    "run",
                    "--standalone",
                    "--quiet",
                    f"--namespace={NAMESPACE}",
                    str(handler),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "KUBECONFIG": str(conn.kubeconfig)},
            )
        try:
            await watch.wait(converge_timeout(objects) * 4)
        except TimeoutError:
            raise RuntimeError(
                f"kopf: {len(watch.ready)}/{objects} Ready; log tail:\n"
                f"{log_path.read_text()[-3000:]}"
            ) from None
        cpu = controller_runtime.cpu_seconds(proc.pid)  # from launch: imports included
        rss = controller_runtime.rss_bytes(proc.pid)
        requests = await target.requests()
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        await target.release()
    return {
        **watch.timings(objects, started),
        "requests": requests,
        "requests_per_object": requests / objects,
        "cpu_ms_per_object_from_launch": 1000 * cpu / objects,
        "rss_converged": rss,
    }


# ---------------------------------------------------------------------------------------
# 4 coalescing, 5 latency
# ---------------------------------------------------------------------------------------


class Probe:
    """A controller whose reconcile records when it starts, per object and spec.seq."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, int, float]] = []
        self.changed = asyncio.Condition()
        self.work: dict[str, float] = {}  # seconds a reconcile of that object "works"

    async def reconcile(self, obj: Any, ctx: Any) -> None:
        now = time.perf_counter()
        self.starts.append((obj.name, int(obj.raw["spec"].get("seq", 0)), now))
        async with self.changed:
            self.changed.notify_all()
        if obj.name in self.work:
            await asyncio.sleep(self.work[obj.name])
        await ready_reconcile(obj, ctx)

    async def wait_for(self, name: str, seq: int, timeout: float = 10.0) -> float:
        async def seen() -> float:
            async with self.changed:
                while True:
                    for n, s, t in reversed(self.starts):
                        if n == name and s >= seq:
                            return t
                    await self.changed.wait()

        return await asyncio.wait_for(seen(), timeout)


async def coalesce_and_latency(
    target: Target, objects: int, concurrency: int, updates: int
) -> dict[str, float]:
    conn = await target.fresh(objects)
    probe = Probe()
    result: dict[str, float] = {}
    try:
        api = await target.api()
        watch = await target.ready_watch(objects)

        async def scenario() -> None:
            await watch.wait(converge_timeout(objects))
            await asyncio.sleep(0.5)
            async with conn.session() as session:
                # 4: coalescing, 100 updates of one object: back to back, then all at once
                target = name_of(0)
                result["coalesce_updates"] = 100
                for index, (label, burst, work) in enumerate(
                    (("sequential", False, 0.0), ("burst", True, 0.0), ("slow", False, 0.02))
                ):
                    probe.work = {target: work} if work else {}
                    before = len(probe.starts)
                    base = 100 * index
                    if burst:
                        await asyncio.gather(
                            *(
                                patch_spec(session, conn.url, target, base + s)
                                for s in range(1, 101)
                            )
                        )
                    else:
                        for seq in range(base + 1, base + 101):
                            await patch_spec(session, conn.url, target, seq)
                    # concurrent patches may land in any order (a real server reorders them):
                    # wait for the reconcile of the state the server ended with
                    stored = orjson.loads((await conn.call("GET", f"{COLLECTION}/{target}"))[1])
                    await probe.wait_for(target, int(stored["spec"]["seq"]))
                    await asyncio.sleep(1.0)
                    result[f"coalesce_{label}_reconciles"] = sum(
                        1 for n, _, _ in probe.starts[before:] if n == target
                    )
                probe.work = {}
                # 5: latency, idle then under load
                for label, load in (("idle", False), ("load", True)):
                    delays: list[float] = []
                    stop = asyncio.Event()
                    loaders: list[asyncio.Task[None]] = []
                    if load:

                        async def loader(offset: int, stop: asyncio.Event = stop) -> None:
                            # a steady LOAD_RATE updates/s of other objects (each reconciled)
                            seq, next_at = 1000, time.perf_counter()
                            while not stop.is_set():
                                seq += 1
                                index = 2 + (seq * 7 + offset) % max(objects - 2, 1)
                                await patch_spec(session, conn.url, name_of(index), seq)
                                next_at += LOAD_WRITERS / LOAD_RATE
                                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

                        loaders = [asyncio.create_task(loader(i)) for i in range(LOAD_WRITERS)]
                        await asyncio.sleep(0.5)
                    probe_name = name_of(1)
                    base = 1000 if load else 0
                    for seq in range(base + 1, base + updates + 1):
                        sent = time.perf_counter()
                        await patch_spec(session, conn.url, probe_name, seq)
                        try:
                            delays.append(await probe.wait_for(probe_name, seq) - sent)
                        except TimeoutError:
                            raise RuntimeError(
                                f"latency {label}: no reconcile of {probe_name} "
                                f"seq {seq}; last {probe.starts[-3:]}"
                            ) from None
                        await asyncio.sleep(0.01)
                    stop.set()
                    await asyncio.gather(*loaders)
                    delays.sort()
                    result[f"latency_{label}_p50_ms"] = percentile(delays, 50) * 1e3
                    result[f"latency_{label}_p99_ms"] = percentile(delays, 99) * 1e3

        await run_controller_until(api, probe.reconcile, scenario, concurrency)
    finally:
        await target.release()
    return result


# ---------------------------------------------------------------------------------------
# 6 memory, 7 idle: a child process against a server process
# ---------------------------------------------------------------------------------------


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def child(
    mode: str, kubeconfig: str, objects: int, seconds: float, concurrency: int
) -> dict[str, Any]:
    """Runs in the measured process: prints one JSON line."""
    import kr8s.asyncio

    from reconcile_kit.runtime.reflector import Reflector
    from reconcile_kit.runtime.resources import resolve_kind

    api = await kr8s.asyncio.api(kubeconfig=kubeconfig)
    if mode == "converge":
        return await child_converge(api, objects, concurrency)
    if mode == "ceiling":
        return await child_ceiling(api, objects, concurrency)
    if mode == "ceiling-raw":
        return await child_raw(kubeconfig, objects, concurrency)
    if mode == "probe":
        await run_controller_until(api, probe_reconcile, asyncio.Event().wait, concurrency)
    if mode == "ceiling-aiohttp":
        from reconcile_kit.client.transport import use_aiohttp_transport

        assert await use_aiohttp_transport(api)
        return await child_ceiling(api, objects, concurrency)
    info = await resolve_kind(api, f"{KIND}.{GROUP}")
    if mode == "memory":
        gc.collect()
        rss0 = rss_bytes()
        reflector = Reflector(api, info, namespace=NAMESPACE)
        reflector.start()
        await reflector.wait_synced()
        await asyncio.sleep(0.5)
        gc.collect()
        rss1 = rss_bytes()
        cached = len(reflector.store.list())
        await reflector.stop()
        return {"rss_before": rss0, "rss_after": rss1, "cached": cached}
    if mode == "memory-controller":
        return await child_controller_memory(api, objects)
    synced = Counted(objects)

    async def measure() -> None:
        await synced.wait()
        await asyncio.sleep(1.0)
        result["cpu0"] = time.process_time()
        result["t0"] = time.perf_counter()
        await asyncio.sleep(seconds)
        result["cpu1"] = time.process_time()
        result["t1"] = time.perf_counter()

    result: dict[str, Any] = {}
    await run_controller_until(api, synced.reconcile, measure, 8)
    return {
        "cpu_seconds": result["cpu1"] - result["cpu0"],
        "seconds": result["t1"] - result["t0"],
        "reconciled": len(synced.seen),
    }


async def child_controller_memory(api: Any, objects: int) -> dict[str, Any]:
    """RSS growth of a controller that reconciled (status patch) every object and settled."""
    gc.collect()
    rss0 = rss_bytes()
    counted = Counted(objects, ready_reconcile)
    sizes: dict[str, int] = {}

    async def settle() -> None:
        await counted.wait()
        await asyncio.sleep(1.0)  # the watch delivers the status writes: the cache catches up
        gc.collect()
        sizes["rss_after"] = rss_bytes()

    controller = await run_controller_until(api, counted.reconcile, settle, 8)
    return {
        "rss_before": rss0,
        "rss_after": sizes["rss_after"],
        "cached": len(counted.seen),
        "written": len(controller._written or ()),
    }


async def in_subprocess(
    target: Target, mode: str, objects: int, seconds: float, workdir: Path
) -> dict[str, Any]:
    """6 (memory) or 7 (idle): the controller in a child process. The embedded server runs
    in a process of its own here too, so that neither shares the other's CPU time."""
    process: ServerProcess | None = None
    if isinstance(target, EmbeddedTarget):
        process = ServerProcess(workdir, None)
        await process.start()
        conn, pid = Connection(process.url, process.kubeconfig), process.pid
        await populate(conn, objects)
    else:
        conn, pid = await target.fresh(objects), target.server_pid()
    try:
        items = orjson.loads((await conn.call("GET", COLLECTION))[1])["items"]
        json_bytes = sum(len(orjson.dumps(item)) for item in items)
        cpu0 = process_cpu_seconds(pid)
        output = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                mode,
                "--kubeconfig",
                str(conn.kubeconfig),
                "--objects",
                str(objects),
                "--seconds",
                str(seconds),
            ],
            capture_output=True,
            check=True,
            timeout=converge_timeout(objects) + seconds + 60,
        )
        data: dict[str, Any] = child_result(output.stdout)
        data["json_bytes"] = json_bytes
        data["objects"] = len(items)
        data["server_cpu_seconds"] = process_cpu_seconds(pid) - cpu0
        return data
    finally:
        if process is not None:
            process.stop()
        else:
            await target.release()


# ---------------------------------------------------------------------------------------
# Driver and report
# ---------------------------------------------------------------------------------------


async def run_backend(name: str, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Every wanted scenario on ``name`` ("embedded" or "real"); {} when the real control
    plane's binaries are not built (scripts/build-control-plane)."""
    if name == "embedded":
        return await main_async(args, EmbeddedTarget())
    from reconcile_kit.testing.controlplane import ControlPlane, find_binaries

    if find_binaries() is None:
        print(
            "real control plane: binaries not built (scripts/build-control-plane): skipped",
            flush=True,
        )
        return {}
    async with ControlPlane() as plane:
        return await main_async(args, RealTarget(plane))


async def main_async(args: argparse.Namespace, target: Target) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    wanted = set(SCENARIOS) if args.only == "all" else set(args.only.split(","))
    idle_seconds = 10.0 if args.quick else 60.0
    contender = (
        controller_runtime.build()
        if wanted & {"controller-runtime", "controller-runtime-typed", "latency-processes"}
        else None
    )
    with tempfile.TemporaryDirectory(prefix="rk-run-") as tmp:
        workdir = Path(tmp)
        for repeat in range(args.repeats):
            steps: list[tuple[str, Callable[[], Awaitable[dict[str, Any]]]]] = [
                (
                    "converge",
                    lambda: client_process(target, "converge", args.objects, args.concurrency),
                ),
                (
                    "converge-uvloop",
                    lambda: client_process(
                        target, "converge-uvloop", args.objects, args.concurrency
                    ),
                ),
                (
                    "ceiling",
                    lambda: client_process(target, "ceiling", args.objects, args.concurrency),
                ),
                (
                    "ceiling-aiohttp",
                    lambda: client_process(
                        target, "ceiling-aiohttp", args.objects, args.concurrency
                    ),
                ),
                (
                    "ceiling-raw-uvloop",
                    lambda: client_process(
                        target, "ceiling-raw-uvloop", args.objects, args.concurrency
                    ),
                ),
                ("noop", lambda: noop_run(target, args.objects, args.concurrency)),
                ("kopf", lambda: kopf_run(target, args.objects, args.concurrency, workdir)),
                (
                    "controller-runtime",
                    lambda: controller_runtime.run(
                        target,
                        contender,
                        args.objects,
                        args.concurrency,
                        NAMESPACE,
                        converge_timeout(args.objects),
                    ),
                ),
                (
                    "controller-runtime-typed",
                    lambda: controller_runtime.run(
                        target,
                        contender,
                        args.objects,
                        args.concurrency,
                        NAMESPACE,
                        converge_timeout(args.objects),
                        typed=True,
                    ),
                ),
                (
                    "ceiling-raw",
                    lambda: client_process(target, "ceiling-raw", args.objects, args.concurrency),
                ),
                (
                    "latency-processes",
                    lambda: latency_contenders(target, contender, args),
                ),
                (
                    "latency",
                    lambda: coalesce_and_latency(
                        target, args.objects, args.concurrency, 50 if args.quick else 100
                    ),
                ),
                ("memory", lambda: in_subprocess(target, "memory", args.objects, 0, workdir)),
                (
                    "memory-controller",
                    lambda: in_subprocess(target, "memory-controller", args.objects, 0, workdir),
                ),
                (
                    "idle",
                    lambda: in_subprocess(target, "idle", args.objects, idle_seconds, workdir),
                ),
            ]
            for name, step in steps:
                if name not in wanted and not (name == "latency" and "coalesce" in wanted):
                    continue
                if name.endswith("-uvloop") and version_of("uvloop") is None:
                    print("  uvloop is not installed: skipped (reconcile-kit[uvloop])", flush=True)
                    continue
                if name == "kopf" and version_of("kopf") is None:
                    print(f"  kopf is not installed: skipped ({KOPF_PIN})", flush=True)
                    continue
                if name.startswith("controller-runtime") and contender is None:
                    continue
                gc.collect()  # the previous scenario's server and clients, not in this one
                started = time.monotonic()
                data = await step()
                data["load_average_1m"] = os.getloadavg()[0]  # the machine's, beside the run
                runs.setdefault(name, []).append(data)
                shown = ", ".join(
                    f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in data.items()
                )
                print(
                    f"  {target.name} repeat {repeat + 1} {name} "
                    f"({time.monotonic() - started:.1f} s): "
                    f"{shown}",
                    flush=True,
                )
    return runs


async def latency_contenders(
    target: Target, contender: Path | None, args: argparse.Namespace
) -> dict[str, Any]:
    """latency-processes: reconcile_kit beside typed controller-runtime (when built), over
    the same Widgets at once, then reconcile_kit on uvloop (when installed: what
    ``reconcile-kit run --loop auto`` runs on) beside it again
    (benchmarks/latency_processes.py); keys prefixed ``rk_`` and ``cr_``, then ``rkuv_``
    and ``cruv_``."""
    updates = 50 if args.quick else 200
    timeout = converge_timeout(args.objects)
    theirs: list[str] = []
    if contender is not None:
        theirs = [str(contender), "--kubeconfig={kubeconfig}", f"--namespace={NAMESPACE}"]
        theirs += [f"--concurrency={args.concurrency}", "--typed", "--probe"]
    result: dict[str, Any] = {}
    for mode, (mine, beside) in (("probe", ("rk", "cr")), ("probe-uvloop", ("rkuv", "cruv"))):
        if mode.endswith("-uvloop") and version_of("uvloop") is None:
            continue
        commands = {
            mine: [
                *(sys.executable, __file__, "--child", mode, "--kubeconfig", "{kubeconfig}"),
                *("--concurrency", str(args.concurrency)),
            ]
        }
        if theirs:
            commands[beside] = theirs
        result.update(await latency_processes.run(target, commands, args.objects, updates, timeout))
    return result


LATENCY_CONTENDERS = (
    ("rk", "reconcile_kit", "cr"),
    ("rkuv", "reconcile_kit on uvloop", "cruv"),
    ("cr", "controller-runtime typed", ""),
    ("cruv", "controller-runtime typed beside uvloop", ""),
)


def _latency_rows(runs: list[dict[str, Any]], rows: dict[str, dict[str, float]]) -> None:
    """latency-processes: each contender's p50/p99, and reconcile_kit's p99 (on either
    loop) over that of typed controller-runtime beside it, run by run."""
    for who, label, _ in LATENCY_CONTENDERS:
        for load in ("idle", "load"):
            for q in ("p50", "p99"):
                key = f"{who}_latency_{load}_{q}_ms"
                if runs and key in runs[0]:
                    rows[f"{label} change-to-reconcile {load} {q} ms"] = summary(
                        [r[key] for r in runs]
                    )
    for who, label, beside in LATENCY_CONTENDERS[:2]:
        for load in ("idle", "load"):
            mine, theirs = f"{who}_latency_{load}_p99_ms", f"{beside}_latency_{load}_p99_ms"
            if runs and theirs in runs[0] and mine in runs[0]:
                rows[f"ratio p99 {load} {label}/controller-runtime typed"] = summary(
                    [r[mine] / r[theirs] for r in runs]
                )


def _growth(run: dict[str, Any]) -> float:
    """RSS growth of a converge run's client: converged minus started (before its sync)."""
    return float(run["rss_converged"] - run["rss_started"])


def rows_of(runs: dict[str, list[dict[str, Any]]], objects: int) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    scenario_cr = "controller-runtime"

    def add(label: str, scenario: str, fn: Callable[[dict[str, Any]], float]) -> None:
        if scenario in runs:
            rows[label] = summary([fn(r) for r in runs[scenario]])

    for label, scenario in (
        ("converge", "converge"),
        ("converge on uvloop", "converge-uvloop"),
        ("ceiling", "ceiling"),
        ("ceiling over aiohttp", "ceiling-aiohttp"),
        ("kopf", "kopf"),
        ("controller-runtime", "controller-runtime"),
        ("controller-runtime typed", "controller-runtime-typed"),
    ):
        add(f"{label} objects/s", scenario, lambda r: r["per_second"])
        add(f"{label} objects/s, Ready window", scenario, lambda r: r["window_per_second"])
        add(f"{label} Ready latency p50 s", scenario, lambda r: r["ready_p50_seconds"])
        add(f"{label} Ready latency p99 s", scenario, lambda r: r["ready_p99_seconds"])
    add("converge wall s (from start)", "converge", lambda r: r["wall_seconds"])
    add("converge requests/reconcile", "converge", lambda r: r["requests_per_reconcile"])
    add("kopf wall s (from start)", "kopf", lambda r: r["wall_seconds"])
    add("kopf requests/object", "kopf", lambda r: r["requests_per_object"])
    add(
        "kopf CPU ms/object (from launch)",
        "kopf",
        lambda r: r["cpu_ms_per_object_from_launch"],
    )
    if "converge" in runs and "converge-uvloop" in runs:
        pairs = zip(runs["converge-uvloop"], runs["converge"], strict=False)
        rows["ratio CPU/reconcile uvloop/asyncio"] = summary(
            [a["cpu_ms_per_reconcile"] / b["cpu_ms_per_reconcile"] for a, b in pairs]
        )
    if "converge" in runs and "ceiling" in runs:
        pairs = zip(runs["converge"], runs["ceiling"], strict=False)
        rows["ratio converge/ceiling"] = summary(
            [a["per_second"] / b["per_second"] for a, b in pairs]
        )
    if "converge" in runs and "ceiling-aiohttp" in runs:
        pairs = zip(runs["converge"], runs["ceiling-aiohttp"], strict=False)
        rows["ratio converge/ceiling over aiohttp"] = summary(
            [a["per_second"] / b["per_second"] for a, b in pairs]
        )
    if "converge" in runs and "kopf" in runs:
        pairs = zip(runs["converge"], runs["kopf"], strict=False)
        rows["ratio converge/kopf"] = summary([a["per_second"] / b["per_second"] for a, b in pairs])
    contenders = (
        ("reconcile_kit", "converge"),
        ("reconcile_kit on uvloop", "converge-uvloop"),
        ("controller-runtime", scenario_cr),
        ("controller-runtime typed", "controller-runtime-typed"),
    )
    for label, scenario in contenders:
        add(f"{label} CPU ms/reconcile", scenario, lambda r: r["cpu_ms_per_reconcile"])
        add(f"{label} RSS growth KiB/object", scenario, lambda r: _growth(r) / objects / 1024)
        add(f"{label} RSS growth/JSON", scenario, lambda r: _growth(r) / r["json_bytes"])
    add("raw aiohttp loop CPU ms/request", "ceiling-raw", lambda r: r["cpu_ms_per_reconcile"])
    add(
        "raw aiohttp loop on uvloop CPU ms/request",
        "ceiling-raw-uvloop",
        lambda r: r["cpu_ms_per_reconcile"],
    )
    for mine, floor, label in (
        ("converge", "ceiling-raw", "reconcile_kit/raw aiohttp loop"),
        ("converge-uvloop", "ceiling-raw-uvloop", "reconcile_kit/raw aiohttp loop, on uvloop"),
        ("converge-uvloop", "controller-runtime-typed", UVLOOP_CR),
    ):
        if mine in runs and floor in runs:  # run by run (interleaved)
            pairs = list(zip(runs[mine], runs[floor], strict=False))
            rows[f"ratio CPU/reconcile {label}"] = summary(
                [a["cpu_ms_per_reconcile"] / b["cpu_ms_per_reconcile"] for a, b in pairs]
            )
    _latency_rows(runs.get("latency-processes", []), rows)
    for label, scenario in contenders[2:]:  # ratios against each, run by run (interleaved)
        if "converge" in runs and scenario in runs:
            pairs = list(zip(runs["converge"], runs[scenario], strict=False))
            rows[f"ratio CPU/reconcile reconcile_kit/{label}"] = summary(
                [a["cpu_ms_per_reconcile"] / b["cpu_ms_per_reconcile"] for a, b in pairs]
            )
            rows[f"ratio converge/{label}"] = summary(
                [a["per_second"] / b["per_second"] for a, b in pairs]
            )
    add(
        "coalesce: reconciles/100 sequential",
        "latency",
        lambda r: r["coalesce_sequential_reconciles"],
    )
    add("coalesce: reconciles/100 in flight", "latency", lambda r: r["coalesce_burst_reconciles"])
    add("coalesce: /100 sequential, 20 ms work", "latency", lambda r: r["coalesce_slow_reconciles"])
    for label in ("idle", "load"):
        for q in ("p50", "p99"):
            add(f"latency {label} {q} ms", "latency", lambda r, k=f"latency_{label}_{q}_ms": r[k])
    add(
        "memory RSS bytes/object",
        "memory",
        lambda r: (r["rss_after"] - r["rss_before"]) / r["cached"],
    )
    add("object JSON bytes", "memory", lambda r: r["json_bytes"] / r["objects"])
    add("memory RSS/JSON", "memory", lambda r: (r["rss_after"] - r["rss_before"]) / r["json_bytes"])
    add(
        "controller memory RSS/JSON",
        "memory-controller",
        lambda r: (r["rss_after"] - r["rss_before"]) / r["json_bytes"],
    )
    add("controller read-your-writes entries", "memory-controller", lambda r: r["written"])
    add("idle CPU %", "idle", lambda r: 100 * r["cpu_seconds"] / r["seconds"])
    every = [run for scenario_runs in runs.values() for run in scenario_runs]
    if every and "load_average_1m" in every[0]:
        rows["load average (1 min) at the runs' ends"] = summary(
            [run["load_average_1m"] for run in every]
        )
    add("no-op reconciles", "noop", lambda r: r["noop_reconciles"])
    add("no-op writes", "noop", lambda r: r["noop_writes"])
    return rows


TARGETS: list[tuple[str, str, float]] = [
    ("ratio converge/ceiling", ">=", 0.7),
    ("ratio converge/kopf", ">=", 10.0),
    ("ratio CPU/reconcile reconcile_kit/controller-runtime", "<=", 0.6),  # issue 19
    ("ratio CPU/reconcile reconcile_kit/controller-runtime typed", "<=", 0.5),  # issue 31
    ("ratio CPU/reconcile reconcile_kit/raw aiohttp loop", "<=", 1.05),  # issue 31
    (f"ratio CPU/reconcile {UVLOOP_CR}", "<=", 0.5),  # issue 31, on uvloop
    ("ratio CPU/reconcile reconcile_kit/raw aiohttp loop, on uvloop", "<=", 1.05),
    ("ratio p99 idle reconcile_kit/controller-runtime typed", "<=", 1.0),  # issue 31
    ("ratio p99 load reconcile_kit/controller-runtime typed", "<=", 1.0),  # issue 31
    ("ratio p99 idle reconcile_kit on uvloop/controller-runtime typed", "<=", 1.0),
    ("ratio p99 load reconcile_kit on uvloop/controller-runtime typed", "<=", 1.0),
    ("reconcile_kit RSS growth/JSON", "<=", 1.5),  # issue 19, at 10,000 objects of 5.8 KB
    ("latency idle p99 ms", "<=", 20.0),
    ("memory RSS/JSON", "<=", 3.0),
    ("idle CPU %", "<=", 1.0),
    ("no-op writes", "<=", 0.0),
]


def verdicts(rows: dict[str, dict[str, float]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for label, op, target in TARGETS:
        if label not in rows:
            continue
        value = rows[label]["median"]
        met = value >= target if op == ">=" else value <= target
        out[label] = {
            "target": f"{op} {target:g}",
            "median": value,
            "met": met,
            "margin": value - target,
        }
    return out


def print_table(rows: dict[str, dict[str, float]], targets: dict[str, dict[str, Any]]) -> None:
    header = f"| {'measure':<38} | {'median':>10} | {'min':>10} | {'max':>10} | target |"
    print(header)
    print("| " + " | ".join(["---"] * 5) + " |")
    for label, row in rows.items():
        verdict = targets.get(label)
        mark = f"{verdict['target']} {'PASS' if verdict['met'] else 'MISS'}" if verdict else ""
        print(
            f"| {label:<38} | "
            + " | ".join(f"{row[k]:>10.4g}" for k in ("median", "min", "max"))
            + f" | {mark} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--quick", action="store_true", help="200 objects, 1 repeat, 10 s idle window"
    )
    parser.add_argument(
        "--only",
        default="all",
        help=f"all, or scenarios separated by commas: {', '.join(SCENARIOS)}",
    )
    parser.add_argument(
        "--backend",
        choices=("embedded", "real", "both"),
        default="both",
        help="where to run: the embedded API server, the real control plane "
        "(skipped when its binaries are not built), or both (default)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--scale",
        action="store_true",
        help="the 100,000-object scale scenario instead (benchmarks/scale.py; --objects "
        "applies, default 100,000; --repeats, default 3)",
    )
    parser.add_argument(
        "--child",
        choices=(
            "converge",
            "converge-uvloop",
            "ceiling",
            "ceiling-aiohttp",
            "ceiling-raw",
            "ceiling-raw-uvloop",
            "probe",
            "probe-uvloop",
            "memory",
            "memory-controller",
            "idle",
        ),
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    unknown = set(args.only.split(",")) - {"all", *SCENARIOS}
    if unknown:
        parser.error(f"--only: unknown scenarios {', '.join(sorted(unknown))}")
    if args.scale:
        import scale

        objects = args.objects if "--objects" in sys.argv else 100_000
        scale.main(["--objects", str(objects), "--repeats", str(args.repeats)])
        return
    if args.child:
        mode, run_loop = args.child, asyncio.run
        if mode.endswith("-uvloop"):  # the optional extra reconcile-kit[uvloop]
            import uvloop

            mode, run_loop = mode.removesuffix("-uvloop"), uvloop.run
        data = run_loop(child(mode, args.kubeconfig, args.objects, args.seconds, args.concurrency))
        print(json.dumps(data))
        return
    if args.quick:
        args.objects = min(args.objects, 200)
        args.repeats = 1
    started = time.monotonic()
    machine = machine_info()
    machine["libraries"]["kopf"] = version_of("kopf")
    print(
        f"{machine['cpu_model']}, nproc {machine['nproc']}, Python {machine['python']}; "
        f"{args.objects} objects, {args.repeats} repeats, concurrency {args.concurrency}",
        flush=True,
    )
    backends: dict[str, Any] = {}
    failed: list[str] = []
    for name in ("embedded", "real") if args.backend == "both" else (args.backend,):
        try:
            runs = asyncio.run(run_backend(name, args))
        except Exception as error:  # report it, keep what the other backend measured
            traceback.print_exc()
            failed.append(name)
            backends[name] = {"error": f"{type(error).__name__}: {error}"}
            continue
        if not runs:
            continue
        rows = rows_of(runs, args.objects)
        targets = verdicts(rows)
        backends[name] = {"summary": rows, "targets": targets, "runs": runs}
    for name, result in backends.items():
        print(f"\n{name}:")
        if "error" in result:
            print(f"failed: {result['error']}")
        else:
            print_table(result["summary"], result["targets"])
    document = {
        "benchmark": "run",
        "command": " ".join(["python", *sys.argv]),
        "objects": args.objects,
        "repeats": args.repeats,
        "concurrency": args.concurrency,
        "quick": args.quick,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "duration_seconds": round(time.monotonic() - started, 1),
        "machine": machine,
        "backends": backends,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nresults written to {args.output}")
    if failed:
        sys.exit(f"failed on: {', '.join(failed)}")


if __name__ == "__main__":
    main()
