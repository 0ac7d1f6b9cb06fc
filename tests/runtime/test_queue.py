"""Tests of reconcile_kit.runtime.queue: WorkQueue semantics, delays, retries and RetryPolicy.

Every async test runs on looptime's fast-forwarded loop clock (``pytest.mark.looptime``):
``asyncio.sleep(1000)`` and timers 1000 s away return at once in real time while
``loop.time()`` advances by exactly the requested amount (the loop starts at 0). A test that
waits for something that never happens therefore fails at its ``asyncio.timeout`` instead of
hanging.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import random
import time
import tracemalloc
from typing import Any

import pytest

from reconcile_kit.meta.objects import ObjectRef
from reconcile_kit.runtime.queue import (
    DEFAULT_MAX_DELAY,
    QueueMetrics,
    QueueShutDown,
    RetryPolicy,
    WorkQueue,
)
from reconcile_kit.testing import eventually

pytestmark = pytest.mark.looptime

A = ObjectRef("ConfigMap", "default", "a")
B = ObjectRef("ConfigMap", "default", "b")
C = ObjectRef("Namespace", "", "c")
BOOM = RuntimeError("boom")


def now() -> float:
    return asyncio.get_running_loop().time()


async def get_within(queue: WorkQueue[Any], seconds: float = 1.0) -> tuple[Any, frozenset[str]]:
    """``queue.get()``, failing the test if nothing comes within ``seconds`` of loop time."""
    async with asyncio.timeout(seconds):
        return await queue.get()


async def assert_nothing_within(queue: WorkQueue[Any], seconds: float) -> None:
    """Assert that ``queue.get()`` hands out nothing for ``seconds`` of loop time."""
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(seconds):
            key, _ = await queue.get()
            pytest.fail(f"unexpectedly got {key}")


async def settle() -> None:
    """Let every ready callback and task run (no loop time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


class RecordingMetrics(QueueMetrics):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.adds_total = 0
        self.depths: list[int] = []
        self.queue_durations: list[float] = []
        self.work_durations: list[float] = []
        self.retries_total = 0
        self.drops_total = 0

    def adds(self, name: str) -> None:
        self.names.add(name)
        self.adds_total += 1

    def depth(self, name: str, depth: int) -> None:
        self.depths.append(depth)

    def queue_duration(self, name: str, seconds: float) -> None:
        self.queue_durations.append(seconds)

    def work_duration(self, name: str, seconds: float) -> None:
        self.work_durations.append(seconds)

    def retries(self, name: str) -> None:
        self.retries_total += 1

    def drops(self, name: str) -> None:
        self.drops_total += 1


# ----------------------------------------------------------------------- coalescing


async def test_adds_while_queued_coalesce() -> None:
    metrics = RecordingMetrics()
    queue: WorkQueue[ObjectRef] = WorkQueue(name="q", metrics=metrics)
    for _ in range(100):
        queue.add(A)
    assert len(queue) == 1
    assert await get_within(queue) == (A, frozenset())
    assert len(queue) == 0
    queue.done(A)
    await assert_nothing_within(queue, 60)
    assert metrics.adds_total == 1
    assert metrics.names == {"q"}


async def test_keys_are_handed_out_in_add_order() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    for key in (B, A, C, B, A):
        queue.add(key)
    assert [(await get_within(queue))[0] for _ in range(3)] == [B, A, C]


async def test_reasons_accumulate_and_reset() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A, "created")
    queue.add(A, "updated")
    queue.add(A)
    queue.add(A, "updated")
    assert await get_within(queue) == (A, frozenset({"created", "updated"}))
    queue.done(A)
    queue.add(A, "deleted")
    assert await get_within(queue) == (A, frozenset({"deleted"}))
    queue.done(A)
    queue.add(A)
    assert await get_within(queue) == (A, frozenset())


