"""Shared test helpers (the fixtures come from reconcile_kit's pytest plugin)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]

# Hypothesis's timing checks fail property tests on a loaded 2-core machine (CI saw "Input
# generation is slow" with 6 s for one draw); what the properties assert is not timing.
settings.register_profile(
    "shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("shared-machine")


async def run_python_dev_mode(script: str, timeout: float = 60.0) -> tuple[int, str, str]:
    """Run ``script`` in a fresh interpreter in development mode with ResourceWarnings as
    errors (``python -X dev -W error::ResourceWarning``); its exit code, stdout and stderr.

    An unclosed aiohttp session, socket or transport shows as "Unclosed ..." or
    "ResourceWarning" on stderr (warnings raised in ``__del__`` are printed, not fatal).
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-X",
        "dev",
        "-W",
        "error::ResourceWarning",
        "-c",
        textwrap.dedent(script),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def assert_closed_cleanly(code: int, out: str, err: str) -> None:
    """The script of :func:`run_python_dev_mode` exited 0 without leaking a resource."""
    assert code == 0, f"exit code {code}\nstdout:\n{out}\nstderr:\n{err}"
    for leak in ("Unclosed", "unclosed", "ResourceWarning"):
        assert leak not in err, f"{leak!r} on stderr:\n{err}"


class RealTimeLimit:
    """Whether :func:`real_time_limit`'s deadline passed."""

    expired = False


@contextlib.contextmanager
def real_time_limit(seconds: float) -> Iterator[RealTimeLimit]:
    """Bound a fast-forwarded (looptime) test in real seconds: a loop spinning at one fake
    instant never reaches a fake timeout. At the deadline SIGALRM raises ``TimeoutError``
    in whatever runs (asyncio may log it as a callback's error) and ``expired`` is set,
    for the test to assert on."""
    limit = RealTimeLimit()

    def expire(signum: int, frame: object) -> None:
        limit.expired = True
        raise TimeoutError(f"still running after {seconds} s of real time")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield limit
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
