"""A work queue for reconcilers: coalescing, one worker per key, delayed adds and retry backoff.

The semantics follow client-go's workqueue (``k8s.io/client-go/util/workqueue``), which
controller-runtime and kube-rs's scheduler share:

- a key added while it is already queued is queued once (adds coalesce);
- a key is never handed to two workers at once;
- a key added while a worker is reconciling it is marked dirty and handed out again once
  the worker calls :meth:`WorkQueue.done`, so the latest state is always reconciled;
- :meth:`WorkQueue.add_after` queues a key later; of several pending delays the earliest
  due time wins, and a due key is simply :meth:`WorkQueue.add`-ed (coalescing does the rest);
- failures are retried with a per-key :class:`RetryPolicy` (by default client-go's
  ``ItemExponentialFailureRateLimiter``: 5 ms doubling up to 1000 s), reset on success by
  :meth:`WorkQueue.forget`;
- and all retries of a queue together are held to an overall token bucket (by default
  10 per second, bursts of 100): a retry waits for the later of its key's delay and its
  token, as client-go's ``DefaultTypedControllerRateLimiter`` (the max of both limiters).

Two priorities, as controller-runtime 0.20's priority queue: a key added with
``low_priority=True`` (a first reconcile of an object that just arrived: the initial list,
an object moved in from another replica) is handed out only when no key of normal
priority is ready, and an add of normal priority promotes it. So after a start, a
takeover or a move, changes to objects already reconciled do not wait behind thousands of
first reconciles. Unlike controller-runtime's, a low-priority key does not wait without
bound: once the oldest one waited ``low_priority_max_wait`` seconds (default
:data:`LOW_PRIORITY_MAX_WAIT`), the two lines take turns, one key each, until no key of
the low line is that old. An object moved in from a paused or dead replica may carry a
change nobody reconciled, and under a steady stream of other changes it waited for
minutes (a sharding chaos run: 35-70 s).

Every key also collects the *reasons* it was added for (``"created"``, ``"updated"``,
``"retry"``, ...) between two runs; :meth:`WorkQueue.get` hands them out with the key.

The queue belongs to one asyncio event loop and is not thread-safe: call its methods from
coroutines or callbacks running on that loop. All durations are in seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from ..client.errors import ReconcileKitError
from ..client.ratelimit import TokenBucket

__all__ = [
    "DEFAULT_BASE_DELAY",
    "DEFAULT_MAX_DELAY",
    "DEFAULT_RETRY_RATE_LIMIT",
    "DelayFunction",
    "QueueMetrics",
    "QueueShutDown",
    "RetryPolicy",
    "RetryPolicyLike",
    "WorkQueue",
]

logger = logging.getLogger("reconcile_kit.runtime.queue")

K = TypeVar("K", bound=Hashable)

DEFAULT_BASE_DELAY = 0.005
"""First retry delay of the default policy, in seconds (client-go: 5 ms)."""

DEFAULT_MAX_DELAY = 1000.0
"""Cap of the default policy's exponential delay, in seconds (client-go: 1000 s)."""

DEFAULT_RETRY_RATE_LIMIT = (10.0, 100)
"""``(qps, burst)`` of the default overall retry limiter: client-go's
``DefaultTypedControllerRateLimiter`` bucket (10 retries per second, bursts of 100)."""

# Any: the caller's context (a controller's Context), as the user's function types it
DelayFunction: TypeAlias = Callable[[int, Any, BaseException], float]
"""``(attempt, ctx, error) -> seconds``: a computed retry delay (attempt counts from 1)."""


class QueueShutDown(ReconcileKitError):
    """Raised by :meth:`WorkQueue.get` once :meth:`WorkQueue.shutdown` has been called."""


# --------------------------------------------------------------------------- retry policy


LOW_PRIORITY_MAX_WAIT = 1.0
"""Seconds a low-priority key waits at most before the lines take turns (see the module)."""


def _exponential(attempt: int, ctx: Any, error: BaseException) -> float:
    """client-go's ItemExponentialFailureRateLimiter: 5 ms * 2**(attempt-1), at most 1000 s."""
    exponent = min(attempt - 1, 64)  # 2**64 * 5 ms is far past the cap: no float overflow
    return min(DEFAULT_BASE_DELAY * 2.0**exponent, DEFAULT_MAX_DELAY)


