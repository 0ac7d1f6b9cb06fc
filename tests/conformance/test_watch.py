"""Watch semantics (k8s-semantics.md items 36-40)."""

from __future__ import annotations

import asyncio
import re

import orjson

from reconcile_kit.meta.objects import resource_version_in
from reconcile_kit.testing import ControlPlane
from reconcile_kit.testing.backends import Backend

from .kube import MERGE, Widgets, collect, ok, req, watch_events, watch_lines


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


async def test_watch_from_a_resource_version_sees_only_later_changes(backend: Backend) -> None:
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "before"}})
    start = (await ok(backend, "GET", path))["metadata"]["resourceVersion"]
    events = watch_events(backend, path, {"resourceVersion": start})
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    modified = await ok(backend, "PATCH", f"{path}/a", {"data": {"x": "1"}}, content_type=MERGE)
    deleted = await ok(backend, "DELETE", f"{path}/a")
    seen = await collect(events, 3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("DELETED", "a"),
    ]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen]
    assert rvs[0] == int(created["metadata"]["resourceVersion"])
    assert rvs[1] == int(modified["metadata"]["resourceVersion"])
    assert rvs[2] > rvs[1]  # DELETED carries the deletion's resourceVersion
    assert seen[2]["object"]["data"] == {"x": "1"}  # and the last state
    assert deleted["status"] == "Success"
    assert seen[0]["object"]["kind"] == "ConfigMap"
    assert seen[0]["object"]["apiVersion"] == "v1"


async def test_watch_without_a_resource_version_starts_with_the_current_state(
    backend: Backend,
) -> None:
    path = configmaps(backend)
    names = ["a", "b"]
    for name in names:
        await ok(backend, "POST", path, {"metadata": {"name": name}})
    for index, params in enumerate(({}, {"resourceVersion": "0"})):
        events = watch_events(backend, path, params)
        initial = await collect(events, len(names))
        assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in initial) == [
            ("ADDED", name) for name in names
        ]
        names.append(f"c{index}")
        await ok(backend, "POST", path, {"metadata": {"name": names[-1]}})
        [later] = await collect(events, 1)
        assert (later["type"], later["object"]["metadata"]["name"]) == ("ADDED", names[-1])
        await events.aclose()  # type: ignore[attr-defined]


