"""Benchmark of the embedded Kubernetes API server (reconcile_kit.testing.APIServer).

Measures, with the median, min and max over repeated runs:

(a) requests per second the server answers on one core for GET and merge-PATCH of
    ConfigMaps, under a concurrent loopback load of keep-alive connections;
(b) the delay from a write to its watch event reaching each of 100 open watches
    (p50/p99 over every (write, watcher) pair).

The server runs in its own process (``reconcile-kit apiserver``) pinned to one core; the
load is driven from this process, pinned to another core, with aiohttp. Every loop is
bounded in count and time and talks to 127.0.0.1 only.

Usage: python benchmarks/apiserver.py [--quick] [--output PATH]
Results: a table on stdout and a JSON file (default benchmarks/results/apiserver.json).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml
import yarl

NAMESPACE = "default"
JSON_MERGE = "application/merge-patch+json"
START_TIMEOUT = 60.0
REQUEST_TIMEOUT = 30.0
DELIVERY_TIMEOUT = 10.0
RESULTS = Path(__file__).resolve().parent / "results" / "apiserver.json"


@dataclass(frozen=True)
class Settings:
    """What one run does; ``--quick`` picks the small variant."""

    concurrency: int
    objects: int
    get_requests: int
    patch_requests: int
    warmup_requests: int
    throughput_repeats: int
    watchers: int
    watch_writes: int
    watch_repeats: int

    @classmethod
    def full(cls) -> Settings:
        return cls(
            concurrency=256,
            objects=100,
            get_requests=20_000,
            patch_requests=10_000,
            warmup_requests=2_000,
            throughput_repeats=5,
            watchers=100,
            watch_writes=200,
            watch_repeats=5,
        )

    @classmethod
    def quick(cls) -> Settings:
        return cls(
            concurrency=128,
            objects=20,
            get_requests=2_000,
            patch_requests=1_000,
            warmup_requests=200,
            throughput_repeats=2,
            watchers=100,
            watch_writes=20,
            watch_repeats=2,
        )


@dataclass
class ThroughputRun:
    requests: int
    seconds: float
    rps: float
    latency_p50_ms: float
    latency_p99_ms: float
    server_cpu: float  # server CPU seconds / wall seconds (1.0 = one core saturated)
    client_cpu: float  # this process's CPU seconds / wall seconds
    server_core_busy: float  # the server's core busy with anything (others' load shows here)
    client_core_busy: float
    rps_per_server_cpu: float  # requests per CPU-second the server spent: its cost, load-free


@dataclass
class WatchRun:
    writes: int
    watchers: int
    pairs: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    write_p50_ms: float  # the write's own round trip, for comparison
    server_cpu: float  # server CPU seconds / wall seconds during the writes
    server_core_busy: float  # the server's core busy with anything during the writes


@dataclass
class Summary:
    median: float
    min: float
    max: float

    @classmethod
    def of(cls, values: list[float]) -> Summary:
        return cls(statistics.median(values), min(values), max(values))


@dataclass
class Results:
    settings: dict[str, Any]
    machine: dict[str, Any]
    pinning: dict[str, Any]
    get: list[ThroughputRun] = field(default_factory=list)
    patch: list[ThroughputRun] = field(default_factory=list)
    watch: list[WatchRun] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# Machine information and CPU accounting
# ---------------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def version_of(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    return {
        "nproc": os.cpu_count(),
        "usable_cpus": sorted(os.sched_getaffinity(0)),
        "cpu_model": cpu_model(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "libraries": {
            name: version_of(name)
            for name in (
                "reconcile-kit",
                "aiohttp",
                "orjson",
                "PyYAML",
                "kr8s",
                "jsonpatch",
                "httpx",
                "httpx-aiohttp",
                "python-box",
            )
        },
        "event_loop": "asyncio (default selector loop)",
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3],
    }


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (all its threads) from /proc, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_ticks(cpu: int | None) -> tuple[int, int]:
    """(busy, total) jiffies of one CPU (or all CPUs for None) from /proc/stat."""
    label = "cpu" if cpu is None else f"cpu{cpu}"
    for line in Path("/proc/stat").read_text().splitlines():
        parts = line.split()
        if parts and parts[0] == label:
            values = [int(v) for v in parts[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0)
            return sum(values) - idle, sum(values)
    return 0, 0


class CpuWindow:
    """Busy fraction of a CPU over a window: to see load from other processes."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.start = cpu_ticks(cpu)

    def busy(self) -> float:
        busy, total = cpu_ticks(self.cpu)
        elapsed = total - self.start[1]
        return (busy - self.start[0]) / elapsed if elapsed else float("nan")


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), round(q / 100 * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


# ---------------------------------------------------------------------------------------
# The server process
# ---------------------------------------------------------------------------------------


class ServerProcess:
    """``reconcile-kit apiserver`` in a child process, pinned to ``cpu`` when given."""

    def __init__(
        self, workdir: Path, cpu: int | None, *, port: int = 0, extra: tuple[str, ...] = ()
    ) -> None:
        self.kubeconfig = workdir / "kubeconfig"
        self.log_path = workdir / "server.log"
        self.cpu = cpu
        self.port = port  # fixed (with --data-dir in extra) to restart the same server
        self.extra = extra  # more ``reconcile-kit apiserver`` options
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def _pin(self) -> None:  # runs in the child between fork and exec
        if self.cpu is not None:
            os.sched_setaffinity(0, {self.cpu})

    async def start(self) -> None:
        command = [
            sys.executable,
            "-c",
            "from reconcile_kit.cli.commands import main; main()",
            "apiserver",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--kubeconfig",
            str(self.kubeconfig),
            *self.extra,
        ]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=self._pin,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + START_TIMEOUT
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited early:\n{self.log_path.read_text()}")
                self.url = self._read_url()
                if self.url and await self._ready(session):
                    return
                await asyncio.sleep(0.05)
        raise RuntimeError(f"server not ready in {START_TIMEOUT}s:\n{self.log_path.read_text()}")

    def _read_url(self) -> str:
        try:
            config = yaml.safe_load(self.kubeconfig.read_text())
            return str(config["clusters"][0]["cluster"]["server"])
        except (OSError, yaml.YAMLError, TypeError, KeyError, IndexError):
            return ""

    async def _ready(self, session: aiohttp.ClientSession) -> bool:
        try:
            async with session.get(f"{self.url}/readyz") as response:
                return response.status == 200
        except aiohttp.ClientError:
            return False

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)