def _seconds(value: object, what: str) -> float:
    """``value`` as a finite, non-negative number of seconds, or TypeError/ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number of seconds, not {type(value).__name__}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{what} must be a finite number of seconds >= 0, not {value!r}")
    return seconds


def _fixed(seconds: float) -> DelayFunction:
    def fixed(attempt: int, ctx: Any, error: BaseException) -> float:
        return seconds

    return fixed


def _stepped(delays: Sequence[float]) -> DelayFunction:
    steps = tuple(_seconds(value, "a retry delay") for value in delays)
    if not steps:
        raise ValueError("a list of retry delays must not be empty")

    def stepped(attempt: int, ctx: Any, error: BaseException) -> float:
        return steps[min(attempt, len(steps)) - 1]

    return stepped


def _delay_function(delay: float | Sequence[float] | DelayFunction | None) -> DelayFunction:
    """The delay function for RetryPolicy's ``delay`` argument (see there)."""
    if delay is None:
        return _exponential
    if isinstance(delay, int | float) and not isinstance(delay, bool):
        return _fixed(_seconds(delay, "a retry delay"))
    if isinstance(delay, Sequence) and not isinstance(delay, str | bytes):
        return _stepped(delay)
    if callable(delay):
        return delay
    raise TypeError(
        "a retry delay must be None, seconds, a list of seconds or a callable "
        f"(attempt, ctx, error) -> seconds, not {type(delay).__name__}"
    )


def _check_limits(min_interval: float, max_interval: float | None, max_retries: int | None) -> None:
    _seconds(min_interval, "min_interval")
    if max_interval is not None and _seconds(max_interval, "max_interval") < min_interval:
        raise ValueError(f"max_interval {max_interval!r} is below min_interval {min_interval!r}")
    if max_retries is not None and (isinstance(max_retries, bool) or max_retries < 0):
        raise ValueError(f"max_retries must be an int >= 0 or None, not {max_retries!r}")


class RetryPolicy:
    """How long to wait before retrying a key whose reconcile failed, and when to give up.

    Args:
        delay: the base delay, in seconds, for retry number ``attempt`` (counting from 1):

            - ``None`` (default): client-go's ``ItemExponentialFailureRateLimiter`` defaults,
              ``0.005 * 2**(attempt - 1)`` capped at 1000 s (5 ms, 10 ms, 20 ms, ...);
            - a number: a fixed delay;
            - a sequence of numbers: one delay per attempt, the last one repeating;
            - a callable ``(attempt, ctx, error) -> seconds``. ``ctx`` is whatever the
              caller passes to :meth:`delay` (a controller passes its reconcile context) and
              ``error`` the exception that failed the reconcile.
        min_interval: the smallest delay returned, in seconds (Neon.Operator's
            ``ErrorMinRequeueInterval``).
        max_interval: the largest delay returned, in seconds, or None for no cap
            (Neon.Operator's ``ErrorMaxRequeueInterval``).
        max_retries: how many retries a key gets before it is given up on until its next
            change, or None for no limit (Neon.Operator's ``ErrorMaxRetryCount``).

    Raises:
        TypeError: ``delay`` is none of the shapes above.
        ValueError: a negative or non-finite delay or interval, an empty delay list,
            ``max_interval < min_interval`` or ``max_retries < 0``.
    """

    def __init__(
        self,
        delay: float | Sequence[float] | DelayFunction | None = None,
        *,
        min_interval: float = 0.0,
        max_interval: float | None = None,
        max_retries: int | None = None,
    ) -> None:
        _check_limits(min_interval, max_interval, max_retries)
        self._compute = _delay_function(delay)
        self._described = "exponential" if delay is None else repr(delay)
        self.min_interval = float(min_interval)
        self.max_interval = None if max_interval is None else float(max_interval)
        self.max_retries = max_retries

    def __repr__(self) -> str:
        return (
            f"RetryPolicy({self._described}, min_interval={self.min_interval}, "
            f"max_interval={self.max_interval}, max_retries={self.max_retries})"
        )

    def delay(self, attempt: int, ctx: object, error: BaseException) -> float | None:
        """Seconds to wait before retry number ``attempt`` (from 1), or None to give up.

        None is returned once ``attempt`` exceeds ``max_retries``. Otherwise the base delay
        is clamped to ``[min_interval, max_interval]`` (a negative result of a callable counts
        as 0).

        Raises:
            ValueError: ``attempt < 1``, or a callable returned NaN or an unclamped infinity.
            TypeError: a callable returned something other than a number.
        """
        if attempt < 1:
            raise ValueError(f"retry attempts count from 1, not {attempt!r}")
        if self.max_retries is not None and attempt > self.max_retries:
            return None
        return self._clamp(self._compute(attempt, ctx, error))

    def _clamp(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"a retry delay function returned {type(value).__name__}, not seconds")
        if math.isnan(value):
            raise ValueError("a retry delay function returned NaN")
        seconds = max(float(value), self.min_interval)
        if self.max_interval is not None:
            seconds = min(seconds, self.max_interval)
        return _seconds(seconds, "a retry delay")

    @classmethod
    def coerce(cls, value: RetryPolicyLike) -> RetryPolicy:
        """``value`` itself if a RetryPolicy, else ``RetryPolicy(value)`` (None: the default).

        Raises:
            TypeError, ValueError: as the constructor.
        """
        return value if isinstance(value, RetryPolicy) else cls(value)


