"""PatchHelper against the embedded API server, asserting on its request log."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import kr8s
import orjson
import pytest
from kr8s.asyncio.objects import ConfigMap, Deployment, new_class

from reconcile_kit.client.errors import (
    ConditionConflictError,
    ConflictError,
    NotFoundError,
    PatchError,
)
from reconcile_kit.client.request import Target, send
from reconcile_kit.patch.helper import PatchHelper
from reconcile_kit.patch.snapshot import LazyBox, set_raw
from reconcile_kit.testing import APIServer

from ..crds import WIDGETS, deployment, install_crd, widget, widget_crd
from ..kubehttp import call

MERGE = "application/merge-patch+json"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
Widget = new_class("Widget", "example.com/v1", namespaced=True)


@pytest.fixture(autouse=True, params=["kr8s-box", "cached"])
def built_as(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every test runs on objects as kr8s builds them (a Box converted up front) and as a
    controller builds them from its cache (a LazyBox sharing the cached document). In the
    second mode the cached documents must come out of the test unmodified."""
    sources: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if request.param == "cached":
        original = PatchHelper.__init__

        def from_cache(self: PatchHelper, obj: Any, **options: Any) -> None:
            if not isinstance(obj.raw, LazyBox):
                document = orjson.loads(orjson.dumps(obj.raw))
                sources.append((document, copy.deepcopy(document)))
                set_raw(obj, document)
            original(self, obj, **options)

        monkeypatch.setattr(PatchHelper, "__init__", from_cache)
    yield request.param
    for document, pristine in sources:
        assert document == pristine, "a cached document was mutated"


async def make_deployment(kube: kr8s.asyncio.Api) -> Deployment:
    obj = await Deployment(deployment(), api=kube)
    await obj.create()
    return obj


def writes(server: APIServer) -> list[tuple[str, str, str]]:
    return [(r.verb, r.subresource, r.content_type) for r in server.requests.writes()]


def condition(ctype: str, status: str = "True", reason: str = "Done") -> dict[str, Any]:
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


