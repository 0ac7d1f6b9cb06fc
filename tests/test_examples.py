"""The example operators (examples/) against the embedded API server.

Each operator runs as it would in a cluster; the end state is checked by re-reading the
objects from the server. "Nothing is written when nothing changed" is checked on the
server's request log after a reconcile that had nothing to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap, Pod
from reconcile_kit.examples import configmap_generator as cmg
from reconcile_kit.examples import ippool
from reconcile_kit.examples.manager import CRD_PATHS, install_crds

from reconcile_kit import Action, Context, Controller
from reconcile_kit.cli.target import load_manager
from reconcile_kit.testing import APIServer, eventually

from .kubehttp import call

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

GENERATORS = "/apis/examples.reconcile-kit.io/v1/namespaces/default/configmapgenerators"
POOLS = "/apis/examples.reconcile-kit.io/v1/namespaces/default/ippools"
CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
HOLD = "examples.reconcile-kit.io/hold"
WRITES = ("POST", "PUT", "PATCH", "DELETE")
KUBECTL = shutil.which("kubectl")


# --- helpers ---------------------------------------------------------------------------------


@dataclass
class Run:
    """One finished reconcile: its key, why it ran, what the probe saw when it started."""

    name: str
    reasons: frozenset[str]
    saw: Any


class Recording:
    """Wraps a reconcile function, recording each run (``probe(obj, ctx)`` at its start)."""

    def __init__(
        self,
        reconcile: Callable[[Any, Context], Awaitable[Action | None]],
        probe: Callable[[Any, Context], Any] = lambda obj, ctx: None,
    ) -> None:
        self.reconcile = reconcile
        self.probe = probe
        self.runs: list[Run] = []

    async def __call__(self, obj: Any, ctx: Context) -> Action | None:
        saw = self.probe(obj, ctx)
        result = await self.reconcile(obj, ctx)
        name = getattr(obj, "name", None) or obj.metadata.name  # kr8s or typed object
        self.runs.append(Run(name, ctx.reasons, saw))
        return result


@contextlib.asynccontextmanager
async def running(ctrl: Controller, reconcile: Any) -> AsyncIterator[Controller]:
    """Run ``ctrl`` in a task for the block; shut it down afterwards."""
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        yield ctrl
    finally:
        await ctrl.shutdown(5)
        await asyncio.wait_for(task, 10)


async def until(
    ctrl: Controller, check: Callable[[], bool | Awaitable[bool]], timeout: float = 10.0
) -> None:
    """Await ``check()`` holding (checked now and after each of ``ctrl``'s reconciles)."""
    assert await ctrl.wait_reconciled(check, timeout), "not reached in time"


async def get(kube: kr8s.asyncio.Api, path: str) -> Any:
    status, body = await call(kube, "GET", path)
    assert status == 200, body
    return body


async def exists(kube: kr8s.asyncio.Api, path: str) -> bool:
    status, body = await call(kube, "GET", path)
    assert status in (200, 404), body
    return status == 200


async def post(kube: kr8s.asyncio.Api, path: str, body: dict[str, Any]) -> Any:
    status, created = await call(kube, "POST", path, body)
    assert status == 201, created
    return created


async def patch(kube: kr8s.asyncio.Api, path: str, body: dict[str, Any]) -> Any:
    status, patched = await call(kube, "PATCH", path, body, MERGE)
    assert status == 200, patched
    return patched


def condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == ctype), {})


def writes_since(apiserver: APIServer, mark: int) -> list[str]:
    return [f"{r.method} {r.path}" for r in apiserver.requests[mark:] if r.method in WRITES]


async def quiet(
    apiserver: APIServer,
    ctrl: Controller,
    recording: Recording,
    seen: Callable[[Run], bool],
    trigger: Awaitable[Any] | None = None,
) -> None:
    """After ``trigger``, await a reconcile finishing for which ``seen(run)`` holds, and
    assert that nothing was written from the trigger's end on."""
    first = len(recording.runs)
    if trigger is not None:
        await trigger
    mark = len(apiserver.requests)
    await until(ctrl, lambda: any(seen(run) for run in recording.runs[first:]))
    assert writes_since(apiserver, mark) == []


def generator(name: str, content: dict[str, str] | None = None) -> dict[str, Any]:
    spec = {"content": content} if content is not None else {}
    return {
        "apiVersion": "examples.reconcile-kit.io/v1",
        "kind": "ConfigMapGenerator",
        "metadata": {"name": name},
        "spec": spec,
    }


