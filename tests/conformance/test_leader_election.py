"""reconcile_kit.manager.leaderelection on a real clock against each backend's Lease semantics.

tests/manager/test_leaderelection.py covers the algorithm on a fast-forwarded clock against the
embedded server; this checks that the same code holds, hands over and conflicts correctly
against kube-apiserver's Lease (PUT with resourceVersion, 409 on races, MicroTime).
Timings are short but real: lease 3 s, renew deadline 2 s, retry 0.25 s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest_asyncio

from reconcile_kit import LeaderElection
from reconcile_kit.testing.backends import Backend

from .kube import ok

TIMING = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.25}


class Candidates:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.elections: dict[str, LeaderElection] = {}

    def start(self, identity: str, release_on_cancel: bool = True) -> LeaderElection:
        election = LeaderElection(
            "lock",
            namespace=self.backend.namespace,
            identity=identity,
            release_on_cancel=release_on_cancel,
            **TIMING,
        )
        self.elections[identity] = election
        self.tasks[identity] = asyncio.create_task(election.run(self.backend.api))
        return election

    async def leader(self, timeout: float = 10.0) -> LeaderElection:
        waits = {asyncio.ensure_future(e.leading()): e for e in self.elections.values()}
        try:
            done, _ = await asyncio.wait(
                waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for future in waits:
                future.cancel()
        assert done, "nobody became leader"
        return waits[next(iter(done))]

    async def kill(self, identity: str) -> None:
        """Cancel a candidate's run (releasing only if release_on_cancel)."""
        task = self.tasks.pop(identity)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        del self.elections[identity]

    async def close(self) -> None:
        for identity in list(self.tasks):
            await self.kill(identity)


@pytest_asyncio.fixture
async def candidates(backend: Backend) -> AsyncIterator[Candidates]:
    group = Candidates(backend)
    try:
        yield group
    finally:
        await group.close()


async def lease(backend: Backend) -> dict[str, object]:
    spec: dict[str, object] = (
        await ok(
            backend,
            "GET",
            f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases/lock",
        )
    )["spec"]
    return spec


async def test_one_leader_then_a_graceful_handover(
    backend: Backend, candidates: Candidates
) -> None:
    candidates.start("a")
    candidates.start("b")
    first = await candidates.leader()
    others = [e for e in candidates.elections.values() if e is not first]
    assert [e.is_leader for e in others] == [False]
    spec = await lease(backend)
    assert spec["holderIdentity"] == first.identity
    assert spec["leaseDurationSeconds"] == 3
    assert spec["leaseTransitions"] == 0
    loop = asyncio.get_running_loop()
    released = loop.time()
    await candidates.kill(first.identity)  # release_on_cancel: the lease is freed
    second = await candidates.leader()
    assert second is others[0]
    assert loop.time() - released < TIMING["lease_duration"]  # no waiting for expiry
    spec = await lease(backend)
    assert spec["holderIdentity"] == second.identity
    assert spec["leaseTransitions"] == 1


async def test_a_vanished_leader_is_replaced_after_the_lease_expires(
    backend: Backend, candidates: Candidates
) -> None:
    candidates.start("a", release_on_cancel=False)
    await candidates.leader()
    candidates.start("b")
    loop = asyncio.get_running_loop()
    await asyncio.sleep(0)  # b has started campaigning
    killed = loop.time()
    await candidates.kill("a")  # no release: b must wait out the lease
    second = await candidates.leader(timeout=15.0)
    assert second.identity == "b"
    waited = loop.time() - killed
    assert TIMING["lease_duration"] - 1.0 <= waited <= TIMING["lease_duration"] + 3.0
    assert (await lease(backend))["leaseTransitions"] == 1
