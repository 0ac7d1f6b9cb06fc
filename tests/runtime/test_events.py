"""EventRecorder against the embedded API server: fields on the wire, aggregation, failures."""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.runtime import events
from reconcile_kit.runtime.events import MAX_ATTEMPTS, SERIES_INTERVAL, SERIES_WINDOW, EventRecorder
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_EVENTS = "/api/v1/namespaces/default/events"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
MICRO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
CONTROLLER = "example.com/widget-controller"
FLUSH_TIMEOUT = 60.0  # seconds; a given-up write takes < 10 s of retry delays


def recorder(api: Any, **kwargs: Any) -> EventRecorder:
    kwargs.setdefault("reporting_controller", CONTROLLER)
    kwargs.setdefault("reporting_instance", "widget-0")
    return EventRecorder(api, **kwargs)


async def flush(rec: EventRecorder) -> None:
    await asyncio.wait_for(rec.flush(), FLUSH_TIMEOUT)


async def create_cm(api: Any, name: str, namespace: str = "default") -> dict[str, Any]:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    status, body = await call(api, "POST", path, {"metadata": {"name": name}})
    assert status == 201, body
    created: dict[str, Any] = body
    return created


async def list_events(api: Any, path: str = EVENTS) -> list[dict[str, Any]]:
    status, body = await call(api, "GET", path)
    assert status == 200, body
    items: list[dict[str, Any]] = body["items"]
    return items


def event_requests(apiserver: APIServer, group: str = "events.k8s.io") -> list[Any]:
    """Writes to Events of ``group`` (the tests' own reads left out)."""
    return [r for r in apiserver.requests.writes() if r.resource == "events" and r.group == group]


# --- one event -------------------------------------------------------------------------------


