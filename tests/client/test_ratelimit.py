"""Client-side rate limiting: the TokenBucket on looptime's clock, and a kr8s Api's requests
waiting on it over the wire against the embedded API server."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller, Manager, TokenBucket
from reconcile_kit.client.ratelimit import (
    DEFAULT_BURST,
    checked_rate_limit,
    install_rate_limit,
    rate_limit_of,
)
from reconcile_kit.client.transport import AiohttpFirstTransport, use_aiohttp_transport
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, run_until


def now() -> float:
    return asyncio.get_running_loop().time()


async def settle() -> None:
    """Let every ready callback and task run (no loop time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


# ------------------------------------------------------------------ TokenBucket, loop time


@pytest.mark.looptime
async def test_a_burst_at_once_then_qps_tokens_a_second() -> None:
    bucket = TokenBucket(10, 3)
    times = []
    async with asyncio.timeout(10):
        for _ in range(8):
            await bucket.acquire()
            times.append(now())
    assert times == pytest.approx([0, 0, 0, 0.1, 0.2, 0.3, 0.4, 0.5])


@pytest.mark.looptime
async def test_reserve_says_when_without_waiting() -> None:
    bucket = TokenBucket(2, 2)
    assert [bucket.reserve() for _ in range(5)] == pytest.approx([0, 0, 0.5, 1.0, 1.5])
    assert now() == 0  # nothing waited
    assert bucket.tokens == pytest.approx(-3)  # three tokens promised ahead
    await asyncio.sleep(1.5)
    assert bucket.tokens == pytest.approx(0)
    await asyncio.sleep(100)
    assert bucket.tokens == 2  # refills up to the burst, no further
    assert bucket.reserve() == 0 and bucket.reserve() == 0 and bucket.reserve() == 0.5


@pytest.mark.looptime
async def test_waiters_are_served_in_the_order_they_asked() -> None:
    bucket = TokenBucket(5, 1)
    done: list[tuple[int, float]] = []

    async def take(i: int) -> None:
        await bucket.acquire()
        done.append((i, now()))

    async with asyncio.timeout(10):
        await asyncio.gather(*(take(i) for i in range(6)))
    assert [i for i, _ in done] == list(range(6))
    assert [t for _, t in done] == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])


@pytest.mark.looptime
async def test_a_cancelled_waiter_gives_its_token_back() -> None:
    bucket = TokenBucket(1, 1)
    await bucket.acquire()  # t=0: the bucket is empty now
    waiter = asyncio.create_task(bucket.acquire())  # its token comes at t=1
    await asyncio.sleep(0.5)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    async with asyncio.timeout(10):
        await bucket.acquire()
    assert now() == pytest.approx(1.0)  # the cancelled one's token, not t=2


@pytest.mark.looptime
async def test_a_cancelled_waiter_with_others_behind_it_returns_nothing() -> None:
    """x/time/rate's rule: a later reservation was promised the time after it, so giving
    the token back would let the next taker jump the queue beyond the rate."""
    bucket = TokenBucket(1, 1)
    bucket.reserve()  # t=0
    first = asyncio.create_task(bucket.acquire())  # t=1
    second = asyncio.create_task(bucket.acquire())  # t=2
    await settle()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert bucket.reserve() == pytest.approx(3.0)
    async with asyncio.timeout(10):
        await second
    assert now() == pytest.approx(2.0)


async def test_a_custom_clock() -> None:
    clock = [100.0]
    bucket = TokenBucket(4, 1, clock=lambda: clock[0])
    assert bucket.reserve() == 0
    assert bucket.reserve() == 0.25
    clock[0] += 0.5
    assert bucket.reserve() == 0  # (t=100.5 covers both: the one promised, and this one)
    assert repr(bucket) == "TokenBucket(qps=4.0, burst=1)"
    assert (bucket.qps, bucket.burst) == (4.0, 1)


