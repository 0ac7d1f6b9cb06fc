"""Tests of reconcile_kit.manager.leaderelection: candidates sharing one Lease on the embedded
server.

Every async test runs on looptime's fast-forwarded loop clock (``pytest.mark.looptime``):
the 15 s leases and 2 s retry periods of client-go's defaults pass in milliseconds of
real time while ``loop.time()`` advances exactly, so timings are asserted as loop-time
deltas. Every wait is bounded by ``asyncio.timeout`` or ``eventually``.

A :class:`Group` samples every candidate after every callback and status change and every
50 ms of loop time; at no sample may two candidates lead, nor two run leadership-gated work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import kr8s
import pytest
import pytest_asyncio

from reconcile_kit import LeaderElection
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
LEASE, RENEW, RETRY = 15.0, 10.0, 2.0  # client-go's defaults
EPS = 0.05  # loop seconds allowed for requests and callbacks


def now() -> float:
    return asyncio.get_running_loop().time()


class Candidate:
    """One LeaderElection, its run task and a journal of what happened to it."""

    def __init__(self, group: Group, identity: str, work: bool, **kwargs: Any) -> None:
        self.group = group
        self.identity = identity
        self.work = work
        self.events: list[str] = []
        self.le = LeaderElection(
            "lock",
            identity=identity,
            on_started_leading=self._started,
            on_stopped_leading=self._stopped,
            on_new_leader=self._new_leader,
            **kwargs,
        )
        self.le.on_status_change.append(lambda leading: self.log(f"status:{leading}"))
        self.task: asyncio.Task[None] | None = None

    def log(self, event: str) -> None:
        self.events.append(event)
        self.group.journal.append((now(), self.identity, event))
        self.group.check()

    def start(self) -> Candidate:
        self.task = asyncio.create_task(self.le.run(self.group.kube))
        return self

    async def kill(self) -> None:
        """Cancel run() (a crash; the lease stays unless release_on_cancel)."""
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    def times(self, event: str) -> list[float]:
        return [t for t, who, what in self.group.journal if who == self.identity and what == event]

    async def _started(self) -> None:
        self.log("started")
        if not self.work:
            return
        try:  # leadership-gated work, as a manager's controllers
            self.group.working.add(self.identity)
            self.group.check()
            while True:
                await asyncio.sleep(0.25)
                self.group.check()
        finally:
            self.group.working.discard(self.identity)
            self.log("work-ended")

    def _stopped(self) -> None:  # a plain function: both kinds of callback are accepted
        self.log("stopped")

    async def _new_leader(self, identity: str) -> None:
        self.log(f"new:{identity}")


class Group:
    """Candidates sharing one Lease, with the exclusivity sampler."""

    def __init__(self, kube: kr8s.asyncio.Api) -> None:
        self.kube = kube
        self.candidates: list[Candidate] = []
        self.journal: list[tuple[float, str, str]] = []
        self.working: set[str] = set()
        self.violations: list[tuple[float, list[str], set[str]]] = []
        self.samples = 0

    def add(self, identity: str, *, work: bool = False, **kwargs: Any) -> Candidate:
        candidate = Candidate(self, identity, work, **kwargs)
        self.candidates.append(candidate)
        return candidate

    def leaders(self) -> list[str]:
        return [c.identity for c in self.candidates if c.le.is_leader]

    def check(self) -> None:
        self.samples += 1
        leaders = self.leaders()
        if len(leaders) > 1 or len(self.working) > 1:
            self.violations.append((now(), leaders, set(self.working)))

    async def sample(self) -> None:
        while True:
            self.check()
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        for candidate in self.candidates:
            await candidate.le.stop()


@pytest_asyncio.fixture
async def group(kube: kr8s.asyncio.Api, apiserver: APIServer) -> AsyncIterator[Group]:
    group = Group(kube)
    sampler = asyncio.create_task(group.sample())
    yield group
    apiserver.faults.clear()
    async with asyncio.timeout(60):
        await group.close()
    sampler.cancel()
    assert group.violations == []
    assert group.samples > 0


async def wait_leading(candidate: Candidate, timeout: float = 60) -> float:
    """Wait (bounded, loop seconds) until ``candidate`` leads and its on_started_leading
    task started; returns the loop time when it started leading."""
    async with asyncio.timeout(timeout):
        await candidate.le.leading()
    up = now()
    # interval 0: no loop time passes (the callback runs at the instant leadership began)
    await eventually(
        lambda: candidate.events.count("started") >= candidate.events.count("status:True"),
        timeout,
        interval=0,
    )
    return up


async def wait_lost(candidate: Candidate, timeout: float = 30) -> float:
    """Wait until ``candidate`` stops leading and on_stopped_leading returned; the loop time
    when it stopped leading."""
    async with asyncio.timeout(timeout):
        await candidate.le.lost()
    down = now()
    # interval 0: no loop time passes (tests assert on_stopped_leading ran at `down`)
    await eventually(lambda: "stopped" in candidate.events, timeout, interval=0)
    return down


async def get_lease(kube: kr8s.asyncio.Api) -> dict[str, Any]:
    status, lease = await call(kube, "GET", f"{LEASES}/lock")
    assert status == 200, lease
    return dict(lease)


def lease_requests(apiserver: APIServer, since: int = 0) -> list[tuple[str, int]]:
    return [(r.verb, r.status) for r in apiserver.requests[since:] if r.resource == "leases"]


# -- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "timing",
    [
        {"lease_duration": 10.0},  # not longer than renew_deadline
        {"renew_deadline": 2.4},  # not longer than retry_period * 1.2
        {"retry_period": 0.0},
        {"lease_duration": -1.0, "renew_deadline": -2.0, "retry_period": -3.0},
    ],
)
def test_timing_is_validated_as_client_go_does(timing: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        LeaderElection("lock", **timing)


def test_defaults_are_client_go_s() -> None:
    le = LeaderElection("lock")
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (LEASE, RENEW, RETRY)
    host, _, suffix = le.identity.rpartition("_")
    assert host == socket.gethostname() and uuid.UUID(suffix)
    assert le.namespace == "default" and le.release_on_cancel
    assert not le.is_leader and le.leader is None
    assert LeaderElection("lock", renew_deadline=2.5).renew_deadline == 2.5
    with pytest.raises(ValueError):
        LeaderElection("")


# -- acquiring, renewing and the wire format -------------------------------------------------


@pytest.mark.looptime
async def test_first_acquire_gets_then_posts_and_renewals_put_with_the_resource_version(
    group: Group, apiserver: APIServer, kube: kr8s.asyncio.Api
) -> None:
    a = group.add("a").start()
    assert await wait_leading(a, 5) < EPS
    assert lease_requests(apiserver) == [("get", 404), ("create", 201)]
    created = apiserver.requests.filter(resource="leases", verb="create")[0].body
    assert created["kind"] == "Lease" and created["metadata"]["name"] == "lock"

    lease = await get_lease(kube)
    spec = lease["spec"]
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15 and isinstance(spec["leaseDurationSeconds"], int)
    assert MICROTIME.match(spec["acquireTime"]) and spec["acquireTime"] == spec["renewTime"]
    assert spec["leaseTransitions"] == 0

    await asyncio.sleep(3 * RETRY + 0.5)  # three renewals, at 2, 4 and 6 s
    updates = apiserver.requests.filter(resource="leases", verb="update")
    assert [(r.method, r.status) for r in updates] == [("PUT", 200)] * 3
    versions = [r.body["metadata"]["resourceVersion"] for r in updates]
    assert versions[0] == lease["metadata"]["resourceVersion"]
    assert len(set(versions)) == 3  # each PUT carries the version the previous one returned
    assert apiserver.requests.count(resource="leases", verb="get") == 2  # ours + the 404
    renewed = (await get_lease(kube))["spec"]
    assert MICROTIME.match(renewed["renewTime"]) and renewed["renewTime"] > spec["renewTime"]
    assert renewed["acquireTime"] == spec["acquireTime"]
    assert renewed["leaseTransitions"] == 0 and renewed["holderIdentity"] == "a"
    assert a.events == ["new:a", "status:True", "started"]


@pytest.mark.looptime
async def test_a_lease_namespace_that_does_not_exist_is_named_once(
    group: Group,
    apiserver: APIServer,
    kube: kr8s.asyncio.Api,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """README's ``LeaderElection(..., namespace="operators")`` on a cluster without that
    namespace: a WARNING ``POST ...: 404 NotFound: namespaces "operators" not found`` every
    retry period, forever. Now one WARNING says the namespace does not exist and how to fix
    it; the same failure again is DEBUG; once the namespace exists the candidate leads."""
    namespace = f"operators-{uuid.uuid4().hex[:6]}"
    caplog.set_level(logging.DEBUG, logger="reconcile_kit.manager.leaderelection")
    a = group.add("a", namespace=namespace).start()
    await asyncio.sleep(10 * RETRY)
    assert lease_requests(apiserver).count(("create", 404)) >= 4
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"leader election {namespace}/lock: namespace {namespace!r} does not exist, so lease"
        f" {namespace}/lock cannot be created: create it (kubectl create namespace"
        f" {namespace}) or give a namespace that exists; retrying (said again only when the"
        " error changes)"
    ]
    assert not any(r.exc_info for r in caplog.records)  # no traceback
    namespaces = "/api/v1/namespaces"
    status, body = await call(kube, "POST", namespaces, {"metadata": {"name": namespace}})
    assert status == 201, body
    await wait_leading(a, 10 * RETRY)
    assert a.le.is_leader


@pytest.mark.looptime
async def test_exactly_one_of_two_candidates_leads(group: Group, kube: kr8s.asyncio.Api) -> None:
    a, b = group.add("a", work=True).start(), group.add("b", work=True).start()
    await eventually(lambda: bool(group.leaders()), 10, interval=0.05)
    leader, standby = (a, b) if a.le.is_leader else (b, a)
    await asyncio.sleep(120)
    assert group.leaders() == [leader.identity] and group.working == {leader.identity}
    assert standby.le.leader == leader.identity and not standby.le.is_leader
    assert standby.events == [f"new:{leader.identity}"]
    assert leader.events == [f"new:{leader.identity}", "status:True", "started"]
    spec = (await get_lease(kube))["spec"]
    assert spec["holderIdentity"] == leader.identity and spec["leaseTransitions"] == 0


@pytest.mark.looptime
async def test_a_conflict_on_renewal_reads_the_lease_again(
    group: Group, apiserver: APIServer
) -> None:
    a = group.add("a").start()
    await wait_leading(a, 5)
    await asyncio.sleep(RETRY + 0.5)  # past the first renewal
    since = len(apiserver.requests)
    apiserver.faults.fail(409, verb="update", resource="leases", times=1)
    await asyncio.sleep(RETRY)
    assert lease_requests(apiserver, since) == [("update", 409), ("get", 200), ("update", 200)]
    assert a.le.is_leader and a.events == ["new:a", "status:True", "started"]


@pytest.mark.looptime
async def test_two_processes_given_one_identity_do_not_both_lead(
    group: Group, kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A record under this identity that another process wrote is that process's: the
    second waits as a standby, and takes the Lease when the first stops renewing (client-go
    compares the holder only: both would renew it and lead; the group's sampler fails the
    test when two lead at once). Its graceful stop then releases without a 409."""
    a = group.add("dup", work=True, release_on_cancel=False).start()
    await wait_leading(a, 5)
    b = group.add("dup", work=True).start()
    await asyncio.sleep(4 * LEASE)
    assert a.le.is_leader and not b.le.is_leader
    killed = now()
    await a.kill()
    elapsed = await wait_leading(b) - killed
    assert LEASE - RETRY <= elapsed <= LEASE + RETRY + EPS
    since = len(apiserver.requests)
    assert b.task is not None
    b.task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await b.task
    assert (await get_lease(kube))["spec"].get("holderIdentity") in (None, "")
    assert all(status < 400 for _verb, status in lease_requests(apiserver, since))


