"""Server CPU of an initial LIST+WATCH sync on the embedded API server (issue 15).

The embedded server runs in its own process holding N ConfigMaps (created in-process before
the measurement); this process then does what a reflector's initial sync does: a
paginated LIST (``limit`` per page) and a WATCH from the list's resourceVersion that
returns at once (``timeoutSeconds=1``). The figure is the server process's CPU seconds
(user + system, from /proc) over that sync, median over repeats. Target: <= 2 s at 50,000
objects in pages of 500.

    python benchmarks/listsync.py [--objects 50000] [--limit 500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import textwrap
import time

import aiohttp

TARGET_S = 2.0

SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from reconcile_kit.testing import APIServer
    from reconcile_kit.testing.apiserver.cluster import WriteOptions

    async def main(count):
        async with APIServer(garbage_collection=False) as server:
            cluster = server.cluster
            rt = cluster.registry.lookup("", "v1", "configmaps")
            for i in range(count):
                body = {"metadata": {"name": f"cm-{i:06d}", "labels": {"app": "bench"}},
                        "data": {"key": "value" * 8}}
                cluster.create(rt, "default", body, WriteOptions())
            print(server.url, flush=True)
            await asyncio.Event().wait()

    asyncio.run(main(int(sys.argv[1])))
    """
)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def sync(url: str, limit: int) -> int:
    """A reflector's initial sync: paginated LIST, then WATCH from its resourceVersion."""
    items = 0
    path = f"{url}/api/v1/namespaces/default/configmaps"
    async with aiohttp.ClientSession() as session:
        token = ""
        while True:
            params = {"limit": str(limit)} | ({"continue": token} if token else {})
            async with session.get(path, params=params) as response:
                body = await response.json()
            items += len(body["items"])
            token = body["metadata"].get("continue", "")
            if not token:
                break
        watch = {
            "watch": "1",
            "resourceVersion": body["metadata"]["resourceVersion"],
            "timeoutSeconds": "1",
            "allowWatchBookmarks": "true",
        }
        async with session.get(path, params=watch) as response:
            await response.read()
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=50_000)
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.objects)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url:
            raise SystemExit("the server did not start")
        runs, walls = [], []
        for _ in range(args.repeats):
            before, started = cpu_seconds(server.pid), time.monotonic()
            items = asyncio.run(sync(url, args.limit))
            runs.append(cpu_seconds(server.pid) - before)
            walls.append(time.monotonic() - started - 1.0)  # the watch waits 1 s
            assert items == args.objects, items
        median = statistics.median(runs)
        verdict = "PASS" if median <= TARGET_S else "MISS"
        print(f"{args.objects} objects, pages of {args.limit}, {args.repeats} repeats")
        print(f"server CPU per LIST+WATCH sync: median {median:.2f} s (runs {runs})")
        print(f"sync wall time (watch wait excluded): median {statistics.median(walls):.2f} s")
        print(f"target <= {TARGET_S:.0f} s of server CPU: {verdict}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
