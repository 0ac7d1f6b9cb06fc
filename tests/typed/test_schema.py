"""CRD generation from pydantic models: the structural rewrite and the CRD document."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
import yaml
from click.testing import CliRunner
from pydantic import Field, ValidationError

from reconcile_kit.cli.commands import main
from reconcile_kit.typed import CustomResource, KubeModel, SchemaError, crd_document
from reconcile_kit.typed.schema import structural_schema

from .models import Gadget


def spec_schema(model: type[KubeModel]) -> dict[str, Any]:
    return structural_schema(model.model_json_schema(by_alias=True), model.__name__)


def test_optional_union_literal_const_bounds_and_any() -> None:
    class Spec(KubeModel):
        size: int | None = None
        port: int | str
        mode: Literal["a"] | Literal["b"] = "a"
        fixed: Literal["x"] = "x"
        weight: Annotated[float, Field(gt=0, le=1)] = 0.5
        blob: dict[str, Any] = Field(default_factory=dict)
        anything: Any = None

    props = spec_schema(Spec)["properties"]
    assert props["size"] == {"type": "integer", "nullable": True}
    assert props["port"] == {"x-kubernetes-int-or-string": True}
    assert props["mode"] == {"type": "string", "enum": ["a", "b"], "default": "a"}
    assert props["fixed"]["enum"] == ["x"]
    assert props["weight"] == {
        "default": 0.5,
        "exclusiveMinimum": True,
        "maximum": 1,
        "minimum": 0,
        "type": "number",
    }
    assert props["blob"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert props["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert "title" not in str(spec_schema(Spec))


def test_what_no_structural_schema_expresses_is_refused_naming_the_field() -> None:
    class Node(KubeModel):
        children: list[Node] = Field(default_factory=list)

    class Pair(KubeModel):
        pair: tuple[int, str]

    class A(KubeModel):
        a: int

    class B(KubeModel):
        b: str

    class Either(KubeModel):
        value: A | B

    with pytest.raises(SchemaError, match="refers to itself"):
        spec_schema(Node)
    with pytest.raises(SchemaError, match=r"Pair\.pair: tuples"):
        spec_schema(Pair)
    with pytest.raises(SchemaError, match=r"Either\.value: a union of object, object"):
        spec_schema(Either)


def test_gadget_crd_document() -> None:
    crd = Gadget.crd()
    assert crd["metadata"]["name"] == "gadgets.typed.example.com"
    assert crd["spec"]["names"] == {
        "kind": "Gadget",
        "listKind": "GadgetList",
        "plural": "gadgets",
        "singular": "gadget",
        "shortNames": ["gd"],
        "categories": ["all"],
    }
    [version] = crd["spec"]["versions"]
    assert version["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.readyReplicas",
        },
    }
    assert version["additionalPrinterColumns"] == [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
    ]
    root = version["schema"]["openAPIV3Schema"]
    assert root["required"] == ["spec"]
    spec = root["properties"]["spec"]
    assert spec["x-kubernetes-validations"] == [
        {"rule": "self.minSize <= self.maxSize", "message": "minSize must not exceed maxSize"}
    ]
    ports = spec["properties"]["ports"]
    assert (ports["x-kubernetes-list-type"], ports["x-kubernetes-list-map-keys"]) == (
        "map",
        ["name"],
    )
    assert "default" not in ports  # [] is a Python convenience, not a server default
    assert spec["properties"]["selector"]["x-kubernetes-map-type"] == "atomic"
    assert "x-kubernetes-preserve-unknown-fields" not in spec  # extra="allow" stays in Python


def test_several_versions_one_storage() -> None:
    class ThingV1(CustomResource, group="multi.example.com", version="v1", kind="Thing"):
        spec: dict[str, Any] = Field(default_factory=dict)

    class ThingV2(
        CustomResource, group="multi.example.com", version="v2", kind="Thing", storage=True
    ):
        spec: dict[str, Any] = Field(default_factory=dict)

    crd = crd_document(ThingV1)
    assert [(v["name"], v["storage"]) for v in crd["spec"]["versions"]] == [
        ("v1", False),
        ("v2", True),
    ]

    class Other(CustomResource, group="multi.example.com", version="v3", kind="Other"):
        pass

    with pytest.raises(SchemaError, match="disagree"):
        crd_document(ThingV1, Other)


def test_missing_keywords() -> None:
    with pytest.raises(TypeError, match="needs version"):

        class Bad(CustomResource, group="x.example.com", kind="Bad"):
            pass


def test_typed_object_round_trip_keeps_only_what_was_read_or_set() -> None:
    raw = {
        "apiVersion": "typed.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "resourceVersion": "7", "managedFields": [{"manager": "x"}]},
        "spec": {"image": "nginx", "future": {"a": 1}},
    }
    gadget = Gadget.model_validate(raw)
    assert gadget.spec.replicas == 1 and gadget.metadata.resource_version == "7"
    assert gadget.to_raw() == raw  # unknown fields kept, defaults not added
    gadget.spec.replicas = 3
    assert gadget.to_raw()["spec"] == {"image": "nginx", "future": {"a": 1}, "replicas": 3}
    with pytest.raises(ValidationError, match="duplicate map list item"):
        Gadget.model_validate(
            {**raw, "spec": {"image": "x", "ports": [{"name": "a", "containerPort": 1}] * 2}}
        )


def test_crd_command() -> None:
    result = CliRunner().invoke(main, ["crd", "tests/typed/models.py"])
    assert result.exit_code == 0, result.output
    [document] = list(yaml.safe_load_all(result.output))
    assert document == Gadget.crd()
    result = CliRunner().invoke(main, ["crd", "tests/typed/models.py:Port"])
    assert result.exit_code == 1 and "is not a CustomResource class" in result.output


@pytest.mark.parametrize(
    ("module", "crd"),
    [
        ("examples/website.py", "examples/website-crd.yaml"),
        ("examples/configmap_generator.py", "examples/configmapgenerator-crd.yaml"),
        ("examples/ippool.py", "examples/ippool-crd.yaml"),
        ("examples/fleet_configmap.py", "examples/fleetconfigmap-crd.yaml"),
    ],
)
def test_checked_in_example_crds_are_the_generated_ones(module: str, crd: str) -> None:
    """The examples' CRD files are `reconcile-kit crd <module>` (regenerate them when a
    model changes)."""
    result = CliRunner().invoke(main, ["crd", module])
    assert result.exit_code == 0, result.output
    with open(crd) as checked_in:
        assert checked_in.read() == result.output