def pool(name: str, cidr: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "examples.reconcile-kit.io/v1",
        "kind": "IPPool",
        "metadata": {"name": name},
        "spec": {"cidr": cidr, **spec},
    }


def pod(
    name: str,
    pool_name: str | None = None,
    *,
    ip: str | None = None,
    finalizers: list[str] | None = None,
) -> dict[str, Any]:
    annotations = {}
    if pool_name is not None:
        annotations[ippool.POOL_ANNOTATION] = pool_name
    if ip is not None:
        annotations[ippool.IP_ANNOTATION] = ip
    meta: dict[str, Any] = {"name": name, "annotations": annotations}
    if finalizers:
        meta["finalizers"] = finalizers
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]},
    }


# --- ConfigMapGenerator ----------------------------------------------------------------------


async def generated(kube: kr8s.asyncio.Api, name: str, extra: dict[str, str] | None = None) -> bool:
    """The generator's ConfigMap holds exactly spec.content (and ``extra``, keys another
    writer owns) and the status says so."""
    gen = await get(kube, f"{GENERATORS}/{name}")
    status, cm = await call(kube, "GET", f"{CMS}/{name}")
    if status != 200:
        return False
    generation = gen["metadata"]["generation"]
    ready = condition(gen, "Ready")
    return (
        (cm.get("data") or {}) == {**(gen["spec"].get("content") or {}), **(extra or {})}
        and gen["status"].get("observedGeneration") == generation
        and ready.get("status") == "True"
        and ready.get("observedGeneration") == generation
        and not condition(gen, "Reconciling")
    )


