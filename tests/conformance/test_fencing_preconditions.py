"""The preconditions a fenced write carries (reconcile_kit.client.fencing), judged by
kube-apiserver: a stale ``metadata.resourceVersion`` in a merge patch, a server-side apply
body and a PUT, a stale ``preconditions.resourceVersion`` on DELETE, and a JSON patch whose
leading ``test`` of a label fails: the write is refused and nothing lands."""

from __future__ import annotations

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, JSON_PATCH, MERGE, Widgets, ok, req

LABEL = "shard.reconcile-kit.io/ring"


async def relabelled(backend: Backend, name: str) -> tuple[str, str]:
    """Create ConfigMap ``name`` labelled for r1, then relabel it for r2 (the sharder's
    move); returns the path and the resourceVersion r1 read."""
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    body = {"metadata": {"name": name, "labels": {LABEL: "r1"}}, "data": {"v": "0"}}
    created = await ok(backend, "POST", path, body)
    moved = {"metadata": {"labels": {LABEL: "r2"}}}
    await ok(backend, "PATCH", f"{path}/{name}", moved, content_type=MERGE)
    return f"{path}/{name}", created["metadata"]["resourceVersion"]


async def unchanged(backend: Backend, path: str) -> None:
    current = await ok(backend, "GET", path)
    assert current["data"] == {"v": "0"}
    assert current["metadata"]["labels"] == {LABEL: "r2"}


async def test_stale_resource_version_refuses_merge_patch_apply_and_put(
    backend: Backend,
) -> None:
    path, stale = await relabelled(backend, "fenced")
    merge = {"metadata": {"resourceVersion": stale}, "data": {"v": "old"}}
    reply = await req(backend, "PATCH", path, merge, content_type=MERGE)
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fenced", "resourceVersion": stale},
        "data": {"v": "old"},
    }
    reply = await req(
        backend, "PATCH", path, applied, content_type=APPLY, params={"fieldManager": "r1"}
    )
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    put = {**applied, "metadata": {**applied["metadata"], "labels": {LABEL: "r1"}}}
    reply = await req(backend, "PUT", path, put)
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    await unchanged(backend, path)


async def test_failed_label_test_refuses_json_patch_and_stale_delete(backend: Backend) -> None:
    path, stale = await relabelled(backend, "tested")
    ops = [
        {"op": "test", "path": "/metadata/labels/shard.reconcile-kit.io~1ring", "value": "r1"},
        {"op": "replace", "path": "/data/v", "value": "old"},
    ]
    reply = await req(backend, "PATCH", path, ops, content_type=JSON_PATCH)
    assert reply.status == 422, reply.body
    assert reply.body["reason"] == "Invalid"
    # kube-apiserver names no cause: the generic 422 (apimachinery NewGenericServerResponse)
    assert reply.body["message"] == "the server rejected our request due to an error in our request"
    reply = await req(backend, "DELETE", path, {"preconditions": {"resourceVersion": stale}})
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    await unchanged(backend, path)


async def test_a_resource_version_that_is_no_number(backend: Backend, widgets: Widgets) -> None:
    """The generic store parses the updated object's resourceVersion (strconv.ParseUint)
    and answers its error as a plain 500; "0" is none (an unconditional update, where the
    kind allows one) and a number is compared as a number; a DELETE precondition is
    compared as text (409)."""
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}, "data": {"v": "0"}})
    url = f"{path}/a"

    def parse_error(version: str, problem: str = "invalid syntax") -> dict[str, object]:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'strconv.ParseUint: parsing "{version}": {problem}',
            "code": 500,
        }

    for version in ("abc", "-1", "+1", " 1"):
        body = {"metadata": {"name": "a", "resourceVersion": version}, "data": {"v": "1"}}
        put = await req(backend, "PUT", url, body)
        assert (put.status, put.body) == (500, parse_error(version)), version
    too_big = "18446744073709551616"
    body = {"metadata": {"name": "a", "resourceVersion": too_big}}
    put = await req(backend, "PUT", url, body)
    assert (put.status, put.body) == (500, parse_error(too_big, "value out of range"))
    merge = await req(
        backend, "PATCH", url, {"metadata": {"resourceVersion": "abc"}}, content_type=MERGE
    )
    assert (merge.status, merge.body) == (500, parse_error("abc"))
    replace = [{"op": "replace", "path": "/metadata/resourceVersion", "value": "abc"}]
    json_patch = await req(backend, "PATCH", url, replace, content_type=JSON_PATCH)
    assert (json_patch.status, json_patch.body) == (500, parse_error("abc"))
    assert (await ok(backend, "GET", url))["data"] == {"v": "0"}
    # "0": an unconditional update; a leading zero: the same number
    body = {"metadata": {"name": "a", "resourceVersion": "0"}, "data": {"v": "2"}}
    updated = await ok(backend, "PUT", url, body)
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    padded = "0" + updated["metadata"]["resourceVersion"]
    body = {"metadata": {"name": "a", "resourceVersion": padded}, "data": {"v": "3"}}
    assert (await ok(backend, "PUT", url, body))["data"] == {"v": "3"}
    stale = await req(backend, "PUT", url, body)
    assert (stale.status, stale.body["reason"]) == (409, "Conflict")
    # a custom resource must have one: "0" is none
    await ok(backend, "POST", widgets.path, widgets.widget())
    widget = widgets.widget()
    widget["metadata"]["resourceVersion"] = "0"
    refused = await req(backend, "PUT", f"{widgets.path}/w1", widget)
    assert refused.status == 422
    assert refused.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0x0: must be specified for an update",
            "field": "metadata.resourceVersion",
        }
    ]
    widget["metadata"]["resourceVersion"] = "abc"
    unparsed = await req(backend, "PUT", f"{widgets.path}/w1", widget)
    assert (unparsed.status, unparsed.body) == (500, parse_error("abc"))
    deleted = await req(backend, "DELETE", url, {"preconditions": {"resourceVersion": "abc"}})
    assert (deleted.status, deleted.body["reason"]) == (409, "Conflict")
    assert (
        "the ResourceVersion in the precondition (abc) does not match" in (deleted.body["message"])
    )