# ---------------------------------------------------------------------------------------
# (a) Throughput
# ---------------------------------------------------------------------------------------


def configmap_path(index: int) -> str:
    return f"/api/v1/namespaces/{NAMESPACE}/configmaps/bench-{index}"


async def create_objects(session: aiohttp.ClientSession, url: str, count: int) -> None:
    for i in range(count):
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"bench-{i}", "labels": {"bench": "throughput"}},
            "data": {"n": "0", "payload": "x" * 256},
        }
        async with session.post(
            f"{url}/api/v1/namespaces/{NAMESPACE}/configmaps",
            data=orjson.dumps(body),
            headers={"Content-Type": "application/json"},
        ) as response:
            if response.status not in (201, 409):
                raise RuntimeError(f"create bench-{i}: {response.status} {await response.text()}")


Request = Callable[[aiohttp.ClientSession, int], Awaitable[int]]


def object_urls(url: str, objects: int) -> list[yarl.URL]:
    """Pre-built URLs: the load generator should spend its CPU on requests, not parsing."""
    return [yarl.URL(url + configmap_path(i), encoded=True) for i in range(objects)]


def get_request(url: str, objects: int) -> Request:
    urls = object_urls(url, objects)

    async def send(session: aiohttp.ClientSession, seq: int) -> int:
        async with session.get(urls[seq % objects]) as response:
            await response.read()
            return response.status

    return send


def patch_request(url: str, objects: int, run_id: str) -> Request:
    headers = {"Content-Type": JSON_MERGE}
    urls = object_urls(url, objects)

    async def send(session: aiohttp.ClientSession, seq: int) -> int:
        # A distinct value each time: every PATCH is a real write (no no-op shortcut).
        body = orjson.dumps({"data": {"n": f"{run_id}-{seq}"}})
        async with session.patch(urls[seq % objects], data=body, headers=headers) as response:
            await response.read()
            return response.status

    return send


async def drive(
    session: aiohttp.ClientSession, send: Request, total: int, concurrency: int
) -> list[float]:
    """Send ``total`` requests keeping ``concurrency`` in flight; returns latencies (s)."""
    latencies: list[float] = []
    failures: list[int] = []
    next_seq = 0

    async def worker() -> None:
        nonlocal next_seq
        while next_seq < total:
            seq = next_seq
            next_seq += 1
            started = time.perf_counter()
            status = await send(session, seq)
            latencies.append(time.perf_counter() - started)
            if status != 200:
                failures.append(status)

    await asyncio.wait_for(
        asyncio.gather(*(worker() for _ in range(concurrency))),
        timeout=max(REQUEST_TIMEOUT, total / 50),
    )
    if failures:
        raise RuntimeError(f"{len(failures)} requests failed, e.g. HTTP {failures[0]}")
    return latencies