def test_a_queued_key_costs_no_set_of_its_own() -> None:
    # a million keys queued by a first LIST (issue 31): a reasons set per key was ~200
    # bytes each (563 bytes per queued key in all; 347 with the sets shared)
    queue: WorkQueue[ObjectRef] = WorkQueue()
    keys = [ObjectRef("ConfigMap", "default", f"cm-{i}") for i in range(20_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for key in keys:
            queue.add(key, "created", low_priority=True)
        per_key = (tracemalloc.get_traced_memory()[0] - before) / len(keys)
    finally:
        tracemalloc.stop()
    assert per_key < 450, per_key


async def test_add_while_processing_runs_exactly_once_more() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A, "created")
    assert await get_within(queue) == (A, frozenset({"created"}))
    for reason in ("updated", "owned", "updated", "mapped"):
        queue.add(A, reason)
    assert queue.is_processing(A)
    assert len(queue) == 0  # dirty, but not handed out while processing
    second = asyncio.create_task(get_within(queue, 100))
    await asyncio.sleep(50)
    assert not second.done()
    queue.done(A)
    assert await second == (A, frozenset({"updated", "owned", "mapped"}))
    queue.done(A)
    assert not queue.is_processing(A)
    await assert_nothing_within(queue, 60)


async def test_claim_takes_a_key_as_get_would_unless_it_is_processing() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A, "created")
    queue.add(B)
    assert queue.claim(A) == frozenset({"created"})  # queued: taken out of the line
    assert queue.is_processing(A) and len(queue) == 1
    assert queue.claim(A) is None  # being processed: not twice
    queue.add(A, "updated")  # added while claimed: runs once more after done
    assert (await get_within(queue))[0] == B
    queue.done(A)
    assert await get_within(queue) == (A, frozenset({"updated"}))
    assert queue.claim(C) == frozenset()  # not queued at all
    assert queue.claim(B) is None
    for key in (A, B, C):
        queue.done(key)
    await assert_nothing_within(queue, 10)


async def test_unfinished_keys_are_changes_retries_and_runs_not_first_looks() -> None:
    """What a stop leaves undone (a controller's next run queues it first): keys queued at
    normal priority, waiting for a retry, or being processed; not those queued only for a
    first look (low priority). Kept after the shutdown drops the queue."""
    d = ObjectRef("ConfigMap", "default", "d")
    queue: WorkQueue[ObjectRef] = WorkQueue()
    for key in (A, B, C, d):
        queue.add(key, "created", low_priority=True)
    assert queue.unfinished() == set()
    assert await get_within(queue) == (A, frozenset({"created"}))  # processing
    queue.add(B, "updated")  # a change: promoted
    queue.add_after(C, 60, "requeued")
    assert queue.unfinished() == {A, B, C}
    queue.shutdown()
    queue.done(A)
    assert queue.unfinished() == {A, B, C}


async def test_low_priority_keys_wait_behind_normal_ones_and_are_promoted() -> None:
    """controller-runtime 0.20's priority queue: first reconciles of objects that just
    arrived (low) wait behind changes to known objects; a normal add promotes a key."""
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A, "created", low_priority=True)
    queue.add(B, "created", low_priority=True)
    queue.add(C, "updated")
    assert len(queue) == 3
    queue.add(B, "updated")  # promoted: goes ahead of A, keeps both reasons
    queue.add(C, "created", low_priority=True)  # never demoted
    taken = [await get_within(queue) for _ in range(3)]
    assert taken == [
        (C, frozenset({"updated", "created"})),
        (B, frozenset({"created", "updated"})),
        (A, frozenset({"created"})),
    ]
    assert len(queue) == 0
    queue.add(A, low_priority=True)  # while processing: low again once done
    queue.add(B)
    queue.done(A)
    queue.done(B)
    queue.done(C)
    assert [(await get_within(queue))[0] for _ in range(2)] == [B, A]
    queue.done(A)
    queue.done(B)
    queue.add(C, low_priority=True)
    assert queue.claim(C) == frozenset()  # a low key can be claimed: its entry goes stale
    queue.done(C)
    await assert_nothing_within(queue, 10)


