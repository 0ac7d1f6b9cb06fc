"""Reads at a resourceVersion the server has not reached (issue 28, point 4): the watch
cache waits up to 3 s for it, then answers 504 "Too large resource version"; an ``Exact``
LIST goes to etcd, which refuses a future revision with a 500.
"""

from __future__ import annotations

import asyncio
import re

from reconcile_kit.testing.backends import Backend

from .kube import ok, req

TOO_LARGE = re.compile(r"Timeout: Too large resource version: (\d+), current: (\d+)")


async def _current(backend: Backend) -> int:
    listed = await ok(backend, "GET", f"/api/v1/namespaces/{backend.namespace}/configmaps")
    return int(listed["metadata"]["resourceVersion"])


def _assert_too_large(body: dict[str, object], requested: int) -> None:
    message = str(body["message"])
    matched = TOO_LARGE.fullmatch(message)
    assert matched is not None, message
    assert int(matched.group(1)) == requested
    assert int(matched.group(2)) < requested
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Timeout",
        "details": {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
        "code": 504,
    }


async def test_a_list_not_older_than_a_future_version_times_out(backend: Backend) -> None:
    requested = await _current(backend) + 100_000
    reply = await req(
        backend,
        "GET",
        f"/api/v1/namespaces/{backend.namespace}/configmaps",
        params={"resourceVersion": str(requested), "resourceVersionMatch": "NotOlderThan"},
    )
    assert reply.status == 504
    _assert_too_large(reply.body, requested)


async def test_a_get_at_a_future_version_times_out(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    await ok(
        backend, "POST", path, {"metadata": {"name": "c1"}, "apiVersion": "v1", "kind": "ConfigMap"}
    )
    requested = await _current(backend) + 100_000
    reply = await req(backend, "GET", f"{path}/c1", params={"resourceVersion": str(requested)})
    assert reply.status == 504
    _assert_too_large(reply.body, requested)


async def test_an_exact_list_at_a_future_version_is_refused_by_etcd(backend: Backend) -> None:
    requested = await _current(backend) + 100_000
    reply = await req(
        backend,
        "GET",
        f"/api/v1/namespaces/{backend.namespace}/configmaps",
        params={"resourceVersion": str(requested), "resourceVersionMatch": "Exact"},
    )
    assert reply.status == 500
    assert reply.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "etcdserver: mvcc: required revision is a future revision",
        "code": 500,
    }


async def test_a_list_waits_for_a_write_that_reaches_its_version(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    requested = await _current(backend) + 1

    async def write() -> None:
        # Either order passes; the pause makes the list wait first (no event to await on real).
        await asyncio.sleep(0.2)
        body = {"metadata": {"name": "late"}, "apiVersion": "v1", "kind": "ConfigMap"}
        await ok(backend, "POST", path, body)

    listed, _ = await asyncio.gather(
        req(
            backend,
            "GET",
            path,
            params={"resourceVersion": str(requested), "resourceVersionMatch": "NotOlderThan"},
        ),
        write(),
    )
    assert listed.status == 200, listed.body
    assert int(listed.body["metadata"]["resourceVersion"]) >= requested