async def throughput(
    session: aiohttp.ClientSession,
    send: Request,
    total: int,
    concurrency: int,
    server_pid: int,
    server_core: int | None,
    client_core: int | None,
) -> ThroughputRun:
    server_cpu0, client_cpu0 = process_cpu_seconds(server_pid), time.process_time()
    core, client_window = CpuWindow(server_core), CpuWindow(client_core)
    started = time.perf_counter()
    latencies = await drive(session, send, total, concurrency)
    seconds = time.perf_counter() - started
    server_cpu = process_cpu_seconds(server_pid) - server_cpu0
    client_cpu = time.process_time() - client_cpu0
    latencies.sort()
    return ThroughputRun(
        requests=total,
        seconds=seconds,
        rps=total / seconds,
        latency_p50_ms=percentile(latencies, 50) * 1e3,
        latency_p99_ms=percentile(latencies, 99) * 1e3,
        server_cpu=server_cpu / seconds,
        client_cpu=client_cpu / seconds,
        server_core_busy=core.busy(),
        client_core_busy=client_window.busy(),
        rps_per_server_cpu=total / server_cpu if server_cpu > 0 else float("nan"),
    )


def client_session(connections: int) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        limit=connections, limit_per_host=connections, force_close=False, keepalive_timeout=60
    )
    timeout = aiohttp.ClientTimeout(
        total=None, sock_connect=REQUEST_TIMEOUT, sock_read=REQUEST_TIMEOUT
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
    )


async def run_throughput(
    server: ServerProcess, settings: Settings, results: Results, client_cpu: int | None
) -> None:
    async with client_session(settings.concurrency) as session:
        await create_objects(session, server.url, settings.objects)
        for label, runs in (("GET", results.get), ("PATCH", results.patch)):
            total = settings.get_requests if label == "GET" else settings.patch_requests
            for repeat in range(-1, settings.throughput_repeats):  # -1: warm-up, not kept
                run_id = f"r{repeat + 1}"
                send = (
                    get_request(server.url, settings.objects)
                    if label == "GET"
                    else patch_request(server.url, settings.objects, run_id)
                )
                count = settings.warmup_requests if repeat < 0 else total
                run = await throughput(
                    session, send, count, settings.concurrency, server.pid, server.cpu, client_cpu
                )
                if repeat >= 0:
                    runs.append(run)
                    print(
                        f"  {label:5} repeat {repeat + 1}: {run.rps:8.0f} req/s "
                        f"(p50 {run.latency_p50_ms:.1f} ms, server CPU "
                        f"{run.server_cpu:.0%} (core busy {run.server_core_busy:.0%}), "
                        f"client CPU {run.client_cpu:.0%} (core busy "
                        f"{run.client_core_busy:.0%}); {run.rps_per_server_cpu:.0f} "
                        "req per server CPU-s)",
                        flush=True,
                    )


# ---------------------------------------------------------------------------------------
# (b) Watch fan-out latency
# ---------------------------------------------------------------------------------------