RetryPolicyLike: TypeAlias = RetryPolicy | float | Sequence[float] | DelayFunction | None
"""Anything :meth:`RetryPolicy.coerce` accepts."""


# --------------------------------------------------------------------------------- metrics


class QueueMetrics:
    """Callbacks a :class:`WorkQueue` reports to; every method is a no-op here.

    Subclass and override to export them, e.g. to the Prometheus metrics client-go defines
    (each callback names its metric; ``name`` is the queue's name, the ``name`` label).
    """

    def adds(self, name: str) -> None:
        """A key was queued (coalesced adds are not counted): ``workqueue_adds_total``."""

    def depth(self, name: str, depth: int) -> None:
        """Keys waiting to be handed out, including ones waiting for their current run to
        finish (client-go's count): ``workqueue_depth``."""

    def queue_duration(self, name: str, seconds: float) -> None:
        """Seconds a key waited from its first add to :meth:`WorkQueue.get`:
        ``workqueue_queue_duration_seconds``."""

    def work_duration(self, name: str, seconds: float) -> None:
        """Seconds from :meth:`WorkQueue.get` to :meth:`WorkQueue.done`:
        ``workqueue_work_duration_seconds``."""

    def retries(self, name: str) -> None:
        """A retry was scheduled by :meth:`WorkQueue.retry`: ``workqueue_retries_total``."""

    def drops(self, name: str) -> None:
        """A key exceeded its policy's ``max_retries`` and was given up on until its next
        change (no client-go counterpart; e.g. ``workqueue_dropped_total``)."""


# ------------------------------------------------------------------------------ work queue


@dataclass
class _Delayed:
    """A pending :meth:`WorkQueue.add_after`: due time (queue clock) and reasons."""

    due: float
    seq: int
    reasons: set[str]


_NO_REASONS: frozenset[str] = frozenset()
_INTERNED: dict[frozenset[str], frozenset[str]] = {_NO_REASONS: _NO_REASONS}


def _reasons_of(reasons: Iterable[str]) -> frozenset[str]:
    """``reasons`` as one shared frozenset per distinct set: a queued key's reasons are a
    few values (created, updated, requeue...), and a set object per key cost ~200 bytes
    each at a million queued keys (issue 31). Bounded: the interned sets stop growing at
    1,024 (a caller inventing reasons gets its own sets beyond that)."""
    found = frozenset(reasons)
    interned = _INTERNED.get(found)
    if interned is not None:
        return interned
    if len(_INTERNED) < 1024:
        _INTERNED[found] = found
    return found


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


def _retry_bucket(
    limit: tuple[float, int] | None, clock: Callable[[], float]
) -> TokenBucket | None:
    if limit is None:
        return None
    if not isinstance(limit, tuple | list) or len(limit) != 2:
        raise TypeError(f"retry_rate_limit must be a (qps, burst) pair or None, not {limit!r}")
    qps, burst = limit
    return TokenBucket(qps, burst, clock=clock)