async def test_unchanged_object_sends_nothing(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    obj = await make_deployment(kube)
    apiserver.requests.clear()
    async with PatchHelper(obj) as helper:
        assert not helper.has_changes()
    assert list(apiserver.requests) == []


async def test_spec_and_label_change_is_one_merge_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    apiserver.requests.clear()
    async with PatchHelper(obj) as helper:
        obj.raw["spec"]["replicas"] = 3
        obj.raw["metadata"]["labels"] = {"team": "a"}
        assert helper.has_changes()
        assert "replicas" in helper.changes()
    assert writes(apiserver) == [("patch", "", MERGE)]
    assert apiserver.requests[0].body == {
        "metadata": {"labels": {"team": "a"}},
        "spec": {"replicas": 3},
    }
    assert obj.raw["metadata"]["generation"] == 2  # the server's answer is the new state


async def test_status_change_is_one_status_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    apiserver.requests.clear()
    async with PatchHelper(obj):
        obj.raw["status"]["replicas"] = 2
    assert writes(apiserver) == [("patch", "status", MERGE)]
    assert apiserver.requests.writes()[0].body == {"status": {"replicas": 2}}
    _, stored = await call(kube, "GET", f"{DEPLOY}/web")
    assert stored["status"]["replicas"] == 2


async def test_both_changes_two_patches_and_status_survives(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    apiserver.requests.clear()
    helper = PatchHelper(obj)
    obj.raw["spec"]["replicas"] = 4
    obj.raw["status"]["replicas"] = 4
    await helper.patch()
    assert writes(apiserver) == [("patch", "", MERGE), ("patch", "status", MERGE)]
    assert obj.raw["status"]["replicas"] == 4 and obj.raw["spec"]["replicas"] == 4
    assert obj.raw["metadata"]["resourceVersion"] == str(apiserver.cluster.store.rv)
    apiserver.requests.clear()
    await helper.patch()  # the helper re-snapshots: nothing more to send
    assert list(apiserver.requests) == []


async def test_kind_without_status_subresource_sends_status_in_main_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crd(kube, widget_crd(status=False, scale=False))
    await call(kube, "POST", WIDGETS, widget())
    obj = await Widget.get("w1", namespace="default", api=kube)
    apiserver.requests.clear()
    async with PatchHelper(obj):
        obj.raw["status"] = {"ready": True}
        obj.raw["spec"]["size"] = 2
    assert writes(apiserver) == [("patch", "", MERGE)]
    assert apiserver.requests.writes()[0].body == {"spec": {"size": 2}, "status": {"ready": True}}


async def test_custom_resource_with_status_subresource(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crd(kube, widget_crd())
    await call(kube, "POST", WIDGETS, widget())
    obj = await Widget.get("w1", namespace="default", api=kube)
    apiserver.requests.clear()
    async with PatchHelper(obj, observed_generation=True):
        obj.raw["spec"]["size"] = 5
        obj.raw["status"] = {"ready": True}
    assert writes(apiserver) == [("patch", "", MERGE), ("patch", "status", MERGE)]
    _, stored = await call(kube, "GET", f"{WIDGETS}/w1")
    assert stored["metadata"]["generation"] == 2
    assert stored["status"] == {"ready": True, "observedGeneration": 2}


async def test_concurrent_writers_changes_survive(kube: kr8s.asyncio.Api) -> None:
    obj = await make_deployment(kube)
    async with PatchHelper(obj):
        obj.raw["spec"]["replicas"] = 3
        obj.raw["metadata"].setdefault("labels", {})["mine"] = "1"
        obj.raw["status"]["replicas"] = 3
        # another writer changes other fields between the snapshot and the patch
        await call(
            kube,
            "PATCH",
            f"{DEPLOY}/web",
            {"metadata": {"labels": {"theirs": "1"}}, "spec": {"minReadySeconds": 7}},
            MERGE,
        )
        await call(
            kube,
            "PATCH",
            f"{DEPLOY}/web/status",
            {"status": {"replicas": 1, "readyReplicas": 1}},
            MERGE,
        )
    _, stored = await call(kube, "GET", f"{DEPLOY}/web")
    assert stored["metadata"]["labels"] == {"theirs": "1", "mine": "1"}
    assert stored["spec"]["minReadySeconds"] == 7 and stored["spec"]["replicas"] == 3
    assert stored["status"]["readyReplicas"] == 1 and stored["status"]["replicas"] == 3


async def test_removed_keys_are_nulls(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    cm = await ConfigMap(
        {"metadata": {"name": "c", "labels": {"a": "1", "b": "2"}}, "data": {"x": "1", "y": "2"}},
        api=kube,
    )
    await cm.create()
    apiserver.requests.clear()
    async with PatchHelper(cm):
        del cm.raw["metadata"]["labels"]["a"]
        del cm.raw["data"]["y"]
    assert apiserver.requests.writes()[0].body == {
        "metadata": {"labels": {"a": None}},
        "data": {"y": None},
    }
    assert cm.raw["data"] == {"x": "1"}


async def test_explicit_null_falls_back_to_json_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install_crd(kube, widget_crd())
    await call(kube, "POST", WIDGETS, widget(extra={"keep": 1}))
    obj = await Widget.get("w1", namespace="default", api=kube)
    apiserver.requests.clear()
    async with PatchHelper(obj):
        obj.raw["spec"]["extra"]["nothing"] = None
    [request] = apiserver.requests.writes()
    assert request.content_type == "application/json-patch+json"
    _, stored = await call(kube, "GET", f"{WIDGETS}/w1")
    assert stored["spec"]["extra"] == {"keep": 1, "nothing": None}


async def test_optimistic_lock_conflict(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    obj = await make_deployment(kube)
    helper = PatchHelper(obj, optimistic_lock=True)
    obj.raw["spec"]["replicas"] = 2
    await call(kube, "PATCH", f"{DEPLOY}/web", {"metadata": {"labels": {"x": "y"}}}, MERGE)
    apiserver.requests.clear()
    with pytest.raises(ConflictError) as caught:
        await helper.patch()
    assert (caught.value.kind, caught.value.namespace, caught.value.name) == (
        "Deployment",
        "default",
        "web",
    )
    assert apiserver.requests.count(verb="patch") == 1  # not retried
    assert apiserver.requests[0].body["metadata"]["resourceVersion"]


async def test_finalizer_guard_under_concurrent_write(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await ConfigMap({"metadata": {"name": "c", "finalizers": ["a.io/one"]}}, api=kube)
    await cm.create()
    async with PatchHelper(cm):
        cm.raw["metadata"]["finalizers"].append("a.io/mine")
        cm.raw["metadata"]["finalizers"].remove("a.io/one")
        await call(
            kube,
            "PATCH",
            "/api/v1/namespaces/default/configmaps/c",
            {"metadata": {"finalizers": ["a.io/one", "a.io/theirs"]}},
            MERGE,
        )
        apiserver.requests.clear()
    assert [(r.verb, r.status) for r in apiserver.requests] == [
        ("patch", 409),
        ("get", 200),
        ("patch", 200),
    ]
    _, stored = await call(kube, "GET", "/api/v1/namespaces/default/configmaps/c")
    assert stored["metadata"]["finalizers"] == ["a.io/theirs", "a.io/mine"]


async def test_owner_reference_guard_under_concurrent_write(kube: kr8s.asyncio.Api) -> None:
    cm = await ConfigMap({"metadata": {"name": "c"}}, api=kube)
    await cm.create()
    uids = []
    for owner in ("o1", "o2"):
        _, created = await call(
            kube, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": owner}}
        )
        uids.append(created["metadata"]["uid"])
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o1", "uid": uids[0]}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o2", "uid": uids[1]}
    async with PatchHelper(cm):
        cm.raw["metadata"]["ownerReferences"] = [ref]
        await call(
            kube,
            "PATCH",
            "/api/v1/namespaces/default/configmaps/c",
            {"metadata": {"ownerReferences": [other]}},
            MERGE,
        )
    _, stored = await call(kube, "GET", "/api/v1/namespaces/default/configmaps/c")
    assert [r["uid"] for r in stored["metadata"]["ownerReferences"]] == [uids[1], uids[0]]


async def test_conditions_three_way_merge(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    obj = await make_deployment(kube)
    await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web/status",
        {"status": {"conditions": [condition("Ready", "False"), condition("Synced")]}},
        MERGE,
    )
    await obj.refresh()
    async with PatchHelper(obj):
        obj.raw["status"]["conditions"][0] = condition("Ready", "True")
        obj.raw["status"]["conditions"].append(condition("Mine"))
        # meanwhile another controller changes a different condition and adds one
        await call(
            kube,
            "PATCH",
            f"{DEPLOY}/web/status",
            {
                "status": {
                    "conditions": [
                        condition("Ready", "False"),
                        condition("Synced", "False"),
                        condition("Theirs"),
                    ]
                }
            },
            MERGE,
        )
        apiserver.requests.clear()
    served = [r for r in apiserver.requests if r.verb]  # not the discovery request
    # the snapshot was stale: its precondition fails, then a fresh GET and a re-based write
    assert [(r.verb, r.subresource, r.status) for r in served] == [
        ("patch", "status", 409),
        ("get", "", 200),
        ("patch", "status", 200),
    ]
    assert served[2].body["metadata"]["resourceVersion"]
    _, stored = await call(kube, "GET", f"{DEPLOY}/web")
    got = [(c["type"], c["status"]) for c in stored["status"]["conditions"]]
    assert got == [("Ready", "True"), ("Synced", "False"), ("Theirs", "True"), ("Mine", "True")]


async def test_condition_conflict_unless_owned(kube: kr8s.asyncio.Api) -> None:
    obj = await make_deployment(kube)
    await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web/status",
        {"status": {"conditions": [condition("Ready", "Unknown")]}},
        MERGE,
    )
    await obj.refresh()

    async def race(helper: PatchHelper) -> None:
        obj.raw["status"]["conditions"] = [condition("Ready", "True")]
        await call(
            kube,
            "PATCH",
            f"{DEPLOY}/web/status",
            {"status": {"conditions": [condition("Ready", "False")]}},
            MERGE,
        )
        await helper.patch()

    with pytest.raises(ConditionConflictError, match=r"conditions\[type=Ready\]"):
        await race(PatchHelper(obj))
    await obj.refresh()
    obj.raw["status"]["conditions"] = [condition("Ready", "Unknown")]
    await race(PatchHelper(obj, owned_conditions=["Ready"]))
    _, stored = await call(kube, "GET", f"{DEPLOY}/web")
    assert stored["status"]["conditions"][0]["status"] == "True"


async def test_conditions_write_retries_on_409(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    apiserver.faults.fail(409, verb="patch", subresource="status", times=3)
    async with PatchHelper(obj):
        obj.raw["status"]["conditions"] = [condition("Ready")]
    statuses = [r.status for r in apiserver.requests.filter(verb="patch", subresource="status")]
    assert statuses == [409, 409, 409, 200]
    assert apiserver.requests.count(verb="get", resource="deployments") == 3  # after each 409
    _, stored = await call(kube, "GET", f"{DEPLOY}/web")
    assert stored["status"]["conditions"][0]["type"] == "Ready"


async def test_conditions_give_up_after_five_retries(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    apiserver.faults.fail(409, verb="patch", subresource="status", times=None)
    with pytest.raises(ConflictError, match="after 5 retries"):
        async with PatchHelper(obj):
            obj.raw["status"]["conditions"] = [condition("Ready")]
    assert apiserver.requests.count(verb="patch", subresource="status") == 6


async def test_patch_on_error(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    obj = await make_deployment(kube)
    with pytest.raises(RuntimeError, match="boom"):
        async with PatchHelper(obj):
            obj.raw["spec"]["replicas"] = 2
            raise RuntimeError("boom")
    assert apiserver.requests.count(verb="patch") == 1
    with pytest.raises(RuntimeError, match="boom"):
        async with PatchHelper(obj, patch_on_error=False):
            obj.raw["spec"]["replicas"] = 5
            raise RuntimeError("boom")
    assert apiserver.requests.count(verb="patch") == 1


async def test_errors_name_object_and_field(kube: kr8s.asyncio.Api) -> None:
    obj = await make_deployment(kube)
    helper = PatchHelper(obj)
    obj.raw["spec"]["bad"] = object()
    with pytest.raises(PatchError, match=r"Deployment default/web: field spec\.bad is not JSON"):
        await helper.patch()
    del obj.raw["spec"]["bad"]
    obj.raw["metadata"]["name"] = "other"
    with pytest.raises(PatchError, match=r"Deployment default/web: metadata\.name changed"):
        await helper.patch()  # named as read, not by the name it was given


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
async def test_a_value_json_cannot_hold_is_refused_before_sending(
    kube: kr8s.asyncio.Api, apiserver: APIServer, value: float
) -> None:
    """orjson writes NaN and infinities as null, which a merge patch takes as "delete":
    refused before sending (PatchError naming the field), the object left as it was; the
    same for any body sent through the request layer (an apply, a create)."""
    cm = await ConfigMap({"metadata": {"name": "n"}, "data": {"a": "1", "b": "2"}}, api=kube)
    await cm.create()
    writes = len(apiserver.requests.writes())
    helper = PatchHelper(cm)
    cm.raw["data"]["a"] = value
    with pytest.raises(PatchError, match=r"ConfigMap default/n: field data\.a is NaN or infinite"):
        await helper.patch()
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "x": [value]}
    with pytest.raises(PatchError, match=r"ConfigMap default/m: field x\[0\] is NaN"):
        await send(
            kube,
            "POST",
            base="/api",
            namespace="default",
            url="configmaps",
            body=body,
            target=Target("ConfigMap", "default", "m"),
        )
    assert len(apiserver.requests.writes()) == writes
    _, stored = await call(kube, "GET", "/api/v1/namespaces/default/configmaps/n")
    assert stored["data"] == {"a": "1", "b": "2"}


async def test_404_ignored_only_when_deleting_without_finalizers(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await ConfigMap({"metadata": {"name": "c", "finalizers": ["a.io/x"]}}, api=kube)
    await cm.create()
    await call(kube, "DELETE", "/api/v1/namespaces/default/configmaps/c")
    await cm.refresh()
    async with PatchHelper(cm):
        cm.raw["metadata"]["finalizers"] = []  # the last finalizer: the object goes away
    status, _ = await call(kube, "GET", "/api/v1/namespaces/default/configmaps/c")
    assert status == 404
    gone = await ConfigMap(
        {"metadata": {"name": "gone", "namespace": "default", "resourceVersion": "1"}, "data": {}},
        api=kube,
    )
    with pytest.raises(
        NotFoundError, match=r'ConfigMap default/gone: PATCH .*: 404 NotFound: configmaps "gone"'
    ):
        async with PatchHelper(gone):
            gone.raw["data"]["k"] = "v"


async def test_optimistic_lock_covers_the_status_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    helper = PatchHelper(obj, optimistic_lock=True)
    obj.raw["status"]["replicas"] = 2
    status, _ = await call(
        kube, "PATCH", f"{DEPLOY}/web/status", {"status": {"observedGeneration": 1}}, MERGE
    )
    assert status == 200  # another writer changed the status since the snapshot
    apiserver.requests.clear()
    with pytest.raises(ConflictError):
        await helper.patch()
    [request] = apiserver.requests.writes()
    assert request.subresource == "status" and request.status == 409
    assert request.body["metadata"]["resourceVersion"] == obj.raw["metadata"]["resourceVersion"]
    fresh = await Deployment.get("web", namespace="default", api=kube)
    helper = PatchHelper(fresh, optimistic_lock=True)
    fresh.raw["spec"]["replicas"] = 3
    fresh.raw["status"]["replicas"] = 3
    await helper.patch()  # main then status, each with the resourceVersion it expects
    assert fresh.raw["spec"]["replicas"] == 3 and fresh.raw["status"]["replicas"] == 3


async def test_conditions_need_no_get_when_nobody_else_wrote(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    obj = await make_deployment(kube)
    apiserver.requests.clear()
    async with PatchHelper(obj):
        obj.raw["spec"]["replicas"] = 2
        obj.raw["status"]["conditions"] = [condition("Ready")]
    served = [r for r in apiserver.requests if r.verb]  # not the discovery request
    assert [(r.verb, r.subresource) for r in served] == [("patch", ""), ("patch", "status")]
    _, status = served
    # its precondition is the resourceVersion the main PATCH produced (nothing else wrote)
    assert status.body["metadata"]["resourceVersion"] == str(apiserver.cluster.store.rv - 1)
    _, stored = await call(kube, "GET", f"{DEPLOY}/web")
    assert stored["status"]["conditions"][0]["type"] == "Ready"