async def test_a_low_priority_key_that_waited_long_enough_takes_turns() -> None:
    """An object moved in from a paused replica may carry a change nobody reconciled: under
    a steady stream of normal adds its low-priority run must not wait without bound. Once
    the oldest low key waited low_priority_max_wait, the lines alternate, one key each."""
    now = [0.0]
    queue: WorkQueue[ObjectRef] = WorkQueue(clock=lambda: now[0], low_priority_max_wait=1.0)
    moved = [ObjectRef("ConfigMap", "default", f"moved-{i}") for i in range(3)]
    for key in moved:
        queue.add(key, "created", low_priority=True)
    own = [ObjectRef("ConfigMap", "default", f"own-{i}") for i in range(6)]
    for key in own[:3]:
        queue.add(key, "updated")
    # not overdue yet: the normal line first
    assert (await get_within(queue))[0] == own[0]
    queue.done(own[0])
    now[0] = 1.0  # the low line's oldest waited 1 s: turns
    for key in own[3:]:
        queue.add(key, "updated")  # the stream goes on
    taken = []
    while len(queue):
        key = (await get_within(queue))[0]
        taken.append(key)
        queue.done(key)
    assert taken == [moved[0], own[1], moved[1], own[2], moved[2], own[3], own[4], own[5]]
    # None: as controller-runtime, the low line waits for an empty normal line
    patient: WorkQueue[ObjectRef] = WorkQueue(clock=lambda: now[0], low_priority_max_wait=None)
    patient.add(moved[0], low_priority=True)
    patient.add(own[0])
    now[0] = 1000.0
    patient.add(own[1])
    assert [(await get_within(patient))[0] for _ in range(3)] == [own[0], own[1], moved[0]]
    with pytest.raises(ValueError, match="low_priority_max_wait"):
        WorkQueue(low_priority_max_wait=-1)


async def test_other_keys_run_while_one_is_processing() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A)
    queue.add(B)
    assert (await get_within(queue))[0] == A
    queue.add(A)
    assert (await get_within(queue))[0] == B
    await assert_nothing_within(queue, 10)


async def test_done_of_a_key_not_processing_raises() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue(name="q")
    with pytest.raises(ValueError, match="not being processed"):
        queue.done(A)
    queue.add(A)
    await get_within(queue)
    queue.done(A)
    with pytest.raises(ValueError):
        queue.done(A)


async def test_any_hashable_key_works() -> None:
    queue: WorkQueue[tuple[str, int]] = WorkQueue()
    queue.add(("x", 1), "a")
    queue.add(("x", 1), "b")
    assert await get_within(queue) == (("x", 1), frozenset({"a", "b"}))


# ----------------------------------------------------------------------- concurrency


async def test_concurrent_workers_never_share_a_key_and_every_add_is_served() -> None:
    """10 workers, 30 keys, 600 random adds (some while processing) over loop time."""
    rng = random.Random(20240611)
    keys = [ObjectRef("Pod", "ns", f"p{i}") for i in range(30)]
    queue: WorkQueue[ObjectRef] = WorkQueue()
    active: set[ObjectRef] = set()
    overlaps: list[ObjectRef] = []
    adds = 0
    last_add: dict[ObjectRef, int] = {}  # key -> number of adds done when last added
    last_start: dict[ObjectRef, int] = {}  # key -> number of adds done when its run started
    runs = 0

    async def worker() -> None:
        nonlocal runs
        while True:
            key, _ = await queue.get()
            if key in active:
                overlaps.append(key)
            active.add(key)
            last_start[key] = adds
            runs += 1
            await asyncio.sleep(rng.choice([0, 0.001, 0.01, 0.05]))
            active.discard(key)
            queue.done(key)

    async def producer() -> None:
        nonlocal adds
        for _ in range(600):
            key = rng.choice(keys)
            adds += 1
            last_add[key] = adds
            queue.add(key, "updated")
            if rng.random() < 0.5:
                await asyncio.sleep(rng.choice([0, 0.002, 0.02]))

    workers = [asyncio.create_task(worker()) for _ in range(10)]
    async with asyncio.timeout(600):
        await producer()
    await eventually(
        lambda: not len(queue) and not any(queue.is_processing(key) for key in keys),
        600,
        interval=0.01,
        what="every key served",
    )
    queue.shutdown()
    async with asyncio.timeout(1):
        results = await asyncio.gather(*workers, return_exceptions=True)

    assert overlaps == []
    assert all(isinstance(result, QueueShutDown) for result in results)
    assert set(last_add) == set(keys)
    assert {key: last_start[key] >= last_add[key] for key in keys} == dict.fromkeys(keys, True)
    assert len(keys) <= runs < adds  # coalescing happened, every key ran


