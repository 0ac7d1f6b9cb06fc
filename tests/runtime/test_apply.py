"""ctx.apply / ctx.apply_status / ctx.create_or_patch over the wire (a kr8s client only, so
tests/conformance/test_toolkit_on_both.py runs them on the real control plane too)."""

from __future__ import annotations

import inspect
import logging
import uuid
from typing import Any, cast

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ClusterRole, ConfigMap, Deployment, new_class

from reconcile_kit import AlreadyOwnedError, ConflictError, Context, set_controller_reference
from reconcile_kit.meta.objects import ObjectRef
from reconcile_kit.runtime.apply import AppliedIntents, holds
from reconcile_kit.runtime.sources import CacheView
from reconcile_kit.runtime.storewriter import StoreWriter
from reconcile_kit.testing import APIServer

from ..crds import install_crd
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


def context(kube: kr8s.asyncio.Api, name: str = "tester", kind: Any = ConfigMap) -> Context:
    """A Context whose cache is one store of ``kind`` (filled by the test through
    :func:`writer_of`)."""
    writer = StoreWriter()
    store = writer.store
    ctx = Context(
        controller_name=name,
        cache=CacheView(name, store, (), kind),
        api=kube,
        key=ObjectRef("ConfigMap", "default", "x"),
        attempt=1,
        reasons=frozenset(),
        store=store,
        data=None,
        log=logging.LoggerAdapter(logging.getLogger("test")),
        intents=AppliedIntents(),
    )
    _writers[id(store)] = writer
    return ctx


_writers: dict[int, StoreWriter] = {}


def writer_of(ctx: Context) -> StoreWriter:
    """The writer of ``ctx``'s primary store (the test plays the reflector)."""
    return _writers[id(ctx.store)]


async def configmap(kube: kr8s.asyncio.Api, name: str, **fields: Any) -> ConfigMap:
    raw = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
    }
    return await ConfigMap({**raw, **fields}, api=kube)


async def test_apply_creates_updates_and_removes_dropped_keys(kube: kr8s.asyncio.Api) -> None:
    ctx = context(kube)
    cm = await configmap(kube, "apply-a", data={"keep": "1", "drop": "2"})
    await ctx.apply(cm)
    assert cm.raw["data"] == {"keep": "1", "drop": "2"}
    status, _ = await call(
        kube, "PATCH", f"{CM}/apply-a", {"data": {"other": "x"}}, "application/merge-patch+json"
    )
    assert status == 200
    cm = await configmap(kube, "apply-a", data={"keep": "1"})
    await ctx.apply(cm)
    assert cm.raw["data"] == {"keep": "1", "other": "x"}  # dropped key gone, theirs kept
    managers = {e["manager"] for e in cm.raw["metadata"]["managedFields"]}
    assert "tester" in managers


def cluster_scoped_crd(group: str) -> dict[str, Any]:
    """A cluster-scoped custom kind ``Gadget`` of ``group`` (``spec.parts``: a string map)."""
    parts = {"type": "object", "additionalProperties": {"type": "string"}}
    spec = {"type": "object", "properties": {"parts": parts}}
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Cluster",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [version],
        },
    }


async def test_apply_cluster_scoped_built_in_and_custom_kinds(kube: kr8s.asyncio.Api) -> None:
    suffix = uuid.uuid4().hex[:8]  # cluster-scoped: unique names on a shared control plane
    group, name = f"apply{suffix}.example.com", f"apply-{suffix}"
    crd = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}"
    await install_crd(kube, cluster_scoped_crd(group))
    gadget = new_class("Gadget", f"{group}/v1", namespaced=False)
    kinds = [
        (ClusterRole, "rbac.authorization.k8s.io/v1", "clusterroles", {"rules": []}),
        (gadget, f"{group}/v1", "gadgets", {"spec": {"parts": {"a": "1", "b": "2"}}}),
    ]
    try:
        for kind, api_version, plural, fields in kinds:
            path = f"/apis/{api_version}/{plural}/{name}"
            meta = {"name": name, "labels": {"a": "1", "b": "2"}}
            raw = {"apiVersion": api_version, "kind": kind.kind, "metadata": meta, **fields}
            ctx = context(kube, kind=kind)
            obj = await kind(raw, api=kube)
            await ctx.apply(obj)
            assert obj.raw["metadata"]["uid"] and "namespace" not in obj.raw["metadata"]
            writer_of(ctx).put(obj.raw)  # the cache holds the answer (cluster-scoped: key "")
            meta["labels"].pop("b")
            fields.get("spec", {}).get("parts", {}).pop("b", None)
            await ctx.apply(await kind(raw, api=kube))  # a new intent: the dropped keys go
            _, stored = await call(kube, "GET", path)
            assert stored["metadata"]["labels"] == {"a": "1"}, path
            if kind is gadget:
                assert stored["spec"]["parts"] == {"a": "1"}
            await call(kube, "DELETE", path)
    finally:
        await call(kube, "DELETE", crd)