async def test_objects_entering_and_leaving_a_selector(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    events = watch_events(
        backend,
        path,
        {"resourceVersion": created["metadata"]["resourceVersion"], "labelSelector": "app=x"},
    )
    await ok(
        backend, "PATCH", f"{path}/a", {"metadata": {"labels": {"app": "x"}}}, content_type=MERGE
    )
    await ok(backend, "PATCH", f"{path}/a", {"data": {"k": "v"}}, content_type=MERGE)
    leaving = await ok(
        backend, "PATCH", f"{path}/a", {"metadata": {"labels": {"app": "y"}}}, content_type=MERGE
    )
    seen = await collect(events, 3)
    assert [e["type"] for e in seen] == ["ADDED", "MODIFIED", "DELETED"]
    # The DELETED event carries the last matching state with the leaving write's
    # resourceVersion (the watch cache's cacheWatcher.convertToWatchEvent).
    gone = seen[2]["object"]
    assert gone["metadata"]["labels"] == {"app": "x"}
    assert gone["data"] == {"k": "v"}
    assert gone["metadata"]["resourceVersion"] == leaving["metadata"]["resourceVersion"]


async def test_timeout_seconds_ends_the_stream(backend: Backend) -> None:
    path = configmaps(backend)
    start = (await ok(backend, "GET", path))["metadata"]["resourceVersion"]
    events = watch_events(backend, path, {"resourceVersion": start, "timeoutSeconds": "1"})
    got = await asyncio.wait_for(_drain(events), 15)
    assert got == []


async def _drain(events: object) -> list[object]:
    return [event async for event in events]  # type: ignore[attr-defined]


async def test_watch_from_a_compacted_resource_version_gets_410(backend: Backend) -> None:
    """kube-apiserver serves watches from its watch cache, whose window (sized by load, not
    by etcd compaction) holds every event of a short test; a 410 there is provoked on a
    control plane of its own with ``--watch-cache=false``, where watches go to etcd."""
    if not backend.real:
        await _expire_and_watch(backend)
        return
    async with ControlPlane(apiserver_args=["--watch-cache=false"]) as plane:
        api = await plane.api()
        try:
            await ok(backend, "GET", "/version")  # the shared backend is unaffected
            await _expire_and_watch(Backend("real", plane, api, "default"))
        finally:
            await api._session.aclose()


async def _expire_and_watch(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    for index in range(3):
        await ok(backend, "PATCH", f"{path}/a", {"data": {"i": str(index)}}, content_type=MERGE)
    backend.compact()
    events = watch_events(
        backend, path, {"resourceVersion": created["metadata"]["resourceVersion"]}
    )
    [error] = await collect(events, 1)
    assert error["type"] == "ERROR"
    status = error["object"]
    assert (
        status["kind"],
        status["apiVersion"],
        status["status"],
        status["reason"],
        status["code"],
    ) == ("Status", "v1", "Failure", "Expired", 410)
    # etcd's watcher and the watch cache word it differently; both are kube-apiserver's.
    assert status["message"] == "The resourceVersion for the provided watch is too old." or (
        re.fullmatch(r"too old resource version: \d+ \(\d+\)", status["message"])
    )
    assert await asyncio.wait_for(_drain(events), 15) == []  # then the stream ends


async def test_bookmarks_only_when_allowed(backend: Backend) -> None:
    path = configmaps(backend)
    start = (await ok(backend, "GET", path))["metadata"]["resourceVersion"]
    events = watch_events(backend, path, {"resourceVersion": start, "timeoutSeconds": "2"})
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    got = await asyncio.wait_for(_drain(events), 15)
    assert [e["type"] for e in got] == ["ADDED"]  # type: ignore[index]


async def test_a_writes_watch_event_carries_the_writes_answer(
    backend: Backend, widgets: Widgets
) -> None:
    """The watch event of a PATCH (main or status subresource) carries the very object the
    PATCH answered, on one line beginning ``{"type":"MODIFIED","object":{`` whose one
    ``"resourceVersion":"`` field is metadata's, unless a label or annotation has that name
    (what reconcile_kit's reflector and PatchHelper rely on not to decode a write twice:
    reconcile_kit.runtime.reflector.Reflector.expect, reconcile_kit.patch.recent)."""
    cms, status = configmaps(backend), {"status": {"conditions": [{"type": "Ready"}]}}
    await ok(backend, "POST", cms, {"metadata": {"name": "a", "labels": {"x": "1"}}})
    meta = {"name": "w", "annotations": {"resourceVersion": "1"}}
    await ok(backend, "POST", widgets.path, {**widgets.widget("w"), "metadata": meta})
    writes = [
        (cms, f"{cms}/a", {"data": {"k": "v"}}, True),
        (widgets.path, f"{widgets.path}/w/status", status, False),
        (widgets.path, f"{widgets.path}/w", {"spec": {"size": 2}}, False),
    ]
    for collection, path, patch, one_field in writes:
        start = (await ok(backend, "GET", collection))["metadata"]["resourceVersion"]
        lines = watch_lines(backend, collection, {"resourceVersion": start})
        answer = await ok(backend, "PATCH", path, patch, content_type=MERGE)
        [line] = await collect(lines, 1)
        assert line.startswith(b'{"type":"MODIFIED","object":{'), line[:40]
        rv = answer["metadata"]["resourceVersion"]
        assert resource_version_in(line) == (rv if one_field else None)
        assert orjson.loads(line)["object"] == answer
        await lines.aclose()  # type: ignore[attr-defined]


async def test_timeout_seconds_is_read_as_strconv_reads_it(backend: Backend) -> None:
    """A negative timeoutSeconds ends the stream at once (kube-apiserver may still send an
    event it had ready: none here); one that is no number is 400."""
    path = configmaps(backend)
    start = (await ok(backend, "GET", path))["metadata"]["resourceVersion"]
    events = watch_events(backend, path, {"resourceVersion": start, "timeoutSeconds": "-1"})
    assert await asyncio.wait_for(_drain(events), 15) == []
    reply = await req(backend, "GET", path, params={"watch": "1", "timeoutSeconds": "1.5"})
    assert (reply.status, reply.body["message"]) == (
        400,
        'strconv.ParseInt: parsing "1.5": invalid syntax',
    )


async def test_the_deprecated_watch_paths_and_a_named_get(backend: Backend) -> None:
    """``/api/v1/watch/...`` (of a collection or of one object) is a watch; ``?watch=1`` on
    an object's own path is not, but a GET (RequestInfoFactory: only a request without a
    name becomes a list or a watch)."""
    ns = backend.namespace
    for name in ("a", "b"):
        await ok(backend, "POST", configmaps(backend), {"metadata": {"name": name}})
    params = {"timeoutSeconds": "1"}
    every = watch_events(backend, f"/api/v1/watch/namespaces/{ns}/configmaps", params)
    seen = await asyncio.wait_for(_drain(every), 15)
    assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in seen) == [  # type: ignore[index]
        ("ADDED", "a"),
        ("ADDED", "b"),
    ]
    one = watch_events(backend, f"/api/v1/watch/namespaces/{ns}/configmaps/b", params)
    seen = await asyncio.wait_for(_drain(one), 15)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [("ADDED", "b")]  # type: ignore[index]
    got = await req(backend, "GET", f"{configmaps(backend)}/b", params={"watch": "1", **params})
    assert (got.status, got.body["kind"], got.body["metadata"]["name"]) == (200, "ConfigMap", "b")
