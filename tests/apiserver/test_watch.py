"""Watch semantics of the embedded API server over the wire."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import kr8s

from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call, watch

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


class Stream:
    """A watch consumed in the background; ``next()`` awaits the next event."""

    def __init__(self, events: AsyncIterator[dict[str, Any]]) -> None:
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.task = asyncio.ensure_future(self._pump(events))

    async def _pump(self, events: AsyncIterator[dict[str, Any]]) -> None:
        try:
            async for event in events:
                await self.queue.put(event)
        finally:
            await self.queue.put(None)

    async def next(self, skip_bookmarks: bool = True) -> dict[str, Any] | None:
        async with asyncio.timeout(5):  # bookmarks alone do not keep it waiting forever
            while True:
                event = await self.queue.get()
                if event is None or not (skip_bookmarks and event["type"] == "BOOKMARK"):
                    return event

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def open_stream(
    api: kr8s.asyncio.Api, server: APIServer, params: dict[str, str], path: str = CM
) -> Stream:
    before = server.open_watches
    stream = Stream(watch(api, path, params))
    await eventually(lambda: server.open_watches != before, what="the watch registered")
    return stream


async def test_watch_without_rv_sends_current_state_then_changes(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    stream = await open_stream(kube, apiserver, {})
    event = await stream.next()
    assert event is not None and (event["type"], event["object"]["metadata"]["name"]) == (
        "ADDED",
        "a",
    )
    assert event["object"]["kind"] == "ConfigMap"
    _, patched = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    event = await stream.next()
    assert event is not None and event["type"] == "MODIFIED"
    assert event["object"]["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    await call(kube, "DELETE", f"{CM}/a")
    event = await stream.next()
    assert event is not None and event["type"] == "DELETED"
    assert int(event["object"]["metadata"]["resourceVersion"]) > int(
        patched["metadata"]["resourceVersion"]
    )
    await stream.close()


async def test_watch_from_resource_version_replays_later_changes(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    _, first = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    rv = first["metadata"]["resourceVersion"]
    await call(kube, "POST", CM, {"metadata": {"name": "b"}})
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    await call(
        kube, "POST", "/api/v1/namespaces/kube-system/configmaps", {"metadata": {"name": "other"}}
    )
    stream = await open_stream(kube, apiserver, {"resourceVersion": rv})
    seen = [await stream.next() for _ in range(2)]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen if e] == [
        ("ADDED", "b"),
        ("MODIFIED", "a"),
    ]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen if e]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)
    await stream.close()


async def test_watch_too_old_gets_410_expired(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    _, first = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    await call(kube, "POST", CM, {"metadata": {"name": "b"}})
    apiserver.compact()
    events = [
        e async for e in watch(kube, CM, {"resourceVersion": first["metadata"]["resourceVersion"]})
    ]
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith("too old resource version: ")
    # from the current resourceVersion it works
    current = str(apiserver.cluster.store.rv)
    stream = await open_stream(kube, apiserver, {"resourceVersion": current})
    await call(kube, "POST", CM, {"metadata": {"name": "c"}})
    event = await stream.next()
    assert event is not None and event["object"]["metadata"]["name"] == "c"
    await stream.close()


async def test_bookmarks_only_when_allowed(kube: kr8s.asyncio.Api) -> None:
    async with APIServer(bookmark_interval=0.05) as server:
        api = await server.api()
        rv = str(server.cluster.store.rv)
        stream = await open_stream(
            api, server, {"resourceVersion": rv, "allowWatchBookmarks": "true"}
        )
        await call(api, "POST", CM, {"metadata": {"name": "a"}})
        added = await stream.next()  # the ADDED, past any bookmarks
        bookmark = await stream.next(skip_bookmarks=False)
        assert added is not None and bookmark is not None and bookmark["type"] == "BOOKMARK"
        assert bookmark["object"]["kind"] == "ConfigMap"
        assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= int(
            added["object"]["metadata"]["resourceVersion"]
        )
        await stream.close()
        events = [e async for e in watch(api, CM, {"resourceVersion": rv, "timeoutSeconds": "1"})]
        assert [e["type"] for e in events] == ["ADDED"]


async def test_timeout_seconds_ends_stream(kube: kr8s.asyncio.Api) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    events = [e async for e in watch(kube, CM, {"timeoutSeconds": "1"})]
    assert events == [] and 0.9 < loop.time() - started < 3


async def test_selector_enter_and_leave(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    stream = await open_stream(kube, apiserver, {"labelSelector": "team=x"})
    await call(kube, "PATCH", f"{CM}/a", {"metadata": {"labels": {"team": "x"}}}, MERGE)
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    await call(kube, "PATCH", f"{CM}/a", {"metadata": {"labels": {"team": "y"}}}, MERGE)
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "w"}}, MERGE)  # outside: nothing
    await call(kube, "PATCH", f"{CM}/a", {"metadata": {"labels": {"team": "x"}}}, MERGE)
    types = [(await stream.next() or {}).get("type") for _ in range(4)]
    assert types == ["ADDED", "MODIFIED", "DELETED", "ADDED"]
    await stream.close()


async def test_close_watches_ends_streams(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    stream = await open_stream(kube, apiserver, {})
    assert apiserver.close_watches() == 1
    assert await stream.next() is None
    await stream.close()


async def test_many_writes_arrive_in_order(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    rv = str(apiserver.cluster.store.rv)
    streams = [await open_stream(kube, apiserver, {"resourceVersion": rv}) for _ in range(3)]
    for i in range(30):
        await call(kube, "PATCH", f"{CM}/a", {"data": {"i": str(i)}}, MERGE)
    for stream in streams:
        got = [(await stream.next() or {})["object"]["data"]["i"] for _ in range(30)]
        assert got == [str(i) for i in range(30)]
        await stream.close()


async def test_kr8s_watch(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    from kr8s.asyncio.objects import ConfigMap

    async def collect() -> list[tuple[str, str]]:
        seen = []
        async for kind, obj in kube.watch("configmaps", namespace="default"):
            seen.append((kind, obj.name))
            if kind == "DELETED":
                return seen
        return seen

    await (await ConfigMap({"metadata": {"name": "a"}}, api=kube)).create()
    task = asyncio.ensure_future(collect())
    cm = await ConfigMap.get("a", namespace="default", api=kube)
    await eventually(lambda: apiserver.open_watches > 0)
    await cm.patch({"data": {"k": "v"}})
    await cm.delete()
    seen = await asyncio.wait_for(task, 5)
    assert seen[0] == ("ADDED", "a") and seen[-1] == ("DELETED", "a")
