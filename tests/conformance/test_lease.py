"""Lease semantics client-go leader election relies on (k8s-semantics.md items 17, 45)."""

from __future__ import annotations

from reconcile_kit.testing.backends import Backend

from .kube import ok, req, status_body

SPEC = {
    "holderIdentity": "a",
    "leaseDurationSeconds": 15,
    "acquireTime": "2026-01-01T00:00:00.123456Z",
    "renewTime": "2026-01-01T00:00:01.000001Z",
    "leaseTransitions": 0,
}


def leases(backend: Backend) -> str:
    return f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases"


async def test_lease_round_trips_micro_time(backend: Backend) -> None:
    created = await req(
        backend,
        "POST",
        leases(backend),
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "lock"},
            "spec": SPEC,
        },
    )
    assert created.status == 201
    assert created.body["spec"] == SPEC
    assert (await ok(backend, "GET", f"{leases(backend)}/lock"))["spec"] == SPEC


async def test_lease_put_needs_the_current_resource_version(backend: Backend) -> None:
    url = f"{leases(backend)}/lock"
    created = await ok(
        backend, "POST", leases(backend), {"metadata": {"name": "lock"}, "spec": SPEC}
    )
    renewed = {**created, "spec": {**SPEC, "renewTime": "2026-01-01T00:00:02.000000Z"}}
    first = await req(backend, "PUT", url, renewed)
    assert first.status == 200
    stale = await req(backend, "PUT", url, renewed)
    assert (stale.status, stale.body) == (
        409,
        status_body(
            409,
            "Conflict",
            'Operation cannot be fulfilled on leases.coordination.k8s.io "lock": the object has '
            "been modified; please apply your changes to the latest version and try again",
            {"name": "lock", "group": "coordination.k8s.io", "kind": "leases"},
        ),
    )
    unconditional = {"metadata": {"name": "lock"}, "spec": SPEC}
    no_rv = await req(backend, "PUT", url, unconditional)
    assert (no_rv.status, no_rv.body["reason"]) == (422, "Invalid")
    # Named by resource, not kind (the generic store's update check).
    assert no_rv.body == status_body(
        422,
        "Invalid",
        'leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid '
        "value: 0x0: must be specified for an update",
        {
            "name": "lock",
            "group": "coordination.k8s.io",
            "kind": "leases",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: 0x0: must be specified for an update",
                    "field": "metadata.resourceVersion",
                }
            ],
        },
    )


async def test_lease_put_creates_a_missing_lease(backend: Backend) -> None:
    reply = await req(
        backend, "PUT", f"{leases(backend)}/fresh", {"metadata": {"name": "fresh"}, "spec": SPEC}
    )
    assert reply.status == 201
    assert reply.body["spec"] == SPEC
    # A resourceVersion sent with the create-by-PUT is ignored.
    again = await req(
        backend,
        "PUT",
        f"{leases(backend)}/other",
        {"metadata": {"name": "other", "resourceVersion": "5"}, "spec": SPEC},
    )
    assert again.status == 201
