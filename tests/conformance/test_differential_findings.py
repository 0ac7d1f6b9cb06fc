"""Differences a differential run against kube-apiserver 1.32.5 found in built-in kinds and
verbs (request options, strict field validation of patches, metadata causes, Namespace
subresources, Job backoff limits per index, Scale names, TokenRequests, Service external
IPs, StatefulSet strategies): each answer is the same on both backends."""

from __future__ import annotations

import re
from typing import Any

from reconcile_kit.testing.backends import Backend

from .invalid import Cause, causes_of, invalid
from .kube import JSON_PATCH, MERGE, STRATEGIC, ok, req, status_body

_POINTER = re.compile(r"\(0x[0-9a-f]+\)")


def _cms(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


def _options_invalid(kind: str, causes: list[Cause]) -> dict[str, Any]:
    parts = [f"{field}: {message}" for _, field, message in causes]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return status_body(
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: {summary}',
        {
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
        },
    )


_BOGUS_VALIDATION: Cause = (
    "FieldValueNotSupported",
    "fieldValidation",
    'Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"',
)


async def test_an_unknown_field_validation_directive_is_invalid(backend: Backend) -> None:
    cms = _cms(backend)
    created = await req(
        backend, "POST", cms, {"metadata": {"name": "c"}}, params={"fieldValidation": "Bogus"}
    )
    assert (created.status, created.body) == (
        422,
        _options_invalid("CreateOptions", [_BOGUS_VALIDATION]),
    )
    await ok(backend, "POST", cms, {"metadata": {"name": "c"}})
    put = await req(
        backend, "PUT", f"{cms}/c", {"metadata": {"name": "c"}}, params={"fieldValidation": "Bogus"}
    )
    assert (put.status, put.body) == (422, _options_invalid("UpdateOptions", [_BOGUS_VALIDATION]))
    patched = await req(
        backend,
        "PATCH",
        f"{cms}/c",
        {"data": {"a": "b"}},
        content_type=MERGE,
        params={"fieldValidation": "Bogus", "dryRun": "Some"},
    )
    dry_run: Cause = (
        "FieldValueNotSupported",
        "dryRun",
        'Unsupported value: []string{"Some"}: supported values: "All"',
    )
    assert (patched.status, patched.body) == (
        422,
        _options_invalid("PatchOptions", [dry_run, _BOGUS_VALIDATION]),
    )
    # "" is the default directive (Warn)
    warned = await req(
        backend,
        "POST",
        cms,
        {"metadata": {"name": "d"}, "foo": 1},
        params={"fieldValidation": ""},
    )
    assert warned.status == 201
    assert warned.headers.get("Warning") == '299 - "unknown field \\"foo\\""'


async def test_orphan_dependents_and_a_propagation_policy_are_not_both_allowed(
    backend: Backend,
) -> None:
    cms = _cms(backend)
    await ok(backend, "POST", cms, {"metadata": {"name": "c"}})
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": True}
    both = await req(backend, "DELETE", f"{cms}/c", {**options, "propagationPolicy": "Orphan"})
    cause: Cause = (
        "FieldValueInvalid",
        "propagationPolicy",
        'Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    )
    assert (both.status, both.body) == (422, _options_invalid("DeleteOptions", [cause]))
    unsupported = await req(
        backend,
        "DELETE",
        f"{cms}/c",
        params={"orphanDependents": "false", "propagationPolicy": "Bogus"},
    )
    assert causes_of(unsupported) == [
        (
            "FieldValueInvalid",
            "propagationPolicy",
            'Invalid value: "Bogus": orphanDependents and deletionPropagation cannot be both set',
        ),
        (
            "FieldValueNotSupported",
            "propagationPolicy",
            'Unsupported value: "Bogus": supported values: "Foreground", "Background",'
            ' "Orphan", "nil"',
        ),
    ]
    await ok(backend, "GET", f"{cms}/c")  # neither deleted it


def _strict_patch_error(value: str, errors: str) -> dict[str, Any]:
    message = f"Invalid value: {value}: strict decoding error: {errors}"
    return status_body(
        422,
        "Invalid",
        f' "" is invalid: patch: {message}',
        {"causes": [{"reason": "FieldValueInvalid", "message": message, "field": "patch"}]},
    )


async def test_strict_field_validation_refuses_a_patch_with_unknown_fields(
    backend: Backend,
) -> None:
    """The patched object does not decode strictly: a 422 on the patch, not the 400 of a
    body (k8s.io/apiserver handlers/patch.go)."""
    deployments = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    labels = {"app": "x"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c"}]}}
    template["spec"]["containers"][0]["image"] = "busybox"
    deployment = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": labels}}}
    deployment["spec"]["template"] = template
    await ok(backend, "POST", deployments, deployment)
    strict = {"fieldValidation": "Strict"}
    patch = {
        "spec": {"foo": 1, "template": {"spec": {"containers": [{"name": "c", "bogus": 1}]}}},
        "metadata": {"bar": "x"},
    }
    smp = await req(
        backend, "PATCH", f"{deployments}/d", patch, content_type=STRATEGIC, params=strict
    )
    # the patch as Go's %+v prints the map, the errors sorted (the unstructured converter's)
    value = (
        '"map[metadata:map[bar:x] spec:map[foo:1'
        ' template:map[spec:map[containers:[map[bogus:1 name:c]]]]]]"'
    )
    errors = (
        'unknown field "metadata.bar", unknown field "spec.foo",'
        ' unknown field "spec.template.spec.containers[0].bogus"'
    )
    assert (smp.status, smp.body) == (422, _strict_patch_error(value, errors))
    for content_type, body in (
        (MERGE, {"spec": {"foo": 1}}),
        (JSON_PATCH, [{"op": "add", "path": "/spec/foo", "value": 1}]),
    ):
        reply = await req(
            backend, "PATCH", f"{deployments}/d", body, content_type=content_type, params=strict
        )
        assert (reply.status, reply.body["reason"]) == (422, "Invalid"), reply.body
        [cause] = reply.body["details"]["causes"]
        # the value is the patched object's JSON (its field order is Go's on kube-apiserver)
        assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "patch")
        assert cause["message"].startswith('Invalid value: "{')
        assert cause["message"].endswith('}": strict decoding error: unknown field "spec.foo"')
        assert reply.body["message"] == f' "" is invalid: patch: {cause["message"]}'
    warned = await req(
        backend,
        "PATCH",
        f"{deployments}/d",
        {"spec": {"foo": 1}},
        content_type=MERGE,
        params={"fieldValidation": "Warn"},
    )
    assert warned.status == 200
    assert warned.headers.get("Warning") == '299 - "unknown field \\"spec.foo\\""'


async def test_metadata_causes_come_in_go_order(backend: Backend) -> None:
    """apimachinery's ObjectMeta checks (owner references, then the finalizers' qualified
    names) before core's "standard or fully qualified" finalizer rule; a second controller
    reference names both, the references printed with %#v."""
    refs = [
        {"apiVersion": "v1", "kind": "", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "2", "controller": True},
    ]
    metadata = {"name": "c", "finalizers": ["foo", "a/b/c"], "ownerReferences": refs}
    reply = await req(backend, "POST", _cms(backend), {"metadata": metadata})
    rendered = (
        '[]v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", Kind:"", Name:"a", UID:"1",'
        " Controller:(*bool)(0x0), BlockOwnerDeletion:(*bool)(nil)},"
        ' v1.OwnerReference{APIVersion:"v1", Kind:"ConfigMap", Name:"b", UID:"2",'
        " Controller:(*bool)(0x0), BlockOwnerDeletion:(*bool)(nil)}}"
    )
    qualified = (
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must"
        " start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or"
        " '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    expected = [
        (
            "FieldValueInvalid",
            "metadata.ownerReferences.kind",
            'Invalid value: "": kind must not be empty',
        ),
        (
            "FieldValueInvalid",
            "metadata.ownerReferences",
            f"Invalid value: {rendered}: Only one reference can have Controller set to true."
            ' Found "true" in references for /a and ConfigMap/b',
        ),
        ("FieldValueInvalid", "metadata.finalizers", f'Invalid value: "a/b/c": {qualified}'),
        (
            "FieldValueInvalid",
            "metadata.finalizers[0]",
            'Invalid value: "foo": name is neither a standard finalizer name nor is it fully'
            " qualified",
        ),
    ]
    assert reply.status == 422
    got = [(r, f, _POINTER.sub("(0x0)", m)) for r, f, m in causes_of(reply)]
    assert got == expected
    assert (
        _POINTER.sub("(0x0)", reply.body["message"])
        == invalid("ConfigMap", "", "c", expected)["message"]
    )


async def test_namespace_finalize_and_status_are_validated(backend: Backend) -> None:
    """ValidateNamespaceFinalizeUpdate and ValidateNamespaceStatusUpdate; a finalize write
    keeps the metadata it sends (and the name label), not the status it sends."""
    name = backend.unique("fin")
    path = f"/api/v1/namespaces/{name}"
    namespace = await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    bad = {**namespace, "spec": {"finalizers": ["Bad Name", "foo"]}}
    refused = await req(backend, "PUT", f"{path}/finalize", bad)
    name_part = (
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start"
        " and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or"
        " '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
    neither = "name is neither a standard finalizer name nor is it fully qualified"
    causes = [
        ("FieldValueInvalid", "spec.finalizers[0]", f'Invalid value: "Bad Name": {name_part}'),
        ("FieldValueInvalid", "spec.finalizers[0]", f'Invalid value: "Bad Name": {neither}'),
        ("FieldValueInvalid", "spec.finalizers[1]", f'Invalid value: "foo": {neither}'),
    ]
    assert (refused.status, refused.body) == (422, invalid("Namespace", "", name, causes))
    metadata = {**namespace["metadata"], "labels": {"team": "a"}}
    sent = {**namespace, "metadata": metadata, "spec": {"finalizers": ["example.com/x"]}}
    sent["status"] = {"phase": "Terminating"}
    finalized = await ok(backend, "PUT", f"{path}/finalize", sent)
    assert finalized["metadata"]["labels"] == {"team": "a", "kubernetes.io/metadata.name": name}
    assert finalized["spec"] == {"finalizers": ["example.com/x"]}
    assert finalized["status"] == {"phase": "Active"}
    phase = await req(
        backend, "PATCH", f"{path}/status", {"status": {"phase": "Terminating"}}, content_type=MERGE
    )
    cause = (
        "FieldValueInvalid",
        "status.Phase",
        "Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
    )
    assert (phase.status, phase.body) == (422, invalid("Namespace", "", name, [cause]))
    await req(backend, "DELETE", path)


_JOB_POD = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}


async def test_backoff_limit_per_index_needs_an_indexed_job(backend: Backend) -> None:
    jobs = f"/apis/batch/v1/namespaces/{backend.namespace}/jobs"

    async def causes(name: str, **spec: Any) -> list[Cause]:
        body = {"metadata": {"name": name}, "spec": {"template": _JOB_POD, **spec}}
        reply = await req(backend, "POST", jobs, body)
        assert reply.status == 422, reply.body
        return causes_of(reply)

    assert await causes("a", backoffLimitPerIndex=1) == [
        (
            "FieldValueInvalid",
            "spec.backoffLimitPerIndex",
            "Invalid value: 1: requires indexed completion mode",
        )
    ]
    assert await causes("b", completionMode="NonIndexed", maxFailedIndexes=2) == [
        (
            "FieldValueRequired",
            "spec.backoffLimitPerIndex",
            "Required value: when maxFailedIndexes is specified",
        ),
        (
            "FieldValueInvalid",
            "spec.maxFailedIndexes",
            "Invalid value: 2: requires indexed completion mode",
        ),
    ]
    indexed = {"completionMode": "Indexed", "backoffLimitPerIndex": 1}
    assert await causes("c", **indexed, completions=2, parallelism=100_001, maxFailedIndexes=3) == [
        (
            "FieldValueInvalid",
            "spec.parallelism",
            "Invalid value: 100001: must be less than or equal to 100000 when completion mode is"
            " Indexed",
        ),
        (
            "FieldValueInvalid",
            "spec.maxFailedIndexes",
            "Invalid value: 3: must be less than or equal to completions",
        ),
    ]
    above = "when completions are above 100000 and used with backoff limit per index"
    assert await causes("d", **indexed, completions=100_001, parallelism=10_001) == [
        (
            "FieldValueRequired",
            "spec.maxFailedIndexes",
            "Required value: must be specified when completions is above 100000",
        ),
        (
            "FieldValueInvalid",
            "spec.parallelism",
            f"Invalid value: 10001: must be less than or equal to 10000 {above}",
        ),
    ]
    body = {"metadata": {"name": "e"}, "spec": {"template": _JOB_POD, **indexed, "completions": 3}}
    created = await ok(
        backend, "POST", jobs, {**body, "spec": {**body["spec"], "maxFailedIndexes": 1}}
    )
    assert created["spec"]["backoffLimitPerIndex"] == 1


async def test_a_scale_names_its_object(backend: Backend) -> None:
    deployments = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    labels = {"app": "x"}
    pod = {"containers": [{"name": "c", "image": "busybox"}]}
    spec = {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": pod},
    }
    await ok(backend, "POST", deployments, {"metadata": {"name": "d"}, "spec": spec})
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 3}}
    other = await req(
        backend, "PUT", f"{deployments}/d/scale", {**scale, "metadata": {"name": "x"}}
    )
    assert (other.status, other.body) == (
        400,
        status_body(
            400,
            "BadRequest",
            "the name of the object (x) does not match the name on the URL (d)",
            None,
        ),
    )
    unnamed = await req(backend, "PUT", f"{deployments}/d/scale", {**scale, "metadata": {}})
    assert (unnamed.status, unnamed.body["message"]) == (
        400,
        "the name of the object (d based on URL) was undeterminable: name must be provided",
    )
    stored = await ok(backend, "GET", f"{deployments}/d")
    assert stored["spec"]["replicas"] == 1


