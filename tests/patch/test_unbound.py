"""PatchHelper on an object bound to no API client (a typed model built in code, a kr8s
asyncio object never awaited): a ValueError naming the object and how to bind it, and
nothing sent; the same object bound patches over the wire."""

from __future__ import annotations

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import PatchHelper
from reconcile_kit.testing import APIServer, install_crds
from reconcile_kit.typed import CustomResource, KubeModel


class GizmoSpec(KubeModel):
    size: int = 1


class Gizmo(CustomResource, group="gizmos.example.com", version="v1", kind="Gizmo"):
    spec: GizmoSpec


async def test_a_model_never_created_or_read_is_named(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crds(kube, Gizmo)
    gizmo = Gizmo(metadata={"name": "g", "namespace": "default"}, spec={"size": 1})
    with pytest.raises(ValueError, match=r"^Gizmo default/g: PatchHelper cannot send") as caught:
        async with PatchHelper(gizmo):
            gizmo.spec.size = 2
    assert "Gizmo.get(api, ...), or create(api) it first" in str(caught.value)
    assert "forget to await" not in str(caught.value)
    assert not apiserver.requests.filter(verb="patch")

    await gizmo.create(kube)
    async with PatchHelper(gizmo):
        gizmo.spec.size = 2
    assert (await Gizmo.get(kube, "g", "default")).spec.size == 2


async def test_a_kr8s_object_never_awaited_is_named(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    created = await ConfigMap({"metadata": {"name": "c", "namespace": "default"}}, api=kube)
    await created.create()
    unbound = ConfigMap({"metadata": {"name": "c", "namespace": "default"}, "data": {}})
    with pytest.raises(ValueError, match=r"^ConfigMap default/c: PatchHelper cannot send"):
        async with PatchHelper(unbound):
            unbound.raw["data"] = {"k": "v"}
    assert not apiserver.requests.filter(verb="patch")


async def test_a_model_without_a_namespace_never_created_is_named(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """As docs/typed-resources.md builds one (``Website(metadata={"name": "shop"}, ...)``,
    its namespace given to ``create``): the ValueError of docs/errors.md, where kr8s's
    RuntimeError "has not been initialized with an API object. Did you forget to await
    it?" came out (kr8s's namespace default reads the api)."""
    await install_crds(kube, Gizmo)
    gizmo = Gizmo(metadata={"name": "g"}, spec={"size": 1})
    with pytest.raises(ValueError, match=r"^Gizmo g: PatchHelper cannot send") as caught:
        async with PatchHelper(gizmo):
            gizmo.spec.size = 2
    assert "Gizmo.get(api, ...), or create(api) it first" in str(caught.value)
    unbound = ConfigMap({"metadata": {"name": "c"}, "data": {}})
    with pytest.raises(ValueError, match=r"^ConfigMap c: PatchHelper cannot send"):
        async with PatchHelper(unbound):
            unbound.raw["data"] = {"k": "v"}
    assert not apiserver.requests.filter(verb="patch")