# -- losing the leader -----------------------------------------------------------------------


@pytest.mark.looptime
@pytest.mark.parametrize("phase", [0.3, 1.7])
@pytest.mark.parametrize("offset", [0.1, 1.0, 1.9])
async def test_a_killed_leader_is_replaced_within_lease_duration_plus_retry_period(
    group: Group, kube: kr8s.asyncio.Api, phase: float, offset: float
) -> None:
    a = group.add("a", work=True, release_on_cancel=False).start()
    await wait_leading(a, 5)
    await asyncio.sleep(phase)  # the standby's polls at another phase than the renewals
    b = group.add("b", work=True).start()
    await asyncio.sleep(3 * RETRY + offset)
    killed = now()
    await a.kill()
    assert not a.le.is_leader and a.events[-2:] == ["work-ended", "stopped"]
    assert (await get_lease(kube))["spec"]["holderIdentity"] == "a"  # not released
    elapsed = await wait_leading(b) - killed
    assert LEASE - RETRY <= elapsed <= LEASE + RETRY + EPS
    spec = (await get_lease(kube))["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert b.events == ["new:a", "new:b", "status:True", "started"]


@pytest.mark.looptime
@pytest.mark.parametrize("phase", [0.0, 0.9, 1.9])
async def test_a_graceful_stop_releases_and_the_standby_leads_within_one_retry_period(
    group: Group, apiserver: APIServer, kube: kr8s.asyncio.Api, phase: float
) -> None:
    a = group.add("a", work=True).start()
    await wait_leading(a, 5)
    b = group.add("b", work=True).start()
    await asyncio.sleep(5 + phase)
    stopped = now()
    async with asyncio.timeout(5):
        await a.le.stop()
    assert a.task is not None and a.task.done() and not a.le.is_leader
    release = apiserver.requests.filter(resource="leases", verb="update")[-1].body["spec"]
    assert release["holderIdentity"] == "" and release["leaseDurationSeconds"] == 1
    assert release["leaseTransitions"] == 0 and MICROTIME.match(release["renewTime"])
    assert await wait_leading(b, 10) - stopped <= RETRY + EPS
    spec = (await get_lease(kube))["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert spec["leaseDurationSeconds"] == 15
    assert a.events == ["new:a", "status:True", "started", "status:False", "work-ended", "stopped"]
    assert b.events == ["new:a", "new:b", "status:True", "started"]
    assert a.times("stopped")[0] <= b.times("status:True")[0]


@pytest.mark.looptime
async def test_failing_renewals_step_down_at_the_renew_deadline_before_anyone_can_acquire(
    group: Group, apiserver: APIServer, kube: kr8s.asyncio.Api
) -> None:
    a = group.add("a", work=True, release_on_cancel=False).start()
    await wait_leading(a, 5)
    b = group.add("b", work=True).start()
    await asyncio.sleep(3.3)  # renewed at 2 s
    failing = now()
    apiserver.faults.fail(500, verb="update", resource="leases", times=None)
    down = await wait_lost(a)
    assert failing - RETRY < down - RENEW <= failing  # last renewal sent + renew deadline
    assert a.events[-3:] == ["status:False", "work-ended", "stopped"]
    assert a.times("stopped")[0] == down
    await a.le.stop()  # a crash after losing the lease: a never comes back
    apiserver.faults.clear()
    acquired = await wait_leading(b)
    assert acquired - down >= LEASE - RENEW  # the margin that keeps leaders apart
    assert b.times("status:True")[0] > a.times("stopped")[0]
    assert (await get_lease(kube))["spec"]["leaseTransitions"] == 1


@pytest.mark.looptime
async def test_a_hanging_renewal_does_not_delay_stepping_down(
    group: Group, apiserver: APIServer
) -> None:
    a = group.add("a", work=True).start()
    await wait_leading(a, 5)
    await asyncio.sleep(0.5)
    apiserver.faults.latency(600, verb="update", resource="leases", times=None)
    assert await wait_lost(a) == pytest.approx(RENEW, abs=EPS)  # acquired at 0, never renewed since
    assert a.events[-3:] == ["status:False", "work-ended", "stopped"]


@pytest.mark.looptime
async def test_after_a_transient_outage_the_leader_reclaims_its_own_lease(
    group: Group, apiserver: APIServer, kube: kr8s.asyncio.Api
) -> None:
    a = group.add("a", work=True).start()
    await wait_leading(a, 5)
    b = group.add("b", work=True).start()
    acquired = (await get_lease(kube))["spec"]["acquireTime"]
    await asyncio.sleep(3.3)
    apiserver.faults.fail(500, verb="update", resource="leases", times=None)
    await wait_lost(a)
    apiserver.faults.clear()
    await wait_leading(a, RETRY * 2.2 + EPS)  # nobody took over: the record still names a
    await asyncio.sleep(60)
    assert a.le.is_leader and not b.le.is_leader
    assert a.events == [
        "new:a",
        "status:True",
        "started",
        "status:False",
        "work-ended",
        "stopped",
        "status:True",
        "started",
    ]
    assert b.events == ["new:a"]
    spec = (await get_lease(kube))["spec"]
    assert spec["acquireTime"] == acquired and spec["leaseTransitions"] == 0


# -- existing leases -------------------------------------------------------------------------


@pytest.mark.looptime
@pytest.mark.parametrize("duration", [15, 5])
async def test_a_stale_lease_is_taken_over_when_it_expires_by_the_local_clock(
    group: Group, kube: kr8s.asyncio.Api, duration: int
) -> None:
    spec = {
        "holderIdentity": "ghost",
        "leaseDurationSeconds": duration,
        "renewTime": "2001-01-01T00:00:00.000000Z",
        "leaseTransitions": 3,
    }
    status, _ = await call(kube, "POST", LEASES, {"metadata": {"name": "lock"}, "spec": spec})
    assert status == 201
    a = group.add("a").start()
    # the ancient renewTime is not trusted: the record expires `duration` s after a saw it
    assert await wait_leading(a) == pytest.approx(duration, abs=EPS)
    assert a.events == ["new:ghost", "new:a", "status:True", "started"]
    spec = (await get_lease(kube))["spec"]
    assert spec["holderIdentity"] == "a" and spec["leaseTransitions"] == 4
    assert spec["leaseDurationSeconds"] == 15


@pytest.mark.looptime
async def test_a_released_lease_is_taken_at_once(group: Group, kube: kr8s.asyncio.Api) -> None:
    spec = {"holderIdentity": "", "leaseDurationSeconds": 1, "leaseTransitions": 7}
    await call(kube, "POST", LEASES, {"metadata": {"name": "lock"}, "spec": spec})
    a = group.add("a").start()
    assert await wait_leading(a, 5) < EPS
    assert a.events == ["new:a", "status:True", "started"]
    assert (await get_lease(kube))["spec"]["leaseTransitions"] == 8


# -- the API around run() --------------------------------------------------------------------


@pytest.mark.looptime
async def test_leading_and_lost_waits_and_status_listeners(group: Group) -> None:
    a = group.add("a")
    statuses: list[bool] = []
    a.le.on_status_change.append(statuses.append)
    async with asyncio.timeout(1):
        await a.le.lost()  # never held
    a.start()
    await wait_leading(a, 5)
    waiter = asyncio.create_task(a.le.lost())
    await asyncio.sleep(30)
    assert not waiter.done() and a.le.leader == "a"
    await a.le.stop()
    async with asyncio.timeout(1):
        await waiter
    assert statuses == [True, False] and a.le.leader is None  # released
    b = group.add("b").start()
    await asyncio.sleep(0.1)  # b's run() has started
    with pytest.raises(RuntimeError):  # run() while it runs
        await b.le.run(group.kube)


@pytest.mark.looptime
async def test_stop_before_run_makes_run_return_at_once(group: Group) -> None:
    a = group.add("a")
    await a.le.stop()
    async with asyncio.timeout(1):
        await a.le.run(group.kube)
    assert a.events == []


@pytest.mark.looptime
async def test_release_hands_over_and_the_candidate_keeps_campaigning(
    group: Group, kube: kr8s.asyncio.Api
) -> None:
    a = group.add("a", work=True).start()
    await wait_leading(a, 5)
    b = group.add("b", work=True).start()
    await asyncio.sleep(4.5)
    released = now()
    await a.le.release()
    assert await wait_leading(b, 10) - released <= RETRY + EPS
    await asyncio.sleep(60)
    assert b.le.is_leader and not a.le.is_leader and a.le.leader == "b"
    assert a.task is not None and not a.task.done()
    await b.le.stop()  # now a, still campaigning, takes over
    await wait_leading(a, 2.2 * RETRY + EPS)
    assert (await get_lease(kube))["spec"]["leaseTransitions"] == 2


@pytest.mark.looptime
async def test_cancelling_run_with_release_on_cancel_releases(
    group: Group, kube: kr8s.asyncio.Api
) -> None:
    a = group.add("a", work=True).start()
    await wait_leading(a, 5)
    await a.kill()
    assert a.events[-2:] == ["work-ended", "stopped"]
    assert (await get_lease(kube))["spec"]["holderIdentity"] == ""


@pytest.mark.looptime
async def test_callback_errors_are_logged_and_do_not_stop_the_election(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*args: Any) -> None:
        raise RuntimeError("boom")

    le = LeaderElection(
        "lock", identity="a", on_new_leader=boom, on_started_leading=boom, on_stopped_leading=boom
    )
    le.on_status_change.append(boom)
    task = asyncio.create_task(le.run(kube))
    async with asyncio.timeout(5):
        await le.leading()
    await asyncio.sleep(10)
    assert le.is_leader
    await le.stop()
    assert task.done() and task.exception() is None
    failed = [r.getMessage() for r in caplog.records if r.exc_info]
    assert len(failed) == 5  # on_new_leader, status x2, on_started_leading, on_stopped_leading
    assert all("boom" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


# -- a long random run -----------------------------------------------------------------------


@pytest.mark.looptime
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_kills_and_stops_never_give_two_leaders(group: Group, seed: int) -> None:
    rng = random.Random(seed)
    names = iter(f"c{i}" for i in range(1000))
    alive = [group.add(next(names), work=True).start() for _ in range(3)]
    for _ in range(15):
        await eventually(lambda: bool(group.leaders()), 2 * (LEASE + 2.2 * RETRY), interval=0.05)
        await asyncio.sleep(rng.uniform(0, 3 * RETRY))
        leader = next((c for c in alive if c.le.is_leader), None)
        if leader is None:
            continue
        if rng.random() < 0.5:
            leader.le.release_on_cancel = False
            await leader.kill()
        else:
            await leader.le.stop()
        alive.remove(leader)
        alive.append(group.add(next(names), work=True).start())
    assert group.violations == []
    transitions = [e for _, _, e in group.journal if e == "status:True"]
    assert len(transitions) >= 15
