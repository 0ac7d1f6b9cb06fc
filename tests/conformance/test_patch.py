"""Patch types: merge (RFC 7386), JSON (RFC 6902), strategic, apply (items 18, 21-24)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, JSON_PATCH, MERGE, STRATEGIC, Widgets, ok, req, status_body
from .test_versions import deployment


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


async def test_merge_patch_nulls_delete_and_lists_are_replaced(
    backend: Backend, widgets: Widgets
) -> None:
    body = widgets.widget(extra={"keep": 1, "drop": 2, "list": [1, 2, 3]})
    body["metadata"]["labels"] = {"a": "1", "b": "2"}
    await ok(backend, "POST", widgets.path, body)
    patched = await ok(
        backend,
        "PATCH",
        f"{widgets.path}/w1",
        {
            "metadata": {"labels": {"b": None, "c": "3"}},
            "spec": {"extra": {"drop": None, "list": [9]}},
        },
        content_type=MERGE,
    )
    assert patched["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert patched["spec"]["extra"] == {"keep": 1, "list": [9]}


async def test_patch_is_conditional_only_with_a_resource_version(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    await ok(backend, "PATCH", f"{path}/a", {"data": {"x": "1"}}, content_type=MERGE)
    # No resourceVersion in the patch: applied to whatever is stored now.
    await ok(backend, "PATCH", f"{path}/a", {"data": {"y": "1"}}, content_type=MERGE)
    stale = await req(
        backend,
        "PATCH",
        f"{path}/a",
        {
            "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
            "data": {"z": "1"},
        },
        content_type=MERGE,
    )
    assert (stale.status, stale.body["reason"]) == (409, "Conflict")
    assert stale.body["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


async def test_json_patch(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}, "data": {"x": "1"}})
    url = f"{path}/a"
    rv = created["metadata"]["resourceVersion"]
    patched = await ok(
        backend,
        "PATCH",
        url,
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "add", "path": "/data/y", "value": "2"},
            {"op": "remove", "path": "/data/x"},
        ],
        content_type=JSON_PATCH,
    )
    assert patched["data"] == {"y": "2"}
    failed_test = await req(
        backend,
        "PATCH",
        url,
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "add", "path": "/data/z", "value": "3"},
        ],
        content_type=JSON_PATCH,
    )
    assert (failed_test.status, failed_test.body["reason"]) == (422, "Invalid")
    bad_path = await req(
        backend, "PATCH", url, [{"op": "remove", "path": "/data/nope"}], content_type=JSON_PATCH
    )
    assert (bad_path.status, bad_path.body["reason"]) == (422, "Invalid")
    undecodable = await req(backend, "PATCH", url, raw=b"{not json", content_type=JSON_PATCH)
    assert (undecodable.status, undecodable.body["reason"]) == (400, "BadRequest")
    assert (await ok(backend, "GET", url))["data"] == {"y": "2"}


async def test_strategic_merge_on_built_ins_only(backend: Backend, widgets: Widgets) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    body = deployment()
    body["spec"]["template"]["spec"]["containers"].append({"name": "b", "image": "busybox"})
    await ok(backend, "POST", path, body)
    patched = await ok(
        backend,
        "PATCH",
        f"{path}/web",
        {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}}},
        content_type=STRATEGIC,
    )
    images = [(c["name"], c["image"]) for c in patched["spec"]["template"]["spec"]["containers"]]
    assert images == [("a", "nginx:1"), ("b", "busybox:2")]  # merged by name
    removed = await ok(
        backend,
        "PATCH",
        f"{path}/web",
        {"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}},
        content_type=STRATEGIC,
    )
    assert [c["name"] for c in removed["spec"]["template"]["spec"]["containers"]] == ["b"]
    await ok(backend, "POST", widgets.path, widgets.widget())
    refused = await req(
        backend, "PATCH", f"{widgets.path}/w1", {"spec": {"size": 2}}, content_type=STRATEGIC
    )
    assert refused.status == 415
    assert refused.body["reason"] == "UnsupportedMediaType"
    assert refused.body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml"
    )


async def test_unknown_patch_type(backend: Backend) -> None:
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    reply = await req(backend, "PATCH", f"{path}/a", {"data": {}}, content_type="application/json")
    assert (reply.status, reply.body["reason"]) == (415, "UnsupportedMediaType")


async def test_server_side_apply(backend: Backend) -> None:
    url = f"{configmaps(backend)}/a"
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}}
    no_manager = await req(backend, "PATCH", url, doc, content_type=APPLY)
    assert (no_manager.status, no_manager.body["reason"]) == (422, "Invalid")
    created = await req(
        backend, "PATCH", url, doc, content_type=APPLY, params={"fieldManager": "one"}
    )
    assert created.status == 201
    assert created.body["data"] == {"x": "1"}
    other = {**doc, "data": {"x": "2"}}
    conflict = await req(
        backend, "PATCH", url, other, content_type=APPLY, params={"fieldManager": "two"}
    )
    assert (conflict.status, conflict.body) == (
        409,
        status_body(
            409,
            "Conflict",
            'Apply failed with 1 conflict: conflict with "one": .data.x',
            {
                "causes": [
                    {
                        "reason": "FieldManagerConflict",
                        "message": 'conflict with "one"',
                        "field": ".data.x",
                    }
                ]
            },
        ),
    )
    await ok(
        backend,
        "PATCH",
        url,
        {"data": {"y": "1"}},
        content_type=MERGE,
        params={"fieldManager": "three"},
    )
    both = {**doc, "data": {"x": "2", "y": "2"}}
    conflicts = await req(
        backend, "PATCH", url, both, content_type=APPLY, params={"fieldManager": "two"}
    )
    assert conflicts.status == 409
    assert conflicts.body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "one":\n- .data.x\n'
        'conflicts with "three" using v1:\n- .data.y'
    )
    causes: list[dict[str, Any]] = conflicts.body["details"]["causes"]
    # kube-apiserver lists the causes in no fixed order
    assert sorted((c["message"], c["field"]) for c in causes) == [
        ('conflict with "one"', ".data.x"),
        ('conflict with "three" using v1', ".data.y"),
    ]
    forced = await req(
        backend,
        "PATCH",
        url,
        other,
        content_type=APPLY,
        params={"fieldManager": "two", "force": "true"},
    )
    assert (forced.status, forced.body["data"]) == (200, {"x": "2", "y": "1"})


_DECODING = "error decoding patch: "
_OPS = "Go value of type []handlers.jsonPatchOp"
_MAP = "Go value of type map[string]interface {}"
_UNDECODABLE_PATCHES = [
    # (content type, fieldValidation, body, kube-apiserver's 400 message)
    (JSON_PATCH, "", b'{"a":1}', f"{_DECODING}json: cannot unmarshal object into {_OPS}"),
    (JSON_PATCH, "", b'"x"', f"{_DECODING}json: cannot unmarshal string into {_OPS}"),
    (
        JSON_PATCH,
        "",
        b"[1]",
        f"{_DECODING}json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
    ),
    (
        JSON_PATCH,
        "",
        b'[{"op":1,"path":"/data/y"}]',
        f"{_DECODING}json: cannot unmarshal number into Go struct field jsonPatchOp.op"
        " of type string",
    ),
    (JSON_PATCH, "", b"", f"{_DECODING}unexpected end of JSON input"),
    (JSON_PATCH, "", b"[{", f"{_DECODING}unexpected end of JSON input"),
    (
        JSON_PATCH,
        "Ignore",
        b'{"a":1}',
        "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
    ),
    (
        JSON_PATCH,
        "Ignore",
        b"[1]",
        "json: cannot unmarshal number into Go value of type jsonpatch.Operation",
    ),
    (JSON_PATCH, "Ignore", b"", "unexpected end of JSON input"),
    (MERGE, "", b"[1]", f"{_DECODING}json: cannot unmarshal array into {_MAP}"),
    (MERGE, "", b'"x"', f"{_DECODING}json: cannot unmarshal string into {_MAP}"),
    (MERGE, "", b"", f"{_DECODING}unexpected end of JSON input"),
    (MERGE, "", b"{", f"{_DECODING}unexpected end of JSON input"),
    (MERGE, "", b"null", "Invalid JSON Patch"),
    (MERGE, "Ignore", b"", "Invalid JSON Patch"),
    (MERGE, "Ignore", b'"x"', "Invalid JSON Patch"),
    (STRATEGIC, "", b"[1]", f"json: cannot unmarshal array into {_MAP}"),
    (STRATEGIC, "", b"", "unexpected end of JSON input"),
    (STRATEGIC, "Ignore", b"{", "unexpected end of JSON input"),
]


async def test_patch_bodies_that_do_not_decode(backend: Backend) -> None:
    """kube-apiserver decodes a patch when it applies it (handlers/patch.go applyJSPatch,
    strategicPatchObject): strictly into []jsonPatchOp or a map unless
    fieldValidation=Ignore, and after finding the object (a missing one is a 404 first)."""
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}, "data": {"x": "1"}})
    for content_type, validation, raw, message in _UNDECODABLE_PATCHES:
        params = {"fieldValidation": validation} if validation else None
        reply = await req(
            backend, "PATCH", f"{path}/a", raw=raw, content_type=content_type, params=params
        )
        assert (reply.status, reply.body) == (
            400,
            status_body(400, "BadRequest", message, None),
        ), (content_type, validation, raw)
        missing = await req(backend, "PATCH", f"{path}/b", raw=raw, content_type=content_type)
        assert missing.status == 404, (content_type, raw)
    # null: a JSON patch of no operations, a strategic merge patch of no changes
    for content_type in (JSON_PATCH, STRATEGIC):
        same = await ok(backend, "PATCH", f"{path}/a", raw=b"null", content_type=content_type)
        assert same["data"] == {"x": "1"}
    # fieldValidation=Ignore: a merge patch that is an array replaces the object with it
    array = await req(
        backend,
        "PATCH",
        f"{path}/a",
        raw=b'[1,null,{"b":null,"a":"<"}]',
        content_type=MERGE,
        params={"fieldValidation": "Ignore"},
    )
    why = (
        'Invalid value: "[1,null,{\\"a\\":\\"\\\\u003c\\"}]": couldn\'t get version/kind;'
        " json parse error: json: cannot unmarshal array into Go value of type struct {"
        ' APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string'
        ' "json:\\"kind,omitempty\\"" }'
    )
    assert (array.status, array.body["message"]) == (422, f' "" is invalid: patch: {why}')
    assert array.body["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": why, "field": "patch"}
    ]


async def test_empty_create_and_update_bodies(backend: Backend) -> None:
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    message = (
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get"
        " version/kind; json parse error: unexpected end of JSON input (<empty>)"
    )
    for method, url in (("POST", path), ("PUT", f"{path}/a")):
        reply = await req(backend, method, url, raw=b"")
        assert (reply.status, reply.body) == (
            400,
            status_body(400, "BadRequest", message, None),
        ), method


async def test_json_patch_paths_that_are_missing(backend: Backend) -> None:
    """evanphx/json-patch v4 (kube-apiserver's): a missing object member reads as null, so
    copying it adds null (a ConfigMap's "") and testing it for null passes; moving it,
    copying from under a missing parent, from a missing index or from the document fails
    (422); an add without a value adds null."""
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}, "data": {"x": "1"}})
    url = f"{path}/a"
    accepted = [
        [{"op": "copy", "from": "/data/nope", "path": "/data/b"}],
        [{"op": "copy", "from": "/binaryData", "path": "/data/c"}],
        [{"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"}],
        [
            {"op": "test", "path": "/data/nope", "value": None},
            {"op": "add", "path": "/data/d", "value": "1"},
        ],
        [{"op": "add", "path": "/data/e"}],
        [{"op": "replace", "path": "/data/f", "value": "2"}],
        [{"op": "move", "from": "/data/f", "path": "/data/g"}],
    ]
    for ops in accepted:
        await ok(backend, "PATCH", url, ops, content_type=JSON_PATCH)
    got = await ok(backend, "GET", url)
    assert got["data"] == {"x": "1", "b": "", "c": "", "d": "1", "e": "", "g": "2"}
    assert "annotations" not in got["metadata"]
    refused = [
        [{"op": "move", "from": "/data/nope", "path": "/data/h"}],
        [{"op": "copy", "from": "/nope/x", "path": "/data/h"}],
        [{"op": "copy", "from": "/metadata/finalizers/0", "path": "/data/h"}],
        [{"op": "copy", "from": "", "path": "/data/h"}],
        [{"op": "copy", "from": "/data/x/y", "path": "/data/h"}],
        [{"op": "copy", "from": "/data/x", "path": "/nope/h"}],
        [{"op": "remove", "path": "/data/nope"}],
        [{"op": "test", "path": "/data/nope", "value": "1"}],
        [{"op": "test", "path": "/data/x", "value": None}],
    ]
    for ops in refused:
        reply = await req(backend, "PATCH", url, ops, content_type=JSON_PATCH)
        assert (reply.status, reply.body["message"]) == (
            422,
            "the server rejected our request due to an error in our request",
        ), ops