async def test_an_unchanged_intent_sends_nothing(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Namespaced and cluster-scoped: the same intent against the cached answer sends no
    request (embedded only: the request log; test_apply_matcher.py counts on both)."""
    for kind, raw in (
        (ConfigMap, {"apiVersion": "v1", "metadata": {"name": "same", "namespace": "default"}}),
        (ClusterRole, {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": "same"}}),
    ):
        raw = {**raw, "kind": kind.kind, "metadata": {**raw["metadata"], "labels": {"a": "1"}}}
        ctx = context(kube, kind=kind)
        obj = await kind(dict(raw), api=kube)
        await ctx.apply(obj)
        writer_of(ctx).put(obj.raw)
        apiserver.requests.clear()
        again = await kind(dict(raw), api=kube)
        await ctx.apply(again)
        assert list(apiserver.requests) == [], kind.kind
        assert again.raw["metadata"]["uid"] == obj.raw["metadata"]["uid"]  # the cached child
        raw["metadata"]["labels"] = {"a": "2"}
        await ctx.apply(await kind(dict(raw), api=kube))  # another intent: sent
        assert [r.verb for r in apiserver.requests] == ["patch"], kind.kind


async def test_apply_refuses_a_child_controlled_elsewhere(kube: kr8s.asyncio.Api) -> None:
    owner_a = await configmap(kube, "owner-a")
    await owner_a.create()
    owner_b = await configmap(kube, "owner-b")
    await owner_b.create()
    child = await configmap(kube, "owned-child", data={"v": "a"})
    set_controller_reference(owner_a, child)
    await context(kube, "one").apply(child)
    before = child.raw["metadata"]["resourceVersion"]
    ctx = context(kube, "two")
    writer_of(ctx).put(child.raw)  # the second controller's cache holds the child
    intruder = await configmap(kube, "owned-child", data={"v": "b"})
    set_controller_reference(owner_b, intruder)
    with pytest.raises(AlreadyOwnedError) as raised:
        await ctx.apply(intruder)
    assert "ConfigMap owner-a" in str(raised.value) and "ConfigMap owner-b" in str(raised.value)
    assert "owned-child" in str(raised.value)
    # a watched kind the cache has not seen yet: the live child is read first (one GET);
    # the same field manager as the owner's would otherwise replace its reference
    # silently (the server's two-controllers refusal needs two managers)
    uncached = await configmap(kube, "owned-child", data={"v": "c"})
    set_controller_reference(owner_b, uncached)
    for manager in ("one", "three"):
        with pytest.raises(AlreadyOwnedError) as raised:
            await context(kube, manager).apply(uncached)
        assert "ConfigMap owner-a" in str(raised.value), manager
        assert "ConfigMap owner-b" in str(raised.value) and "owned-child" in str(raised.value)
    # a kind the controller does not watch: the live child is read first (one GET)
    with pytest.raises(AlreadyOwnedError) as raised:
        await context(kube, "four", kind=Deployment).apply(uncached)
    assert "ConfigMap owner-a" in str(raised.value) and "ConfigMap owner-b" in str(raised.value)
    status, body = await call(kube, "GET", f"{CM}/owned-child")
    assert body["metadata"]["resourceVersion"] == before and body["data"] == {"v": "a"}


async def test_apply_without_force_names_the_conflicts(kube: kr8s.asyncio.Api) -> None:
    await context(kube, "first").apply(await configmap(kube, "contested", data={"k": "1"}))
    with pytest.raises(ConflictError) as raised:
        await context(kube, "second").apply(
            await configmap(kube, "contested", data={"k": "2"}), force=False
        )
    assert raised.value.field_conflicts == [('"first"', ".data.k")]
    assert 'conflict with "first": .data.k' in str(raised.value)


async def test_apply_status(kube: kr8s.asyncio.Api) -> None:
    raw = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "status-apply", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    ctx = context(kube)
    deployment = await Deployment(raw, api=kube)
    await ctx.apply(deployment)
    deployment.raw["status"] = {"observedGeneration": 1, "replicas": 0}
    await ctx.apply_status(deployment)
    assert deployment.raw["status"]["observedGeneration"] == 1
    entries = {
        (e["manager"], e.get("subresource", ""))
        for e in deployment.raw["metadata"]["managedFields"]
    }
    assert ("tester", "status") in entries


async def test_create_or_patch(kube: kr8s.asyncio.Api) -> None:
    ctx = context(kube)
    owner = await configmap(kube, "cop-owner")
    await owner.create()
    first = await configmap(kube, "cop-first")
    await first.create()  # an owner that exists: the garbage collector keeps the child
    other = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "cop-first",
        "uid": first.raw["metadata"]["uid"],
    }
    cm = await configmap(kube, "cop", data={"a": "1"})
    cm.raw["metadata"]["ownerReferences"] = [other]
    assert await ctx.create_or_patch(cm) == "created"
    cm = await configmap(kube, "cop", data={"a": "1"})
    set_controller_reference(owner, cm)
    assert await ctx.create_or_patch(cm) == "updated"
    assert [r["uid"] for r in cm.raw["metadata"]["ownerReferences"]] == [
        first.raw["metadata"]["uid"],
        owner.raw["metadata"]["uid"],
    ]  # merged by uid, the other owner's reference kept
    assert await ctx.create_or_patch(cm) == "unchanged"

    def drop_a(obj: Any) -> None:
        obj.raw["data"].pop("a")
        obj.raw["data"]["b"] = "2"

    target = await configmap(kube, "cop")
    assert await ctx.create_or_patch(target, drop_a) == "updated"
    assert target.raw["data"] == {"b": "2"}


def test_holds() -> None:
    assert holds({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert holds({"l": [{"n": "x"}]}, {"l": [{"n": "x", "default": True}]})
    assert not holds({"l": [{"n": "x"}]}, {"l": [{"n": "x"}, {"n": "y"}]})
    assert not holds({"cpu": "1000m"}, {"cpu": "1"})  # no quantity normalisation: send
    assert not holds({"m": {}}, {})  # an empty map the server dropped: send
    assert not holds({"flag": True}, {"flag": 1})


def test_applied_intents_are_bounded_and_forgotten_with_the_child() -> None:
    intents = AppliedIntents(limit=2)
    answer = {"metadata": {"resourceVersion": "7"}}
    a = ("apps/v1", "Deployment", "ns", "a", "ctl")
    intents.remember(a, b"d", answer)
    intents.remember(("apps/v1", "Deployment", "ns", "a", "ctl/status"), b"s", answer)
    assert len(intents) == 2
    child = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"namespace": "ns", "name": "a"},
    }
    assert intents.unchanged(a, b"d", {"metadata": {"resourceVersion": "7"}})
    assert not intents.unchanged(a, b"other", {"metadata": {"resourceVersion": "7"}})
    intents.forget_object(child)  # every field manager's intent for the deleted child
    assert len(intents) == 0 and not intents.unchanged(a, b"d", answer)
    for name in ("b", "c", "d"):
        intents.remember(("v1", "ConfigMap", "ns", name, "ctl"), b"d", answer)
    assert len(intents) == 2  # the least recently applied child went first
    assert not intents.unchanged(("v1", "ConfigMap", "ns", "b", "ctl"), b"d", answer)


async def test_create_or_patch_reads_the_cache(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A watched kind is read from the cache: an unchanged object costs no request."""
    ctx = context(kube)
    cm = await configmap(kube, "cop-cached", data={"a": "1"})
    assert await ctx.create_or_patch(cm) == "created"
    writer_of(ctx).put(cm.raw)
    apiserver.requests.clear()
    assert await ctx.create_or_patch(await configmap(kube, "cop-cached", data={"a": "1"})) == (
        "unchanged"
    )

    def status_only(obj: Any) -> None:
        obj.raw["status"] = {"x": "y"}  # not written by create_or_patch

    assert await ctx.create_or_patch(await configmap(kube, "cop-cached"), status_only) == (
        "unchanged"
    )
    assert list(apiserver.requests) == []
    assert await ctx.create_or_patch(await configmap(kube, "cop-cached", data={"a": "2"})) == (
        "updated"
    )
    assert [r.verb for r in apiserver.requests] == ["patch"]


@pytest.mark.parametrize("given", ["classes", "names"])
async def test_a_kind_given_by_name_is_the_cache_of_its_kr8s_class(
    kube: kr8s.asyncio.Api, apiserver: APIServer, given: str
) -> None:
    """``Controller("ConfigMap").owns("Secret")`` (kind strings, resolved by discovery) caches
    the same kinds as ``Controller(ConfigMap).owns(Secret)``: ``ctx.apply`` of an unchanged
    Secret child sends nothing (it sent a GET and a PATCH at every reconcile: the cache was
    looked up by the class's identity) and ``ctx.get(name, kind=Secret)`` reads the cache
    (it raised KeyError); a kind not watched is a KeyError naming it and what is watched."""
    from kr8s.asyncio.objects import Pod, Secret

    from reconcile_kit import Action, Controller
    from reconcile_kit.testing import run_until

    primary, child = (ConfigMap, Secret) if given == "classes" else ("ConfigMap", "Secret")
    seen: list[Any] = []
    errors: list[str] = []

    async def reconcile(cm: Any, ctx: Context) -> Action:
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": cm.name, "namespace": cm.namespace},
            "stringData": {"k": "v"},
        }
        set_controller_reference(cm, secret)
        await ctx.apply(secret)
        seen.append((ctx.get(cm.name, kind=Secret), ctx.get(cm.name, kind=ConfigMap)))
        try:
            ctx.get(cm.name, kind=Pod)
        except KeyError as error:
            errors.append(error.args[0])
        return Action.requeue(0.01)

    await (await configmap(kube, "owner")).create()
    ctrl = Controller(primary, api=kube, namespace="default").owns(child)
    assert await run_until(ctrl, reconcile, lambda: len(seen) >= 5, timeout=10)
    assert ctrl.stats.errors == 0
    assert [r.verb for r in apiserver.requests.filter(resource="secrets", verb="patch")] == [
        "patch"
    ]
    assert all(secret is not None and cm is not None for secret, cm in seen[1:])
    assert errors[0] == (
        "controller configmap does not watch Pod: its caches hold ConfigMap, Secret; "
        "owns() or watches() a kind to read it from the cache"
    )