async def test_woken_but_cancelled_getter_hands_the_key_on() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await settle()
    queue.add(A)  # wakes the first waiter ...
    first.cancel()  # ... which is cancelled before it runs
    async with asyncio.timeout(1):
        assert await second == (A, frozenset())
    assert first.cancelled()


async def test_cancelled_getter_does_not_lose_keys() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    waiting = asyncio.create_task(queue.get())
    await settle()
    waiting.cancel()
    await settle()
    queue.add(A)
    assert await get_within(queue) == (A, frozenset())


# --------------------------------------------------------------------------- delays


async def test_add_after_waits_on_the_loop_clock() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add_after(A, 1000, "requeue")
    assert len(queue) == 0
    assert queue.pending_delayed() == 1
    started = time.perf_counter()
    assert await get_within(queue, 2000) == (A, frozenset({"requeue"}))
    assert now() == pytest.approx(1000)
    assert time.perf_counter() - started < 5  # fast-forwarded, not slept
    assert queue.pending_delayed() == 0


async def test_add_after_earliest_due_time_wins() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add_after(A, 10, "requeue")
    queue.add_after(A, 5, "retry")
    queue.add_after(A, 20, "resync")
    assert queue.pending_delayed() == 1
    assert await get_within(queue, 100) == (A, frozenset({"requeue", "retry", "resync"}))
    assert now() == pytest.approx(5)
    queue.done(A)
    await assert_nothing_within(queue, 100)  # nothing left at 10 or 20


async def test_add_after_then_add_runs_now_and_again_when_due() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add_after(A, 100, "requeue")
    queue.add(A, "updated")
    assert await get_within(queue) == (A, frozenset({"updated"}))
    assert now() == 0
    queue.done(A)
    # client-go: the delayed add stays pending and simply adds the key when due
    assert await get_within(queue, 200) == (A, frozenset({"requeue"}))
    assert now() == pytest.approx(100)


async def test_add_after_non_positive_delay_adds_now() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add_after(A, 0, "requeue")
    queue.add_after(B, -5)
    assert len(queue) == 2
    assert queue.pending_delayed() == 0
    with pytest.raises(ValueError):
        queue.add_after(C, math.nan)


async def test_delayed_keys_come_in_due_order_at_their_times() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add_after(C, 30)
    queue.add_after(A, 10)
    queue.add_after(B, 20)
    got = []
    for _ in range(3):
        key, _ = await get_within(queue, 100)
        got.append((key, now()))
        queue.done(key)
    assert [key for key, _ in got] == [A, B, C]
    assert [at for _, at in got] == pytest.approx([10, 20, 30])


async def test_many_superseded_delays_keep_the_earliest_per_key() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    for delay in range(1000, 0, -1):  # each one lowers A's and C's due times
        queue.add_after(A, delay, "requeue")
        queue.add_after(C, 2000 + delay)
        if delay == 900:
            queue.add_after(B, 500, "resync")  # never superseded
    assert queue.pending_delayed() == 3
    got = []
    for _ in range(3):
        key, reasons = await get_within(queue, 5000)
        got.append((key, reasons, now()))
        queue.done(key)
    assert [(key, reasons) for key, reasons, _ in got] == [
        (A, frozenset({"requeue"})),
        (B, frozenset({"resync"})),
        (C, frozenset()),
    ]
    assert [at for _, _, at in got] == pytest.approx([1, 500, 2001])
    await assert_nothing_within(queue, 5000)


