"""``reconcile_kit.testing.eventually``: returns once its check holds, fails after the timeout."""

from __future__ import annotations

import asyncio
import time

import pytest

from reconcile_kit.testing import eventually


async def test_returns_once_the_check_holds() -> None:
    calls = 0

    def third_time() -> bool:
        nonlocal calls
        calls += 1
        return calls == 3

    await eventually(third_time, 1.0, interval=0)
    assert calls == 3


async def test_returns_at_once_without_sleeping() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    await eventually(lambda: True, 1.0, interval=10)
    assert loop.time() - started < 1


async def test_awaits_async_checks() -> None:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, event.set)

    async def is_set() -> bool:
        await asyncio.sleep(0)
        return event.is_set()

    await eventually(is_set, 1.0)
    assert event.is_set()


async def test_raises_assertion_error_after_the_timeout() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(AssertionError, match=r"0\.05 s awaiting the flag"):
        await eventually(lambda: False, 0.05, what="the flag")
    assert 0.05 <= loop.time() - started < 1


async def test_names_the_check_when_no_description_is_given() -> None:
    def never() -> bool:
        return False

    with pytest.raises(AssertionError, match="never"):
        await eventually(never, 0.05)


async def test_a_hanging_async_check_is_cut_off_at_the_timeout() -> None:
    async def hangs() -> bool:
        await asyncio.Event().wait()
        return True

    with pytest.raises(AssertionError):
        await eventually(hangs, 0.05)


async def test_errors_from_the_check_propagate() -> None:
    async def times_out() -> bool:
        raise TimeoutError("the check's own")

    with pytest.raises(TimeoutError, match="the check's own"):
        await eventually(times_out, 1.0)
    with pytest.raises(ZeroDivisionError):
        await eventually(lambda: 1 / 0 > 0, 1.0)


@pytest.mark.looptime
async def test_polling_without_an_interval_is_bounded_under_looptime() -> None:
    """With ``interval=0`` no loop time passes: the wall clock ends the wait."""
    started = time.monotonic()
    with pytest.raises(AssertionError, match="spinning"):
        await eventually(lambda: False, 0.05, interval=0, what="spinning")
    assert time.monotonic() - started < 5
