"""CRDs: registration, schema validation, pruning, defaulting (k8s-semantics.md 42-43)."""

from __future__ import annotations

from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from .kube import MERGE, Widgets, crd_document, ok, req, schema_crd

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def test_established_crd_status(backend: Backend, widgets: Widgets) -> None:
    crd = await ok(backend, "GET", f"{CRDS}/{widgets.name}")
    status = crd["status"]
    assert status["acceptedNames"]["plural"] == "widgets"
    assert status["acceptedNames"]["kind"] == "Widget"
    assert status["storedVersions"] == ["v1"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions["NamesAccepted"] == ("True", "NoConflicts")
    assert conditions["Established"] == ("True", "InitialNamesAccepted")


async def test_invalid_crds_are_refused(backend: Backend) -> None:
    group = f"{backend.namespace}.example.org"
    wrong_name = crd_document(group)
    wrong_name["metadata"]["name"] = f"gadgets.{group}"
    reply = await req(backend, "POST", CRDS, wrong_name)
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    assert any(c["field"] == "metadata.name" for c in reply.body["details"]["causes"])
    no_schema = crd_document(group)
    del no_schema["spec"]["versions"][0]["schema"]
    reply = await req(backend, "POST", CRDS, no_schema)
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    non_structural = crd_document(group)
    spec_schema = non_structural["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    del spec_schema["properties"]["spec"]["type"]
    reply = await req(backend, "POST", CRDS, non_structural)
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    # One schema for all versions is reported under the internal spec.validation.
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: must not be empty for specified object fields",
            "field": "spec.validation.openAPIV3Schema.properties[spec].type",
        }
    ]


async def test_validation_errors(backend: Backend, widgets: Widgets) -> None:
    wrong_type = await req(backend, "POST", widgets.path, widgets.widget(size="string"))
    assert (wrong_type.status, wrong_type.body["reason"]) == (422, "Invalid")
    assert wrong_type.body["message"] == (
        f'Widget.{widgets.group} "w1" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"'
    )
    assert wrong_type.body["details"] == {
        "name": "w1",
        "group": widgets.group,
        "kind": "Widget",
        "causes": [
            {
                "reason": "FieldValueTypeInvalid",
                "message": 'Invalid value: "string": spec.size in body must be of type '
                'integer: "string"',
                "field": "spec.size",
            }
        ],
    }
    too_small = await req(backend, "POST", widgets.path, widgets.widget(size=0))
    assert too_small.status == 422
    assert too_small.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: spec.size in body should be greater than or equal to 1",
            "field": "spec.size",
        }
    ]
    bad_enum = await req(backend, "POST", widgets.path, widgets.widget(color="green"))
    assert bad_enum.body["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "green": supported values: "red", "blue"',
            "field": "spec.color",
        }
    ]
    missing = widgets.widget()
    del missing["spec"]["size"]
    required = await req(backend, "POST", widgets.path, missing)
    assert required.body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"}
    ]


async def test_pruning_defaulting_and_unknown_field_warnings(
    backend: Backend, widgets: Widgets
) -> None:
    body = widgets.widget(bogus=1, extra={"anything": {"goes": True}})
    body["topLevel"] = "x"
    created = await req(backend, "POST", widgets.path, body)
    assert created.status == 201
    assert created.body["spec"] == {"size": 1, "replicas": 1, "extra": {"anything": {"goes": True}}}
    assert "topLevel" not in created.body
    warnings = created.headers.get_list("warning")  # one header per warning
    assert '299 - "unknown field \\"spec.bogus\\""' in warnings
    assert '299 - "unknown field \\"topLevel\\""' in warnings
    strict = await req(
        backend,
        "POST",
        widgets.path,
        widgets.widget("w2", bogus=1),
        params={"fieldValidation": "Strict"},
    )
    assert (strict.status, strict.body["reason"]) == (400, "BadRequest")
    assert strict.body["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "spec.bogus"'
    )
    ignored = await req(
        backend,
        "POST",
        widgets.path,
        widgets.widget("w3", bogus=1),
        params={"fieldValidation": "Ignore"},
    )
    assert ignored.status == 201
    assert "warning" not in ignored.headers
    patched = await ok(
        backend, "PATCH", f"{widgets.path}/w1", {"spec": {"replicas": None}}, content_type=MERGE
    )
    assert patched["spec"]["replicas"] == 1  # defaulted again


