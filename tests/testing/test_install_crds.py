"""reconcile_kit.testing.install_crds: what it refuses before sending, and how a CRD the
server refuses is named, over the wire to the embedded API server."""

from __future__ import annotations

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import InvalidError
from reconcile_kit.testing import APIServer, install_crds
from reconcile_kit.typed import CustomResource, KubeModel


class GadgetSpec(KubeModel):
    size: int = 1


class Gadget(CustomResource, group="gadgets.example.com", version="v1", kind="Gadget"):
    spec: GadgetSpec


async def test_a_typed_class_is_installed_and_served(kube: kr8s.asyncio.Api) -> None:
    await install_crds(kube, Gadget)
    gadget = Gadget(metadata={"name": "g", "namespace": "default"}, spec={"size": 2})
    await gadget.create(kube)
    assert (await Gadget.get(kube, "g", "default")).spec.size == 2


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        (ConfigMap, "the class ConfigMap"),
        (CustomResource, "the class CustomResource"),
        ("gadgets.example.com", "'gadgets.example.com'"),
    ],
)
async def test_what_is_no_crd_is_refused_before_sending(
    kube: kr8s.asyncio.Api, apiserver: APIServer, argument: object, named: str
) -> None:
    before = len(apiserver.requests.filter(resource="customresourcedefinitions"))
    with pytest.raises(TypeError, match="neither a CRD document") as caught:
        await install_crds(kube, Gadget, argument)  # type: ignore[arg-type]
    assert named in str(caught.value)
    assert len(apiserver.requests.filter(resource="customresourcedefinitions")) == before


async def test_a_refused_crd_is_named(kube: kr8s.asyncio.Api) -> None:
    document = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "broken.example.com"},
        "spec": {},
    }
    with pytest.raises(InvalidError) as caught:
        await install_crds(kube, document, timeout=5)
    assert str(caught.value).startswith("CustomResourceDefinition broken.example.com: POST ")
    error = caught.value
    assert (error.kind, error.name) == ("CustomResourceDefinition", "broken.example.com")