async def test_a_dict_of_a_kind_or_version_not_served_is_refused_naming_it(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A dict whose apiVersion the server does not serve for its kind (``v2`` of the core
    group's ConfigMap was written as v1 without a word) or whose kind it does not serve at
    all: a ValueError naming the object, nothing sent."""
    ctx = context(kube)

    def child(api_version: str, kind: str) -> dict[str, Any]:
        meta = {"name": "c", "namespace": "default"}
        return {"apiVersion": api_version, "kind": kind, "metadata": meta}

    with pytest.raises(
        ValueError,
        match=r"^ConfigMap default/c: apiVersion 'v2' of kind ConfigMap is not served by the "
        r"API server \(it serves v1\)$",
    ):
        await ctx.apply(child("v2", "ConfigMap"))
    with pytest.raises(ValueError, match=r"^ConfigMap default/c: apiVersion 'v2'"):
        await ctx.create_or_patch(child("v2", "ConfigMap"))
    with pytest.raises(
        ValueError, match=r"^Unserved default/c: kind 'Unserved.nowhere.example.com/v1' is"
    ):  # a kind no test registers a kr8s class for (kr8s's registry is the process's)
        await ctx.apply(child("nowhere.example.com/v1", "Unserved"))
    assert not [r for r in apiserver.requests if r.verb in ("create", "patch", "update")]


async def test_a_write_of_something_else_than_an_object_names_what_it_got(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A str, None, a list, a kr8s class, an un-awaited coroutine given to each ctx write: a
    TypeError naming what it got and what the helper takes (``AttributeError: 'str' object
    has no attribute 'raw'`` before, ``'namespaced'`` from create_or_patch); a status that
    is not a dict given to patch_status: a TypeError naming the object. Nothing sent."""
    ctx = context(kube)
    writes: dict[str, Any] = {
        "apply": ctx.apply,
        "apply_status": ctx.apply_status,
        "create_or_patch": ctx.create_or_patch,
        "patch_status": lambda o: ctx.patch_status(o, {"phase": "Ready"}),
        "update_status": ctx.update_status,
    }
    got = {
        "a str: 'some string'": lambda: "some string",
        "None": lambda: None,
        "a list: [1, 2]": lambda: [1, 2],
        "the class ConfigMap (pass an object of it)": lambda: ConfigMap,
        "an awaitable coroutine (await it first)": lambda: configmap(kube, "never"),
    }
    for helper, write in writes.items():
        for described, make in got.items():
            value = make()
            with pytest.raises(TypeError) as info:
                await write(value)
            if inspect.iscoroutine(value):
                value.close()
            assert str(info.value) == (
                f"ctx.{helper} takes a kr8s object, a typed model (a CustomResource) or a "
                f"dict with apiVersion and kind, not {described}"
            )
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "s", "namespace": "default"},
    }
    with pytest.raises(
        TypeError,
        match=r"^ConfigMap default/s: ctx.patch_status takes the status fields as a dict, "
        r"not a str: 'Ready'; a typed model's status: set obj.status",
    ):
        await ctx.patch_status(cm, cast(Any, "Ready"))
    assert not [r for r in apiserver.requests if r.verb in ("create", "patch", "update")]