class WatchLatency:
    """Open ``watchers`` streams, do ``writes`` writes, time each event's arrival."""

    def __init__(
        self, url: str, watchers: int, writes: int, server_pid: int, server_core: int | None
    ) -> None:
        self.url = url
        self.server_pid = server_pid
        self.server_core = server_core
        self.watchers = watchers
        self.writes = writes
        self.name = "latency"
        self.sent_at: list[float] = [0.0] * writes
        self.received: list[list[float]] = [[] for _ in range(writes)]
        self.complete = [asyncio.Event() for _ in range(writes)]
        self.run_id = ""

    async def _reset_object(self, session: aiohttp.ClientSession) -> str:
        """Create (or reset) the ConfigMap; returns the list resourceVersion to watch from."""
        path = f"{self.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": self.name, "labels": {"bench": "watch"}},
            "data": {"run": "", "seq": "-1"},
        }
        async with session.post(
            path, data=orjson.dumps(body), headers={"Content-Type": "application/json"}
        ) as response:
            if response.status not in (201, 409):
                raise RuntimeError(f"create: {response.status} {await response.text()}")
        async with session.get(path, params={"labelSelector": "bench=watch"}) as response:
            listed = await response.json()
        return str(listed["metadata"]["resourceVersion"])

    async def _watch(self, response: aiohttp.ClientResponse) -> None:
        run_marker = self.run_id.encode()
        while True:
            line = await response.content.readline()
            arrived = time.perf_counter()
            if not line:
                return
            event = orjson.loads(line)
            data = event.get("object", {}).get("data") or {}
            if event.get("type") != "MODIFIED" or data.get("run", "").encode() != run_marker:
                continue
            seq = int(data["seq"])
            self.received[seq].append(arrived - self.sent_at[seq])
            if len(self.received[seq]) == self.watchers:
                self.complete[seq].set()
            if seq == self.writes - 1:
                return

    async def run(self, run_id: str) -> WatchRun:
        self.run_id = run_id
        write_times: list[float] = []
        async with client_session(self.watchers + 8) as session:
            rv = await self._reset_object(session)
            query = {
                "watch": "1",
                "resourceVersion": rv,
                "timeoutSeconds": "300",
                "labelSelector": "bench=watch",
            }
            path = f"{self.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
            # The server registers a watcher before it sends the response headers, so once
            # every GET has returned its headers all streams are live.
            streams = await asyncio.gather(
                *(session.get(path, params=query) for _ in range(self.watchers))
            )
            tasks = [asyncio.create_task(self._watch(s)) for s in streams]
            cpu0, core, started = (
                process_cpu_seconds(self.server_pid),
                CpuWindow(self.server_core),
                time.perf_counter(),
            )
            try:
                for seq in range(self.writes):
                    body = orjson.dumps({"data": {"run": run_id, "seq": str(seq)}})
                    self.sent_at[seq] = time.perf_counter()
                    async with session.patch(
                        f"{path}/{self.name}", data=body, headers={"Content-Type": JSON_MERGE}
                    ) as response:
                        await response.read()
                        write_times.append(time.perf_counter() - self.sent_at[seq])
                        if response.status != 200:
                            raise RuntimeError(f"write {seq}: HTTP {response.status}")
                    await asyncio.wait_for(self.complete[seq].wait(), DELIVERY_TIMEOUT)
                await asyncio.wait_for(asyncio.gather(*tasks), DELIVERY_TIMEOUT)
                seconds = time.perf_counter() - started
                server_cpu = (process_cpu_seconds(self.server_pid) - cpu0) / seconds
                core_busy = core.busy()
            finally:
                for task in tasks:
                    task.cancel()
                for stream in streams:
                    stream.close()
        delays = sorted(d for per_write in self.received for d in per_write)
        write_times.sort()
        return WatchRun(
            writes=self.writes,
            watchers=self.watchers,
            pairs=len(delays),
            p50_ms=percentile(delays, 50) * 1e3,
            p99_ms=percentile(delays, 99) * 1e3,
            max_ms=delays[-1] * 1e3,
            write_p50_ms=percentile(write_times, 50) * 1e3,
            server_cpu=server_cpu,
            server_core_busy=core_busy,
        )


async def run_watch(server: ServerProcess, settings: Settings, results: Results) -> None:
    for repeat in range(settings.watch_repeats):
        bench = WatchLatency(
            server.url, settings.watchers, settings.watch_writes, server.pid, server.cpu
        )
        run = await bench.run(f"w{repeat}-{time.monotonic_ns()}")
        if run.pairs != settings.watchers * settings.watch_writes:
            raise RuntimeError(
                f"expected {settings.watchers * settings.watch_writes} deliveries, saw {run.pairs}"
            )
        results.watch.append(run)
        print(
            f"  watch repeat {repeat + 1}: p50 {run.p50_ms:.2f} ms, p99 {run.p99_ms:.2f} ms "
            f"over {run.pairs} (write, watcher) pairs; server CPU {run.server_cpu:.0%} "
            f"(core busy {run.server_core_busy:.0%})",
            flush=True,
        )


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def summaries(results: Results) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    for verb, runs in (("GET", results.get), ("PATCH", results.patch)):
        if not runs:
            continue
        for label, attribute in (
            ("req/s", "rps"),
            ("latency p50 ms", "latency_p50_ms"),
            ("server CPU", "server_cpu"),
            ("server core busy", "server_core_busy"),
            ("client CPU", "client_cpu"),
            ("req/server CPU-s", "rps_per_server_cpu"),
        ):
            rows[f"{verb} {label}"] = asdict(Summary.of([getattr(r, attribute) for r in runs]))
    if results.watch:
        rows["watch delay p50 ms"] = asdict(Summary.of([r.p50_ms for r in results.watch]))
        rows["watch delay p99 ms"] = asdict(Summary.of([r.p99_ms for r in results.watch]))
        rows["write round trip p50 ms"] = asdict(
            Summary.of([r.write_p50_ms for r in results.watch])
        )
    return rows


