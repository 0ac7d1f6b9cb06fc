"""core/v1 and events.k8s.io/v1 Events are one resource: kube-apiserver stores them once
(``/registry/events``) and serves each through the other group, converted field by field
as k8s.io/kubernetes pkg/apis/events/v1 conversion.go does (``involvedObject`` is
``regarding``, ``message`` ``note``, ``source`` ``deprecatedSource``, ``reportingComponent``
``reportingController``...). Reads, lists (with each group's field selectors), watches,
patches, deletes, Tables and kubectl read one object; a write through events.k8s.io/v1 is
validated with that group's stricter rules; a write through one group drops the
managedFields entries recorded through the other."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, collect, kubectl, ok, req, watch_events
from .test_tables import table

CORE = "/api/v1/namespaces/{ns}/events"
EVENTS = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
NO_KUBECTL = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")


def paths(backend: Backend) -> tuple[str, str]:
    return CORE.format(ns=backend.namespace), EVENTS.format(ns=backend.namespace)


def involved(ns: str) -> dict[str, Any]:
    return {"kind": "Pod", "namespace": ns, "name": "p", "apiVersion": "v1"}


def core_event(ns: str, name: str = "old") -> dict[str, Any]:
    """A core/v1 Event as an old-style recorder writes it (no eventTime)."""
    return {
        "metadata": {"name": name},
        "involvedObject": involved(ns),
        "reason": "Pulled",
        "message": "hello",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:00:05Z",
        "count": 3,
        "type": "Normal",
    }


def new_event(ns: str, name: str = "new") -> dict[str, Any]:
    """An events.k8s.io/v1 Event as client-go's new recorder writes it."""
    return {
        "metadata": {"name": name},
        "eventTime": "2024-01-01T00:00:00.123456Z",
        "series": {"count": 2, "lastObservedTime": "2024-01-01T00:00:02.000000Z"},
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Reconcile",
        "reason": "Synced",
        "regarding": involved(ns),
        "related": {**involved(ns), "name": "q"},
        "note": "hi",
        "type": "Warning",
    }


def body_of(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "metadata"}