class WorkQueue(Generic[K]):
    """A keyed work queue with client-go workqueue semantics (see the module docstring).

    Keys are any hashable values; controllers use :class:`reconcile_kit.meta.objects.ObjectRef`.
    A worker loop looks like::

        while True:
            key, reasons = await queue.get()
            try:
                await reconcile(key, reasons)
            except Exception as error:
                queue.retry(key, policy, ctx, error)
            else:
                queue.forget(key)
            finally:
                queue.done(key)

    Args:
        name: the queue's name, passed to the metrics callbacks and used in log messages.
        clock: returns the current time in seconds; used for due times and durations.
            Default: the running event loop's ``time()``. A delayed add sets one timer on the
            running loop, ``call_later(due - clock())``, and when it fires its due time counts
            as reached, so a custom clock should run at loop speed but a lag cannot stall it.
        metrics: receives the queue's measurements (default: :class:`QueueMetrics`, no-op).
        retry_rate_limit: ``(qps, burst)`` of the token bucket all of the queue's
            :meth:`retry` calls share, in retries per second and retries at once; each
            retry takes a token and is delayed until it comes if that is later than its
            policy's delay. Default :data:`DEFAULT_RETRY_RATE_LIMIT`, ``(10.0, 100)``
            (client-go's ``DefaultTypedControllerRateLimiter``); None: no overall limit,
            only the per-key policies. Plain :meth:`add_after` calls are not limited.
        low_priority_max_wait: seconds after which a key added with ``low_priority``
            takes turns with the normal line (default :data:`LOW_PRIORITY_MAX_WAIT`, 1 s);
            None: it waits for the normal line to be empty, as controller-runtime's.

    Raises:
        TypeError, ValueError: ``retry_rate_limit`` is not a ``(qps > 0, burst >= 1)`` pair;
            ``low_priority_max_wait`` is negative or NaN.
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Callable[[], float] | None = None,
        metrics: QueueMetrics | None = None,
        retry_rate_limit: tuple[float, int] | None = DEFAULT_RETRY_RATE_LIMIT,
        low_priority_max_wait: float | None = LOW_PRIORITY_MAX_WAIT,
    ) -> None:
        self.name = name
        if low_priority_max_wait is not None and not low_priority_max_wait >= 0:
            raise ValueError(
                f"low_priority_max_wait must be >= 0 seconds or None, not {low_priority_max_wait!r}"
            )
        self._low_max_wait = low_priority_max_wait
        self._low_turn = False  # the last key handed out came from the low line
        self._clock = clock or _loop_time
        self._retry_bucket = _retry_bucket(retry_rate_limit, self._clock)
        self._metrics = metrics or QueueMetrics()
        # only metrics that record anything are called or timed (two clock reads, two dict
        # writes and three calls per key otherwise: issue 31)
        self._timed = type(self._metrics) is not QueueMetrics
        self._ready: deque[K] = deque()  # queued, in order, not being processed
        self._ready_low: deque[K] = deque()  # the same at low priority (entries may be stale)
        # the low line's waits, without a time per entry (a first LIST queues millions):
        # entries numbered as they come in; (first entry's number, time first seen) marks
        self._low_in = self._low_out = self._low_seen = 0
        self._low_marks: deque[tuple[int, float]] = deque()
        self._low: set[K] = set()  # dirty keys whose pending run is of low priority
        self._dirty: set[K] = set()  # to be handed out (ready, or once their run is done)
        self._processing: set[K] = set()
        self._reasons: dict[K, frozenset[str]] = {}  # each an interned set (_reasons_of)
        self._added_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}
        self._attempts: dict[K, int] = {}
        self._delayed: dict[K, _Delayed] = {}
        self._heap: list[tuple[float, int, K]] = []  # (due, seq, key); stale seqs skipped
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due: float | None = None
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shut_down = False
        self._left: set[K] = set()  # unfinished() when shut down
        self._dropped = 0

    def __repr__(self) -> str:
        return (
            f"<WorkQueue {self.name!r} ready={len(self._ready)} "
            f"processing={len(self._processing)} delayed={len(self._delayed)}>"
        )

    # ------------------------------------------------------------------ adding

    def add(self, key: K, reason: str | None = None, *, low_priority: bool = False) -> None:
        """Queue ``key`` now, recording ``reason`` (if any) for its next run.

        Adding a key that is already queued only records the reason; adding a key that is
        being processed marks it dirty, and it is queued again by :meth:`done`. Ignored after
        :meth:`shutdown`. ``low_priority``: handed out only when no other key is ready
        (an add without it promotes the key; nothing demotes one).
        """
        self._enqueue(key, () if reason is None else (reason,), low_priority)

    def add_after(self, key: K, delay: float, reason: str | None = None) -> None:
        """Queue ``key`` in ``delay`` seconds (``delay <= 0``: now, as :meth:`add`).

        A key has at most one pending delayed add: the earliest due time wins and reasons are
        merged. A pending delayed add is kept when the key is added directly meanwhile; when
        due it just adds the key again (client-go's delaying queue). Ignored after
        :meth:`shutdown`.

        Raises:
            ValueError: ``delay`` is NaN.
        """
        if math.isnan(delay):
            raise ValueError("add_after delay must be a number of seconds, not NaN")
        if delay <= 0:
            self.add(key, reason)
        elif not self._shut_down:
            self._delay(key, self._clock() + delay, set() if reason is None else {reason})

    def _enqueue(self, key: K, reasons: Iterable[str], low: bool = False) -> None:
        if self._shut_down:
            return
        had = self._reasons.get(key)
        self._reasons[key] = _reasons_of(reasons if had is None else had.union(reasons))
        if key in self._dirty:
            if not low and key in self._low:  # promoted: its low entry goes stale
                self._low.discard(key)
                if key not in self._processing:
                    self._push_ready(key)
            return
        self._dirty.add(key)
        if low:
            self._low.add(key)
        if self._timed:  # metrics that record: no calls to the no-op ones per key either
            self._added_at.setdefault(key, self._clock())
            self._metrics.adds(self.name)
        if key not in self._processing:
            self._push_ready(key)
        if self._timed:
            self._report_depth()

    def _push_ready(self, key: K) -> None:
        if key in self._low:
            self._ready_low.append(key)
            self._low_in += 1
        else:
            self._ready.append(key)
        self._wake_one()

    def _next_ready(self) -> K | None:
        """The next key to hand out: the normal line first, else the first valid entry of
        the low one; while the low line's oldest valid entry waited ``low_priority_max_wait``
        or longer, the lines take turns."""
        if self._ready and not (self._ready_low and self._low_overdue()):
            self._low_turn = False
            return self._ready.popleft()
        while self._ready_low:
            key = self._pop_low()
            if self._valid_low(key):
                self._low_turn = True
                return key
        if self._ready:
            self._low_turn = False
            return self._ready.popleft()
        return None

    def _valid_low(self, key: K) -> bool:
        """Whether an entry of the low line still stands for a pending low-priority run."""
        return key in self._low and key in self._dirty and key not in self._processing

    def _pop_low(self) -> K:
        self._low_out += 1
        return self._ready_low.popleft()

    def _low_overdue(self) -> bool:
        """Whether the low line's turn came: the last key handed out was not its, and its
        oldest valid entry (stale ones ahead of it dropped) waited long enough, counted
        from the first time this check saw it (entries are not timed one by one)."""
        if self._low_max_wait is None or self._low_turn:
            return False
        while self._ready_low and not self._valid_low(self._ready_low[0]):
            self._pop_low()
        if not self._ready_low:
            return False
        now = self._clock()
        marks = self._low_marks
        if self._low_seen < self._low_in:  # entries not seen before: seen now
            marks.append((max(self._low_seen, self._low_out), now))
            self._low_seen = self._low_in
        while len(marks) > 1 and marks[1][0] <= self._low_out:
            marks.popleft()
        return now - marks[0][1] >= self._low_max_wait

    def _report_depth(self) -> None:
        self._metrics.depth(self.name, len(self._dirty))

    # ----------------------------------------------------------------- delays

    def _delay(self, key: K, due: float, reasons: set[str]) -> None:
        entry = self._delayed.get(key)
        if entry is not None and entry.due <= due:
            entry.reasons |= reasons
            return
        seq = next(self._seq)
        if entry is None:
            self._delayed[key] = _Delayed(due, seq, reasons)
        else:
            entry.due, entry.seq = due, seq
            entry.reasons |= reasons
        heapq.heappush(self._heap, (due, seq, key))
        self._compact()
        self._arm_timer()

    def _compact(self) -> None:
        """Rebuild the heap once superseded entries outnumber the pending ones."""
        if len(self._heap) > 2 * len(self._delayed) + 32:
            self._heap = [(entry.due, entry.seq, key) for key, entry in self._delayed.items()]
            heapq.heapify(self._heap)

    def _is_current(self, seq: int, key: K) -> bool:
        entry = self._delayed.get(key)
        return entry is not None and entry.seq == seq

    def _earliest_due(self) -> float | None:
        """Due time of the earliest pending delayed add, dropping stale heap entries."""
        while self._heap and not self._is_current(self._heap[0][1], self._heap[0][2]):
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def _arm_timer(self) -> None:
        """Keep exactly one loop timer, set for the earliest due time (none if nothing)."""
        due = self._earliest_due()
        if due is not None and due == self._timer_due:
            return
        self._disarm_timer()
        if due is not None:
            delay = max(0.0, due - self._clock())
            self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer, due)
            self._timer_due = due

    def _disarm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_due = None

    def _on_timer(self, due: float) -> None:
        """The timer for ``due`` fired: add every key due by then, re-arm for the next."""
        self._timer = self._timer_due = None
        limit = max(due, self._clock())  # the loop may fire a hair early: due counts as reached
        while self._heap and self._heap[0][0] <= limit:
            _, seq, key = heapq.heappop(self._heap)
            if self._is_current(seq, key):
                self._enqueue(key, self._delayed.pop(key).reasons)
        self._arm_timer()

    # ---------------------------------------------------------------- getting

    async def get(self) -> tuple[K, frozenset[str]]:
        """Wait for a queued key and mark it as being processed until :meth:`done`.

        Keys are handed out in the order they were queued, never one that is being processed.

        Returns:
            ``(key, reasons)``: the reasons given to every add since the key's last run
            (empty if none were given).

        Raises:
            QueueShutDown: :meth:`shutdown` was called, before or while waiting.
        """
        while True:
            self._check_open()
            key = self._next_ready()
            if key is not None:
                return self._take(key)
            await self._wait()

    def _check_open(self) -> None:
        if self._shut_down:
            raise QueueShutDown(f"work queue {self.name!r} is shut down")

    async def _wait(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._wake_one()  # woken, then cancelled: hand the wake-up on
            raise
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _take(self, key: K) -> tuple[K, frozenset[str]]:
        self._dirty.discard(key)
        self._low.discard(key)
        self._processing.add(key)
        if self._timed:
            now = self._clock()
            added = self._added_at.pop(key, None)
            if added is not None:
                self._metrics.queue_duration(self.name, now - added)
            self._started_at[key] = now
            self._report_depth()
        return key, self._reasons.pop(key, _NO_REASONS)

    def claim(self, key: K) -> frozenset[str] | None:
        """Take ``key`` as :meth:`get` would hand it out, queued or not, unless it is being
        processed: returns the reasons given since its last run (the caller must call
        :meth:`done`), or None when it is being processed.

        A sharded controller's handover moves objects so, outside its workers."""
        if key in self._processing:
            return None
        if key in self._dirty and key not in self._low:
            self._ready.remove(key)  # queued and not processing: in the ready line once
        # (a low-priority entry goes stale once _take drops the key from _low)
        return self._take(key)[1]

    def done(self, key: K) -> None:
        """Mark ``key``'s run finished; a key added meanwhile is queued again, with its reasons.

        Raises:
            ValueError: ``key`` was not handed out by :meth:`get` (or is already done).
        """
        if key not in self._processing:
            raise ValueError(f"work queue {self.name!r}: {key} is not being processed")
        self._processing.discard(key)
        if self._timed:
            self._metrics.work_duration(self.name, self._clock() - self._started_at.pop(key))
        if key in self._dirty:
            self._push_ready(key)

    # ---------------------------------------------------------------- retries

    def retry(
        self,
        key: K,
        policy: RetryPolicy,
        ctx: object,
        error: BaseException,
        *,
        not_before: float = 0.0,
    ) -> float | None:
        """Count a failed run of ``key`` and queue it again after ``policy``'s delay.

        The key's attempt count goes up by one and the delay for that attempt is scheduled
        with :meth:`add_after` (reason ``"retry"``); with an overall ``retry_rate_limit``,
        the retry also takes a token of the queue's bucket and the delay is the later of the
        two (client-go's ``MaxOfRateLimiter``). When the policy gives up (past its
        ``max_retries``) the key is dropped: nothing is scheduled, its attempt count is reset
        so that its next change starts afresh, a warning naming the key is logged and the
        drop is counted (:attr:`dropped`, :meth:`QueueMetrics.drops`).

        Args:
            policy: the retry policy (see :meth:`RetryPolicy.coerce` for shorthands).
            ctx: passed to a callable policy as is.
            error: the exception that failed the run.
            not_before: the shortest delay in seconds (the server's ``Retry-After``).

        Returns:
            The delay in seconds, or None when the key was dropped.
        """
        attempt = self._attempts.get(key, 0) + 1
        delay = policy.delay(attempt, ctx, error)
        if delay is None:
            self._drop(key, attempt - 1, error)
            return None
        if self._retry_bucket is not None:
            delay = max(delay, self._retry_bucket.reserve())
        delay = max(delay, not_before)
        self._attempts[key] = attempt
        self._metrics.retries(self.name)
        self.add_after(key, delay, "retry")
        return delay

    def _drop(self, key: K, retries: int, error: BaseException) -> None:
        self._attempts.pop(key, None)
        self._dropped += 1
        self._metrics.drops(self.name)
        logger.warning(
            "work queue %r: giving up on %s after %d retries (last error: %s); "
            "it runs again on its next change",
            self.name,
            key,
            retries,
            error,
        )

    def forget(self, key: K) -> None:
        """Reset ``key``'s attempt count (call it when a run succeeds)."""
        self._attempts.pop(key, None)

    def attempts(self, key: K) -> int:
        """Retries counted for ``key`` since it last succeeded (0 if none)."""
        return self._attempts.get(key, 0)

    @property
    def retry_rate_limit(self) -> tuple[float, int] | None:
        """``(qps, burst)`` of the overall retry bucket, or None when retries are not
        limited overall."""
        bucket = self._retry_bucket
        return None if bucket is None else (bucket.qps, bucket.burst)

    @property
    def dropped(self) -> int:
        """How many times a key was given up on after exceeding ``max_retries``."""
        return self._dropped

    # ------------------------------------------------------------------ state

    def __len__(self) -> int:
        """Keys queued and ready to be handed out (not counting delayed or dirty ones)."""
        return len(self._ready) + len(self._low - self._processing)

    def unfinished(self) -> set[K]:
        """Keys with work not done: queued at normal priority, waiting for a delayed add
        (a retry's backoff), or being processed (a run a stop may cut short); not those
        queued only at low priority. After :meth:`shutdown`: those it had then (a key
        being processed counts, however its run ends). What a stopped controller left
        undone beyond a first look at each object."""
        if self._shut_down:
            return set(self._left)
        return (self._dirty - self._low) | self._delayed.keys() | self._processing

    def pending_delayed(self) -> int:
        """Keys with a pending :meth:`add_after`."""
        return len(self._delayed)

    def is_processing(self, key: K) -> bool:
        """Whether ``key`` was handed out by :meth:`get` and is not yet :meth:`done`."""
        return key in self._processing

    @property
    def is_shut_down(self) -> bool:
        """Whether :meth:`shutdown` was called."""
        return self._shut_down

    def shutdown(self) -> None:
        """Stop the queue: pending and future :meth:`get` calls raise :class:`QueueShutDown`.

        Queued keys and delayed adds are dropped and later adds are ignored. Keys being
        processed stay so until :meth:`done`. Calling it again does nothing.
        """
        if self._shut_down:
            return
        self._left = self.unfinished()
        self._shut_down = True
        self._disarm_timer()
        pending: tuple[Any, ...] = (
            self._ready,
            self._ready_low,
            self._low_marks,
            self._low,
            self._dirty,
        )
        for each in (*pending, self._delayed, self._heap, self._reasons):
            each.clear()
        self._added_at.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        self._report_depth()
