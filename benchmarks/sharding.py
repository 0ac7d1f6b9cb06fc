"""Active-active sharding on the embedded API server (issue 20): one process, one server,
managers with ``sharding=`` over N ConfigMaps (real time, short Leases).

Measured, one run each (seconds are wall time from the event to every object labelled with
its rendezvous owner, held in exactly that replica's cache, and reconciled by it since):

* start: 3 replicas already members, N objects created: until all are assigned and
  reconciled;
* join: a 4th replica joins: objects moved (expected about N/4, rendezvous hashing's
  minimum) and seconds until settled;
* graceful stop of one replica: objects it handed over itself and seconds until settled;
* kill of one replica (no release): seconds until settled (includes waiting for its
  Lease to expire: ``--lease`` seconds, observed locally);
* overlaps: keys reconciled by two replicas at once (must be 0).

    python benchmarks/sharding.py [--objects 1000] [--lease 3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from typing import Any

from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller, Manager, Sharding
from reconcile_kit.manager.sharding import ring
from reconcile_kit.testing import APIServer, eventually

LABEL = "shard.reconcile-kit.io/bench"


class Replica:
    def __init__(self, api: Any, identity: str, lease: float, book: dict[str, Any]) -> None:
        self.identity = identity
        self.book = book
        self.manager = Manager(
            api,
            namespace="default",
            sharding=Sharding(
                "bench",
                identity=identity,
                lease_duration=lease,
                renew_deadline=lease * 2 / 3,
                retry_period=lease / 6,
            ),
            handle_signals=False,
            graceful_shutdown_timeout=30,
        )
        self.controller = self.manager.add(Controller(ConfigMap, concurrency=8), self.reconcile)
        self.task: asyncio.Task[None] | None = None

    async def reconcile(self, obj: Any, ctx: Context) -> None:
        key = f"{obj.namespace}/{obj.name}"
        active = self.book["active"]
        if key in active:
            self.book["overlaps"] += 1
        active[key] = self.identity
        self.book["last"][key] = self.identity
        try:
            await asyncio.sleep(0.001)
        finally:
            active.pop(key, None)

    def start(self) -> None:
        self.task = asyncio.create_task(self.manager.run())

    def share(self) -> set[str]:
        reflector = self.controller.reflector
        return {f"{ns}/{n}" for ns, n in reflector.store.list_keys()} if reflector else set()


async def labels(api: Any) -> dict[str, str | None]:
    result = {}
    async for cm in api.async_get("configmaps", namespace="default"):
        result[f"default/{cm.name}"] = cm.labels.get(LABEL)
    return result


async def settle(api: Any, replicas: list[Replica], book: dict[str, Any], since: float) -> float:
    members = [r.identity for r in replicas]

    async def done() -> bool:
        current = await labels(api)
        if any(owner != ring.owner(key, members) for key, owner in current.items()):
            return False
        for r in replicas:
            if r.share() != {k for k, o in current.items() if o == r.identity}:
                return False
        return all(book["last"].get(key) == owner for key, owner in current.items())

    await eventually(done, 300, interval=0.1)
    return time.monotonic() - since


async def main(objects: int, lease: float) -> None:
    logging.basicConfig(level=logging.WARNING)
    book: dict[str, Any] = {"active": {}, "last": {}, "overlaps": 0}
    async with APIServer(record_requests=False) as server:
        api = await server.api()
        replicas = [Replica(api, f"r{i}", lease, book) for i in range(3)]
        for r in replicas:
            r.start()
        await eventually(lambda: all(r.manager.ready() for r in replicas), 60, interval=0.05)
        started = time.monotonic()
        for i in range(objects):
            await ConfigMap(
                {"metadata": {"name": f"cm-{i}", "namespace": "default"}}, api=api
            ).create()
        seconds = await settle(api, replicas, book, started)
        print(f"start: {objects} objects created and reconciled by 3 replicas in {seconds:.2f} s")
        print("  shares:", {r.identity: len(r.share()) for r in replicas})

        before = await labels(api)
        joined = time.monotonic()
        new = Replica(api, "r3", lease, book)
        new.start()
        replicas.append(new)
        seconds = await settle(api, replicas, book, joined)
        after = await labels(api)
        moved = sum(1 for k in before if before[k] != after[k])
        print(
            f"join: {moved} objects moved to the new replica ({objects / 4:.0f} expected),"
            f" settled in {seconds:.2f} s (includes its start)"
        )

        leaving = replicas.pop(0)
        share = len(leaving.share())
        drained_before = leaving.controller.stats.drains
        stopping = time.monotonic()
        leaving.manager.stop()
        assert leaving.task is not None
        await leaving.task
        seconds = await settle(api, replicas, book, stopping)
        print(
            f"graceful stop: {leaving.controller.stats.drains - drained_before} of {share}"
            " objects handed over by it,"
            f" settled in {seconds:.2f} s"
        )

        killed = replicas.pop(0)
        killing = time.monotonic()
        assert killed.task is not None
        killed.task.cancel()
        await asyncio.gather(killed.task, return_exceptions=True)
        seconds = await settle(api, replicas, book, killing)
        print(f"kill: settled in {seconds:.2f} s (Lease duration {lease} s)")
        print(f"overlaps: {book['overlaps']}")
        for r in replicas:
            r.manager.stop()
        await asyncio.gather(*(r.task for r in replicas if r.task))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--lease", type=float, default=3.0)
    args = parser.parse_args()
    asyncio.run(main(args.objects, args.lease))