async def test_a_core_event_is_read_through_events_k8s_io(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    created = await ok(backend, "POST", core, core_event(ns))
    other = await ok(backend, "GET", f"{events}/old")
    assert body_of(other) == {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "eventTime": None,
        "reason": "Pulled",
        "regarding": involved(ns),
        "note": "hello",
        "type": "Normal",
        "deprecatedSource": {"component": "kubelet", "host": "node-1"},
        "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
        "deprecatedLastTimestamp": "2024-01-01T00:00:05Z",
        "deprecatedCount": 3,
    }
    assert other["metadata"] == created["metadata"]  # uid, resourceVersion, managedFields


async def test_an_events_k8s_io_event_is_read_through_core(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    created = await ok(backend, "POST", events, new_event(ns))
    assert body_of(created)["deprecatedSource"] == {}
    other = await ok(backend, "GET", f"{core}/new")
    assert body_of(other) == {
        "kind": "Event",
        "apiVersion": "v1",
        "involvedObject": involved(ns),
        "reason": "Synced",
        "message": "hi",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "type": "Warning",
        "eventTime": "2024-01-01T00:00:00.123456Z",
        "series": {"count": 2, "lastObservedTime": "2024-01-01T00:00:02.000000Z"},
        "action": "Reconcile",
        "related": {**involved(ns), "name": "q"},
        "reportingComponent": "example.com/ctl",
        "reportingInstance": "ctl-1",
    }
    assert other["metadata"] == created["metadata"]


async def test_lists_hold_both_with_each_groups_field_selectors(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    await ok(backend, "POST", core, core_event(ns))
    await ok(backend, "POST", events, new_event(ns))

    async def names(path: str, selector: str = "") -> list[str]:
        params = {"fieldSelector": selector} if selector else None
        listed = await ok(backend, "GET", path, params=params)
        return [item["metadata"]["name"] for item in listed["items"]]

    assert await names(core) == await names(events) == ["new", "old"]
    assert await names(events, "regarding.name=p,type=Warning") == ["new"]
    assert await names(events, "reportingController=example.com/ctl") == ["new"]
    assert await names(core, "reportingComponent=example.com/ctl") == ["new"]
    assert await names(core, "source=example.com/ctl") == ["new"]  # reportingController's
    assert await names(core, "source=kubelet") == ["old"]
    refused = await req(backend, "GET", events, params={"fieldSelector": "involvedObject.name=p"})
    assert (refused.status, refused.body["message"]) == (
        400,
        "field label not supported: involvedObject.name",
    )


async def test_a_watch_of_one_group_sees_the_others_writes(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    start = (await ok(backend, "GET", core))["metadata"]["resourceVersion"]
    seen_events = watch_events(backend, events, {"resourceVersion": start})
    seen_core = watch_events(backend, core, {"resourceVersion": start})
    created = await ok(backend, "POST", core, core_event(ns))
    labelled = await ok(
        backend, "PATCH", f"{events}/old", {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )
    await ok(backend, "POST", events, new_event(ns))
    await ok(backend, "DELETE", f"{events}/old")
    through_events = await collect(seen_events, 4)
    through_core = await collect(seen_core, 4)
    assert [e["type"] for e in through_events] == ["ADDED", "MODIFIED", "ADDED", "DELETED"]
    assert [e["type"] for e in through_core] == ["ADDED", "MODIFIED", "ADDED", "DELETED"]
    assert {e["object"]["apiVersion"] for e in through_events} == {"events.k8s.io/v1"}
    assert {e["object"]["apiVersion"] for e in through_core} == {"v1"}
    rvs = [
        [e["object"]["metadata"]["resourceVersion"] for e in w]
        for w in (through_events, through_core)
    ]
    assert rvs[0] == rvs[1]
    assert rvs[0][:2] == [
        created["metadata"]["resourceVersion"],
        labelled["metadata"]["resourceVersion"],
    ]
    assert through_events[0]["object"]["note"] == through_core[0]["object"]["message"] == "hello"
    assert through_core[2]["object"]["reportingComponent"] == "example.com/ctl"


async def test_patches_and_deletes_through_the_other_group(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    await ok(backend, "POST", core, core_event(ns))
    await ok(backend, "POST", events, new_event(ns))
    # through events.k8s.io/v1 an Event's note (message) is immutable, even an old one's
    refused = await req(backend, "PATCH", f"{events}/old", {"note": "x"}, content_type=MERGE)
    assert (refused.status, refused.body["message"]) == (
        422,
        'Event "old" is invalid: message: Invalid value: "x": field is immutable',
    )
    # through core/v1 it may change, and the core/v1 write drops events.k8s.io's entry
    changed = await ok(backend, "PATCH", f"{core}/new", {"message": "x"}, content_type=MERGE)
    assert [(m["apiVersion"], m["fieldsV1"]) for m in changed["metadata"]["managedFields"]] == [
        ("v1", {"f:message": {}})
    ]
    assert (await ok(backend, "GET", f"{events}/new"))["note"] == "x"
    labelled = await ok(
        backend, "PATCH", f"{events}/old", {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )
    assert [m["apiVersion"] for m in labelled["metadata"]["managedFields"]] == ["events.k8s.io/v1"]
    gone = await ok(backend, "DELETE", f"{events}/old")
    assert gone["details"] == {
        "name": "old",
        "group": "events.k8s.io",
        "kind": "events",
        "uid": labelled["metadata"]["uid"],
    }
    assert (await req(backend, "GET", f"{core}/old")).status == 404
    await ok(backend, "DELETE", f"{core}/new")
    assert (await req(backend, "GET", f"{events}/new")).status == 404


async def test_events_k8s_io_validates_strictly(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    bad = {
        "metadata": {"name": "bad"},
        "regarding": involved(ns),
        "deprecatedCount": 2,
        "deprecatedSource": {"host": "h"},
        "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
        "type": "Other",
        "series": {"count": 1, "lastObservedTime": None},
    }
    refused = await req(backend, "POST", events, bad)
    assert refused.status == 422
    assert refused.body["message"] == (
        'Event "bad" is invalid: [series.count: Invalid value: "": should be at least 2,'
        " series.lastObservedTime: Required value, eventTime: Required value, type: Invalid"
        ' value: "": has invalid value: Other, firstTimestamp: Invalid value: "": needs to be'
        ' unset, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs'
        " to be unset]"
    )
    partial = {**new_event(ns, "partial"), "reportingController": "not a name", "action": ""}
    refused = await req(backend, "POST", events, partial)
    assert refused.status == 422
    assert [c["field"] for c in refused.body["details"]["causes"]] == [
        "reportingController",
        "action",
    ]
    # the same Event through core/v1 (no eventTime): only the namespaces are checked
    await ok(backend, "POST", core, {"metadata": {"name": "lax"}, "involvedObject": involved(ns)})


async def test_tables_print_either_group_from_the_internal_event(backend: Backend) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    await ok(backend, "POST", core, core_event(ns))
    await ok(backend, "POST", events, new_event(ns))
    for path in (core, events):
        rows = {r["cells"][-1]: r["cells"] for r in (await table(backend, path))["rows"]}
        # Type, Reason, Object, Subobject, Source, Message, Count (the ages move on)
        assert rows["old"][1:7] + rows["old"][8:9] == [
            "Normal",
            "Pulled",
            "pod/p",
            "",
            "kubelet, node-1",
            "hello",
            3,
        ]
        assert rows["new"][1:7] + rows["new"][8:9] == [
            "Warning",
            "Synced",
            "pod/p",
            "",
            "example.com/ctl, ctl-1",
            "hi",
            2,
        ]


@NO_KUBECTL
async def test_kubectl_reads_events_of_both_groups(backend: Backend, tmp_path: Path) -> None:
    core, events = paths(backend)
    ns = backend.namespace
    cm = await ok(
        backend, "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "p"}}
    )
    uid = cm["metadata"]["uid"]  # kubectl describe selects the object's events by uid too
    regarding = {"kind": "ConfigMap", "namespace": ns, "name": "p", "uid": uid, "apiVersion": "v1"}
    await ok(backend, "POST", core, {**core_event(ns), "involvedObject": regarding})
    await ok(backend, "POST", events, {**new_event(ns), "regarding": regarding})
    for args in (
        ("get", "events", "-n", ns, "-o", "custom-columns=N:.metadata.name,M:.message"),
        ("get", "events.events.k8s.io", "-n", ns, "-o", "custom-columns=N:.metadata.name,M:.note"),
    ):
        code, out, err = await kubectl(backend, tmp_path, *args)
        assert (code, out.split()) == (0, ["N", "M", "new", "hi", "old", "hello"]), err
    code, out, err = await kubectl(backend, tmp_path, "events", "-n", ns)
    assert code == 0, err
    assert "Synced" in out and "Pulled" in out, out
    code, out, err = await kubectl(backend, tmp_path, "describe", "configmap", "p", "-n", ns)
    assert code == 0, err
    assert "Synced" in out and "Pulled" in out, out


async def test_events_k8s_io_updates_keep_the_event_as_it_was(backend: Backend) -> None:
    """ValidateEventUpdate through events.k8s.io/v1: every field but the metadata (and a
    valid series) is immutable, reported with the internal field's path and value as Go
    prints it (structs ``%#v``, times as time.Time's String, a nil pointer "null");
    ``eventTime`` is compared to the microsecond."""
    core, events = paths(backend)
    ns = backend.namespace
    await ok(backend, "POST", core, core_event(ns))
    await ok(backend, "POST", events, new_event(ns))
    old = await ok(backend, "GET", f"{events}/old")
    changes = {
        "regarding": {**old["regarding"], "name": "z"},
        "deprecatedSource": {},
        "deprecatedFirstTimestamp": "2024-02-03T04:05:06Z",
        "deprecatedLastTimestamp": None,
        "deprecatedCount": 1,
        "reason": "Y",
    }
    refused = await req(backend, "PUT", f"{events}/old", {**old, **changes})
    reference = (
        f'core.ObjectReference{{Kind:"Pod", Namespace:"{ns}", Name:"z", UID:"",'
        ' APIVersion:"v1", ResourceVersion:"", FieldPath:""}'
    )
    assert refused.status == 422
    assert [(c["field"], c["message"]) for c in refused.body["details"]["causes"]] == [
        ("involvedObject", f"Invalid value: {reference}: field is immutable"),
        ("reason", 'Invalid value: "Y": field is immutable'),
        ("source", 'Invalid value: core.EventSource{Component:"", Host:""}: field is immutable'),
        ("firstTimestamp", "Invalid value: 2024-02-03 04:05:06 +0000 UTC: field is immutable"),
        ("lastTimestamp", "Invalid value: 0001-01-01 00:00:00 +0000 UTC: field is immutable"),
        ("count", "Invalid value: 1: field is immutable"),
        ("reason", 'Invalid value: "Y": field is immutable'),
    ]
    new = await ok(backend, "GET", f"{events}/new")
    changes = {"eventTime": "2024-02-03T04:05:06.700000Z", "related": None}
    refused = await req(backend, "PUT", f"{events}/new", {**new, **changes})
    assert (refused.status, refused.body["message"]) == (
        422,
        'Event "new" is invalid: [eventTime: Invalid value: 2024-02-03 04:05:06.7 +0000 UTC:'
        ' field is immutable, related: Invalid value: "null": field is immutable]',
    )
    same = {**new, "eventTime": "2024-01-01T00:00:00.123456Z", "metadata": new["metadata"]}
    assert (await req(backend, "PUT", f"{events}/new", same)).status == 200