def print_table(results: Results, rows: dict[str, dict[str, float]]) -> None:
    machine = results.machine
    print()
    print(
        f"embedded API server benchmark — {machine['cpu_model']}, nproc {machine['nproc']}, "
        f"Python {machine['python']}, aiohttp {machine['libraries']['aiohttp']}"
    )
    print(
        f"server pinned to CPU {results.pinning['server_cpu']}, "
        f"load generator to CPU {results.pinning['client_cpu']}; "
        f"{results.settings['concurrency']} requests in flight"
    )
    print()
    header = f"{'metric':<26}{'median':>12}{'min':>12}{'max':>12}"
    print(header)
    print("-" * len(header))
    for name, row in rows.items():
        fmt = (
            "{:>12.0%}"
            if name.endswith(("CPU", "busy"))
            else ("{:>12.0f}" if name.endswith(("req/s", "CPU-s")) else "{:>12.2f}")
        )
        print(f"{name:<26}" + "".join(fmt.format(row[k]) for k in ("median", "min", "max")))
    repeats = (results.settings["throughput_repeats"], results.settings["watch_repeats"])
    print(
        f"\n(medians over {repeats[0]} throughput and {repeats[1]} watch repeats; watch "
        f"delays over {results.settings['watchers']} watchers x "
        f"{results.settings['watch_writes']} writes per repeat)"
    )
    others = interference(results)
    if others > 0.05:
        print(
            f"note: other processes took up to {others:.0%} of the server's core during a "
            "repeat, which lowers req/s and raises delays; req/server CPU-s is the figure "
            "least affected. Rerun on a quiet machine for clean numbers."
        )


def interference(results: Results) -> float:
    """The largest share of the server's core used by other processes in any repeat."""
    runs: list[ThroughputRun | WatchRun] = [*results.get, *results.patch, *results.watch]
    return max((max(0.0, r.server_core_busy - r.server_cpu) for r in runs), default=0.0)


async def main_async(args: argparse.Namespace) -> Results:
    settings = Settings.quick() if args.quick else Settings.full()
    machine = machine_info()  # before pinning, so usable_cpus shows the whole machine
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu, client_cpu = (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)
    if client_cpu is not None:
        os.sched_setaffinity(0, {client_cpu})
    results = Results(
        settings=asdict(settings),
        machine=machine,
        pinning={
            "server_cpu": server_cpu,
            "client_cpu": client_cpu,
            "note": None if server_cpu is not None else "fewer than 2 usable CPUs: not pinned",
        },
    )
    with tempfile.TemporaryDirectory(prefix="rk-bench-") as workdir:
        server = ServerProcess(Path(workdir), server_cpu)
        try:
            await server.start()
            print(
                f"server {server.url} (pid {server.pid}, CPU {server_cpu}); "
                f"load from pid {os.getpid()} (CPU {client_cpu})",
                flush=True,
            )
            if args.only in ("all", "throughput"):
                print("(a) throughput", flush=True)
                await run_throughput(server, settings, results, client_cpu)
            if args.only in ("all", "watch"):
                print("(b) watch fan-out latency", flush=True)
                await run_watch(server, settings, results)
        finally:
            server.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small run for CI smoke (< 30 s)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument(
        "--only",
        choices=("all", "throughput", "watch"),
        default="all",
        help="run one part only (default: both)",
    )
    args = parser.parse_args()
    started = time.monotonic()
    results = asyncio.run(main_async(args))
    rows = summaries(results)
    print_table(results, rows)
    document = {
        "benchmark": "apiserver",
        "quick": args.quick,
        "only": args.only,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "duration_seconds": round(time.monotonic() - started, 1),
        "loadavg_at_end": Path("/proc/loadavg").read_text().split()[:3],
        "interference_max": interference(results),
        "summary": rows,
        **asdict(results),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nresults written to {args.output}")


if __name__ == "__main__":
    main()
