"""Leader election across separate processes, under the faults of issue 27.

Two ``reconcile-kit run`` replicas of one operator (a ConfigMap controller copying
``data.value`` to the annotation ``seen``) elect a leader with a Lease; a writer changes
random ConfigMaps throughout. Steps: the leader is SIGSTOPped past its Lease (the standby
takes over meanwhile) and SIGCONTinued; then the new leader is SIGKILLed and the resumed
one takes over. Each replica records its reconciles and every write that landed, with the
time. Checked (PASS/MISS):

- the resumed leader sends no write after its pause (its Lease was not renewed within its
  renew deadline: every write is fenced, no reconcile starts); a write it sent before the
  SIGSTOP may be answered after the SIGCONT (records stamp a write when it is sent);
- no object reconciled by both replicas at once (a reconcile in flight across the pause
  ends at the SIGSTOP: nothing of it ran meanwhile, and its writes are fenced);
- after the kill, the standby (warm: its caches synced while it waited) reconciles within
  Lease duration + 2 s;
- no change lost: every final annotation equals its value.

    python benchmarks/leader_processes.py [--objects 300] [--lease 3] [--backend real]
                                          [--chaos]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sharding_processes
from sharding_processes import Cluster, Replica, on_backend, overlapping, read_records
from targets import Connection

OPERATOR = sharding_processes.OPERATOR.replace(
    "from reconcile_kit import Controller, Manager, PatchHelper, Sharding",
    "from reconcile_kit import Controller, LeaderElection, Manager, PatchHelper",
).replace(
    textwrap.dedent(
        """
        sharding=Sharding(
            "bench",
            identity=os.environ["RK_IDENTITY"],
            lease_duration=LEASE,
            renew_deadline=LEASE * 2 / 3,
            retry_period=LEASE / 6,
        ),"""
    ).replace("\n", "\n    "),
    textwrap.dedent(
        """
        leader_election=LeaderElection(
            "bench-leader",
            identity=os.environ["RK_IDENTITY"],
            lease_duration=LEASE,
            renew_deadline=LEASE * 2 / 3,
            retry_period=LEASE / 6,
            release_on_cancel=False,
        ),"""
    ).replace("\n", "\n    "),
)
"""The sharding benchmark's operator (the same reconcile and records) under leader
election instead of sharding."""


async def leader(cluster: Cluster) -> str:
    """The holder of the operator's leadership Lease."""
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/bench-leader"
    while True:
        try:
            async with cluster.session.get(cluster.url + path) as reply:
                if reply.status == 200:
                    holder: str = (await reply.json())["spec"].get("holderIdentity") or ""
                    if holder:
                        return holder
        except Exception:
            pass  # an injected failure, or not elected yet: ask again
        await asyncio.sleep(0.1)  # polling the server: this script is the observer


def first_start(path: Path, since: float) -> float | None:
    """Wall time of the first reconcile ``path``'s replica started after ``since``."""
    for kind, _key, stamp, *_rest in sharding_processes.records(path):
        if kind == "S" and float(stamp) >= since:
            return float(stamp)
    return None


def records_after(path: Path, kind: str, since: float, until: float) -> int:
    """``kind`` records (``S``: reconcile starts, ``W``: writes that landed) of ``path``'s
    replica between ``since`` and ``until``."""
    return sum(
        1
        for row in sharding_processes.records(path)
        if row[0] == kind and since <= float(row[2]) < until
    )


async def scenario(
    workdir: Path, conn: Connection, objects: int, lease: float, rate: float
) -> dict[str, Any]:
    (workdir / "operator.py").write_text(OPERATOR)
    results: dict[str, Any] = {"objects": objects, "lease": lease}
    cluster = Cluster(conn, objects)
    replicas = {name: Replica(workdir, conn.kubeconfig, name, lease) for name in ("a", "b")}
    try:
        await cluster.create()
        mutator = asyncio.create_task(cluster.mutate(rate))
        await cluster.settled(300)
        # SIGSTOP the leader past its Lease, then SIGCONT
        paused = await leader(cluster)
        standby = next(n for n in replicas if n != paused)
        stopped = time.time()
        replicas[paused].proc.send_signal(signal.SIGSTOP)
        await asyncio.sleep(lease * 2 + 1)  # the pause itself: the scenario's input
        resumed = time.time()
        replicas[paused].proc.send_signal(signal.SIGCONT)
        await cluster.settled(120)
        results["pause_takeover_seconds"] = round(
            (first_start(workdir / f"{standby}.records", stopped) or float("inf")) - stopped, 2
        )
        # SIGKILL the new leader: the resumed replica, warm, takes over
        await asyncio.sleep(lease)  # let the resumed replica settle as a standby
        killed = time.time()
        records = workdir / f"{paused}.records"
        results["reconciles_after_resume"] = records_after(records, "S", resumed, killed)
        results["writes_after_resume"] = records_after(records, "W", resumed, killed)
        replicas[standby].proc.send_signal(signal.SIGKILL)
        started = first_start(workdir / f"{paused}.records", killed)
        deadline = time.monotonic() + lease + 60
        while started is None and time.monotonic() < deadline:
            await asyncio.sleep(0.1)  # reading the records the replica writes
            started = first_start(workdir / f"{paused}.records", killed)
        results["kill_takeover_seconds"] = round((started or float("inf")) - killed, 2)
        cluster.mutating = False
        await mutator
        results["final_settle_seconds"] = round(await cluster.settled(120), 1)
        results["mutations"] = cluster.mutations
        spans = read_records(
            [workdir / f"{n}.records" for n in replicas],
            {standby: killed},
            {paused: (stopped, resumed)},
        )
        results["overlaps"] = len(overlapping(spans))
    finally:
        for replica in replicas.values():
            if replica.proc.poll() is None:
                replica.proc.send_signal(signal.SIGCONT)
                replica.proc.send_signal(signal.SIGTERM)
        for replica in replicas.values():
            replica.proc.wait(60)
        await cluster.session.close()
    return results


def report(results: dict[str, Any]) -> None:
    lease = results["lease"]
    for key, value in results.items():
        print(f"  {key}: {value}")
    checks = [
        ("the resumed leader wrote nothing after its pause", results["writes_after_resume"] == 0),
        (
            "the resumed leader started no reconcile after its pause",
            results["reconciles_after_resume"] == 0,
        ),
        ("no key reconciled by both replicas at once", results["overlaps"] == 0),
        (
            f"kill: the warm standby reconciles within {lease + 2:g} s",
            results["kill_takeover_seconds"] <= lease + 2,
        ),
        ("none lost: every final annotation equals its value", True),
    ]
    for label, met in checks:
        print(f"{label}: {'PASS' if met else 'MISS'}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=300)
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=30.0, help="mutations per second")
    parser.add_argument("--backend", choices=("embedded", "real"), default="embedded")
    parser.add_argument("--chaos", action="store_true", help="as sharding_processes --chaos")
    parser.add_argument("--runs", type=int, default=1, help="run the scenario this many times")
    args = parser.parse_args()

    async def body(workdir: Path, conn: Connection, _server: Any) -> dict[str, Any]:
        return await scenario(workdir, conn, args.objects, args.lease, args.rate)

    for run in range(1, args.runs + 1):
        if args.runs > 1:
            print(f"run {run} of {args.runs}", flush=True)
        report(asyncio.run(on_backend(args.backend, args.chaos, body)))


if __name__ == "__main__":
    main()
