"""CRUD status codes, Status bodies and server-set metadata (k8s-semantics.md items 8-17)."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok, req, status_body
from .test_versions import deployment


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


def cm(name: str = "a", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def test_create_get_list_update_delete_codes(backend: Backend) -> None:
    path = configmaps(backend)
    created = await req(backend, "POST", path, cm(x="1"))
    assert created.status == 201
    meta = created.body["metadata"]
    assert meta["namespace"] == backend.namespace
    assert uuid.UUID(meta["uid"]).version == 4
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert int(meta["resourceVersion"]) > 0
    assert "generation" not in meta  # ConfigMap has none
    got = await req(backend, "GET", f"{path}/a")
    assert (got.status, got.body) == (200, created.body)
    listing = await req(backend, "GET", path)
    assert listing.status == 200
    assert (listing.body["kind"], listing.body["apiVersion"]) == ("ConfigMapList", "v1")
    assert [i["metadata"]["name"] for i in listing.body["items"]] == ["a"]
    assert int(listing.body["metadata"]["resourceVersion"]) >= int(meta["resourceVersion"])
    changed = {**created.body, "data": {"x": "2"}}
    put = await req(backend, "PUT", f"{path}/a", changed)
    assert put.status == 200
    assert int(put.body["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    patched = await req(
        backend,
        "PATCH",
        f"{path}/a",
        {"data": {"y": "3"}},
        content_type="application/merge-patch+json",
    )
    assert (patched.status, patched.body["data"]) == (200, {"x": "2", "y": "3"})
    deleted = await req(backend, "DELETE", f"{path}/a")
    assert deleted.status == 200
    assert deleted.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "a", "kind": "configmaps", "uid": meta["uid"]},
    }
    assert (await req(backend, "GET", f"{path}/a")).status == 404


async def test_not_found_and_already_exists_status_bodies(backend: Backend) -> None:
    path = configmaps(backend)
    missing = await req(backend, "GET", f"{path}/nope")
    assert (missing.status, missing.body) == (
        404,
        status_body(
            404, "NotFound", 'configmaps "nope" not found', {"name": "nope", "kind": "configmaps"}
        ),
    )
    await ok(backend, "POST", path, cm())
    again = await req(backend, "POST", path, cm())
    assert (again.status, again.body) == (
        409,
        status_body(
            409,
            "AlreadyExists",
            'configmaps "a" already exists',
            {"name": "a", "kind": "configmaps"},
        ),
    )
    deployment = await req(
        backend, "GET", f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/nope"
    )
    assert deployment.body == status_body(
        404,
        "NotFound",
        'deployments.apps "nope" not found',
        {"name": "nope", "group": "apps", "kind": "deployments"},
    )


async def test_update_conflicts_and_missing_objects(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, cm())
    await ok(backend, "PUT", f"{path}/a", {**created, "data": {"x": "1"}})
    stale = await req(backend, "PUT", f"{path}/a", {**created, "data": {"x": "2"}})
    assert (stale.status, stale.body) == (
        409,
        status_body(
            409,
            "Conflict",
            'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
            "please apply your changes to the latest version and try again",
            {"name": "a", "kind": "configmaps"},
        ),
    )
    # ConfigMaps allow an unconditional update (no resourceVersion).
    unconditional = cm(x="3")
    assert (await req(backend, "PUT", f"{path}/a", unconditional)).status == 200
    absent = await req(backend, "PUT", f"{path}/b", cm("b"))
    assert (absent.status, absent.body) == (
        404,
        status_body(
            404, "NotFound", 'configmaps "b" not found', {"name": "b", "kind": "configmaps"}
        ),
    )
    patch_absent = await req(
        backend, "PATCH", f"{path}/b", {"data": {}}, content_type="application/merge-patch+json"
    )
    assert patch_absent.status == 404
    delete_absent = await req(backend, "DELETE", f"{path}/b")
    assert delete_absent.status == 404


async def test_server_owned_metadata_is_not_taken_from_the_client(backend: Backend) -> None:
    path = configmaps(backend)
    body = cm()
    body["metadata"].update(
        uid="00000000-0000-0000-0000-000000000000",
        creationTimestamp="2000-01-01T00:00:00Z",
        deletionTimestamp="2000-01-01T00:00:00Z",
        resourceVersion="",
    )
    created = await ok(backend, "POST", path, body)
    assert created["metadata"]["uid"] != body["metadata"]["uid"]
    assert created["metadata"]["creationTimestamp"] != "2000-01-01T00:00:00Z"
    assert "deletionTimestamp" not in created["metadata"]
    # Without a uid the stored one is kept; creationTimestamp changes are ignored.
    meta = {k: v for k, v in created["metadata"].items() if k != "uid"}
    update = {**created, "metadata": {**meta, "creationTimestamp": "2000-01-01T00:00:00Z"}}
    updated = await ok(backend, "PUT", f"{path}/a", update)
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
    # A uid in the body is a precondition (rest.defaultUpdatedObjectInfo.Preconditions).
    other_uid = str(uuid.uuid4())
    wrong = {**updated, "metadata": {**updated["metadata"], "uid": other_uid}}
    refused = await req(backend, "PUT", f"{path}/a", wrong)
    assert (refused.status, refused.body) == (
        409,
        status_body(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on configmaps "a": StorageError: invalid object, '
            f"Code: 4, Key: /registry/configmaps/{backend.namespace}/a, ResourceVersion: 0, "
            f"AdditionalErrorMsg: Precondition failed: UID in precondition: {other_uid}, "
            f"UID in object meta: {created['metadata']['uid']}",
            {"name": "a", "kind": "configmaps"},
        ),
    )


async def test_generate_name(backend: Backend) -> None:
    path = configmaps(backend)
    body = {"metadata": {"generateName": "x" * 70}}
    created = await ok(backend, "POST", path, body)
    name = created["metadata"]["name"]
    assert re.fullmatch("x" * 58 + "[a-z0-9]{5}", name)
    assert created["metadata"]["generateName"] == "x" * 70
    nameless = await req(backend, "POST", path, {"metadata": {}})
    assert nameless.status == 422
    assert nameless.body["reason"] == "Invalid"
    assert nameless.body["message"] == (
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )
    assert nameless.body["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]


async def test_invalid_names(backend: Backend) -> None:
    path = configmaps(backend)
    bad = await req(backend, "POST", path, cm("Bad_Name"))
    assert bad.status == 422
    assert bad.body["reason"] == "Invalid"
    assert bad.body["details"]["name"] == "Bad_Name"
    assert bad.body["details"]["kind"] == "ConfigMap"
    [cause] = bad.body["details"]["causes"]
    assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "metadata.name")
    assert bad.body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of"
    )
    too_long = await req(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": "n" * 64}})
    assert too_long.status == 422
    assert "must be no more than 63 characters" in too_long.body["message"]


QNAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("labels", "messages"),
    [
        ({"a b": "x"}, ['"a b": name part ' + QNAME_RULE]),
        ({"Example.com/a": "x"}, ['"Example.com/a": prefix part ' + SUBDOMAIN_RULE]),
        ({"/a": "x"}, ['"/a": prefix part must be non-empty']),
        ({"a/": "x"}, ['"a/": name part must be non-empty', '"a/": name part ' + QNAME_RULE]),
        (
            {"a/b/c": "x"},
            [
                '"a/b/c": a qualified name ' + QNAME_RULE + " with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        ({"k" * 64: "x"}, [f'"{"k" * 64}": name part must be no more than 63 characters']),
        ({"a": "-x"}, ['"-x": ' + VALUE_RULE]),
        ({"a": "v" * 64}, [f'"{"v" * 64}": must be no more than 63 characters']),
    ],
)
async def test_label_messages(
    backend: Backend, labels: dict[str, str], messages: list[str]
) -> None:
    body = cm()
    body["metadata"]["labels"] = labels
    bad = await req(backend, "POST", configmaps(backend), body)
    assert bad.status == 422
    causes = bad.body["details"]["causes"]
    assert [(c["field"], c["message"]) for c in causes] == [
        ("metadata.labels", "Invalid value: " + m) for m in messages
    ]


async def test_dns_label_names(backend: Backend) -> None:
    dotted = await req(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": "a.b"}})
    assert dotted.status == 422
    assert dotted.body["message"] == (
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots'
    )
    service = {"metadata": {"name": "1abc"}, "spec": {"ports": [{"port": 80}]}}
    bad = await req(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/services", service)
    assert bad.status == 422
    assert bad.body["message"] == (
        'Service "1abc" is invalid: metadata.name: Invalid value: "1abc": a DNS-1035 label must '
        "consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )


async def test_names_and_labels_with_a_trailing_newline_are_invalid(backend: Backend) -> None:
    path = configmaps(backend)
    assert (await req(backend, "POST", path, cm("abc\n"))).status == 422
    body = cm()
    body["metadata"]["labels"] = {"a": "x\n"}
    assert (await req(backend, "POST", path, body)).status == 422


async def test_namespace_and_name_must_match_the_url(backend: Backend) -> None:
    path = configmaps(backend)
    other = cm()
    other["metadata"]["namespace"] = "elsewhere"
    wrong_ns = await req(backend, "POST", path, other)
    assert (wrong_ns.status, wrong_ns.body["reason"]) == (400, "BadRequest")
    assert wrong_ns.body["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    created = await ok(backend, "POST", path, cm())
    renamed = {**created, "metadata": {**created["metadata"], "name": "b"}}
    wrong_name = await req(backend, "PUT", f"{path}/a", renamed)
    assert (wrong_name.status, wrong_name.body["reason"]) == (400, "BadRequest")


async def test_writes_into_a_missing_namespace(backend: Backend) -> None:
    reply = await req(backend, "POST", "/api/v1/namespaces/no-such-ns/configmaps", cm())
    assert (reply.status, reply.body) == (
        404,
        status_body(
            404,
            "NotFound",
            'namespaces "no-such-ns" not found',
            {"name": "no-such-ns", "kind": "namespaces"},
        ),
    )


async def test_deleted_namespace_terminates_and_refuses_creates(backend: Backend) -> None:
    name = backend.unique("gone")
    await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    deleted = await req(backend, "DELETE", f"/api/v1/namespaces/{name}")
    assert deleted.status == 200
    assert deleted.body["status"]["phase"] == "Terminating"
    assert deleted.body["spec"]["finalizers"] == ["kubernetes"]
    assert "deletionTimestamp" in deleted.body["metadata"]
    refused = await req(backend, "POST", f"/api/v1/namespaces/{name}/configmaps", cm())
    assert refused.status == 403
    assert refused.body["reason"] == "Forbidden"
    assert refused.body["message"] == (
        f'configmaps "a" is forbidden: unable to create new content in namespace {name} '
        "because it is being terminated"
    )


async def test_delete_preconditions(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, cm())
    uid, rv = created["metadata"]["uid"], created["metadata"]["resourceVersion"]
    zero = "00000000-0000-0000-0000-000000000000"
    wrong_uid = await req(
        backend,
        "DELETE",
        f"{path}/a",
        {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": zero}},
    )
    # The storage layer's precondition check names the Kind (storage.Preconditions.Check).
    assert (wrong_uid.status, wrong_uid.body) == (
        409,
        status_body(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition ({zero}) '
            f"does not match the UID in record ({uid}). The object might have been deleted and "
            "then recreated",
            {"name": "a", "kind": "ConfigMap"},
        ),
    )
    wrong_rv = await req(
        backend,
        "DELETE",
        f"{path}/a",
        {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"resourceVersion": "1"}},
    )
    assert (wrong_rv.status, wrong_rv.body) == (
        409,
        status_body(
            409,
            "Conflict",
            'Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the '
            f"precondition (1) does not match the ResourceVersion in record ({rv}). The object "
            "might have been modified",
            {"name": "a", "kind": "ConfigMap"},
        ),
    )
    deployments = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    await ok(backend, "POST", deployments, deployment())
    grouped = await req(
        backend,
        "DELETE",
        f"{deployments}/web",
        {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"resourceVersion": "1"}},
    )
    assert grouped.body["message"].startswith("Operation cannot be fulfilled on Deployment.apps")
    assert grouped.body["details"] == {"name": "web", "group": "apps", "kind": "Deployment"}
    right = await req(
        backend,
        "DELETE",
        f"{path}/a",
        {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": uid, "resourceVersion": rv},
        },
    )
    assert right.status == 200