@pytest.mark.parametrize(
    ("qps", "burst", "error"),
    [
        (0, 1, ValueError),
        (-1, 1, ValueError),
        (math.nan, 1, ValueError),
        (math.inf, 1, ValueError),
        (True, 1, TypeError),
        ("5", 1, TypeError),
        (5, 0, ValueError),
        (5, 1.5, TypeError),
        (5, True, TypeError),
    ],
)
def test_bad_settings_are_refused(qps: Any, burst: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        TokenBucket(qps, burst)
    with pytest.raises(error):
        checked_rate_limit(qps, burst)


def test_settings_checked_once_for_manager_and_controller() -> None:
    assert checked_rate_limit(None, None) == (None, None)
    assert checked_rate_limit(5, None) == (5.0, None)
    with pytest.raises(ValueError, match="needs a qps"):
        checked_rate_limit(None, 10)
    with pytest.raises(ValueError, match="needs a qps"):
        Manager(burst=10)
    with pytest.raises(ValueError, match="qps"):
        Controller(ConfigMap, config=ControllerConfig(qps=0))
    with pytest.raises(ValueError, match="burst"):
        Manager(qps=1, burst=0)


# ---------------------------------------------------------------------- over the wire


async def test_every_request_of_the_api_waits_for_a_token(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """kr8s's own methods and raw call_api alike: 25 requests at qps=20, burst=5 take at
    least (25 - 5) / 20 = 1 s."""
    bucket = install_rate_limit(kube, 20, 5)
    assert bucket is not None and rate_limit_of(kube) is bucket
    served = len(apiserver.requests)
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with asyncio.timeout(30):
        for i in range(10):
            cm = await ConfigMap({"metadata": {"name": f"cm{i}"}, "data": {"i": "0"}}, api=kube)
            await cm.create()  # POST
            await cm.patch({"data": {"i": "1"}})  # PATCH
        for _ in range(5):
            async with kube.call_api("GET", url="namespaces/default"):
                pass
    elapsed = loop.time() - started
    requests = apiserver.requests[served:]
    assert len(requests) == 25
    assert [r.verb for r in requests[:20]] == ["create", "patch"] * 10
    assert elapsed >= (25 - 5) / 20 - 0.01
    assert elapsed < (25 - 5) / 20 + 2.0  # waits for tokens, not much longer
    print(f"25 requests at qps=20 burst=5: {elapsed:.3f} s ({20 / elapsed:.1f}/s after the burst)")


async def test_concurrent_requests_share_the_bucket(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    install_rate_limit(kube, 50, 10)
    served = len(apiserver.requests)

    async def get() -> None:
        async with kube.call_api("GET", url="namespaces/default"):
            pass

    loop = asyncio.get_running_loop()
    started = loop.time()
    async with asyncio.timeout(30):
        await asyncio.gather(*(get() for _ in range(60)))
    elapsed = loop.time() - started
    assert len(apiserver.requests) - served == 60
    assert elapsed >= (60 - 10) / 50 - 0.01


async def test_off_unless_asked_and_same_settings_keep_the_bucket(kube: kr8s.asyncio.Api) -> None:
    assert install_rate_limit(kube, None) is None and rate_limit_of(kube) is None
    bucket = install_rate_limit(kube, 1000)
    assert bucket is not None and (bucket.qps, bucket.burst) == (1000.0, DEFAULT_BURST)
    assert install_rate_limit(kube, 1000, 10) is bucket  # same settings: same bucket
    assert install_rate_limit(kube, None) is bucket  # None leaves it in place
    other = install_rate_limit(kube, 0.001, 3)
    assert other is not bucket and rate_limit_of(kube) is other
    async with kube.call_api("GET", url="namespaces/default"):
        pass
    assert other.tokens == pytest.approx(2, abs=0.01)  # the new bucket was taken from
    assert bucket.tokens == DEFAULT_BURST  # the old one no more
    assert kube._session is not None
    assert len(kube._session.event_hooks["request"]) == 1  # one hook, however often installed


async def count_tokens_taken(api: kr8s.asyncio.Api, bucket: TokenBucket, requests: int) -> float:
    before = bucket.tokens
    for _ in range(requests):
        assert [c async for c in ConfigMap.list(namespace="default", api=api)] == []
    return before - bucket.tokens


async def test_a_recreated_client_waits_too(kube: kr8s.asyncio.Api) -> None:
    """kr8s builds a new httpx client when it re-authenticates (401/403)."""
    bucket = install_rate_limit(kube, 0.001, 100)  # a token a quarter hour: none refill
    assert bucket is not None
    assert await count_tokens_taken(kube, bucket, 3) == pytest.approx(3, abs=0.01)
    old = kube._session
    await kube._create_session()
    assert kube._session is not old
    assert await count_tokens_taken(kube, bucket, 3) == pytest.approx(3, abs=0.01)
    assert old is not None and old.is_closed  # (kr8s closed it)
    assert kube._session is not None
    await kube._session.aclose()  # a closed client is replaced on the next request
    assert await count_tokens_taken(kube, bucket, 2) == pytest.approx(2, abs=0.01)


@pytest.mark.parametrize("aiohttp_first", [True, False])
async def test_with_the_aiohttp_transport_in_either_order(
    kube: kr8s.asyncio.Api, apiserver: APIServer, aiohttp_first: bool
) -> None:
    if aiohttp_first:
        assert await use_aiohttp_transport(kube)
    bucket = install_rate_limit(kube, 0.001, 100)
    assert bucket is not None
    if not aiohttp_first:
        assert await use_aiohttp_transport(kube)
    assert await count_tokens_taken(kube, bucket, 4) == pytest.approx(4, abs=0.01)
    assert kube._session is not None
    assert isinstance(kube._session._transport, AiohttpFirstTransport)
    await kube._create_session()
    assert await count_tokens_taken(kube, bucket, 2) == pytest.approx(2, abs=0.01)
    assert isinstance(kube._session._transport, AiohttpFirstTransport)


async def test_a_controller_on_its_own_limits_its_api(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await ConfigMap({"metadata": {"name": "a"}}, api=kube).create()
    seen: list[str] = []

    async def reconcile(obj: ConfigMap, ctx: Context) -> None:
        seen.append(obj.name)

    plain = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    assert await run_until(plain, reconcile, lambda: seen == ["a"])
    assert rate_limit_of(kube) is None  # off by default
    limited = Controller(
        ConfigMap,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool(), qps=300, burst=7),
    )
    assert (limited.qps, limited.burst) == (300.0, 7)
    assert await run_until(limited, reconcile, lambda: seen == ["a", "a"])
    bucket = rate_limit_of(kube)
    assert bucket is not None and (bucket.qps, bucket.burst) == (300.0, 7)


async def test_in_a_manager_the_managers_setting_governs(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    seen: list[str] = []

    async def reconcile(obj: ConfigMap, ctx: Context) -> None:
        seen.append(obj.name)

    manager = Manager(kube, namespace="default", qps=0.01, burst=500)
    own = manager.add(Controller(ConfigMap, config=ControllerConfig(qps=1, burst=1)), reconcile)
    task = asyncio.create_task(manager.run())
    try:
        await ConfigMap({"metadata": {"name": "a"}}, api=kube).create()
        assert await own.wait_reconciled(lambda: seen == ["a"], 10)
        assert (own.qps, own.burst) == (0.01, 500)
        bucket = rate_limit_of(kube)
        assert bucket is not None and (bucket.qps, bucket.burst) == (0.01, 500)
        # (at least) the reflector's LIST and WATCH took tokens of that bucket
        assert bucket.tokens < 500 - 1.5
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)