async def test_delayed_add_while_processing_runs_after_done() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A)
    await get_within(queue)
    queue.add_after(A, 1, "requeue")
    await asyncio.sleep(5)
    assert len(queue) == 0
    queue.done(A)
    assert await get_within(queue) == (A, frozenset({"requeue"}))
    assert now() == pytest.approx(5)


async def test_delays_do_not_poll_the_clock() -> None:
    """A single timer per earliest due time: waiting 1000 s reads the clock a few times."""
    calls = 0

    def clock() -> float:
        nonlocal calls
        calls += 1
        return now()

    queue: WorkQueue[ObjectRef] = WorkQueue(clock=clock)
    for key, delay in ((A, 1000), (B, 1500), (C, 2000)):
        queue.add_after(key, delay)
    for _ in range(3):
        key, _ = await get_within(queue, 3000)
        queue.done(key)
    assert now() == pytest.approx(2000)
    assert calls < 30


async def test_a_timer_firing_counts_as_due_even_if_the_clock_lags() -> None:
    """The timer fires after ``due - clock()`` loop seconds; a lagging clock must not spin."""
    calls = 0

    def half_speed() -> float:
        nonlocal calls
        calls += 1
        if calls > 1000:
            raise RuntimeError("the queue is spinning on its clock")
        return now() / 2

    queue: WorkQueue[ObjectRef] = WorkQueue(clock=half_speed)
    queue.add_after(A, 10)
    assert await get_within(queue, 100) == (A, frozenset())
    assert now() == pytest.approx(10)
    assert calls < 10


# -------------------------------------------------------------------------- retries


async def run_failing(queue: WorkQueue[ObjectRef], policy: RetryPolicy, runs: int) -> list[float]:
    """Fail ``runs`` runs of A in a row; return the loop time of each run."""
    times = []
    queue.add(A)
    for _ in range(runs):
        key, _ = await get_within(queue, 10 * DEFAULT_MAX_DELAY)
        times.append(now())
        queue.retry(key, policy, None, BOOM)
        queue.done(key)
    return times


def gaps(times: list[float]) -> list[float]:
    return [round(later - earlier, 6) for earlier, later in itertools.pairwise(times)]


async def test_default_backoff_doubles_from_5ms_to_1000s_on_the_loop_clock() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    started = time.perf_counter()
    times = await run_failing(queue, RetryPolicy(), 22)
    expected = [min(0.005 * 2**n, 1000.0) for n in range(21)]
    assert gaps(times) == pytest.approx(expected, abs=1e-5)
    assert expected[:3] == [0.005, 0.01, 0.02] and expected[-3:] == [1000.0] * 3
    assert queue.attempts(A) == 22
    assert time.perf_counter() - started < 10  # ~4000 s of loop time


async def test_retry_while_processing_runs_after_done_and_reason_is_retry() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A, "created")
    await get_within(queue)
    assert queue.retry(A, RetryPolicy(2.0), None, BOOM) == 2.0
    await asyncio.sleep(3)
    queue.done(A)
    assert await get_within(queue) == (A, frozenset({"retry"}))


async def test_forget_resets_the_backoff() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    policy = RetryPolicy()
    assert [queue.retry(A, policy, None, BOOM) for _ in range(3)] == [0.005, 0.01, 0.02]
    assert queue.attempts(A) == 3
    assert queue.attempts(B) == 0
    queue.forget(A)
    assert queue.attempts(A) == 0
    assert queue.retry(A, policy, None, BOOM) == 0.005


async def test_attempts_are_per_key() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    policy = RetryPolicy()
    queue.retry(A, policy, None, BOOM)
    queue.retry(A, policy, None, BOOM)
    assert queue.retry(B, policy, None, BOOM) == 0.005
    assert (queue.attempts(A), queue.attempts(B)) == (2, 1)


async def test_fixed_delay_policy() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    times = await run_failing(queue, RetryPolicy(3), 5)
    assert gaps(times) == [3.0] * 4


async def test_list_policy_last_delay_repeats() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    times = await run_failing(queue, RetryPolicy([1, 5, 30]), 6)
    assert gaps(times) == [1.0, 5.0, 30.0, 30.0, 30.0]


