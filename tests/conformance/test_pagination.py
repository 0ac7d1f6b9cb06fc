"""Paginated lists: limit/continue over one snapshot, expiry (k8s-semantics.md 34-35)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from .kube import ok, req


async def make(backend: Backend, count: int) -> str:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    for index in range(count):
        await ok(backend, "POST", path, {"metadata": {"name": f"cm-{index:02d}"}})
    return path


async def test_pages_share_one_snapshot(backend: Backend) -> None:
    path = await make(backend, 5)
    first = await ok(backend, "GET", path, params={"limit": "2"})
    snapshot = first["metadata"]["resourceVersion"]
    assert [i["metadata"]["name"] for i in first["items"]] == ["cm-00", "cm-01"]
    assert first["metadata"]["continue"]
    assert first["metadata"]["remainingItemCount"] == 3
    # A change after the first page is not in the later pages.
    await ok(backend, "POST", path, {"metadata": {"name": "cm-99"}})
    await ok(backend, "DELETE", f"{path}/cm-04")
    names: list[str] = []
    token = first["metadata"]["continue"]
    pages: list[dict[str, Any]] = []
    while token:
        assert len(pages) < 10, "the continue tokens never end"
        page = await ok(backend, "GET", path, params={"limit": "2", "continue": token})
        pages.append(page)
        assert page["metadata"]["resourceVersion"] == snapshot
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue", "")
    assert names == ["cm-02", "cm-03", "cm-04"]
    assert "continue" not in pages[-1]["metadata"]
    assert "remainingItemCount" not in pages[-1]["metadata"]


async def test_a_later_page_may_ask_for_another_limit(backend: Backend) -> None:
    # the reflector sizes its pages by the bytes of the first one (issue 31)
    path = await make(backend, 7)
    first = await ok(backend, "GET", path, params={"limit": "1"})
    second = await ok(
        backend, "GET", path, params={"limit": "4", "continue": first["metadata"]["continue"]}
    )
    assert [i["metadata"]["name"] for i in second["items"]] == [f"cm-{i:02d}" for i in (1, 2, 3, 4)]
    assert second["metadata"]["remainingItemCount"] == 2
    last = await ok(
        backend, "GET", path, params={"limit": "500", "continue": second["metadata"]["continue"]}
    )
    assert [i["metadata"]["name"] for i in last["items"]] == ["cm-05", "cm-06"]
    assert "continue" not in last["metadata"]


async def test_list_resource_version_parameters(backend: Backend) -> None:
    path = await make(backend, 1)

    async def listed_from_any_version() -> bool:
        # resourceVersion=0 is "any": kube-apiserver answers from its watch cache, which
        # may not hold a write just made yet (a CI failure under load)
        return len((await ok(backend, "GET", path, params={"resourceVersion": "0"}))["items"]) == 1

    await eventually(listed_from_any_version, what="the object in a resourceVersion=0 list")
    no_rv = await req(backend, "GET", path, params={"resourceVersionMatch": "NotOlderThan"})
    assert (no_rv.status, no_rv.body["reason"]) == (422, "Invalid")
    initial = await req(backend, "GET", path, params={"sendInitialEvents": "true"})
    assert (initial.status, initial.body["reason"]) == (422, "Invalid")


async def test_invalid_continue_token(backend: Backend) -> None:
    path = await make(backend, 1)
    reply = await req(backend, "GET", path, params={"limit": "1", "continue": "garbage"})
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"].startswith("invalid continue token: continue key is not valid: ")


async def test_continue_token_expires_after_compaction(backend: Backend) -> None:
    path = await make(backend, 3)
    first = await ok(backend, "GET", path, params={"limit": "1"})
    for index in range(3):  # history past the snapshot, then compacted away
        await ok(
            backend,
            "PATCH",
            f"{path}/cm-00",
            {"data": {"i": str(index)}},
            content_type="application/merge-patch+json",
        )
    backend.compact()
    expired = await req(
        backend, "GET", path, params={"limit": "1", "continue": first["metadata"]["continue"]}
    )
    assert expired.status == 410
    assert (expired.body["reason"], expired.body["code"]) == ("Expired", 410)
    assert expired.body["message"] == (
        "The provided continue parameter is too old to display a consistent list result. You "
        "can start a new list without the continue parameter, or use the continue token in "
        "this response to retrieve the remainder of the results. Continuing with the provided "
        "token results in an inconsistent list - objects that were created, modified, or "
        "deleted between the time the first chunk was returned and now may show up in the "
        "list."
    )
    # The Status carries a token that continues after the same key at the latest state.
    token = expired.body["metadata"]["continue"]
    rest = await ok(backend, "GET", path, params={"limit": "5", "continue": token})
    assert [i["metadata"]["name"] for i in rest["items"]] == ["cm-01", "cm-02"]
    assert int(rest["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])


def names_of(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


async def test_a_page_continues_while_any_object_follows(backend: Backend) -> None:
    """The page ends at its limit-th selected object and continues when any object follows
    it, selected or not: neither the watch cache nor etcd3 looks ahead with the selector."""
    path = await make(backend, 4)
    selector = {"fieldSelector": "metadata.name!=cm-03", "limit": "3"}
    page = await ok(backend, "GET", path, params=selector)
    assert names_of(page) == ["cm-00", "cm-01", "cm-02"]
    assert page["metadata"]["continue"]
    assert "remainingItemCount" not in page["metadata"]  # a selector: not counted
    rest = await ok(
        backend, "GET", path, params={**selector, "continue": page["metadata"]["continue"]}
    )
    assert names_of(rest) == []
    assert "continue" not in rest["metadata"]


async def test_limits_the_watch_cache_or_etcd_honour(backend: Backend) -> None:
    path = await make(backend, 3)
    old = (await ok(backend, "GET", path))["metadata"]["resourceVersion"]
    await ok(backend, "DELETE", f"{path}/cm-00")
    # resourceVersion "0" is the watch cache's, which ignores the limit.
    for params in ({}, {"resourceVersionMatch": "NotOlderThan"}):
        whole = await ok(
            backend, "GET", path, params={"limit": "1", "resourceVersion": "0", **params}
        )
        assert (names_of(whole), whole["metadata"].get("continue")) == (["cm-01", "cm-02"], None)
    # A limited list at a resourceVersion without a match reads etcd at that revision.
    exact = await ok(backend, "GET", path, params={"limit": "5", "resourceVersion": old})
    assert names_of(exact) == ["cm-00", "cm-01", "cm-02"]
    assert exact["metadata"]["resourceVersion"] == old
    future = await req(backend, "GET", path, params={"limit": "5", "resourceVersion": "999999999"})
    assert (future.status, future.body["message"]) == (
        500,
        "etcdserver: mvcc: required revision is a future revision",
    )
    latest = await ok(backend, "GET", path, params={"limit": "-1"})  # none below 1
    assert names_of(latest) == ["cm-01", "cm-02"]


async def test_list_options_refused(backend: Backend) -> None:
    """Numbers as strconv.ParseInt reads them (timeoutSeconds before limit, both before the
    selectors); ValidateListOptions' causes; a resourceVersion beside a continue token."""
    path = await make(backend, 2)
    token = (await ok(backend, "GET", path, params={"limit": "1"}))["metadata"]["continue"]
    bad_requests = [
        ({"limit": "x"}, 'strconv.ParseInt: parsing "x": invalid syntax'),
        ({"limit": ""}, 'strconv.ParseInt: parsing "": invalid syntax'),
        ({"limit": "1" * 20}, f'strconv.ParseInt: parsing "{"1" * 20}": value out of range'),
        ({"timeoutSeconds": "t", "limit": "x"}, 'strconv.ParseInt: parsing "t": invalid syntax'),
        (
            {"limit": "x", "labelSelector": "a in ("},
            'strconv.ParseInt: parsing "x": invalid syntax',
        ),
        (
            {"continue": token, "resourceVersion": "1"},
            "specifying resource version is not allowed when using continue",
        ),
    ]
    for params, message in bad_requests:
        reply = await req(backend, "GET", path, params=params)
        assert (reply.status, reply.body["message"]) == (400, message), params
    invalid = [
        (
            {"continue": token, "resourceVersion": "1", "resourceVersionMatch": "NotOlderThan"},
            ["resourceVersionMatch is forbidden when continue is provided"],
        ),
        (
            {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
            ['resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
        ),
        (
            {"resourceVersionMatch": "Exact", "sendInitialEvents": "true"},
            ["resourceVersionMatch is forbidden unless resourceVersion is provided"],
        ),
    ]
    for params, details in invalid:
        reply = await req(backend, "GET", path, params=params)
        assert reply.status == 422, params
        causes = reply.body["details"]["causes"]
        messages = [c["message"].removeprefix("Forbidden: ") for c in causes]
        if "sendInitialEvents" in params:
            details = [*details, "sendInitialEvents is forbidden for list"]
        assert messages == details, params
