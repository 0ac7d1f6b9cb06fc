"""Differences a differential run against kube-apiserver 1.32.5 found in built-in kinds and
verbs (request options, strict field validation of patches, metadata causes, Namespace
subresources, Job backoff limits per index, Scale names, TokenRequests, Service external
IPs, StatefulSet strategies): each answer is the same on both backends."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .invalid import Cause, causes_of
from .kube import MERGE, ok, req, status_body


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