async def test_callable_policy_gets_attempt_ctx_and_error() -> None:
    calls: list[tuple[int, Any, BaseException]] = []

    def delay(attempt: int, ctx: Any, error: BaseException) -> float:
        calls.append((attempt, ctx, error))
        return attempt * 2.0

    queue: WorkQueue[ObjectRef] = WorkQueue()
    policy = RetryPolicy(delay)
    ctx = object()
    errors = [ValueError("one"), KeyError("two"), BOOM]
    delays = [queue.retry(A, policy, ctx, error) for error in errors]
    assert delays == [2.0, 4.0, 6.0]
    assert calls == [(1, ctx, errors[0]), (2, ctx, errors[1]), (3, ctx, errors[2])]
    assert await get_within(queue, 10) == (A, frozenset({"retry"}))
    assert now() == pytest.approx(2.0)  # earliest of the three delayed adds


async def test_max_retries_drops_the_key_logs_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    metrics = RecordingMetrics()
    queue: WorkQueue[ObjectRef] = WorkQueue(name="pods", metrics=metrics)
    policy = RetryPolicy(max_retries=2)
    with caplog.at_level(logging.WARNING, logger="reconcile_kit.runtime.queue"):
        times = await run_failing(queue, policy, 3)
    assert gaps(times) == [0.005, 0.01]
    assert queue.dropped == 1
    assert metrics.drops_total == 1
    assert metrics.retries_total == 2
    assert queue.pending_delayed() == 0
    await assert_nothing_within(queue, 2 * DEFAULT_MAX_DELAY)
    [record] = [r for r in caplog.records if r.name == "reconcile_kit.runtime.queue"]
    assert record.levelno == logging.WARNING
    assert str(A) in record.getMessage() and "pods" in record.getMessage()
    assert "boom" in record.getMessage()
    # dropped until the next change, which starts a fresh retry budget
    assert queue.attempts(A) == 0
    queue.add(A, "updated")
    assert await get_within(queue) == (A, frozenset({"updated"}))
    assert queue.retry(A, policy, None, BOOM) == 0.005


async def test_max_retries_zero_never_retries() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    assert queue.retry(A, RetryPolicy(1, max_retries=0), None, BOOM) is None
    assert queue.pending_delayed() == 0
    assert queue.dropped == 1


# ----------------------------------------------------------------------- RetryPolicy


def test_default_policy_is_client_go_exponential_capped_at_1000s() -> None:
    policy = RetryPolicy()
    delays = [policy.delay(attempt, None, BOOM) for attempt in range(1, 21)]
    assert delays[:5] == [0.005, 0.01, 0.02, 0.04, 0.08]
    assert delays[17] == pytest.approx(655.36)  # attempt 18: 5 ms * 2**17
    assert delays[18:] == [1000.0, 1000.0]
    assert policy.delay(10_000, None, BOOM) == 1000.0  # no overflow


def test_list_policy_and_fixed_policy() -> None:
    steps = RetryPolicy([1, 5, 30])
    assert [steps.delay(n, None, BOOM) for n in range(1, 7)] == [1, 5, 30, 30, 30, 30]
    fixed = RetryPolicy(2.5)
    assert {fixed.delay(n, None, BOOM) for n in range(1, 50)} == {2.5}


def test_min_and_max_interval_clamp() -> None:
    assert RetryPolicy(lambda *_: 0.001, min_interval=0.5).delay(1, None, BOOM) == 0.5
    capped = RetryPolicy(max_interval=2)
    assert [capped.delay(n, None, BOOM) for n in (1, 9, 10, 50)] == [0.005, 1.28, 2.0, 2.0]
    both = RetryPolicy([10, 0.1, 3], min_interval=1, max_interval=5)
    assert [both.delay(n, None, BOOM) for n in (1, 2, 3)] == [5.0, 1.0, 3.0]
    assert RetryPolicy(lambda *_: -3).delay(1, None, BOOM) == 0.0
    assert RetryPolicy(lambda *_: math.inf, max_interval=60).delay(1, None, BOOM) == 60.0


