"""Client-side rate limiting: a token bucket every request of a kr8s Api waits on.

As client-go's ``flowcontrol.NewTokenBucketRateLimiter(qps, burst)``, which a
``rest.Config``'s ``QPS`` and ``Burst`` configure: the bucket holds at most ``burst``
tokens, refills at ``qps`` tokens per second, and each request takes one, waiting for it
when the bucket is empty. The bucket itself is golang.org/x/time/rate's ``Limiter``
(reservations: a caller is told when its token will be there, so waiters are served in
the order they asked).

:func:`install_rate_limit` puts a bucket in front of every request a kr8s asyncio Api
sends, kr8s's own methods included: an httpx request hook on the Api's client, put back
whenever kr8s re-creates that client (it does on re-authentication). It works with any
transport under the client (:mod:`reconcile_kit.client.transport`'s aiohttp one, proxies).

Off by default, as in controller-runtime since 0.21 (API Priority and Fairness on the
server is the better guard); ``Manager(qps=, burst=)``, ``Controller(qps=, burst=)`` and
``reconcile-kit run --qps --burst`` turn it on.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Callable

import httpx
from kr8s.asyncio import Api

from . import kr8s_internals
from .fencehook import is_fence_check

__all__ = [
    "DEFAULT_BURST",
    "TokenBucket",
    "checked_rate_limit",
    "install_rate_limit",
    "rate_limit_of",
    "request_hooks_are_ours",
]

DEFAULT_BURST = 10
"""Burst when only ``qps`` is given: client-go's ``rest.DefaultBurst``."""

_INSTALLED = "_reconcile_kit_rate_limit"


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


def _checked_qps(qps: object) -> float:
    if isinstance(qps, bool) or not isinstance(qps, int | float):
        raise TypeError(f"qps must be a number of requests per second, not {type(qps).__name__}")
    if not math.isfinite(qps) or qps <= 0:
        raise ValueError(f"qps must be a finite number of requests per second > 0, not {qps!r}")
    return float(qps)


def _checked_burst(burst: object) -> int:
    if isinstance(burst, bool) or not isinstance(burst, int):
        raise TypeError(f"burst must be an int, not {type(burst).__name__}")
    if burst < 1:
        raise ValueError(f"burst must be >= 1, not {burst!r}")
    return burst


class TokenBucket:
    """A token bucket: ``qps`` tokens per second, at most ``burst`` saved up.

    client-go's ``flowcontrol.NewTokenBucketRateLimiter(qps, burst)`` (golang.org/x/time/rate).
    The bucket starts full, so the first ``burst`` tokens are there at once; afterwards
    one comes every ``1 / qps`` seconds. Takers are served in the order they asked.

    The bucket belongs to one asyncio event loop and is not thread-safe.

    Args:
        qps: tokens added per second (requests per second, for a client); > 0.
        burst: the bucket's size, the most tokens taken at once; >= 1.
        clock: returns the current time in seconds. Default: the running event loop's
            ``time()`` (so looptime's fast-forwarded clock works in tests).

    Raises:
        TypeError, ValueError: ``qps`` is not a finite number > 0, or ``burst`` not an
            int >= 1.
    """

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] | None = None) -> None:
        self._qps = _checked_qps(qps)
        self._burst = _checked_burst(burst)
        self._clock = clock or _loop_time
        self._tokens = float(self._burst)
        self._updated: float | None = None  # when _tokens was computed (None: not yet used)
        self._last_reserved = -math.inf  # when the latest reservation's token comes

    def __repr__(self) -> str:
        return f"TokenBucket(qps={self._qps}, burst={self._burst})"

    @property
    def qps(self) -> float:
        """Tokens added per second."""
        return self._qps

    @property
    def burst(self) -> int:
        """The bucket's size."""
        return self._burst

    @property
    def tokens(self) -> float:
        """Tokens in the bucket now; negative when that many are promised to waiters."""
        return self._advance(self._clock())

    def _advance(self, now: float) -> float:
        if self._updated is None:
            return self._tokens
        elapsed = max(0.0, now - self._updated)
        return min(float(self._burst), self._tokens + elapsed * self._qps)

    def reserve(self) -> float:
        """Take a token and return in how many seconds it is there (0.0: now).

        The caller must then wait that long before acting (client-go's ``Reserve().Delay()``,
        as its ``BucketRateLimiter.When``); nothing waits here.
        """
        now = self._clock()
        self._tokens = self._advance(now) - 1.0
        self._updated = now
        delay = -self._tokens / self._qps if self._tokens < 0 else 0.0
        self._last_reserved = now + delay
        return delay

    async def acquire(self) -> None:
        """Wait for a token and take it.

        Cancellable: a waiter cancelled before its token came gives it back (when no later
        reservation depends on it, as x/time/rate's ``Reservation.Cancel``).
        """
        delay = self.reserve()
        if delay <= 0:
            return
        due = self._last_reserved
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            self._cancel(due)
            raise

    def _cancel(self, due: float) -> None:
        """Give back the token reserved for ``due``, minus what later reservations took."""
        now = self._clock()
        if due <= now:
            return
        restored = 1.0 - (self._last_reserved - due) * self._qps
        if restored <= 0:
            return
        self._tokens = min(float(self._burst), self._advance(now) + restored)
        self._updated = now
        if due == self._last_reserved:
            self._last_reserved = due - 1.0 / self._qps


