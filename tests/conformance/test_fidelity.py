"""Request and built-in validation details where the embedded server used to differ from
kube-apiserver (issue 15): wrong methods, bad query values, finalizer names, Secrets
(base64, stringData, typed keys, type change), immutable ConfigMaps and Secrets."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import JSON_PATCH, MERGE, Widgets, ok, req, status_body

_NOT_ALLOWED = status_body(
    405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
)


def cms(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


def secrets(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/secrets"


async def test_post_to_an_object_and_put_to_a_collection(backend: Backend) -> None:
    post = await req(backend, "POST", f"{cms(backend)}/x", {"metadata": {"name": "x"}})
    put = await req(backend, "PUT", cms(backend), {"metadata": {"name": "x"}})
    assert (post.status, post.body) == (405, _NOT_ALLOWED)
    assert (put.status, put.body) == (405, _NOT_ALLOWED)


def _options_error(kind: str, field: str, message: str) -> dict[str, Any]:
    return status_body(
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: {field}: {message}',
        {
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": [{"reason": "FieldValueNotSupported", "message": message, "field": field}],
        },
    )


async def test_bad_query_values(backend: Backend) -> None:
    created = await req(
        backend, "POST", cms(backend), {"metadata": {"name": "d"}}, params={"dryRun": "Some"}
    )
    assert (created.status, created.body) == (
        422,
        _options_error(
            "CreateOptions",
            "dryRun",
            'Unsupported value: []string{"Some"}: supported values: "All"',
        ),
    )
    deleted = await req(backend, "DELETE", f"{cms(backend)}/d", params={"dryRun": "x"})
    assert deleted.body["details"]["kind"] == "DeleteOptions"
    listed = await req(
        backend,
        "GET",
        cms(backend),
        params={"resourceVersionMatch": "Bogus", "resourceVersion": "1"},
    )
    assert (listed.status, listed.body) == (
        422,
        _options_error(
            "ListOptions",
            "resourceVersionMatch",
            'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""',
        ),
    )
    expected = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc":'
        " invalid syntax",
        "code": 500,
    }
    for path in (cms(backend), f"{cms(backend)}/none"):
        reply = await req(backend, "GET", path, params={"resourceVersion": "abc"})
        assert (reply.status, reply.body) == (500, expected)


async def test_finalizer_names(backend: Backend) -> None:
    bad = await req(
        backend,
        "POST",
        cms(backend),
        {"metadata": {"name": "f1", "finalizers": ["bad finalizer", "nodomain", "kubernetes"]}},
    )
    assert bad.status == 422
    assert [(c["field"], c["message"]) for c in bad.body["details"]["causes"]] == [
        (
            "metadata.finalizers",
            'Invalid value: "bad finalizer": name part must consist of alphanumeric characters,'
            " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
            " 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
            " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            "metadata.finalizers[0]",
            'Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it'
            " fully qualified",
        ),
        (
            "metadata.finalizers[1]",
            'Invalid value: "nodomain": name is neither a standard finalizer name nor is it'
            " fully qualified",
        ),
    ]
    both = await req(
        backend,
        "POST",
        cms(backend),
        {"metadata": {"name": "f2", "finalizers": ["orphan", "foregroundDeletion"]}},
    )
    assert [c["message"] for c in both.body["details"]["causes"]] == [
        'Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and'
        " foregroundDeletion cannot be both set"
    ]


async def test_secret_data_string_data_and_types(backend: Backend) -> None:
    created = await ok(
        backend,
        "POST",
        secrets(backend),
        {"metadata": {"name": "s1"}, "stringData": {"a": "x"}, "data": {"b": "eA=="}},
    )
    assert created["data"] == {"a": "eA==", "b": "eA=="} and "stringData" not in created
    for value, at in (("not base64!", 3), ("abc", 0), ("ab=c", 2), ("eA", 0)):
        bad = await req(
            backend, "POST", secrets(backend), {"metadata": {"name": "s2"}, "data": {"k": value}}
        )
        assert (bad.status, bad.body) == (
            400,
            status_body(
                400,
                "BadRequest",
                'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at'
                f" input byte {at}",
                None,
            ),
        )
    tls = await req(
        backend,
        "POST",
        secrets(backend),
        {"metadata": {"name": "t"}, "type": "kubernetes.io/tls", "data": {}},
    )
    assert [c["field"] for c in tls.body["details"]["causes"]] == ["data[tls.crt]", "data[tls.key]"]
    retyped = await req(
        backend,
        "PATCH",
        f"{secrets(backend)}/s1",
        {"type": "kubernetes.io/tls"},
        content_type=MERGE,
    )
    assert [(c["field"], c["message"]) for c in retyped.body["details"]["causes"]] == [
        ("type", 'Invalid value: "kubernetes.io/tls": field is immutable'),
        ("data[tls.crt]", "Required value"),
        ("data[tls.key]", "Required value"),
    ]


async def test_immutable_configmaps_and_secrets(backend: Backend) -> None:
    forbidden = "Forbidden: field is immutable when `immutable` is set"
    for path, name in ((cms(backend), "i1"), (secrets(backend), "i2")):
        await ok(
            backend,
            "POST",
            path,
            {"metadata": {"name": name}, "data": {"a": "eA=="}, "immutable": True},
        )
        changed = await req(
            backend, "PATCH", f"{path}/{name}", {"data": {"a": "eQ=="}}, content_type=MERGE
        )
        assert [(c["field"], c["message"]) for c in changed.body["details"]["causes"]] == [
            ("data", forbidden)
        ]
        unset = await req(
            backend, "PATCH", f"{path}/{name}", {"immutable": False}, content_type=MERGE
        )
        assert [(c["field"], c["message"]) for c in unset.body["details"]["causes"]] == [
            ("immutable", forbidden)
        ]
        labelled = await req(
            backend,
            "PATCH",
            f"{path}/{name}",
            {"metadata": {"labels": {"a": "b"}}},
            content_type=MERGE,
        )
        assert labelled.status == 200  # metadata stays writable


async def test_custom_resources_take_unqualified_finalizers(
    backend: Backend, widgets: Widgets
) -> None:
    body = widgets.widget()
    body["metadata"]["finalizers"] = ["nodomain"]
    created = await req(backend, "POST", widgets.path, body)
    assert created.status == 201, created.body  # apiextensions: the generic rules only
    await req(
        backend,
        "PATCH",
        f"{widgets.path}/w1",
        {"metadata": {"finalizers": None}},
        content_type=MERGE,
    )


async def test_error_bodies(backend: Backend, widgets: Widgets) -> None:
    """JSON patch failures, a Scale of a missing object, a custom resource of the wrong
    kind, content for a terminating namespace: worded as kube-apiserver words them."""
    path = f"{cms(backend)}/jp"
    await ok(backend, "POST", cms(backend), {"metadata": {"name": "jp"}, "data": {"x": "1"}})
    rejected = status_body(
        422, "Invalid", "the server rejected our request due to an error in our request", {}
    )
    for ops in (
        [{"op": "remove", "path": "/data/nope"}],
        [{"op": "test", "path": "/data/x", "value": "2"}],
        [{"op": "bogus", "path": "/data/x"}],
    ):
        reply = await req(backend, "PATCH", path, ops, content_type=JSON_PATCH)
        assert (reply.status, reply.body) == (422, rejected), ops
    # evanphx/json-patch: replace sets a missing object member
    replaced = await ok(
        backend,
        "PATCH",
        path,
        [{"op": "replace", "path": "/data/zz", "value": "2"}],
        content_type=JSON_PATCH,
    )
    assert replaced["data"] == {"x": "1", "zz": "2"}
    scale = await req(
        backend, "GET", f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/none/scale"
    )
    assert (scale.status, scale.body) == (
        404,
        status_body(
            404,
            "NotFound",
            'deployments/scale.apps "none" not found',
            {"name": "none", "group": "apps", "kind": "deployments/scale"},
        ),
    )
    wrong = widgets.widget()
    wrong["kind"] = "Gadget"
    kind = await req(backend, "POST", widgets.path, wrong)
    assert (kind.status, kind.body["message"]) == (
        422,
        f'Gadget.{widgets.group} "w1" is invalid: kind: Invalid value: "Gadget": must be Widget',
    )


async def test_terminating_namespace_cause(backend: Backend) -> None:
    name = backend.unique("term")
    await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    await ok(
        backend,
        "POST",
        f"/api/v1/namespaces/{name}/configmaps",
        {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}},
    )
    await ok(backend, "DELETE", f"/api/v1/namespaces/{name}")
    refused = await req(
        backend, "POST", f"/api/v1/namespaces/{name}/configmaps", {"metadata": {"name": "y"}}
    )
    assert refused.status == 403
    assert refused.body["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {name} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    await req(
        backend,
        "PATCH",
        f"/api/v1/namespaces/{name}/configmaps/held",
        {"metadata": {"finalizers": None}},
        content_type=MERGE,
    )


def _protobuf_of_unknown_kind() -> bytes:
    """A Kubernetes protobuf envelope (``k8s\\0`` + runtime.Unknown) of a kind nobody has."""

    def field(number: int, data: bytes) -> bytes:
        return bytes([(number << 3) | 2, len(data)]) + data

    type_meta = field(1, b"example.com/v1") + field(2, b"Nope")
    return b"k8s\x00" + field(1, type_meta) + field(2, b"")


async def test_protobuf_for_an_unknown_resource_is_a_404(backend: Backend) -> None:
    for path in (
        f"/apis/example.com/v1/namespaces/{backend.namespace}/nopes",
        f"/api/v1/namespaces/{backend.namespace}/nopes",
    ):
        reply = await req(
            backend,
            "POST",
            path,
            content_type="application/vnd.kubernetes.protobuf",
            raw=_protobuf_of_unknown_kind(),
        )
        assert reply.status == 404, (path, reply.body)


async def test_delete_options_in_the_body_make_a_dry_run(backend: Backend) -> None:
    """``kubectl delete --dry-run=server`` sends its DeleteOptions as the body: their
    ``dryRun`` is the request's (handlers/delete.go), so nothing is deleted."""
    await ok(backend, "POST", cms(backend), {"metadata": {"name": "kept", "labels": {"k": "v"}}})
    dry = {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}
    deleted = await req(backend, "DELETE", f"{cms(backend)}/kept", dry)
    assert deleted.status == 200, deleted.body
    assert (deleted.body["kind"], deleted.body["details"]["name"]) == ("Status", "kept")
    collection = await req(backend, "DELETE", cms(backend), dry, params={"labelSelector": "k=v"})
    assert collection.status == 200, collection.body
    assert [i["metadata"]["name"] for i in collection.body["items"]] == ["kept"]
    assert (await ok(backend, "GET", f"{cms(backend)}/kept"))["metadata"]["name"] == "kept"
    bogus = await req(backend, "DELETE", f"{cms(backend)}/kept", {**dry, "dryRun": ["Bogus"]})
    assert (bogus.status, bogus.body) == (
        422,
        _options_error(
            "DeleteOptions",
            "dryRun",
            'Unsupported value: []string{"Bogus"}: supported values: "All"',
        ),
    )
    gone = await req(backend, "DELETE", f"{cms(backend)}/kept", {**dry, "dryRun": []})
    assert gone.status == 200, gone.body
    assert (await req(backend, "GET", f"{cms(backend)}/kept")).status == 404
