"""reconcile_kit.meta.owners: owner references as controllerutil sets them, and the GC honouring
them."""

from __future__ import annotations

import copy
from typing import Any

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap, Namespace, new_class

from reconcile_kit.client.errors import AlreadyOwnedError, OwnerReferenceError
from reconcile_kit.meta.owners import (
    controller_of,
    is_controlled_by,
    owner_refs,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from reconcile_kit.testing import APIServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


def obj(
    kind: str = "ConfigMap",
    name: str = "child",
    namespace: str | None = "default",
    uid: str | None = None,
    api_version: str = "v1",
    refs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if uid:
        meta["uid"] = uid
    if refs is not None:
        meta["ownerReferences"] = refs
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def app(
    name: str = "web", uid: str = "uid-web", namespace: str | None = "default"
) -> dict[str, Any]:
    return obj("App", name, namespace, uid, "example.com/v1")


def controller_ref(name: str = "web", uid: str = "uid-web") -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "App",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


OTHER = {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "uid-s"}


# --- set_controller_reference --------------------------------------------------------------


def test_controller_reference_is_appended_keeping_other_references() -> None:
    child = obj(refs=[dict(OTHER)])
    set_controller_reference(app(), child)
    assert child["metadata"]["ownerReferences"] == [OTHER, controller_ref()]
    assert controller_of(child) == controller_ref()


def test_controller_reference_is_idempotent() -> None:
    child = obj()
    set_controller_reference(app(), child)
    before = copy.deepcopy(child)
    set_controller_reference(app(), child)
    assert child == before


def test_same_owner_entry_is_updated_in_place() -> None:
    stale = {**controller_ref(), "apiVersion": "example.com/v1beta1", "blockOwnerDeletion": False}
    child = obj(refs=[stale, dict(OTHER)])
    set_controller_reference(app(), child)
    assert owner_refs(child) == [controller_ref(), OTHER]
    # a plain reference to the same owner is promoted to controller
    child = obj(refs=[{k: v for k, v in controller_ref().items() if k != "controller"}])
    set_controller_reference(app(), child)
    assert owner_refs(child) == [controller_ref()]


def test_recreated_owner_with_same_name_replaces_the_uid() -> None:
    """controller-runtime's referSameObject: same group, kind and name is the same owner."""
    child = obj(refs=[controller_ref(uid="uid-old")])
    set_controller_reference(app(uid="uid-new"), child)
    assert owner_refs(child) == [controller_ref(uid="uid-new")]


def test_another_controller_is_refused() -> None:
    child = obj(refs=[controller_ref(name="other", uid="uid-other")])
    before = copy.deepcopy(child)
    with pytest.raises(AlreadyOwnedError) as raised:
        set_controller_reference(app(), child)
    message = str(raised.value)
    assert message.startswith("ConfigMap default/child: already controlled by App other")
    assert "cannot make App default/web its controller" in message
    assert (raised.value.kind, raised.value.namespace, raised.value.name) == (
        "ConfigMap",
        "default",
        "child",
    )
    assert child == before
    # a different group with the same kind and name is another object too
    other_group = {**controller_ref(), "apiVersion": "other.io/v1", "uid": "uid-x"}
    with pytest.raises(AlreadyOwnedError):
        set_controller_reference(app(), obj(refs=[other_group]))


@pytest.mark.parametrize(
    ("owner", "message"),
    [
        (app(uid=""), "App default/web: owner has no uid: create it first"),
        ({"kind": "App", "metadata": {"name": "w", "uid": "u"}}, "owner has no apiVersion"),
        ({"apiVersion": "v1", "metadata": {"uid": "u"}}, "owner has no kind, name"),
    ],
)
def test_incomplete_owner_is_refused(owner: dict[str, Any], message: str) -> None:
    child = obj()
    with pytest.raises(OwnerReferenceError, match=message):
        set_controller_reference(owner, child)
    with pytest.raises(OwnerReferenceError, match=message):
        set_owner_reference(owner, child)
    assert "ownerReferences" not in child["metadata"]


@pytest.mark.parametrize(
    ("owner", "child", "message"),
    [
        (
            app(),
            obj(namespace="prod"),
            "ConfigMap prod/child: cross-namespace owner references are disallowed: owner "
            "App default/web is in namespace 'default', this object in 'prod'",
        ),
        (
            app(),
            obj("ClusterRole", "admin", namespace=None),
            "ClusterRole admin: a cluster-scoped object must not have a namespace-scoped "
            "owner (App default/web)",
        ),
    ],
)
def test_scope_rules(owner: dict[str, Any], child: dict[str, Any], message: str) -> None:
    with pytest.raises(OwnerReferenceError) as raised:
        set_controller_reference(owner, child)
    assert str(raised.value) == message
    with pytest.raises(OwnerReferenceError):
        set_owner_reference(owner, child)
    assert "ownerReferences" not in child["metadata"]


def test_cluster_scoped_owner_may_own_anything() -> None:
    cluster_owner = obj("Tenant", "acme", None, "uid-acme", "example.com/v1")
    for child in (obj(namespace="prod"), obj("ClusterRole", "r", namespace=None)):
        set_controller_reference(cluster_owner, child)
        assert controller_of(child) is not None


def test_kr8s_objects_use_their_own_scope() -> None:
    owner = ConfigMap({"metadata": {"name": "o", "namespace": "default", "uid": "uid-o"}})
    child = ConfigMap({"metadata": {"name": "c", "namespace": "default"}})
    set_controller_reference(owner, child)
    assert child.raw["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "o",
            "uid": "uid-o",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert is_controlled_by(child, owner)
    with pytest.raises(OwnerReferenceError, match="Namespace team: a cluster-scoped object"):
        set_controller_reference(owner, Namespace({"metadata": {"name": "team"}}))
    # a namespaced kr8s object with no namespace and no Api cannot be placed: refused
    unplaced = ConfigMap({"metadata": {"name": "c2"}})
    with pytest.raises(OwnerReferenceError, match="has no namespace; it must be in its owner's"):
        set_controller_reference(owner, unplaced)
    # a cluster-scoped kr8s owner may own it
    tenant = new_class("Tenant", "example.com/v1", namespaced=False)
    set_owner_reference(tenant({"metadata": {"name": "t", "uid": "uid-t"}}), unplaced)
    assert owner_refs(unplaced)[0]["kind"] == "Tenant"


async def test_kr8s_child_without_namespace_takes_the_api_default(
    kube: kr8s.asyncio.Api,
) -> None:
    owner = await ConfigMap({"metadata": {"name": "o", "namespace": "default", "uid": "u"}})
    child = await ConfigMap({"metadata": {"name": "c"}}, api=kube)
    set_controller_reference(owner, child)  # kr8s would create it in "default"
    assert controller_of(child) is not None


# --- set_owner_reference / remove / readers --------------------------------------------------


def test_owner_reference_is_plain_and_idempotent() -> None:
    child = obj()
    set_owner_reference(app(), child)
    set_owner_reference(app(), child)
    plain = {"apiVersion": "example.com/v1", "kind": "App", "name": "web", "uid": "uid-web"}
    assert owner_refs(child) == [plain]
    assert controller_of(child) is None and not is_controlled_by(child, app())
    set_owner_reference(app(), child, block_owner_deletion=True)
    assert owner_refs(child) == [{**plain, "blockOwnerDeletion": True}]
    set_owner_reference(obj("Secret", "s", uid="uid-s"), child)
    assert [r["kind"] for r in owner_refs(child)] == ["App", "Secret"]


def test_owner_reference_never_demotes_the_controller() -> None:
    child = obj()
    set_controller_reference(app(), child)
    set_owner_reference(app(), child)
    assert owner_refs(child) == [controller_ref()]
    # and it may sit beside another object's controller reference
    set_owner_reference(obj("Secret", "s", uid="uid-s"), child)
    assert len(owner_refs(child)) == 2 and is_controlled_by(child, app())


def test_remove_owner_reference() -> None:
    child = obj(refs=[controller_ref(), dict(OTHER)])
    assert remove_owner_reference("uid-missing", child) is False
    assert remove_owner_reference("uid-s", child) is True
    assert owner_refs(child) == [controller_ref()]
    # an owner that is gone can be named without its uid (group, kind and name)
    gone = {"apiVersion": "example.com/v2", "kind": "App", "metadata": {"name": "web"}}
    assert remove_owner_reference(gone, child) is True
    assert "ownerReferences" not in child["metadata"]
    assert remove_owner_reference(app(), child) is False
    assert remove_owner_reference(app(), {}) is False


def test_readers_return_copies_and_tolerate_missing_metadata() -> None:
    child = obj(refs=[controller_ref(), "junk"])  # type: ignore[list-item]
    refs = owner_refs(child)
    refs[0]["name"] = "changed"
    assert controller_of(child) == controller_ref()
    assert owner_refs({}) == [] and controller_of({"metadata": None}) is None
    assert not is_controlled_by(child, app(uid=""))
    assert is_controlled_by(child, app()) and not is_controlled_by(child, app(uid="uid-other"))


def test_malformed_owner_references_are_a_type_error() -> None:
    child = obj()
    child["metadata"]["ownerReferences"] = "oops"
    with pytest.raises(TypeError, match=r"ConfigMap default/child: metadata\.ownerReferences"):
        set_controller_reference(app(), child)


# --- over the wire: the garbage collector follows what we wrote ------------------------------


async def test_garbage_collector_deletes_the_controlled_child(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    owner = await ConfigMap({"metadata": {"name": "owner"}}, api=kube)
    await owner.create()
    child = await ConfigMap({"metadata": {"name": "child", "namespace": "default"}}, api=kube)
    set_controller_reference(owner, child)
    await child.create()
    assert is_controlled_by(child, owner)  # as stored by the server
    await owner.delete()
    await apiserver.settled()
    status, _ = await call(kube, "GET", f"{CM}/child")
    assert status == 404


async def test_other_owners_survive_and_keep_the_child(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Appending (not replacing, as kr8s's set_owner does) keeps the child alive."""
    owners = []
    for name in ("a", "b"):
        owner = await ConfigMap({"metadata": {"name": name}}, api=kube)
        await owner.create()
        owners.append(owner)
    child = await ConfigMap({"metadata": {"name": "child", "namespace": "default"}}, api=kube)
    await child.create()
    set_owner_reference(owners[1], child)
    set_controller_reference(owners[0], child)
    await child.patch({"metadata": {"ownerReferences": owner_refs(child)}})
    assert [r["name"] for r in owner_refs(child)] == ["b", "a"]
    await owners[0].delete()
    await apiserver.settled()
    await child.refresh()
    assert owner_refs(child) == [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": owners[1].metadata.uid}
    ]
    await owners[1].delete()
    await apiserver.settled()
    status, _ = await call(kube, "GET", f"{CM}/child")
    assert status == 404


async def test_removed_reference_orphans_the_child(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    owner = await ConfigMap({"metadata": {"name": "owner"}}, api=kube)
    await owner.create()
    child = await ConfigMap({"metadata": {"name": "child", "namespace": "default"}}, api=kube)
    set_controller_reference(owner, child)
    await child.create()
    assert remove_owner_reference(owner, child)
    await child.patch({"metadata": {"ownerReferences": None}})  # the key is gone: send null
    await owner.delete()
    await apiserver.settled()
    await child.refresh()
    assert "ownerReferences" not in child.raw["metadata"]