def checked_rate_limit(qps: float | None, burst: int | None) -> tuple[float | None, int | None]:
    """``(qps, burst)`` when valid client rate limit settings, else TypeError/ValueError.

    ``qps=None`` means no limit (and then ``burst`` must be None too); ``burst=None`` with a
    ``qps`` means :data:`DEFAULT_BURST` when installed.
    """
    if qps is None:
        if burst is not None:
            raise ValueError(f"burst={burst!r} needs a qps (None: no client rate limit)")
        return None, None
    return _checked_qps(qps), None if burst is None else _checked_burst(burst)


class _WaitForToken:
    """The httpx request hook: waits for a token of the Api's current bucket."""

    def __init__(self, bucket: TokenBucket) -> None:
        self.bucket = bucket

    async def __call__(self, request: httpx.Request) -> None:
        await self.bucket.acquire()


def install_rate_limit(api: Api, qps: float | None, burst: int | None = None) -> TokenBucket | None:
    """Make every request ``api`` (a ``kr8s.asyncio.Api``) sends wait for a token of a
    :class:`TokenBucket` of ``qps`` requests per second and ``burst``.

    Covers kr8s's own methods, watches and websocket upgrades alike (an httpx request hook,
    also on the clients kr8s creates later). ``qps=None`` changes nothing (a bucket already
    installed stays); the same ``qps`` and ``burst`` again keep the installed bucket, others
    replace it (requests already waiting finish on the old one).

    Args:
        qps: requests per second, or None for no limit (the default everywhere).
        burst: requests at once before ``qps`` applies; None: :data:`DEFAULT_BURST` (10).

    Returns:
        The bucket the api's requests now wait on (None if there is none).

    Raises:
        TypeError, ValueError: as :func:`checked_rate_limit`.
        RuntimeError: ``api`` has no session hook (the kr8s internals this relies on,
            :func:`~reconcile_kit.client.kr8s_internals.has_session_hook`), or kr8s is a
            version whose internals are not supported (UnsupportedKr8sError, a
            RuntimeError: :mod:`reconcile_kit.client.kr8s_internals`).
    """
    qps, burst = checked_rate_limit(qps, burst)
    hook: _WaitForToken | None = getattr(api, _INSTALLED, None)
    if qps is None:
        return None if hook is None else hook.bucket
    burst = DEFAULT_BURST if burst is None else burst
    if hook is not None:
        if (hook.bucket.qps, hook.bucket.burst) != (qps, burst):
            hook.bucket = TokenBucket(qps, burst)
        return hook.bucket
    if not kr8s_internals.has_session_hook(api):
        raise RuntimeError("this kr8s Api has no session hook: cannot rate limit its client")
    hook = _WaitForToken(TokenBucket(qps, burst))
    kr8s_internals.each_session(api, functools.partial(_attach, hook=hook))
    setattr(api, _INSTALLED, hook)
    return hook.bucket


def rate_limit_of(api: Api) -> TokenBucket | None:
    """The bucket ``api``'s requests wait on (see :func:`install_rate_limit`), or None."""
    hook: _WaitForToken | None = getattr(api, _INSTALLED, None)
    return None if hook is None else hook.bucket


def request_hooks_are_ours(session: httpx.AsyncClient) -> bool:
    """Whether every request hook of ``session`` is a rate limit's or the write fence's
    (:mod:`.fencehook`), so that a request sent around httpx after :func:`rate_limit_of`'s
    bucket and its own fence check loses nothing."""
    return all(
        isinstance(hook, _WaitForToken) or is_fence_check(hook)
        for hook in session.event_hooks["request"]
    )


def _attach(session: httpx.AsyncClient, hook: _WaitForToken) -> None:
    hooks = session.event_hooks["request"]
    if hook not in hooks:
        hooks.insert(0, hook)  # first: later hooks see the request as it is sent
