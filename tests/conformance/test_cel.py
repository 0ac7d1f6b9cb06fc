"""CEL validation rules (``x-kubernetes-validations``) as kube-apiserver evaluates them."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, install_crd, ok, req, schema_crd

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {
                    "rule": "self.minSize <= self.maxSize",
                    "message": "minSize must not exceed maxSize",
                },
                {"rule": "!has(self.name) || self.name.lowerAscii() == self.name"},
            ],
            "properties": {
                "minSize": {"type": "integer"},
                "maxSize": {"type": "integer"},
                "name": {"type": "string"},
                "mode": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "mode is immutable"}
                    ],
                },
                "replicas": {
                    "type": "integer",
                    "x-kubernetes-validations": [
                        {
                            "rule": "self % 2 == 0",
                            "messageExpression": "'odd replicas: ' + (self > 10 ? 'many' : 'few')",
                        }
                    ],
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "x-kubernetes-validations": [
                            {
                                "rule": "self.port > 1024",
                                "message": "privileged port",
                                "reason": "FieldValueForbidden",
                                "fieldPath": ".port",
                            }
                        ],
                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    },
                },
            },
        }
    },
}


def crd(group: str) -> dict[str, Any]:
    return schema_crd(group, "Rule", SCHEMA)


def doc(group: str, object_name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Rule",
        "metadata": {"name": object_name},
        "spec": spec,
    }


async def test_validation_rules(backend: Backend) -> None:
    group = f"{backend.namespace}.cel.example.com"
    await install_crd(backend, crd(group))
    path = f"/apis/{group}/v1/namespaces/{backend.namespace}/rules"
    await ok(backend, "POST", path, doc(group, "good", minSize=1, maxSize=2, mode="a", replicas=2))
    bad = await req(
        backend,
        "POST",
        path,
        doc(
            group,
            "bad",
            minSize=3,
            maxSize=2,
            name="Abc",
            replicas=3,
            ports=[{"name": "http", "port": 80}, {"name": "app", "port": 8080}],
        ),
    )
    assert bad.status == 422, bad.body
    causes = bad.body["details"]["causes"]
    # kube-apiserver walks properties in Go's map order: compare sorted
    assert sorted((c["reason"], c["field"], c["message"]) for c in causes) == [
        ("FieldValueForbidden", "spec.ports[0].port", "Forbidden: privileged port"),
        (
            "FieldValueInvalid",
            "spec",
            'Invalid value: "object": failed rule: !has(self.name) ||'
            " self.name.lowerAscii() == self.name",
        ),
        ("FieldValueInvalid", "spec", 'Invalid value: "object": minSize must not exceed maxSize'),
        ("FieldValueInvalid", "spec.replicas", 'Invalid value: "integer": odd replicas: few'),
    ]
    changed = await req(
        backend, "PATCH", f"{path}/good", {"spec": {"mode": "b"}}, content_type=MERGE
    )
    assert (changed.status, changed.body["details"]["causes"]) == (
        422,
        [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "string": mode is immutable',
                "field": "spec.mode",
            }
        ],
    )
    # a transition rule is not checked where there is no old value (create, newly set)
    await ok(backend, "PATCH", f"{path}/good", {"spec": {"name": "x"}}, content_type=MERGE)


async def test_rules_are_not_checked_when_the_schema_refuses_the_object(backend: Backend) -> None:
    """An enum, required, length, count or type error leaves the rules unchecked, with one
    cause saying so (apiextensions-apiserver's hasBlockingErr); other schema errors do
    not."""
    group = f"{backend.namespace}.cel.example.com"
    await install_crd(backend, crd(group))
    path = f"/apis/{group}/v1/namespaces/{backend.namespace}/rules"
    typed = await req(backend, "POST", path, doc(group, "typed", minSize=3, maxSize="two"))
    assert typed.status == 422, typed.body
    assert [(c["reason"], c["field"], c["message"]) for c in typed.body["details"]["causes"]] == [
        (
            "FieldValueTypeInvalid",
            "spec.maxSize",
            'Invalid value: "string": spec.maxSize in body must be of type integer: "string"',
        ),
        (
            "FieldValueInvalid",
            "<nil>",
            'Invalid value: "null": some validation rules were not checked because the object'
            " was invalid; correct the existing errors to complete validation",
        ),
    ]
    keyless = await req(
        backend, "POST", path, doc(group, "keyless", minSize=3, maxSize=2, ports=[{}])
    )
    assert keyless.status == 422, keyless.body
    assert [c["field"] for c in keyless.body["details"]["causes"]] == [
        "spec.ports[0].name",
        "<nil>",
    ]