def test_max_retries_gives_up_past_the_maximum() -> None:
    policy = RetryPolicy(1, max_retries=3)
    assert [policy.delay(n, None, BOOM) for n in range(1, 6)] == [1, 1, 1, None, None]


def test_callable_results_are_checked() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(lambda *_: math.nan).delay(1, None, BOOM)
    with pytest.raises(ValueError):
        RetryPolicy(lambda *_: math.inf).delay(1, None, BOOM)
    with pytest.raises(TypeError):
        RetryPolicy(lambda *_: "soon").delay(1, None, BOOM)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RetryPolicy().delay(0, None, BOOM)


def test_coerce() -> None:
    policy = RetryPolicy(3)
    assert RetryPolicy.coerce(policy) is policy
    assert RetryPolicy.coerce(None).delay(2, None, BOOM) == 0.01
    assert RetryPolicy.coerce(7).delay(2, None, BOOM) == 7.0
    assert RetryPolicy.coerce((1, 2)).delay(5, None, BOOM) == 2.0
    assert RetryPolicy.coerce(lambda n, ctx, err: n * 10.0).delay(3, None, BOOM) == 30.0


@pytest.mark.parametrize(
    ("delay", "kwargs", "error"),
    [
        ("5s", {}, TypeError),
        (True, {}, TypeError),
        (object(), {}, TypeError),
        ([], {}, ValueError),
        (-1, {}, ValueError),
        ([1, -2], {}, ValueError),
        (math.inf, {}, ValueError),
        (None, {"min_interval": -1}, ValueError),
        (None, {"min_interval": 5, "max_interval": 1}, ValueError),
        (None, {"max_retries": -1}, ValueError),
    ],
)
def test_invalid_policies_are_refused(delay: Any, kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        RetryPolicy(delay, **kwargs)


# ---------------------------------------------------------------- shutdown, metrics


async def test_shutdown_wakes_waiters_and_stops_the_queue() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue(name="q")
    queue.add(A)
    await get_within(queue)
    waiters = [asyncio.create_task(queue.get()) for _ in range(3)]
    queue.add_after(B, 10)
    await settle()
    assert not any(waiter.done() for waiter in waiters)
    queue.shutdown()
    async with asyncio.timeout(1):
        results = await asyncio.gather(*waiters, return_exceptions=True)
    assert [type(result) for result in results] == [QueueShutDown] * 3
    assert queue.is_shut_down
    assert queue.pending_delayed() == 0
    queue.add(C)
    queue.add_after(C, 1)
    queue.add(A)
    assert len(queue) == 0 and queue.pending_delayed() == 0
    with pytest.raises(QueueShutDown):
        await queue.get()
    queue.done(A)  # a run in progress can still finish
    assert not queue.is_processing(A)
    queue.shutdown()  # idempotent
    await asyncio.sleep(20)  # the delayed add of B never fires


async def test_shutdown_stops_handing_out_queued_keys() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue()
    queue.add(A)
    queue.shutdown()
    assert len(queue) == 0
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_metrics_report_adds_depth_durations_and_retries() -> None:
    metrics = RecordingMetrics()
    queue: WorkQueue[ObjectRef] = WorkQueue(name="q", metrics=metrics)
    queue.add(A)
    queue.add(A)
    queue.add(B)
    await asyncio.sleep(5)
    await get_within(queue)  # A waited 5 s
    await asyncio.sleep(2)
    queue.add(A)  # dirty while processing: counted, in the depth
    queue.done(A)  # worked 2 s
    assert metrics.adds_total == 3
    assert metrics.depths == [1, 2, 1, 2]
    assert metrics.queue_durations == [pytest.approx(5)]
    assert metrics.work_durations == [pytest.approx(2)]
    queue.retry(B, RetryPolicy(), None, BOOM)
    assert metrics.retries_total == 1


def test_default_metrics_are_no_ops() -> None:
    metrics = QueueMetrics()
    metrics.adds("q")
    metrics.depth("q", 3)
    metrics.queue_duration("q", 1.0)
    metrics.work_duration("q", 1.0)
    metrics.retries("q")
    metrics.drops("q")


# ------------------------------------------------------------- the overall retry limit


async def retry_storm(queue: WorkQueue[Any], keys: int, seconds: float) -> tuple[int, int]:
    """``keys`` keys whose every run fails, retried with the default policy: how many first
    runs and how many retries start in the first ``seconds`` of loop time."""
    for i in range(keys):
        queue.add(("key", i))
    first = retries = 0
    async with asyncio.timeout(seconds + 60):
        while True:
            key, reasons = await queue.get()
            if now() > seconds:
                break
            if "retry" in reasons:
                retries += 1
            else:
                first += 1
            queue.retry(key, RetryPolicy(), None, BOOM)
            queue.done(key)
    return first, retries


async def test_a_retry_storm_is_held_to_10_qps_after_a_burst_of_100() -> None:
    """client-go's DefaultTypedControllerRateLimiter: max(per-key 5 ms doubling, an overall
    10 qps / 100 burst bucket). 200 keys failing for 5 s: 100 + 10 * 5 retries."""
    first, retries = await retry_storm(WorkQueue(), 200, 5.0)
    assert first == 200
    assert 100 + 10 * 5 - 1 <= retries <= 100 + 10 * 5 + 1
    print(f"retries in 5 s, 200 failing keys, overall limit on: {retries}")


async def test_without_the_overall_limit_only_the_per_key_backoff_holds() -> None:
    queue: WorkQueue[Any] = WorkQueue(retry_rate_limit=None)
    assert queue.retry_rate_limit is None
    first, retries = await retry_storm(queue, 200, 5.0)
    assert first == 200
    assert retries > 10 * (100 + 10 * 5)  # per key: 5 ms, 10 ms, ... 2.56 s: 10 in 5 s
    print(f"retries in 5 s, 200 failing keys, overall limit off: {retries}")


async def test_a_retry_waits_for_the_later_of_its_delay_and_its_token() -> None:
    queue: WorkQueue[ObjectRef] = WorkQueue(retry_rate_limit=(1, 2))
    assert queue.retry_rate_limit == (1.0, 2)
    fixed = RetryPolicy(0.5)
    assert [queue.retry(key, fixed, None, BOOM) for key in (A, B, C)] == [0.5, 0.5, 1.0]
    assert queue.retry(A, RetryPolicy(5), None, BOOM) == 5  # (its token: at 2 s)
    got = []
    for _ in range(3):
        key, reasons = await get_within(queue, 5)
        got.append((key, now(), reasons))
    assert got == [
        (A, pytest.approx(0.5), frozenset({"retry"})),
        (B, pytest.approx(0.5), frozenset({"retry"})),
        (C, pytest.approx(1.0), frozenset({"retry"})),
    ]


async def test_delayed_adds_and_drops_take_no_token() -> None:
    """Requeues (controller-runtime's RequeueAfter: AddAfter) are not rate limited, and a
    key given up on is not retried, so it takes nothing either."""
    queue: WorkQueue[Any] = WorkQueue(retry_rate_limit=(1, 1))
    for i in range(50):
        queue.add_after(("key", i), 0.01)
    for _ in range(50):
        await get_within(queue, 0.02)
    assert now() == pytest.approx(0.01)
    assert queue.retry(A, RetryPolicy(max_retries=0), None, BOOM) is None
    assert queue.retry(B, RetryPolicy(0.2), None, BOOM) == 0.2  # the one token was still there
    assert queue.retry(C, RetryPolicy(0.2), None, BOOM) == pytest.approx(1.0)


def test_the_default_overall_limit_is_client_gos() -> None:
    assert WorkQueue().retry_rate_limit == (10.0, 100)


@pytest.mark.parametrize(
    ("limit", "error"),
    [((0, 1), ValueError), ((1, 0), ValueError), ("x", TypeError), ((1,), TypeError)],
)
def test_bad_overall_limits_are_refused(limit: Any, error: type) -> None:
    with pytest.raises(error):
        WorkQueue(retry_rate_limit=limit)
