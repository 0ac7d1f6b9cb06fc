"""WatchList (``sendInitialEvents``, beta and on by default in kube-apiserver 1.32): the
current state as ADDED events, a BOOKMARK marking their end, then the changes.

kube-apiserver: ``SetListOptionsDefaults`` / ``validateWatchOptions`` (apimachinery
meta/internalversion), ``Cacher.Watch`` and ``cacheWatcher`` (apiserver storage/cacher),
``watchListTransformer`` (apiserver endpoints/handlers).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from ..kubehttp import send, split_path
from .kube import MERGE, Widgets, collect, ok, req, status_body, watch_events

WATCH_LIST = {
    "sendInitialEvents": "true",
    "resourceVersionMatch": "NotOlderThan",
    "allowWatchBookmarks": "true",
}
END = "k8s.io/initial-events-end"
BLUEPRINT = "kubernetes.io/initial-events-list-blueprint"


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


def names(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


def end_bookmark(event: dict[str, Any], kind: str, api_version: str) -> int:
    """Check the initial-events-end BOOKMARK of a built-in kind; returns its resourceVersion.
    (kube-apiserver's object also carries the kind's zero-valued spec and status fields,
    e.g. a Deployment's ``spec.replicas: 0``; the embedded server leaves them out.)"""
    assert event["type"] == "BOOKMARK"
    obj = event["object"]
    meta = obj["metadata"]
    assert (obj["kind"], obj["apiVersion"]) == (kind, api_version)
    assert set(meta) == {"resourceVersion", "creationTimestamp", "annotations"}
    assert meta["creationTimestamp"] is None
    assert meta["annotations"][END] == "true"
    blueprint = base64.b64decode(meta["annotations"][BLUEPRINT])
    assert blueprint.endswith(b"\n")
    assert json.loads(blueprint) == {
        "kind": f"{kind}List",
        "apiVersion": api_version,
        "metadata": {},
        "items": None,
    }
    return int(meta["resourceVersion"])


async def changes(events: AsyncIterator[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The next ``count`` events that are not BOOKMARKs: kube-apiserver may send a periodic
    one at any time after the initial events (CI saw one between two changes)."""
    got: list[dict[str, Any]] = []
    while len(got) < count:
        got += [e for e in await collect(events, 1) if e["type"] != "BOOKMARK"]
    return got


async def test_initial_state_then_the_end_bookmark_then_changes(backend: Backend) -> None:
    path = configmaps(backend)
    written = []
    for name, app in (("c", "x"), ("b", "y"), ("a", "x")):
        body = {"metadata": {"name": name, "labels": {"app": app}}}
        written.append(await ok(backend, "POST", path, body))
    events = watch_events(backend, path, {**WATCH_LIST, "labelSelector": "app=x"})
    initial = await collect(events, 3)
    assert names(initial) == [("ADDED", "a"), ("ADDED", "c"), ("BOOKMARK", "")]  # by key
    assert initial[0]["object"] == {**written[2], "kind": "ConfigMap", "apiVersion": "v1"}
    rv = end_bookmark(initial[2], "ConfigMap", "v1")
    assert rv >= max(int(o["metadata"]["resourceVersion"]) for o in written)
    entering = {"metadata": {"labels": {"app": "x"}}}
    await ok(backend, "PATCH", f"{path}/b", entering, content_type=MERGE)
    await ok(backend, "DELETE", f"{path}/c")
    later = await changes(events, 2)
    assert names(later) == [("ADDED", "b"), ("DELETED", "c")]
    await events.aclose()  # type: ignore[attr-defined]


async def test_the_end_bookmark_of_an_empty_selection(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    events = watch_events(backend, path, WATCH_LIST)
    [bookmark] = await collect(events, 1)
    end_bookmark(bookmark, "Deployment", "apps/v1")
    await events.aclose()  # type: ignore[attr-defined]


async def test_the_end_bookmark_of_a_custom_resource(backend: Backend, widgets: Widgets) -> None:
    events = watch_events(backend, widgets.path, WATCH_LIST)
    [bookmark] = await collect(events, 1)
    await events.aclose()  # type: ignore[attr-defined]
    obj = bookmark["object"]
    assert (bookmark["type"], obj["kind"], obj["apiVersion"]) == (
        "BOOKMARK",
        "Widget",
        widgets.api_version,
    )
    assert set(obj["metadata"]) == {"resourceVersion", "annotations"}  # unstructured
    annotations = obj["metadata"]["annotations"]
    assert annotations[END] == "true"
    assert base64.b64decode(annotations[BLUEPRINT]) == (
        b'{"apiVersion":"%s","items":[],"kind":"WidgetList"}\n' % widgets.api_version.encode()
    )


@pytest.mark.parametrize("version", ["", "0"])
async def test_a_legacy_watch_that_allows_bookmarks_is_a_watch_list(
    backend: Backend, version: str
) -> None:
    """``SetListOptionsDefaults``: resourceVersion "" or "0" and neither sendInitialEvents
    nor resourceVersionMatch means sendInitialEvents=true, resourceVersionMatch=NotOlderThan."""
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    params = {"allowWatchBookmarks": "true", "resourceVersion": version}
    events = watch_events(backend, path, params)
    initial = await collect(events, 2)
    assert names(initial) == [("ADDED", "a"), ("BOOKMARK", "")]
    end_bookmark(initial[1], "ConfigMap", "v1")
    await events.aclose()  # type: ignore[attr-defined]


async def test_the_state_whatever_the_resource_version(backend: Backend) -> None:
    """With sendInitialEvents=true a resourceVersion is a lower bound of the state sent, not
    a point to replay from: no 410 for one compacted away, no history of the changes."""
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    patched = await ok(backend, "PATCH", f"{path}/a", {"data": {"k": "v"}}, content_type=MERGE)
    secrets = f"/api/v1/namespaces/{backend.namespace}/secrets"
    await ok(backend, "POST", secrets, {"metadata": {"name": "later"}})
    backend.compact()  # the patch's resourceVersion is now compacted (embedded, etcd)
    since = patched["metadata"]["resourceVersion"]
    events = watch_events(backend, path, {**WATCH_LIST, "resourceVersion": since})
    initial = await collect(events, 2)
    assert names(initial) == [("ADDED", "a"), ("BOOKMARK", "")]
    assert initial[0]["object"]["data"] == {"k": "v"}
    assert initial[0]["object"]["metadata"]["resourceVersion"] == since
    assert end_bookmark(initial[1], "ConfigMap", "v1") >= int(since)
    await events.aclose()  # type: ignore[attr-defined]


async def test_without_initial_events(backend: Backend) -> None:
    """sendInitialEvents=false: changes after the resourceVersion ("": from now)."""
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    await ok(backend, "POST", path, {"metadata": {"name": "b"}})
    await ok(backend, "PATCH", f"{path}/a", {"data": {"k": "v"}}, content_type=MERGE)
    params = {"sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan"}
    since = created["metadata"]["resourceVersion"]
    events = watch_events(backend, path, {**params, "resourceVersion": since})
    assert names(await collect(events, 2)) == [("ADDED", "b"), ("MODIFIED", "a")]
    await events.aclose()  # type: ignore[attr-defined]
    events = watch_events(backend, path, {**params, "timeoutSeconds": "1"})
    assert await asyncio.wait_for(_drain(events), 15) == []


async def test_initial_events_without_bookmarks_have_no_end_marker(backend: Backend) -> None:
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    params = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}
    events = watch_events(backend, path, {**params, "timeoutSeconds": "1"})
    assert names(await asyncio.wait_for(_drain(events), 15)) == [("ADDED", "a")]


async def test_a_resource_version_not_reached_in_3_seconds(backend: Backend) -> None:
    """The watch cache waits 3 s for a resourceVersion it has not seen, then the stream
    carries kube-apiserver's 504 (``storage.NewTooLargeResourceVersionError``)."""
    path = configmaps(backend)
    current = int((await ok(backend, "GET", path))["metadata"]["resourceVersion"])
    future = current + 1_000_000
    events = watch_events(backend, path, {**WATCH_LIST, "resourceVersion": str(future)})
    [error] = await collect(events, 1)
    assert error["type"] == "ERROR"
    status = error["object"]
    latest = int(status["message"].rsplit(" ", 1)[1])
    assert latest >= current
    assert status == status_body(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {future}, current: {latest}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )
    assert await asyncio.wait_for(_drain(events), 15) == []


def _forbidden(detail: str) -> dict[str, str]:
    return {
        "reason": "FieldValueForbidden",
        "message": f"Forbidden: {detail}",
        "field": "resourceVersionMatch",
    }


NEEDS_NOT_OLDER_THAN = _forbidden(
    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
)
NEEDS_SEND = _forbidden(
    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
)
NO_CONTINUE = _forbidden("resourceVersionMatch is forbidden when continue is provided")


def _unsupported(value: str) -> dict[str, str]:
    return {
        "reason": "FieldValueNotSupported",
        "message": f'Unsupported value: "{value}": supported values: "NotOlderThan"',
        "field": "resourceVersionMatch",
    }


REFUSED = [
    ({"sendInitialEvents": "true"}, [NEEDS_NOT_OLDER_THAN]),
    ({"sendInitialEvents": "false", "allowWatchBookmarks": "true"}, [NEEDS_NOT_OLDER_THAN]),
    (
        {"sendInitialEvents": "yes", "resourceVersionMatch": "Exact", "resourceVersion": "1"},
        [NEEDS_NOT_OLDER_THAN, _unsupported("Exact")],
    ),
    ({"resourceVersionMatch": "NotOlderThan"}, [NEEDS_SEND]),
    (
        {"resourceVersionMatch": "Bogus", "continue": "x"},
        [NEEDS_SEND, _unsupported("Bogus"), NO_CONTINUE],
    ),
    ({**WATCH_LIST, "continue": "abc"}, [NO_CONTINUE]),
]


@pytest.mark.parametrize(("params", "causes"), REFUSED)
async def test_refused_combinations(
    backend: Backend, params: dict[str, str], causes: list[dict[str, str]]
) -> None:
    reply = await req(backend, "GET", configmaps(backend), params={"watch": "1", **params})
    parts = [f"{c['field']}: {c['message']}" for c in causes]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details = {"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes}
    message = f'ListOptions.meta.k8s.io "" is invalid: {summary}'
    assert (reply.status, reply.body) == (422, status_body(422, "Invalid", message, details))


async def test_send_initial_events_is_refused_on_a_list(backend: Backend) -> None:
    reply = await req(backend, "GET", configmaps(backend), params={"sendInitialEvents": "false"})
    cause = {
        "reason": "FieldValueForbidden",
        "message": "Forbidden: sendInitialEvents is forbidden for list",
        "field": "sendInitialEvents",
    }
    message = (
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents'
        " is forbidden for list"
    )
    details = {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [cause]}
    assert (reply.status, reply.body) == (422, status_body(422, "Invalid", message, details))


METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


async def test_a_metadata_watch_list(backend: Backend) -> None:
    """As PartialObjectMetadata (what metadata informers ask for) the end BOOKMARK is one
    too, and its blueprint a PartialObjectMetadataList."""
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    base, version, url = split_path(path)
    got: list[dict[str, Any]] = []
    async with backend.api.call_api(
        "GET",
        version=version,
        base=base,
        url=url,
        stream=True,
        params={"watch": "1", **WATCH_LIST},
        headers={"Accept": METADATA},
    ) as response:
        lines = response.aiter_lines()
        while len(got) < 2:
            line = await asyncio.wait_for(anext(lines), 15)
            if line.strip():
                got.append(json.loads(line))
    assert [(e["type"], e["object"]["kind"]) for e in got] == [
        ("ADDED", "PartialObjectMetadata"),
        ("BOOKMARK", "PartialObjectMetadata"),
    ]
    bookmark = got[1]["object"]
    assert bookmark["apiVersion"] == "meta.k8s.io/v1"
    assert bookmark["metadata"]["creationTimestamp"] is None
    blueprint = base64.b64decode(bookmark["metadata"]["annotations"][BLUEPRINT])
    assert blueprint == (
        b'{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},'
        b'"items":null}\n'
    )


@pytest.mark.parametrize("params", [WATCH_LIST, {"allowWatchBookmarks": "true"}])
async def test_no_tables_on_a_watch_list(backend: Backend, params: dict[str, str]) -> None:
    """kube-apiserver's ``watchListEndpointRestrictions``: no Table for a watch-list (a
    legacy watch that allows bookmarks is one)."""
    status, body, _ = await send(
        backend.api,
        "GET",
        configmaps(backend),
        params={"watch": "1", "timeoutSeconds": "1", **params},
        accept=TABLE,
    )
    message = (
        "only the following media types are accepted: application/json, application/yaml,"
        " application/vnd.kubernetes.protobuf"
    )
    assert (status, body) == (406, status_body(406, "NotAcceptable", message, None))


async def _drain(events: Any) -> list[dict[str, Any]]:
    return [event async for event in events]
