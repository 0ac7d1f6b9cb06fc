"""metav1.Time and MicroTime fields as kube-apiserver 1.32.5 decodes and stores them
(issue 28, found by the differential fuzzer): Go's time.Parse with RFC 3339 (Time) or
``2006-01-02T15:04:05.000000Z07:00`` (MicroTime, microseconds required); a value it
refuses is a 400 with Go's ParseError text; stored in UTC, a Time to the second, a
MicroTime to the microsecond.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok, req

MICRO = "2006-01-02T15:04:05.000000Z07:00"
RFC3339 = "2006-01-02T15:04:05Z07:00"


def lease(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l1"},
        "spec": spec,
    }


def event(namespace: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
        "reason": "Started",
        **fields,
    }


def leases(backend: Backend) -> str:
    return f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases"


def refused(kind: str, value: str, layout: str, detail: str) -> str:
    parsed = f'parsing time "{value}"'
    text = f'{parsed} as "{layout}": {detail}' if detail.startswith("cannot") else parsed + detail
    return f'{kind} in version "v1" cannot be handled as a {kind}: {text}'


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("2025-01-02T03:04:05Z", 'cannot parse "Z" as ".000000"'),
        ("2025-01-02T03:04:05.12Z", 'cannot parse ".12Z" as ".000000"'),
        ("2025-01-02T03:04:05.1234567+01:00", 'cannot parse "7+01:00" as "Z07:00"'),
        ("2025-01-02 03:04:05.123456Z", 'cannot parse " 03:04:05.123456Z" as "T"'),
        ("2025-13-02T03:04:05.123456Z", ": month out of range"),
        ("2025-02-30T03:04:05.123456Z", ": day out of range"),
        ("2025-01-02T03:04:05.123456Z+", ': extra text: "+"'),
        ("", 'cannot parse "" as "2006"'),
    ],
)
async def test_a_micro_time_go_does_not_parse(backend: Backend, value: str, detail: str) -> None:
    reply = await req(backend, "POST", leases(backend), lease(renewTime=value))
    assert reply.status == 400, reply.body
    assert reply.body["reason"] == "BadRequest"
    assert reply.body["message"] == refused("Lease", value, MICRO, detail)


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("yesterday", 'cannot parse "yesterday" as "2006"'),
        ("2025-01-02T25:04:05Z", ": hour out of range"),
        ("2025-01-02T03:04:05+25:00", ": time zone offset hour out of range"),
        ("2025-01-02T03:04:05", 'cannot parse "" as "Z07:00"'),
    ],
)
async def test_a_time_go_does_not_parse(backend: Backend, value: str, detail: str) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/events"
    reply = await req(backend, "POST", path, event(backend.namespace, firstTimestamp=value))
    assert reply.status == 400, reply.body
    assert reply.body["message"] == refused("Event", value, RFC3339, detail)


async def test_times_are_stored_in_utc(backend: Backend) -> None:
    created = await ok(
        backend,
        "POST",
        leases(backend),
        lease(
            renewTime="2025-01-02T03:04:05.123456+01:00", acquireTime="2025-01-02T03:04:05,500000Z"
        ),
    )
    assert created["spec"]["renewTime"] == "2025-01-02T02:04:05.123456Z"
    assert created["spec"]["acquireTime"] == "2025-01-02T03:04:05.500000Z"
    path = f"/api/v1/namespaces/{backend.namespace}/events"
    stamped = event(backend.namespace, firstTimestamp="2025-01-02T03:04:05.999+05:00")
    stored = await ok(backend, "POST", path, stamped)
    assert stored["firstTimestamp"] == "2025-01-01T22:04:05Z"


async def test_a_patch_giving_a_time_go_does_not_parse(backend: Backend) -> None:
    """A strategic merge patch: 422 on the patch, shown as Go prints the patch map."""
    await ok(backend, "POST", leases(backend), lease(renewTime="2025-01-02T03:04:05.000000Z"))
    reply = await req(
        backend,
        "PATCH",
        f"{leases(backend)}/l1",
        {"spec": {"renewTime": "2025-01-02"}},
        content_type="application/strategic-merge-patch+json",
    )
    detail = (
        'Invalid value: "map[spec:map[renewTime:2025-01-02]]": parsing time "2025-01-02" as'
        f' "{MICRO}": cannot parse "" as "T"'
    )
    assert reply.status == 422, reply.body
    assert reply.body["message"] == f' "" is invalid: patch: {detail}'
    assert reply.body["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": detail, "field": "patch"}
    ]