async def test_configmap_generator_lifecycle(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await install_crds(kube, [cmg.CRD_PATH])
    ctrl = cmg.controller(kube)
    recording = Recording(cmg.reconcile)
    async with running(ctrl, recording):
        gen = await post(kube, GENERATORS, generator("app", {"a": "1", "b": "2"}))
        await until(ctrl, lambda: generated(kube, "app"))
        gen = await get(kube, f"{GENERATORS}/app")
        cm = await get(kube, f"{CMS}/app")
        assert cm["data"] == {"a": "1", "b": "2"}
        assert cm["metadata"]["labels"] == {cmg.GENERATOR_LABEL: "app"}
        assert cm["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "examples.reconcile-kit.io/v1",
                "kind": "ConfigMapGenerator",
                "name": "app",
                "uid": gen["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert gen["status"]["configMap"] == "app" and gen["status"]["keys"] == 2
        ready = condition(gen, "Ready")
        assert (ready["reason"], ready["message"]) == ("Reconciled", "ConfigMap app holds 2 key(s)")
        # kstatus: Reconciling=True went out while working on generation 1, then was dropped
        status_patches = [
            r.body
            for r in apiserver.requests.filter(
                verb="patch", resource="configmapgenerators", subresource="status"
            )
        ]
        assert any(
            c["type"] == "Reconciling" and c["status"] == "True"
            for body in status_patches
            for c in body["status"].get("conditions", [])
        )

        # a spec change: b removed, c added; the ConfigMap follows
        await patch(kube, f"{GENERATORS}/app", {"spec": {"content": {"b": None, "c": "3"}}})
        await until(ctrl, lambda: generated(kube, "app"))
        assert (await get(kube, f"{CMS}/app"))["data"] == {"a": "1", "c": "3"}
        gen = await get(kube, f"{GENERATORS}/app")
        assert gen["metadata"]["generation"] == gen["status"]["observedGeneration"] == 2

        # drift: a key the controller applies, edited by hand, is put back (a child event
        # reconciles the owner); a key another writer added is theirs (server-side apply)
        await patch(kube, f"{CMS}/app", {"data": {"a": "tampered", "extra": "x"}})
        await until(ctrl, lambda: generated(kube, "app", extra={"extra": "x"}))
        assert (await get(kube, f"{CMS}/app"))["data"] == {"a": "1", "c": "3", "extra": "x"}

        # the controller's status writes never retriggered it: only the create and the one
        # spec change passed the generation_changed predicate
        reasons = [run.reasons for run in recording.runs]
        assert sum("updated" in r for r in reasons) == 1
        assert set().union(*reasons) <= {"created", "updated", "child"}

        # deleting the generator: the garbage collector removes the ConfigMap
        status, _ = await call(kube, "DELETE", f"{GENERATORS}/app")
        assert status == 200
        assert ctrl.reflector is not None
        store = ctrl.reflector.store
        await until(ctrl, lambda: store.get("default", "app") is None)
    await apiserver.settled()
    assert not await exists(kube, f"{CMS}/app")


async def test_configmap_generator_writes_nothing_when_nothing_changed(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crds(kube, [cmg.CRD_PATH])
    ctrl = cmg.controller(kube, resync=0.2)

    def child_labels(obj: Any, ctx: Context) -> dict[str, str]:
        cached = ctx.get(obj.metadata.name, kind=ConfigMap) or {}
        return dict((cached.get("metadata") or {}).get("labels") or {})

    recording = Recording(cmg.reconcile, child_labels)
    async with running(ctrl, recording):
        await post(kube, GENERATORS, generator("one", {"k": "v"}))
        await post(kube, GENERATORS, generator("empty"))
        await until(ctrl, lambda: _both_generated(kube))

        # an unrelated label on the child: a reconcile, no write
        await quiet(
            apiserver,
            ctrl,
            recording,
            lambda run: run.name == "one" and run.saw.get("unrelated") == "yes",
            patch(kube, f"{CMS}/one", {"metadata": {"labels": {"unrelated": "yes"}}}),
        )
        # a periodic resync: a reconcile, no write (an empty content makes no empty data map)
        await quiet(
            apiserver, ctrl, recording, lambda run: "resync" in run.reasons and run.name == "empty"
        )
    assert (await get(kube, f"{CMS}/one"))["metadata"]["labels"]["unrelated"] == "yes"


async def _both_generated(kube: kr8s.asyncio.Api) -> bool:
    return await all_generated(kube, ["one", "empty"])


async def all_generated(kube: kr8s.asyncio.Api, names: list[str]) -> bool:
    return all([await generated(kube, name) for name in names])


async def test_configmap_generator_leaves_a_configmap_owned_elsewhere(
    kube: kr8s.asyncio.Api, apiserver: APIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cmg, "RECHECK_OWNED_ELSEWHERE", 0.2)
    await install_crds(kube, [cmg.CRD_PATH])
    other = await post(kube, GENERATORS, generator("other"))
    await post(
        kube,
        CMS,
        {
            "metadata": {
                "name": "taken",
                "ownerReferences": [
                    {
                        "apiVersion": "examples.reconcile-kit.io/v1",
                        "kind": "ConfigMapGenerator",
                        "name": "other",
                        "uid": other["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "data": {"mine": "no"},
        },
    )
    await post(kube, GENERATORS, generator("taken", {"k": "v"}))
    ctrl = cmg.controller(kube)

    async def stalled() -> bool:
        gen = await get(kube, f"{GENERATORS}/taken")
        return condition(gen, "Stalled").get("reason") == cmg.OWNED_ELSEWHERE

    async with running(ctrl, cmg.reconcile):
        await until(ctrl, stalled)
        gen = await get(kube, f"{GENERATORS}/taken")
        assert condition(gen, "Ready")["status"] == "False"
        assert (await get(kube, f"{CMS}/taken"))["data"] == {"mine": "no"}
        # once the squatter is gone, the generator takes over (at its next look)
        await call(kube, "DELETE", f"{CMS}/taken")
        await until(ctrl, lambda: generated(kube, "taken"))
        assert not condition(await get(kube, f"{GENERATORS}/taken"), "Stalled")


# --- IPPool ----------------------------------------------------------------------------------


async def pool_state(kube: kr8s.asyncio.Api, name: str) -> tuple[dict[str, str], dict[str, Any]]:
    """``({ip: pod}, pool)`` as the server holds them."""
    obj = await get(kube, f"{POOLS}/{name}")
    allocations = (obj.get("status") or {}).get("allocations") or {}
    assert all(h["namespace"] == "default" for h in allocations.values())
    return {ip: h["pod"] for ip, h in allocations.items()}, obj


async def pod_addresses(kube: kr8s.asyncio.Api) -> dict[str, str]:
    """``{pod: ip annotation}`` of the default namespace's pods that have one."""
    pods = (await get(kube, PODS))["items"]
    return {
        p["metadata"]["name"]: p["metadata"]["annotations"][ippool.IP_ANNOTATION]
        for p in pods
        if ippool.IP_ANNOTATION in (p["metadata"].get("annotations") or {})
    }


def settled_pool(
    kube: kr8s.asyncio.Api,
    name: str,
    expected: dict[str, str],
    reason: str = "Reconciled",
    annotated: dict[str, str] | None = None,
) -> Callable[[], Awaitable[bool]]:
    """A check: the pool holds exactly ``expected``, Ready has ``reason`` for the current
    generation, and the live pods' annotations match (``annotated``, default: all)."""

    async def check() -> bool:
        allocations, obj = await pool_state(kube, name)
        ready = condition(obj, "Ready")
        generation = obj["metadata"]["generation"]
        wanted = {p: ip for ip, p in expected.items()} if annotated is None else annotated
        return (
            allocations == expected
            and ready.get("reason") == reason
            and ready.get("observedGeneration") == generation
            and obj["status"].get("observedGeneration") == generation
            and await pod_addresses(kube) == wanted
        )

    return check


async def test_ippool_allocates_releases_and_keeps_terminating_pods(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crds(kube, [ippool.CRD_PATH])
    await post(kube, POOLS, pool("lab", "10.20.0.0/29"))
    await post(kube, "/api/v1/namespaces", {"metadata": {"name": "other"}})
    await post(kube, "/api/v1/namespaces/other/pods", pod("elsewhere", "lab"))
    await post(kube, PODS, pod("bystander"))
    await post(kube, PODS, pod("a", "lab", finalizers=[HOLD]))
    for name in ("b", "c"):
        await post(kube, PODS, pod(name, "lab"))
    ctrl = ippool.controller(kube)
    async with running(ctrl, ippool.reconcile):
        # the lowest free addresses, never the network address 10.20.0.0
        await until(
            ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a", "10.20.0.2": "b", "10.20.0.3": "c"})
        )
        _, obj = await pool_state(kube, "lab")
        assert (obj["status"]["allocated"], obj["status"]["free"]) == (3, 3)
        assert condition(obj, "Ready")["message"] == "3 of 6 addresses allocated"
        other = await get(kube, "/api/v1/namespaces/other/pods/elsewhere")
        assert ippool.IP_ANNOTATION not in other["metadata"]["annotations"]

        # a deleted pod's address is released; the next pod gets the lowest free one
        await call(kube, "DELETE", f"{PODS}/b")
        await until(
            ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a", "10.20.0.3": "c"}, "OrphansCleaned")
        )
        await post(kube, PODS, pod("d", "lab"))
        await until(
            ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a", "10.20.0.2": "d", "10.20.0.3": "c"})
        )

        # a (finalizer) is terminating, c is gone: a keeps its address, c's is released
        await call(kube, "DELETE", f"{PODS}/a")
        assert (await get(kube, f"{PODS}/a"))["metadata"].get("deletionTimestamp")
        await call(kube, "DELETE", f"{PODS}/c")
        await until(
            ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a", "10.20.0.2": "d"}, "OrphansCleaned")
        )

        # releaseTerminating (a spec change, generation 2) frees the terminating pod's
        await patch(kube, f"{POOLS}/lab", {"spec": {"releaseTerminating": True}})
        await until(
            ctrl,
            settled_pool(
                kube,
                "lab",
                {"10.20.0.2": "d"},
                "OrphansCleaned",
                annotated={"a": "10.20.0.1", "d": "10.20.0.2"},
            ),
        )
        _, obj = await pool_state(kube, "lab")
        assert obj["status"]["observedGeneration"] == 2
        assert (
            condition(obj, "Ready")["message"]
            == "released 10.20.0.1 (a); 1 of 6 addresses allocated"
        )
        await patch(kube, f"{PODS}/a", {"metadata": {"finalizers": None}})
        await until(ctrl, settled_pool(kube, "lab", {"10.20.0.2": "d"}, "OrphansCleaned"))
        assert not await exists(kube, f"{PODS}/a")


async def test_ippool_full(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await install_crds(kube, [ippool.CRD_PATH])
    await post(kube, POOLS, pool("tiny", "10.30.0.0/30"))  # two hosts: .1 and .2
    for name in ("p1", "p2", "p3"):
        await post(kube, PODS, pod(name, "tiny"))
    ctrl = ippool.controller(kube)
    async with running(ctrl, ippool.reconcile):
        await until(
            ctrl, settled_pool(kube, "tiny", {"10.30.0.1": "p1", "10.30.0.2": "p2"}, "PoolFull")
        )
        _, obj = await pool_state(kube, "tiny")
        ready, stalled = condition(obj, "Ready"), condition(obj, "Stalled")
        assert ready["status"] == "False" and stalled["status"] == "True"
        assert ready["message"] == "no address left for p3; 2 of 2 addresses allocated"
        assert stalled["reason"] == "PoolFull"
        assert (obj["status"]["allocated"], obj["status"]["free"]) == (2, 0)

        await call(kube, "DELETE", f"{PODS}/p1")
        await until(
            ctrl,
            settled_pool(kube, "tiny", {"10.30.0.1": "p3", "10.30.0.2": "p2"}, "OrphansCleaned"),
        )
        _, obj = await pool_state(kube, "tiny")
        assert condition(obj, "Ready")["status"] == "True" and not condition(obj, "Stalled")


async def test_ippool_recovers_addresses_from_pod_annotations(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A pool whose status was lost gives pods back the addresses they carry."""
    await install_crds(kube, [ippool.CRD_PATH])
    await post(kube, PODS, pod("a", "lab"))
    await post(kube, PODS, pod("b", "lab", ip="10.20.0.5"))
    await post(kube, PODS, pod("c", "lab", ip="192.168.1.1"))  # not in the pool: replaced
    await post(kube, POOLS, pool("lab", "10.20.0.0/24"))
    ctrl = ippool.controller(kube)
    async with running(ctrl, ippool.reconcile):
        await until(
            ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a", "10.20.0.5": "b", "10.20.0.2": "c"})
        )


async def test_ippool_invalid_cidr_stalls(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await install_crds(kube, [ippool.CRD_PATH])
    await post(kube, POOLS, pool("bad", "10.20.0.1/24"))  # host bits set
    ctrl = ippool.controller(kube)

    async def stalled() -> bool:
        _, obj = await pool_state(kube, "bad")
        return condition(obj, "Stalled").get("reason") == "InvalidCIDR"

    async with running(ctrl, ippool.reconcile):
        await until(ctrl, stalled)
        _, obj = await pool_state(kube, "bad")
        assert condition(obj, "Ready")["status"] == "False"


def test_ippool_plan_never_hands_out_network_or_broadcast() -> None:
    network = ipaddress.IPv4Network("10.0.0.0/29")
    pods = [{"metadata": {"name": f"p{i}", "namespace": "ns", "annotations": {}}} for i in range(8)]
    result = ippool.plan(network, {}, pods, release_terminating=False)
    assert sorted(result.allocations, key=ipaddress.IPv4Address) == [
        f"10.0.0.{i}" for i in range(1, 7)
    ]
    assert result.waiting == ["p6", "p7"]


async def test_ippool_writes_nothing_when_nothing_changed(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crds(kube, [ippool.CRD_PATH])
    await post(kube, POOLS, pool("lab", "10.20.0.0/24"))
    for name in ("a", "b"):
        await post(kube, PODS, pod(name, "lab"))
    ctrl = ippool.controller(kube, resync=0.2)

    def pod_labels(obj: Any, ctx: Context) -> dict[str, str]:
        cached = ctx.get("a", kind=Pod) or {}
        return dict((cached.get("metadata") or {}).get("labels") or {})

    recording = Recording(ippool.reconcile, pod_labels)
    async with running(ctrl, recording):
        await until(ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a", "10.20.0.2": "b"}))

        # an unrelated label on a member pod: a (mapped) reconcile, no write
        await quiet(
            apiserver,
            ctrl,
            recording,
            lambda run: run.saw.get("unrelated") == "yes",
            patch(kube, f"{PODS}/a", {"metadata": {"labels": {"unrelated": "yes"}}}),
        )
        # a periodic resync: a reconcile, no write
        await quiet(apiserver, ctrl, recording, lambda run: "resync" in run.reasons)


async def test_ippool_reconciles_a_typed_pool_read_fresh(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """The reconcile gets a typed IPPool and re-reads the pool (one GET) before planning;
    at steady state that GET is all it sends."""
    await install_crds(kube, [ippool.CRD_PATH])
    await post(kube, POOLS, pool("lab", "10.20.0.0/24"))
    await post(kube, PODS, pod("a", "lab"))
    ctrl = ippool.controller(kube)

    def probe(obj: Any, ctx: Context) -> tuple[Any, str | None]:
        cached = ctx.get("a", kind=Pod) or {}
        return obj, ((cached.get("metadata") or {}).get("labels") or {}).get("unrelated")

    recording = Recording(ippool.reconcile, probe)
    async with running(ctrl, recording):
        await until(ctrl, settled_pool(kube, "lab", {"10.20.0.1": "a"}))
        mark = len(apiserver.requests)
        await patch(kube, f"{PODS}/a", {"metadata": {"labels": {"unrelated": "yes"}}})
        await until(ctrl, lambda: any(run.saw[1] == "yes" for run in recording.runs))
        sent = [
            (r.method, r.path)
            for r in apiserver.requests[mark:]
            if r.verb not in ("list", "watch") and r.path != f"{PODS}/a"
        ]
    assert sent and set(sent) == {("GET", f"{POOLS}/lab")}
    typed = next(run.saw[0] for run in recording.runs if run.saw[1] == "yes")
    assert isinstance(typed, ippool.IPPool)
    assert (typed.spec.cidr, typed.spec.release_terminating) == ("10.20.0.0/24", False)
    _, obj = await pool_state(kube, "lab")
    status = ippool.IPPool.from_raw(obj).status
    assert status is not None and (status.allocated, status.free) == (1, 253)
    assert status.allocations == {"10.20.0.1": ippool.Allocation(pod="a", namespace="default")}


# --- examples/manager.py ---------------------------------------------------------------------


async def test_manager_installs_crds_and_runs_both_examples(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    mgr = await load_manager(f"{EXAMPLES / 'manager.py'}:manager")
    mgr.api = await apiserver.api()
    mgr.health_port = mgr.metrics_port = 0
    mgr.metrics_secure = False  # plain HTTP: this test reads the numbers, not the access
    mgr.host = "127.0.0.1"
    assert mgr.leader_election is not None
    task = asyncio.create_task(mgr.run())
    try:

        def started() -> bool:
            if task.done():
                task.result()  # the manager failed: raise its error
            return len(mgr.ports) == 3 and all(c.running for c in mgr.controllers) and mgr.ready()

        await eventually(started, 10, interval=0.01)
        crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        for name in ("configmapgenerators", "ippools"):
            crd = await get(kube, f"{crds}/{name}.examples.reconcile-kit.io")
            assert condition(crd, "Established")["status"] == "True"
        lease = await get(
            kube, "/apis/coordination.k8s.io/v1/namespaces/default/leases/reconcile-kit-examples"
        )
        assert lease["spec"]["holderIdentity"] == mgr.leader_election.identity

        await post(kube, GENERATORS, generator("settings", {"mode": "demo"}))
        await post(kube, POOLS, pool("lab", "10.20.0.0/29"))
        await post(kube, PODS, pod("web", "lab"))
        generators, pools = mgr.controllers
        await until(generators, lambda: generated(kube, "settings"))
        await until(pools, settled_pool(kube, "lab", {"10.20.0.1": "web"}))
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{mgr.ports['/readyz']}/readyz"
            async with session.get(url) as response:
                assert response.status == 200
            url = f"http://127.0.0.1:{mgr.ports['/metrics']}/metrics"
            async with session.get(url) as response:
                metrics = await response.text()
        for name in ("configmapgenerator", "ippool"):
            assert (
                f'controller_runtime_reconcile_total{{controller="{name}",result="success"}}'
                in metrics
            )
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 10)


# --- kubectl apply -f examples/ --------------------------------------------------------------


async def kubectl(server: APIServer, tmp: Path, *args: str) -> str:
    """Run kubectl (fresh cache dir) as an asyncio subprocess; its stdout, or fail."""
    assert KUBECTL is not None
    cache = tmp / f"kubectl-cache-{len(list(tmp.iterdir()))}"
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--cache-dir",
        str(cache),
        *args,
        env={**os.environ, "KUBECONFIG": server.kubeconfig},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"kubectl {' '.join(args)} did not finish in time")
    assert proc.returncode == 0, f"kubectl {' '.join(args)} failed: {err.decode()}"
    return out.decode()


def table(text: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines() if line.strip()]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
async def test_kubectl_applies_the_example_yaml(
    kube: kr8s.asyncio.Api, apiserver: APIServer, tmp_path: Path
) -> None:
    crd_args = [arg for path in CRD_PATHS for arg in ("-f", str(path))]
    out = await kubectl(apiserver, tmp_path, "apply", *crd_args)
    assert out.count("created") == 2
    await install_crds(kube)  # both exist: skipped; waits until Established
    out = await kubectl(apiserver, tmp_path, "apply", "-f", str(EXAMPLES / "samples"))
    assert "ippool.examples.reconcile-kit.io/lab created" in out
    assert "configmapgenerator.examples.reconcile-kit.io/web-settings created" in out

    generators, pools = cmg.controller(kube), ippool.controller(kube)
    names = [g["metadata"]["name"] for g in (await get(kube, GENERATORS))["items"]]
    assert sorted(names) == ["empty", "nginx-conf", "web-settings"]
    lab = {
        "10.20.0.1": "lab-cache",
        "10.20.0.2": "lab-db",
        "10.20.0.3": "lab-web",
        "10.20.0.4": "lab-worker",
    }
    async with running(generators, cmg.reconcile), running(pools, ippool.reconcile):
        await until(pools, settled_pool(kube, "lab", lab))
        await until(generators, lambda: all_generated(kube, names))

    rows = table(await kubectl(apiserver, tmp_path, "get", "configmapgenerators"))
    assert rows[0] == ["NAME", "CONFIGMAP", "KEYS", "READY", "REASON", "AGE"]
    assert sorted(r[:5] for r in rows[1:]) == [
        ["empty", "empty", "0", "True", "Reconciled"],
        ["nginx-conf", "nginx-conf", "1", "True", "Reconciled"],
        ["web-settings", "web-settings", "3", "True", "Reconciled"],
    ]
    rows = table(await kubectl(apiserver, tmp_path, "get", "ippools"))
    assert rows[0] == ["NAME", "CIDR", "ALLOCATED", "FREE", "READY", "REASON", "AGE"]
    assert rows[1][:6] == ["lab", "10.20.0.0/29", "4", "2", "True", "Reconciled"]

    # applying the samples again changes nothing (status is the controller's, not kubectl's)
    out = await kubectl(apiserver, tmp_path, "apply", "-f", str(EXAMPLES / "samples"))
    assert "configured" not in out and "ippool.examples.reconcile-kit.io/lab unchanged" in out
    allocations, _ = await pool_state(kube, "lab")
    assert allocations == lab


# --- error paths, by injecting the fault (issue 29) --------------------------------------------


async def test_ippool_pool_gone_at_the_reread_is_no_error(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """The pool is gone when the reconcile re-reads it (an injected 404 on that GET):
    ``reread`` answers None, the reconcile ends without error and writes nothing."""
    await install_crds(kube, [ippool.CRD_PATH])
    apiserver.faults.fail(404, verb="get", resource="ippools", name="gone", times=1)
    results: list[Any] = []

    async def recorded(obj: Any, ctx: Context) -> Any:
        result = await ippool.reconcile(obj, ctx)
        results.append(result)
        return result

    ctrl = ippool.controller(kube)
    async with running(ctrl, recorded):
        mark = len(apiserver.requests)
        await post(kube, POOLS, pool("gone", "10.20.0.0/29"))
        await until(ctrl, lambda: bool(results))
        assert results[0] is None and ctrl.stats.errors == 0
        assert writes_since(apiserver, mark) == [f"POST {POOLS}"]


async def test_configmap_generator_refused_child_is_retried_until_it_passes(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A child write the server refuses (an injected 403 on the ConfigMap's apply) fails the
    reconcile with ForbiddenError (docs/errors.md: a refusal is the APIError of its status),
    which the controller retries; the retry passes and the generator gets Ready."""
    await install_crds(kube, [cmg.CRD_PATH])
    apiserver.faults.fail(403, verb="patch", resource="configmaps", times=1)
    failures: list[BaseException] = []

    async def recorded(obj: Any, ctx: Context) -> Any:
        try:
            return await cmg.reconcile(obj, ctx)
        except Exception as error:
            failures.append(error)
            raise

    ctrl = cmg.controller(kube)
    async with running(ctrl, recorded):
        await post(kube, GENERATORS, generator("g1", {"a": "1"}))

        async def ready() -> bool:
            return condition(await get(kube, f"{GENERATORS}/g1"), "Ready").get("status") == "True"

        await until(ctrl, ready)
    assert [type(f).__name__ for f in failures] == ["ForbiddenError"]
    assert "ConfigMap default/g1" in str(failures[0])
