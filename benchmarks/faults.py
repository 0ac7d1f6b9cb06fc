"""How a controller talks when the server pushes back, on the embedded API server.

Scenarios (each on a fresh server, the controller patching every ConfigMap's data once):

- ``storm``: 200 keys; for the first 3 s every PATCH answers 429 with ``Retry-After: 2``.
  Reports the PATCHes sent in that window, the ERROR records and tracebacks logged, and
  the seconds until every object holds the change. Target: at most 3 PATCHes per key in
  the window (client-go waits out Retry-After), no tracebacks for API errors.
- ``soak``: 2,000 keys; 5% of the objects answer their first PATCH with 500 and 1% with 409
  (names drawn with a fixed seed, so both runs face the same faults). Reports the seconds
  to converge and the errors logged.

Runs against whatever ``reconcile_kit`` is importable, so the same script measures an
older checkout (``PYTHONPATH=/path/to/checkout python benchmarks/faults.py``).
Prints one line per scenario and PASS/MISS against the storm target.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import random
import time
from typing import Any

from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Controller, PatchHelper, ReflectorPool
from reconcile_kit.testing import APIServer

CM = "/api/v1/namespaces/default/configmaps"


class Counting(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors = 0
        self.tracebacks = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.errors += 1
        self.tracebacks += record.exc_info is not None


def controller(api: Any) -> Controller:
    """A ConfigMap controller, for the keyword-only ``api`` and for the older positional one."""
    first = next(iter(inspect.signature(Controller).parameters))
    kwargs = {"namespace": "default", "concurrency": 10, "pool": ReflectorPool()}
    if first == "api":
        return Controller(api, ConfigMap, **kwargs)  # type: ignore[arg-type]
    return Controller(ConfigMap, api=api, **kwargs)


async def create(api: Any, count: int) -> None:
    semaphore = asyncio.Semaphore(50)

    async def one(i: int) -> None:
        async with semaphore:
            await ConfigMap(
                {"metadata": {"name": f"cm-{i}", "namespace": "default"}, "data": {"v": "0"}},
                api=api,
            ).create()

    await asyncio.gather(*(one(i) for i in range(count)))


async def converge(server: APIServer, count: int, window: float | None) -> dict[str, Any]:
    api = await server.api()
    await create(api, count)
    done: set[str] = set()
    all_done = asyncio.Event()

    async def reconcile(cm: Any, ctx: Any) -> None:
        async with PatchHelper(cm):
            cm.raw["data"]["v"] = "1"
        done.add(cm.name)
        if len(done) == count:
            all_done.set()

    counter = Counting()
    logging.getLogger("reconcile_kit").addHandler(counter)
    ctrl = controller(api)
    started = time.monotonic()
    task = asyncio.create_task(ctrl.run(reconcile))
    in_window = None
    if window is not None:
        await asyncio.sleep(window)
        in_window = server.requests.count(verb="patch")
        server.faults.clear()
    await asyncio.wait_for(all_done.wait(), 600)
    seconds = time.monotonic() - started
    await ctrl.shutdown()
    await task
    logging.getLogger("reconcile_kit").removeHandler(counter)
    return {
        "objects": count,
        "seconds": round(seconds, 2),
        "patches_in_window": in_window,
        "patches": server.requests.count(verb="patch"),
        "errors_logged": counter.errors,
        "tracebacks": counter.tracebacks,
    }


async def storm(keys: int) -> dict[str, Any]:
    async with APIServer(record_requests=True) as server:
        server.faults.fail(429, verb="patch", times=None, retry_after=2)
        result = await converge(server, keys, window=3.0)
    result["target"] = "<= 3 PATCHes per key in the 3 s window"
    result["verdict"] = "PASS" if result["patches_in_window"] <= 3 * keys else "MISS"
    return result


async def soak(keys: int) -> dict[str, Any]:
    async with APIServer(record_requests=True) as server:
        rng = random.Random(8)
        names = [f"cm-{i}" for i in range(keys)]
        failing = rng.sample(names, keys * 6 // 100)
        for i, name in enumerate(failing):
            status = 409 if i < keys // 100 else 500
            server.faults.fail(status, verb="patch", name=name, times=1)
        return await converge(server, keys, window=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--storm-keys", type=int, default=200)
    parser.add_argument("--soak-keys", type=int, default=2000)
    args = parser.parse_args()
    quiet = logging.getLogger("reconcile_kit")
    quiet.setLevel(logging.ERROR)  # counted by Counting, not printed
    quiet.propagate = False
    for name, scenario, keys in (("storm", storm, args.storm_keys), ("soak", soak, args.soak_keys)):
        print(name, json.dumps(asyncio.run(scenario(keys))), flush=True)


if __name__ == "__main__":
    main()