async def test_one_event_creates_one_event_with_client_go_fields(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    rec.event(cm, "Normal", "Synced", "synced the widget")
    await flush(rec)

    [event] = await list_events(kube)
    meta = cm["metadata"]
    assert event["regarding"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "namespace": "default",
        "name": "a",
        "uid": meta["uid"],
        "resourceVersion": meta["resourceVersion"],
    }
    assert re.fullmatch(r"a\.[0-9a-f]{16}", event["metadata"]["name"])
    assert event["metadata"]["namespace"] == "default"
    assert (event["type"], event["reason"], event["action"], event["note"]) == (
        "Normal",
        "Synced",
        "Synced",
        "synced the widget",
    )
    assert event["reportingController"] == CONTROLLER
    assert event["reportingInstance"] == "widget-0"
    assert MICRO_TIME.fullmatch(event["eventTime"])
    assert "series" not in event  # a single occurrence has no series (client-go)
    [request] = event_requests(apiserver)
    assert (request.verb, request.content_type, request.status) == (
        "create",
        "application/json",
        201,
    )


async def test_kr8s_objects_action_and_related(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    await create_cm(kube, "b")
    a = await ConfigMap.get("a", namespace="default", api=kube)
    b = await ConfigMap.get("b", namespace="default", api=kube)
    rec = recorder(kube)
    rec.event(a, "Warning", "CopyFailed", "could not copy to b", action="Copying", related=b)
    await flush(rec)

    [event] = await list_events(kube)
    assert (event["reason"], event["action"], event["type"]) == ("CopyFailed", "Copying", "Warning")
    assert event["regarding"]["name"] == "a" and event["regarding"]["uid"] == a.metadata.uid
    assert event["related"]["name"] == "b" and event["related"]["kind"] == "ConfigMap"


async def test_default_reporting_instance_is_controller_and_hostname(
    kube: kr8s.asyncio.Api,
) -> None:
    import socket

    rec = EventRecorder(kube, reporting_controller="widgets")
    assert rec.reporting_instance == f"widgets-{socket.gethostname()}"[:128]


async def test_long_messages_are_cut_to_1024_bytes(kube: kr8s.asyncio.Api) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    rec.event(cm, "Normal", "Long", "é" * 1000)  # 2000 bytes
    await flush(rec)

    [event] = await list_events(kube)
    note = event["note"]
    assert note.endswith(" ...") and len(note.encode()) <= 1024
    assert note == "é" * 510 + " ..."


# --- aggregation -------------------------------------------------------------------------------


async def test_100_repeats_make_one_event_with_series_count_100(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    async with recorder(kube) as rec:
        rec.event(cm, "Warning", "BackOff", "retrying")
        await flush(rec)
        for _ in range(99):
            rec.event(cm, "Warning", "BackOff", "retrying")
        await flush(rec)

    [event] = await list_events(kube)
    assert event["series"]["count"] == 100
    assert MICRO_TIME.fullmatch(event["series"]["lastObservedTime"])
    requests = event_requests(apiserver)
    assert [r.verb for r in requests] == ["create", "patch"]  # 2 requests for 100 events
    patch = requests[1]
    assert patch.content_type == MERGE and patch.status == 200
    assert list(patch.body) == ["series"] and patch.body["series"]["count"] == 100


async def test_a_burst_before_the_first_write_is_one_create(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    for _ in range(100):
        rec.event(cm, "Normal", "Tick", "tick")
    await flush(rec)

    [event] = await list_events(kube)
    assert event["series"]["count"] == 100
    assert [r.verb for r in event_requests(apiserver)] == ["create"]


@pytest.mark.looptime
async def test_a_hot_loop_is_coalesced_into_a_heartbeat(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    async with recorder(kube) as rec:
        for _ in range(100):  # one event a second for 100 s, yielding in between
            rec.event(cm, "Normal", "Tick", "tick")
            await asyncio.sleep(1)
        # so far: the create at once, then one PATCH per SERIES_INTERVAL (30 s)
        writes = event_requests(apiserver)
        assert [r.verb for r in writes] == ["create", "patch", "patch", "patch"]
        counts = [r.body["series"]["count"] for r in writes[1:]]
        for beat, count in enumerate(counts, 1):  # each carries the count at its beat
            assert abs(count - (beat * SERIES_INTERVAL + 1)) <= 1
    # stop() flushed the rest: 5 requests for 100 occurrences
    [event] = await list_events(kube)
    assert event["series"]["count"] == 100
    assert [r.verb for r in event_requests(apiserver)] == ["create"] + ["patch"] * 4


async def test_different_events_are_different_objects(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    a = await create_cm(kube, "a")
    b = await create_cm(kube, "b")
    rec = recorder(kube)
    rec.event(a, "Normal", "Created", "x")
    rec.event(a, "Normal", "Created", "y")  # other message
    rec.event(a, "Normal", "Updated", "x")  # other reason
    rec.event(a, "Warning", "Created", "x")  # other type
    rec.event(a, "Normal", "Created", "x", action="Creating")  # other action
    rec.event(b, "Normal", "Created", "x")  # other object
    rec.event(a, "Normal", "Created", "x")  # a repeat of the first
    await flush(rec)

    events = await list_events(kube)
    assert len(events) == 6
    assert len({e["metadata"]["name"] for e in events}) == 6
    counts = {
        (e["regarding"]["name"], e["type"], e["reason"], e["action"], e["note"]): e.get(
            "series", {}
        ).get("count", 1)
        for e in events
    }
    assert counts[("a", "Normal", "Created", "Created", "x")] == 2
    assert sum(counts.values()) == 7
    assert len(event_requests(apiserver)) == 6


async def test_a_changed_resource_version_stays_in_the_series(kube: kr8s.asyncio.Api) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    rec.event(cm, "Normal", "Synced", "ok")
    status, updated = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    assert status == 200
    rec.event(updated, "Normal", "Synced", "ok")
    await flush(rec)

    [event] = await list_events(kube)
    assert event["series"]["count"] == 2


async def test_a_repeat_after_the_window_starts_a_new_event(kube: kr8s.asyncio.Api) -> None:
    cm = await create_cm(kube, "a")
    now = [datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)]
    rec = recorder(kube, clock=lambda: now[0])
    rec.event(cm, "Normal", "Synced", "ok")
    now[0] += timedelta(seconds=SERIES_WINDOW - 1)
    rec.event(cm, "Normal", "Synced", "ok")  # within the window: joins the series
    await flush(rec)
    now[0] += timedelta(seconds=SERIES_WINDOW + 1)
    rec.event(cm, "Normal", "Synced", "ok")  # after it: a new Event
    await flush(rec)

    events = sorted(await list_events(kube), key=lambda e: e["eventTime"])
    assert [e.get("series", {}).get("count", 1) for e in events] == [2, 1]
    assert events[0]["eventTime"] == "2025-01-02T03:04:05.678901Z"
    assert events[0]["series"]["lastObservedTime"] == "2025-01-02T03:10:04.678901Z"
    assert events[0]["metadata"]["name"] == "a.1816c11f176a6708"  # unix nanoseconds, hex


async def test_an_expired_event_is_created_again(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    rec.event(cm, "Normal", "Synced", "ok")
    await flush(rec)
    [event] = await list_events(kube)
    status, _ = await call(kube, "DELETE", f"{EVENTS}/{event['metadata']['name']}")
    assert status == 200
    rec.event(cm, "Normal", "Synced", "ok")
    await flush(rec)

    [again] = await list_events(kube)
    assert again["metadata"]["name"] == event["metadata"]["name"]
    assert again["series"]["count"] == 2
    verbs = [(r.verb, r.status) for r in event_requests(apiserver)]
    assert verbs == [("create", 201), ("delete", 200), ("patch", 404), ("create", 201)]


# --- core/v1 ---------------------------------------------------------------------------------


async def test_core_v1_events_count_and_strategic_merge_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube, api_group="")
    rec.event(cm, "Warning", "BackOff", "retrying")
    await flush(rec)

    [event] = await list_events(kube, CORE_EVENTS)
    assert re.fullmatch(r"a\.[0-9a-f]{16}", event["metadata"]["name"])
    assert event["count"] == 1
    assert TIME.fullmatch(event["firstTimestamp"])
    assert event["firstTimestamp"] == event["lastTimestamp"]
    assert event["source"] == {"component": CONTROLLER}
    assert event["involvedObject"]["uid"] == cm["metadata"]["uid"]
    assert event["involvedObject"]["kind"] == "ConfigMap"
    assert (event["type"], event["reason"], event["message"]) == ("Warning", "BackOff", "retrying")
    assert (event["reportingComponent"], event["reportingInstance"]) == (CONTROLLER, "widget-0")
    assert event["eventTime"] is None  # not set; kube-apiserver writes the zero MicroTime

    for _ in range(99):
        rec.event(cm, "Warning", "BackOff", "retrying")
    await flush(rec)

    [event] = await list_events(kube, CORE_EVENTS)
    assert event["count"] == 100
    requests = event_requests(apiserver, group="")
    assert [r.verb for r in requests] == ["create", "patch"]
    patch = requests[1]
    assert patch.content_type == STRATEGIC
    assert set(patch.body) == {"count", "lastTimestamp", "message"}
    assert patch.body["count"] == 100
    # one store, as kube-apiserver's: the same Event through events.k8s.io/v1
    [same] = await list_events(kube)
    assert same["metadata"]["uid"] == event["metadata"]["uid"]
    assert (same["deprecatedCount"], same["note"]) == (100, "retrying")


@pytest.mark.parametrize("group", ["events.k8s.io", ""])
async def test_cluster_scoped_object_events_go_to_default(
    kube: kr8s.asyncio.Api, apiserver: APIServer, group: str
) -> None:
    status, ns = await call(kube, "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    assert status == 201
    rec = recorder(kube, api_group=group)
    rec.event(ns, "Normal", "Provisioned", "namespace ready")
    await flush(rec)

    [event] = await list_events(kube, EVENTS if group else CORE_EVENTS)
    assert event["metadata"]["namespace"] == "default"
    ref = event["regarding" if group else "involvedObject"]
    assert (ref["kind"], ref["name"]) == ("Namespace", "team") and "namespace" not in ref
    assert [r.namespace for r in event_requests(apiserver, group)] == ["default"]


async def test_events_go_to_the_objects_namespace(kube: kr8s.asyncio.Api) -> None:
    await call(kube, "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    cm = await create_cm(kube, "a", namespace="team")
    rec = recorder(kube)
    rec.event(cm, "Normal", "Synced", "ok")
    await flush(rec)

    assert await list_events(kube) == []
    [event] = await list_events(kube, "/apis/events.k8s.io/v1/namespaces/team/events")
    assert event["regarding"]["namespace"] == "team"


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        (("Info", "Synced", "m"), {}, "type"),
        (("normal", "Synced", "m"), {}, "type"),
        (("Normal", "synced", "m"), {}, "reason"),
        (("Normal", "Not Camel", "m"), {}, "reason"),
        (("Normal", "", "m"), {}, "reason"),
        (("Normal", "A" * 129, "m"), {}, "reason"),
        (("Normal", "Synced", "m"), {"action": ""}, "action"),
        (("Normal", "Synced", "m"), {"action": "A" * 129}, "action"),
    ],
)
async def test_invalid_arguments_raise_value_error_naming_the_field(
    kube: kr8s.asyncio.Api,
    apiserver: APIServer,
    args: tuple[str, str, str],
    kwargs: dict[str, Any],
    field: str,
) -> None:
    rec = recorder(kube)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "x"}}
    with pytest.raises(ValueError, match=f"^{field} "):
        rec.event(obj, *args, **kwargs)
    await flush(rec)
    assert event_requests(apiserver) == []


async def test_invalid_objects_and_constructor_arguments(kube: kr8s.asyncio.Api) -> None:
    rec = recorder(kube)
    with pytest.raises(ValueError, match=r"^obj: "):
        rec.event({"metadata": {"name": "a"}}, "Normal", "Synced", "no kind")
    with pytest.raises(ValueError, match=r"^related: "):
        rec.event({"kind": "Pod", "name": "p"}, "Normal", "Synced", "m", related={"kind": "X"})
    with pytest.raises(TypeError, match="obj"):
        rec.event(42, "Normal", "Synced", "m")
    with pytest.raises(ValueError, match=r"^reporting_controller "):
        EventRecorder(kube, reporting_controller="Widget Controller!")
    with pytest.raises(ValueError, match=r"^reporting_instance "):
        EventRecorder(kube, reporting_controller="widgets", reporting_instance="i" * 129)
    with pytest.raises(ValueError, match=r"^api_group "):
        EventRecorder(kube, reporting_controller="widgets", api_group="apps")


async def test_an_object_reference_dict_is_accepted(kube: kr8s.asyncio.Api) -> None:
    rec = recorder(kube)
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "default", "uid": "u-1"}
    rec.event(ref, "Normal", "Scheduled", "on node-1")
    await flush(rec)
    [event] = await list_events(kube)
    assert event["regarding"] == ref


# --- failures ----------------------------------------------------------------------------------


@pytest.mark.looptime
async def test_a_server_failure_is_retried_and_logged(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    cm = await create_cm(kube, "a")
    apiserver.faults.fail(500, resource="events", times=2)
    rec = recorder(kube)
    with caplog.at_level(logging.WARNING, logger="reconcile_kit.runtime.events"):
        rec.event(cm, "Normal", "Synced", "ok")  # does not raise
        await flush(rec)

    [event] = await list_events(kube)
    assert event["reason"] == "Synced"
    assert [r.status for r in event_requests(apiserver) if r.verb == "create"] == [500, 500, 201]
    warnings = [r for r in caplog.records if r.name == "reconcile_kit.runtime.events"]
    assert len(warnings) == 2 and all(r.levelno == logging.WARNING for r in warnings)
    assert "500" in warnings[0].getMessage() and "retrying" in warnings[0].getMessage()


@pytest.mark.looptime
async def test_a_lasting_failure_gives_up_after_a_few_tries(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    cm = await create_cm(kube, "a")
    apiserver.faults.fail(503, resource="events", times=None)
    rec = recorder(kube)
    with caplog.at_level(logging.WARNING, logger="reconcile_kit.runtime.events"):
        rec.event(cm, "Normal", "Synced", "ok")
        await flush(rec)

    assert len(event_requests(apiserver)) == MAX_ATTEMPTS
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "gave up" in errors[0].getMessage()
    apiserver.faults.clear()
    assert await list_events(kube) == []
    rec.event(cm, "Normal", "Synced", "ok")  # the next occurrence tries again, with its count
    await flush(rec)
    [event] = await list_events(kube)
    assert event["series"]["count"] == 2


async def test_a_refusal_is_not_retried(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    rec = recorder(kube)
    missing = {"kind": "Pod", "name": "p", "namespace": "nowhere"}  # namespace does not exist
    with caplog.at_level(logging.ERROR, logger="reconcile_kit.runtime.events"):
        rec.event(missing, "Normal", "Synced", "ok")
        await flush(rec)

    assert [r.status for r in event_requests(apiserver)] == [404]
    assert "will not retry" in caplog.text and "nowhere" in caplog.text


@pytest.mark.looptime
async def test_a_failed_patch_is_retried_with_the_latest_count(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    rec.event(cm, "Normal", "Synced", "ok")
    await flush(rec)
    apiserver.faults.fail(429, verb="patch", resource="events", retry_after=2)
    rec.event(cm, "Normal", "Synced", "ok")
    await flush(rec)

    [event] = await list_events(kube)
    assert event["series"]["count"] == 2
    patches = [r for r in event_requests(apiserver) if r.verb == "patch"]
    assert [r.status for r in patches] == [429, 200]


async def test_a_full_queue_drops_new_events_but_still_counts_repeats(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "MAX_PENDING", 3)
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    with caplog.at_level(logging.ERROR, logger="reconcile_kit.runtime.events"):
        for reason in ("One", "Two", "Three", "Four"):
            rec.event(cm, "Normal", reason, "m")
        rec.event(cm, "Normal", "One", "m")  # a repeat of a queued event is never dropped
    assert "dropped event Four" in caplog.text
    await flush(rec)

    found = {e["reason"]: e.get("series", {}).get("count", 1) for e in await list_events(kube)}
    assert found == {"One": 2, "Two": 1, "Three": 1}


# --- lifecycle ---------------------------------------------------------------------------------


async def test_stop_flushes_and_flush_works_without_start(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    rec = recorder(kube)
    await rec.start()
    rec.event(cm, "Normal", "Started", "go")
    await asyncio.wait_for(rec.stop(), FLUSH_TIMEOUT)
    assert len(await list_events(kube)) == 1
    rec.event(cm, "Normal", "Stopped", "done")  # queued while stopped
    await flush(rec)  # writes it with a temporary writer
    assert len(await list_events(kube)) == 2
    await asyncio.wait_for(rec.stop(), FLUSH_TIMEOUT)  # idempotent


async def test_event_never_blocks_on_a_slow_server(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await create_cm(kube, "a")
    apiserver.faults.latency(0.2, resource="events")
    async with recorder(kube) as rec:
        rec.event(cm, "Normal", "Synced", "ok")
        await eventually(lambda: bool(rec._writers))  # the create is in flight
        loop = asyncio.get_running_loop()
        started = loop.time()
        for _ in range(50):
            rec.event(cm, "Normal", "Synced", "ok")
        assert loop.time() - started < 0.1
        await flush(rec)
    [event] = await list_events(kube)
    assert event["series"]["count"] == 51
    assert len(event_requests(apiserver)) == 2  # the create in flight, then one patch