async def test_token_request_expiration_limits(backend: Backend) -> None:
    accounts = f"/api/v1/namespaces/{backend.namespace}/serviceaccounts"
    await ok(backend, "POST", accounts, {"metadata": {"name": "a"}})
    for seconds, detail in (
        (0, "may not specify a duration less than 10 minutes"),
        (2**33, "may not specify a duration larger than 2^32 seconds"),
    ):
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds},
        }
        reply = await req(backend, "POST", f"{accounts}/a/token", request)
        cause = (
            "FieldValueInvalid",
            "spec.expirationSeconds",
            f"Invalid value: {seconds}: {detail}",
        )
        expected = invalid("TokenRequest", "authentication.k8s.io", "", [cause])
        del expected["details"]["name"]  # the REST handler's 422 names no object
        assert (reply.status, reply.body) == (422, expected)


async def test_service_external_ips_may_not_be_special(backend: Backend) -> None:
    services = f"/api/v1/namespaces/{backend.namespace}/services"
    ips = ["abc", "0.0.0.0", "127.0.0.1", "169.254.1.1", "224.0.0.1", "fe80::1", "1.2.3.4"]
    body = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], "externalIPs": ips}}
    reply = await req(backend, "POST", services, body)
    loopback = "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    link_local = "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
    multicast = "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    expected = [
        ("abc", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
        ("0.0.0.0", "may not be unspecified (0.0.0.0)"),
        ("127.0.0.1", loopback),
        ("169.254.1.1", link_local),
        ("224.0.0.1", multicast),
        ("fe80::1", link_local),
    ]
    assert reply.status == 422
    assert causes_of(reply) == [
        (
            "FieldValueInvalid",
            f"spec.externalIPs[{ips.index(ip)}]",
            f'Invalid value: "{ip}": {detail}',
        )
        for ip, detail in expected
    ]


async def test_on_delete_statefulset_rolling_update_message(backend: Backend) -> None:
    statefulsets = f"/apis/apps/v1/namespaces/{backend.namespace}/statefulsets"
    labels = {"app": "x"}
    pod = {"containers": [{"name": "c", "image": "busybox"}]}
    spec = {
        "serviceName": "s",
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": pod},
        "updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 2}},
    }
    reply = await req(backend, "POST", statefulsets, {"metadata": {"name": "s"}, "spec": spec})
    cause = (
        "FieldValueInvalid",
        "spec.updateStrategy.rollingUpdate",
        "Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:2,"
        " MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy"
        " 'RollingUpdate'",
    )
    assert (reply.status, reply.body) == (422, invalid("StatefulSet", "apps", "s", [cause]))