async def test_list_type_rules_of_structural_schemas(backend: Backend) -> None:
    """x-kubernetes-list-type / list-map-keys checks at CRD creation (issue 15)."""
    item = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "o": {"type": "object"}},
    }
    cases = [
        (
            {"x-kubernetes-list-type": "map", "items": {**item, "required": ["name"]}},
            "x-kubernetes-list-map-keys",
            "Required value: must not be empty if x-kubernetes-list-type is map",
        ),
        (
            {
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["nope"],
                "items": {**item, "required": ["name"]},
            },
            "x-kubernetes-list-map-keys",
            'Invalid value: []string{"nope"}: entries must all be names of item properties',
        ),
        (
            {
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": item,
            },
            "items.properties[name].default",
            "Required value: this property is in x-kubernetes-list-map-keys, so it must have a"
            " default or be a required property",
        ),
        (
            {"x-kubernetes-list-type": "set", "items": item},
            "items.x-kubernetes-map-type",
            'Invalid value: "null": must be atomic as item of a list with'
            " x-kubernetes-list-type=set",
        ),
        (
            {
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["o"],
                "items": {**item, "required": ["o"]},
            },
            "items.properties[o].type",
            'Invalid value: "object": must be a scalar type if parent array\'s'
            " x-kubernetes-list-type is map",
        ),
        (
            {"x-kubernetes-list-type": "bogus", "items": {"type": "string"}},
            "x-kubernetes-list-type",
            'Unsupported value: "bogus": supported values: "atomic", "set", "map"',
        ),
        (
            {"x-kubernetes-list-map-keys": ["name"], "items": {**item, "required": ["name"]}},
            "x-kubernetes-list-type",
            "Required value: must be map if x-kubernetes-list-map-keys is non-empty",
        ),
    ]
    prefix = "spec.validation.openAPIV3Schema.properties[spec].properties[l]."
    for index, (array, field, message) in enumerate(cases):
        group = f"l{index}.{backend.namespace}.example.com"
        schema = {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {"l": {"type": "array", **array}}}
            },
        }
        crd = schema_crd(group, "Thing", schema)
        reply = await req(
            backend, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
        )
        assert reply.status == 422, (index, reply.body)
        causes = [(c["field"], c["message"]) for c in reply.body["details"]["causes"]]
        assert causes == [(prefix + field, message)], index


async def test_a_new_crd_is_established_asynchronously(backend: Backend) -> None:
    """The create answer has no conditions yet; kube-apiserver's controllers add them (and
    serve the resources) a few milliseconds later. The cleanup finalizer comes with the
    first DELETE."""
    group = f"async.{backend.namespace}.example.com"
    crd = crd_document(group)
    created = await ok(
        backend, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
    )
    assert created["status"]["conditions"] is None
    assert created["status"]["acceptedNames"] == {"plural": "", "kind": ""}
    assert "finalizers" not in created["metadata"]

    async def established() -> bool:
        reply = await req(
            backend, "GET", f"/apis/{group}/v1/namespaces/{backend.namespace}/widgets"
        )
        return reply.status == 200

    await eventually(established, 10, interval=0.01, what="widgets served")
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"
    stored = await ok(backend, "GET", path)
    assert {c["type"] for c in stored["status"]["conditions"]} == {"NamesAccepted", "Established"}
    assert "finalizers" not in stored["metadata"]  # added by the first DELETE only
