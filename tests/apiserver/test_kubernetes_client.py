# The client's models make every field Optional and its watch/config modules are untyped;
# the assertions below check presence at run time, which is the point of these tests.
# mypy: disable-error-code="union-attr, no-untyped-call"
"""The official ``kubernetes`` Python client against the embedded API server.

Acceptance point: "The official ``kubernetes`` Python client can list, create, patch and
watch against it." The client is synchronous (urllib3), so every call runs in a worker
thread (``asyncio.to_thread``) while the server keeps serving in the test's event loop.
The client's models validate what they receive (pydantic), so a field the server leaves
out or sends with the wrong type fails here as a deserialisation error.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import kr8s.asyncio
import pytest
import pytest_asyncio
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from reconcile_kit.testing import APIServer, RequestRecord, eventually

NS = "default"
GROUP = "example.reconcile-kit.io"
PLURAL = "widgets"
CRD_NAME = f"{PLURAL}.{GROUP}"
EVENT_TIMEOUT = 10.0


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run one blocking client call in a worker thread.

    Typed ``Any``: every field of the client's models is Optional, so narrowing each one
    for mypy would add nothing the assertions do not already check.
    """
    return await asyncio.to_thread(fn, *args, **kwargs)


async def expect_api_error(
    code: int, fn: Callable[..., Any], *args: Any, **kwargs: Any
) -> dict[str, Any]:
    """Run ``fn`` in a thread; it must raise ApiException ``code``. Returns the Status body."""
    with pytest.raises(ApiException) as info:
        await call(fn, *args, **kwargs)
    assert info.value.status == code, info.value
    assert info.value.body is not None
    status: dict[str, Any] = json.loads(info.value.body)
    assert status["kind"] == "Status"
    assert status["code"] == code
    return status


def rv(obj: Any) -> int:
    """An object's (or list's) metadata.resourceVersion as a number."""
    return int(obj.metadata.resource_version)


def last_request(apiserver: APIServer, **match: Any) -> RequestRecord:
    records = apiserver.requests.filter(**match)
    assert records, f"no request matching {match}"
    return records[-1]


@pytest_asyncio.fixture
async def api_client(apiserver: APIServer) -> AsyncIterator[client.ApiClient]:
    """An ApiClient on a fresh Configuration loaded from the server's kubeconfig."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=apiserver.kubeconfig, client_configuration=cfg)
    assert cfg.host == apiserver.url
    api = client.ApiClient(cfg)
    yield api
    await call(api.close)


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


def config_map(
    name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None
) -> client.V1ConfigMap:
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        data=data,
    )


# ---------------------------------------------------------------------------------------
# Discovery-free basics: version, namespaces
# ---------------------------------------------------------------------------------------


async def test_version(api_client: client.ApiClient) -> None:
    info = await call(client.VersionApi(api_client).get_code)
    assert isinstance(info, client.VersionInfo)
    assert info.major == "1"
    assert info.git_version.startswith("v1.")


async def test_list_namespace(core: client.CoreV1Api) -> None:
    namespaces = await call(core.list_namespace)
    assert isinstance(namespaces, client.V1NamespaceList)
    names = {ns.metadata.name for ns in namespaces.items}
    assert {"default", "kube-system", "kube-public"} <= names
    assert rv(namespaces) > 0
    for ns in namespaces.items:
        assert isinstance(ns, client.V1Namespace)
        assert ns.status.phase == "Active"
        assert ns.metadata.uid
        assert isinstance(ns.metadata.creation_timestamp, datetime.datetime)
        assert ns.metadata.creation_timestamp.tzinfo is not None


async def test_create_and_delete_namespace(apiserver: APIServer, core: client.CoreV1Api) -> None:
    created = await call(
        core.create_namespace, client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a"))
    )
    assert isinstance(created, client.V1Namespace)
    assert created.metadata.name == "team-a"
    assert created.status.phase == "Active"
    read = await call(core.read_namespace, "team-a")
    assert read.metadata.uid == created.metadata.uid
    deleted = await call(core.delete_namespace, "team-a")
    # kube-apiserver answers a namespace DELETE with the Namespace, now Terminating (the
    # client declares the DELETE answer as a plain object, so it hands back the dict).
    assert deleted["kind"] == "Namespace"
    assert deleted["status"]["phase"] == "Terminating"
    assert deleted["spec"]["finalizers"] == ["kubernetes"]
    assert deleted["metadata"]["deletionTimestamp"]
    record = last_request(apiserver, verb="delete", resource="namespaces")
    assert record.status == 200
    # The namespace controller (on in the fixture) then finishes the deletion.
    await apiserver.settled()
    await expect_api_error(404, core.read_namespace, "team-a")


async def test_namespace_status_subresource(apiserver: APIServer, core: client.CoreV1Api) -> None:
    status = await call(core.read_namespace_status, "default")
    assert isinstance(status, client.V1Namespace)
    assert status.status.phase == "Active"
    record = last_request(apiserver, verb="get", resource="namespaces")
    assert (record.name, record.subresource) == ("default", "status")
    patched = await call(
        core.patch_namespace_status,
        "default",
        {
            "status": {
                "conditions": [
                    {"type": "Example", "status": "True", "reason": "Test", "message": "m"}
                ]
            }
        },
    )
    assert patched.status.conditions[0].type == "Example"
    assert (await call(core.read_namespace, "default")).status.conditions[0].reason == "Test"


async def test_namespace_finalize_without_controller() -> None:
    # As envtest: no namespace controller, so whoever deletes must empty spec.finalizers.
    async with APIServer(garbage_collection=False) as server:
        cfg = client.Configuration()
        config.load_kube_config(config_file=server.kubeconfig, client_configuration=cfg)
        with client.ApiClient(cfg) as api_client:
            core = client.CoreV1Api(api_client)
            await call(
                core.create_namespace,
                client.V1Namespace(metadata=client.V1ObjectMeta(name="team-b")),
            )
            await call(core.delete_namespace, "team-b")
            ns = await call(core.read_namespace, "team-b")
            assert ns.status.phase == "Terminating"
            assert ns.spec.finalizers == ["kubernetes"]
            ns.spec.finalizers = []
            await call(core.replace_namespace_finalize, "team-b", ns)
            record = last_request(server, verb="update", resource="namespaces")
            assert (record.subresource, record.status) == ("finalize", 200)
            await expect_api_error(404, core.read_namespace, "team-b")


# ---------------------------------------------------------------------------------------
# ConfigMaps: create, read, list, patch (three patch types), replace, delete
# ---------------------------------------------------------------------------------------


async def test_configmap_create_read_list(apiserver: APIServer, core: client.CoreV1Api) -> None:
    created = await call(
        core.create_namespaced_config_map,
        NS,
        config_map("web", {"app": "web", "tier": "front"}, {"k": "v"}),
    )
    assert isinstance(created, client.V1ConfigMap)
    assert created.api_version == "v1" and created.kind == "ConfigMap"
    assert created.metadata.namespace == NS
    assert created.metadata.uid
    assert rv(created) > 0
    assert isinstance(created.metadata.creation_timestamp, datetime.datetime)
    assert last_request(apiserver, verb="create", resource="configmaps").status == 201

    await call(
        core.create_namespaced_config_map, NS, config_map("db", {"app": "db", "tier": "back"})
    )
    await call(core.create_namespaced_config_map, NS, config_map("plain"))

    read = await call(core.read_namespaced_config_map, "web", NS)
    assert read.data == {"k": "v"}
    assert read.metadata.labels == {"app": "web", "tier": "front"}
    assert read.metadata.resource_version == created.metadata.resource_version

    everything = await call(core.list_namespaced_config_map, NS)
    assert isinstance(everything, client.V1ConfigMapList)
    assert {"web", "db", "plain"} <= {cm.metadata.name for cm in everything.items}

    web = await call(core.list_namespaced_config_map, NS, label_selector="app=web")
    assert [cm.metadata.name for cm in web.items] == ["web"]
    assert (
        last_request(apiserver, verb="list", resource="configmaps").query["labelSelector"]
        == "app=web"
    )
    tiers = await call(
        core.list_namespaced_config_map, NS, label_selector="tier in (front,back),app!=web"
    )
    assert [cm.metadata.name for cm in tiers.items] == ["db"]
    unlabelled = await call(core.list_namespaced_config_map, NS, label_selector="!app")
    assert "plain" in {cm.metadata.name for cm in unlabelled.items}
    assert not {"web", "db"} & {cm.metadata.name for cm in unlabelled.items}
    by_name = await call(core.list_namespaced_config_map, NS, field_selector="metadata.name=db")
    assert [cm.metadata.name for cm in by_name.items] == ["db"]

    all_namespaces = await call(core.list_config_map_for_all_namespaces, label_selector="app")
    assert sorted(cm.metadata.name for cm in all_namespaces.items) == ["db", "web"]

    await expect_api_error(400, core.list_namespaced_config_map, NS, label_selector="a b c")


async def test_configmap_list_pages(core: client.CoreV1Api) -> None:
    for i in range(5):
        await call(core.create_namespaced_config_map, NS, config_map(f"page-{i}", {"p": "1"}))
    names: list[str] = []
    token: str | None = None
    list_rvs: set[str] = set()
    for _ in range(10):
        page = await call(
            core.list_namespaced_config_map, NS, label_selector="p=1", limit=2, _continue=token
        )
        names += [cm.metadata.name for cm in page.items]
        list_rvs.add(page.metadata.resource_version)
        token = page.metadata._continue
        if not token:
            break
    assert sorted(names) == [f"page-{i}" for i in range(5)]
    assert len(list_rvs) == 1


async def test_configmap_patch_dict_is_strategic_merge(
    apiserver: APIServer, core: client.CoreV1Api
) -> None:
    created = await call(
        core.create_namespaced_config_map,
        NS,
        config_map("cm", {"app": "web"}, {"a": "1", "b": "2"}),
    )
    patched = await call(
        core.patch_namespaced_config_map,
        "cm",
        NS,
        {"data": {"b": "20", "c": "3"}, "metadata": {"labels": {"x": "y"}}},
    )
    record = last_request(apiserver, verb="patch", resource="configmaps", name="cm")
    # A dict body on a built-in kind goes out as a strategic merge patch.
    assert record.content_type == "application/strategic-merge-patch+json"
    assert record.body == {"data": {"b": "20", "c": "3"}, "metadata": {"labels": {"x": "y"}}}
    assert record.status == 200
    assert isinstance(patched, client.V1ConfigMap)
    assert patched.data == {"a": "1", "b": "20", "c": "3"}
    assert patched.metadata.labels == {"app": "web", "x": "y"}
    assert rv(patched) > rv(created)
    read = await call(core.read_namespaced_config_map, "cm", NS)
    assert read.data == {"a": "1", "b": "20", "c": "3"}
    assert read.metadata.resource_version == patched.metadata.resource_version


async def test_configmap_merge_patch(apiserver: APIServer, core: client.CoreV1Api) -> None:
    await call(
        core.create_namespaced_config_map,
        NS,
        config_map("cm", {"app": "web", "drop": "me"}, {"a": "1", "b": "2"}),
    )
    patched = await call(
        core.patch_namespaced_config_map,
        "cm",
        NS,
        {"data": {"a": None, "b": "two"}, "metadata": {"labels": {"drop": None}}},
        _content_type="application/merge-patch+json",
    )
    record = last_request(apiserver, verb="patch", resource="configmaps", name="cm")
    assert record.content_type == "application/merge-patch+json"
    assert record.body["data"] == {"a": None, "b": "two"}
    # RFC 7386: null removes the key.
    assert patched.data == {"b": "two"}
    assert patched.metadata.labels == {"app": "web"}
    read = await call(core.read_namespaced_config_map, "cm", NS)
    assert read.data == {"b": "two"}
    assert read.metadata.labels == {"app": "web"}


async def test_configmap_json_patch(apiserver: APIServer, core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, NS, config_map("cm", data={"a": "1"}))
    ops = [
        {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": created.metadata.resource_version,
        },
        {"op": "add", "path": "/data/b", "value": "2"},
        {"op": "replace", "path": "/data/a", "value": "one"},
    ]
    patched = await call(core.patch_namespaced_config_map, "cm", NS, ops)
    record = last_request(apiserver, verb="patch", resource="configmaps", name="cm")
    # A list body goes out as a JSON patch (RFC 6902).
    assert record.content_type == "application/json-patch+json"
    assert record.body == ops
    assert patched.data == {"a": "one", "b": "2"}
    # The same guard again: the resourceVersion moved on, so the test op fails with 422.
    status = await expect_api_error(422, core.patch_namespaced_config_map, "cm", NS, ops)
    assert status["reason"] == "Invalid"
    assert (await call(core.read_namespaced_config_map, "cm", NS)).data == {"a": "one", "b": "2"}


async def test_configmap_patch_without_change_is_noop(core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, NS, config_map("cm", data={"a": "1"}))
    same = await call(core.patch_namespaced_config_map, "cm", NS, {"data": {"a": "1"}})
    assert same.metadata.resource_version == created.metadata.resource_version


async def test_configmap_replace_and_conflict(core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, NS, config_map("cm", data={"a": "1"}))
    created.data = {"a": "2"}
    replaced = await call(core.replace_namespaced_config_map, "cm", NS, created)
    assert replaced.data == {"a": "2"}
    assert replaced.metadata.uid == created.metadata.uid
    # ``created`` still carries the old resourceVersion: optimistic concurrency says 409.
    created.data = {"a": "3"}
    status = await expect_api_error(409, core.replace_namespaced_config_map, "cm", NS, created)
    assert status["reason"] == "Conflict"
    assert "the object has been modified" in status["message"]
    assert (await call(core.read_namespaced_config_map, "cm", NS)).data == {"a": "2"}


async def test_configmap_errors(core: client.CoreV1Api) -> None:
    status = await expect_api_error(404, core.read_namespaced_config_map, "missing", NS)
    assert status["reason"] == "NotFound"
    assert status["message"] == 'configmaps "missing" not found'
    assert status["details"] == {"name": "missing", "kind": "configmaps"}
    await call(core.create_namespaced_config_map, NS, config_map("dup"))
    status = await expect_api_error(409, core.create_namespaced_config_map, NS, config_map("dup"))
    assert status["reason"] == "AlreadyExists"
    await expect_api_error(404, core.patch_namespaced_config_map, "missing", NS, {"data": {}})
    status = await expect_api_error(
        404, core.create_namespaced_config_map, "nowhere", config_map("x")
    )
    assert status["message"] == 'namespaces "nowhere" not found'
    status = await expect_api_error(
        422, core.create_namespaced_config_map, NS, config_map("Not_A_Name")
    )
    assert status["reason"] == "Invalid"


async def test_configmap_delete(apiserver: APIServer, core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, NS, config_map("gone"))
    result = await call(core.delete_namespaced_config_map, "gone", NS)
    # ConfigMaps answer DELETE with a Status (the client returns it as a plain dict).
    assert result["kind"] == "Status"
    assert result["status"] == "Success"
    assert result["details"]["name"] == "gone"
    assert result["details"]["uid"] == created.metadata.uid
    assert client.V1Status.from_dict(result).details.kind == "configmaps"
    assert last_request(apiserver, verb="delete", resource="configmaps").status == 200
    await expect_api_error(404, core.read_namespaced_config_map, "gone", NS)
    await expect_api_error(404, core.delete_namespaced_config_map, "gone", NS)


async def test_configmap_delete_with_finalizer(core: client.CoreV1Api) -> None:
    cm = config_map("held")
    cm.metadata.finalizers = ["example.com/hold"]
    await call(core.create_namespaced_config_map, NS, cm)
    await call(
        core.delete_namespaced_config_map,
        "held",
        NS,
        body=client.V1DeleteOptions(propagation_policy="Background"),
    )
    held = await call(core.read_namespaced_config_map, "held", NS)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ["example.com/hold"]
    await call(
        core.patch_namespaced_config_map,
        "held",
        NS,
        {"metadata": {"finalizers": None}},
        _content_type="application/merge-patch+json",
    )
    await expect_api_error(404, core.read_namespaced_config_map, "held", NS)


async def test_delete_collection(core: client.CoreV1Api) -> None:
    for name in ("a", "b", "keep"):
        labels = {"batch": "x"} if name != "keep" else None
        await call(core.create_namespaced_config_map, NS, config_map(name, labels))
    await call(core.delete_collection_namespaced_config_map, NS, label_selector="batch=x")
    left = await call(core.list_namespaced_config_map, NS)
    assert "keep" in {cm.metadata.name for cm in left.items}
    assert not {"a", "b"} & {cm.metadata.name for cm in left.items}


# ---------------------------------------------------------------------------------------
# Other built-in kinds the client models validate strictly
# ---------------------------------------------------------------------------------------


def deployment(name: str, replicas: int = 1) -> client.V1Deployment:
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=[
                        client.V1Container(
                            name="app",
                            image="nginx:1.27",
                            ports=[client.V1ContainerPort(container_port=80)],
                        ),
                    ]
                ),
            ),
        ),
    )


async def test_deployment_create_status_scale(apiserver: APIServer, apps: client.AppsV1Api) -> None:
    created = await call(apps.create_namespaced_deployment, NS, deployment("web"))
    assert isinstance(created, client.V1Deployment)
    assert created.metadata.generation == 1
    assert created.spec.replicas == 1
    assert created.spec.template.spec.containers[0].name == "app"

    status = await call(
        apps.patch_namespaced_deployment_status,
        "web",
        NS,
        {"status": {"replicas": 1, "readyReplicas": 1, "observedGeneration": 1}},
    )
    record = last_request(apiserver, verb="patch", resource="deployments", subresource="status")
    assert record.content_type == "application/strategic-merge-patch+json"
    assert status.status.ready_replicas == 1
    assert status.metadata.generation == 1  # /status writes never bump generation

    read_status = await call(apps.read_namespaced_deployment_status, "web", NS)
    assert read_status.status.observed_generation == 1

    scale = await call(apps.read_namespaced_deployment_scale, "web", NS)
    assert isinstance(scale, client.V1Scale)
    assert scale.spec.replicas == 1
    assert scale.status.replicas == 1
    assert scale.status.selector == "app=web"

    scaled = await call(
        apps.patch_namespaced_deployment_scale, "web", NS, {"spec": {"replicas": 4}}
    )
    assert isinstance(scaled, client.V1Scale)
    assert scaled.spec.replicas == 4
    after = await call(apps.read_namespaced_deployment, "web", NS)
    assert after.spec.replicas == 4
    assert after.metadata.generation == 2
    assert after.status.ready_replicas == 1  # main-resource and /scale keep status

    patched = await call(
        apps.patch_namespaced_deployment,
        "web",
        NS,
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}},
    )
    # Strategic merge keyed by container name: the port of "app" survives.
    container = patched.spec.template.spec.containers[0]
    assert container.image == "nginx:1.28"
    assert container.ports[0].container_port == 80
    assert patched.metadata.generation == 3

    listed = await call(apps.list_namespaced_deployment, NS, label_selector="app=web")
    assert [d.metadata.name for d in listed.items] == ["web"]
    await call(apps.delete_namespaced_deployment, "web", NS)
    await expect_api_error(404, apps.read_namespaced_deployment, "web", NS)


def pod_template(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
    }


async def test_workload_status_models(apps: client.AppsV1Api) -> None:
    """The client's status models require the fields Go always serialises (no omitempty)."""
    selector = {"matchLabels": {"app": "w"}}
    sts = await call(
        apps.create_namespaced_stateful_set,
        NS,
        {
            "metadata": {"name": "sts"},
            "spec": {
                "serviceName": "sts",
                "selector": selector,
                "template": pod_template({"app": "w"}),
            },
        },
    )
    assert isinstance(sts, client.V1StatefulSet)
    assert (sts.status.replicas, sts.status.available_replicas) == (0, 0)
    rs = await call(
        apps.create_namespaced_replica_set,
        NS,
        {
            "metadata": {"name": "rs"},
            "spec": {"selector": selector, "template": pod_template({"app": "w"})},
        },
    )
    assert isinstance(rs, client.V1ReplicaSet)
    assert rs.status.replicas == 0
    ds = await call(
        apps.create_namespaced_daemon_set,
        NS,
        {
            "metadata": {"name": "ds"},
            "spec": {"selector": selector, "template": pod_template({"app": "w"})},
        },
    )
    assert isinstance(ds, client.V1DaemonSet)
    assert ds.status.desired_number_scheduled == 0
    assert ds.status.number_ready == 0
    listed = await call(apps.list_daemon_set_for_all_namespaces)
    assert [d.metadata.name for d in listed.items] == ["ds"]

    # A /status write that drops a required field: the server still answers with it.
    patched = await call(
        apps.patch_namespaced_stateful_set_status,
        "sts",
        NS,
        {"status": {"replicas": None, "readyReplicas": 0}},
        _content_type="application/merge-patch+json",
    )
    # replicas has no omitempty (0 is written); readyReplicas has it (0 is left out)
    assert (patched.status.replicas, patched.status.ready_replicas) == (0, None)
    scale = await call(apps.read_namespaced_stateful_set_scale, "sts", NS)
    assert scale.spec.replicas == 1


async def test_lease_microtime(api_client: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(api_client)
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=123456)
    created = await call(
        leases.create_namespaced_lease,
        NS,
        client.V1Lease(
            metadata=client.V1ObjectMeta(name="leader"),
            spec=client.V1LeaseSpec(
                holder_identity="me",
                lease_duration_seconds=15,
                acquire_time=now,
                renew_time=now,
                lease_transitions=0,
            ),
        ),
    )
    assert isinstance(created, client.V1Lease)
    assert created.spec.holder_identity == "me"
    assert created.spec.renew_time == now
    created.spec.renew_time = now + datetime.timedelta(seconds=5)
    renewed = await call(leases.replace_namespaced_lease, "leader", NS, created)
    assert renewed.spec.renew_time == now + datetime.timedelta(seconds=5)
    await expect_api_error(409, leases.replace_namespaced_lease, "leader", NS, created)


# ---------------------------------------------------------------------------------------
# CustomResourceDefinitions and custom objects
# ---------------------------------------------------------------------------------------


def widget_crd() -> client.V1CustomResourceDefinition:
    schema = client.V1JSONSchemaProps(
        type="object",
        properties={
            "spec": client.V1JSONSchemaProps(
                type="object",
                properties={
                    "size": client.V1JSONSchemaProps(type="integer"),
                    "color": client.V1JSONSchemaProps(type="string", default="blue"),
                },
            ),
            "status": client.V1JSONSchemaProps(
                type="object",
                properties={
                    "phase": client.V1JSONSchemaProps(type="string"),
                },
            ),
        },
    )
    return client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name=CRD_NAME),
        spec=client.V1CustomResourceDefinitionSpec(
            group=GROUP,
            scope="Namespaced",
            names=client.V1CustomResourceDefinitionNames(
                plural=PLURAL, singular="widget", kind="Widget", short_names=["wd"]
            ),
            versions=[
                client.V1CustomResourceDefinitionVersion(
                    name="v1",
                    served=True,
                    storage=True,
                    schema=client.V1CustomResourceValidation(open_apiv3_schema=schema),
                    subresources=client.V1CustomResourceSubresources(status={}),
                    additional_printer_columns=[
                        client.V1CustomResourceColumnDefinition(
                            name="Size", type="integer", json_path=".spec.size"
                        )
                    ],
                )
            ],
        ),
    )


async def establish_crd(api_client: client.ApiClient) -> client.V1CustomResourceDefinition:
    ext = client.ApiextensionsV1Api(api_client)
    created = await call(ext.create_custom_resource_definition, widget_crd())
    assert isinstance(created, client.V1CustomResourceDefinition)
    assert created.metadata.name == CRD_NAME

    def established() -> bool:
        crd = ext.read_custom_resource_definition(CRD_NAME)
        conditions = {c.type: c.status for c in crd.status.conditions or []}
        return conditions.get("Established") == "True"

    # The CRD becomes Established once the server has its names: await that via a watch.
    w = watch.Watch()

    def wait_established() -> client.V1CustomResourceDefinition:
        if established():
            return ext.read_custom_resource_definition(CRD_NAME)
        for event in w.stream(
            ext.list_custom_resource_definition,
            field_selector=f"metadata.name={CRD_NAME}",
            timeout_seconds=10,
        ):
            crd = event["object"]
            conditions = {c.type: c.status for c in crd.status.conditions or []}
            if conditions.get("Established") == "True":
                w.stop()
                return crd  # type: ignore[no-any-return]
        raise AssertionError("CRD never became Established")

    crd: client.V1CustomResourceDefinition = await call(wait_established)
    assert crd.status.accepted_names.kind == "Widget"
    assert crd.status.stored_versions == ["v1"]
    return crd


def widget(name: str, size: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"size": size},
    }


async def test_custom_objects(
    apiserver: APIServer, api_client: client.ApiClient, custom: client.CustomObjectsApi
) -> None:
    await establish_crd(api_client)

    created = await call(
        custom.create_namespaced_custom_object,
        GROUP,
        "v1",
        NS,
        PLURAL,
        widget("w1", 1, {"team": "a"}),
    )
    assert isinstance(created, dict)
    assert created["metadata"]["generation"] == 1
    assert created["spec"] == {"size": 1, "color": "blue"}  # schema default applied
    await call(
        custom.create_namespaced_custom_object,
        GROUP,
        "v1",
        NS,
        PLURAL,
        widget("w2", 2, {"team": "b"}),
    )

    got = await call(custom.get_namespaced_custom_object, GROUP, "v1", NS, PLURAL, "w1")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]

    patched = await call(
        custom.patch_namespaced_custom_object,
        GROUP,
        "v1",
        NS,
        PLURAL,
        "w1",
        {"spec": {"size": 10}, "metadata": {"labels": {"extra": "1"}}},
    )
    record = last_request(apiserver, verb="patch", resource=PLURAL, name="w1")
    assert record.content_type == "application/merge-patch+json"
    assert patched["spec"] == {"size": 10, "color": "blue"}
    assert patched["metadata"]["labels"] == {"team": "a", "extra": "1"}
    assert patched["metadata"]["generation"] == 2
    got = await call(custom.get_namespaced_custom_object, GROUP, "v1", NS, PLURAL, "w1")
    assert got["spec"]["size"] == 10

    status = await call(
        custom.patch_namespaced_custom_object_status,
        GROUP,
        "v1",
        NS,
        PLURAL,
        "w1",
        {"status": {"phase": "Ready"}},
    )
    assert status["status"] == {"phase": "Ready"}
    assert status["metadata"]["generation"] == 2

    invalid = await expect_api_error(
        422,
        custom.patch_namespaced_custom_object,
        GROUP,
        "v1",
        NS,
        PLURAL,
        "w1",
        {"spec": {"size": "big"}},
    )
    assert invalid["reason"] == "Invalid"
    # Custom resources do not take strategic merge patches.
    await expect_api_error(
        415,
        custom.patch_namespaced_custom_object,
        GROUP,
        "v1",
        NS,
        PLURAL,
        "w1",
        {"spec": {"size": 3}},
        _content_type="application/strategic-merge-patch+json",
    )

    listed = await call(custom.list_namespaced_custom_object, GROUP, "v1", NS, PLURAL)
    assert listed["kind"] == "WidgetList"
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["w1", "w2"]
    team_b = await call(
        custom.list_namespaced_custom_object, GROUP, "v1", NS, PLURAL, label_selector="team=b"
    )
    assert [i["metadata"]["name"] for i in team_b["items"]] == ["w2"]
    cluster_wide = await call(custom.list_cluster_custom_object, GROUP, "v1", PLURAL)
    assert len(cluster_wide["items"]) == 2

    await call(custom.delete_namespaced_custom_object, GROUP, "v1", NS, PLURAL, "w1")
    await expect_api_error(404, custom.get_namespaced_custom_object, GROUP, "v1", NS, PLURAL, "w1")


async def test_dynamic_client_discovers_crd(api_client: client.ApiClient, tmp_path: Path) -> None:
    from kubernetes.dynamic import DynamicClient

    await establish_crd(api_client)

    def run() -> list[str]:
        dyn = DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))
        widgets = dyn.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
        widgets.create(body=widget("dyn", 5), namespace=NS)
        configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
        assert configmaps.namespaced
        return [w.metadata.name for w in widgets.get(namespace=NS).items]

    assert await call(run) == ["dyn"]


# ---------------------------------------------------------------------------------------
# Watch
# ---------------------------------------------------------------------------------------


class ThreadedWatch:
    """``kubernetes.watch.Watch().stream(...)`` in a thread, events handed to the loop."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *args: Any,
        until: Callable[[dict[str, Any]], bool] = lambda _e: False,
        **kwargs: Any,
    ) -> None:
        self.watch = watch.Watch()
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._fn, self._args, self._kwargs, self._until = fn, args, kwargs, until
        self.task = asyncio.ensure_future(asyncio.to_thread(self._run))

    def _run(self) -> int:
        count = 0
        for event in self.watch.stream(self._fn, *self._args, **self._kwargs):
            count += 1
            self._loop.call_soon_threadsafe(self.events.put_nowait, event)
            if self._until(event):
                self.watch.stop()
                break
        return count

    async def next(self) -> dict[str, Any]:
        get = asyncio.ensure_future(self.events.get())
        done, _ = await asyncio.wait(
            {get, self.task}, timeout=EVENT_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if get in done:
            return get.result()
        get.cancel()
        if self.task in done:
            self.task.result()  # re-raise the thread's error, if any
            raise AssertionError("the watch ended before the next event")
        raise AssertionError("no watch event in time")


async def test_watch_configmaps(
    apiserver: APIServer, core: client.CoreV1Api, kube: kr8s.asyncio.Api
) -> None:
    await call(core.create_namespaced_config_map, NS, config_map("before"))
    listed = await call(core.list_namespaced_config_map, NS)
    list_rv = listed.metadata.resource_version

    def deleted_watched(event: dict[str, Any]) -> bool:
        return bool(event["type"] == "DELETED" and event["object"].metadata.name == "watched")

    stream = ThreadedWatch(
        core.list_namespaced_config_map,
        NS,
        resource_version=list_rv,
        timeout_seconds=30,
        until=deleted_watched,
    )
    await eventually(lambda: apiserver.open_watches == 1, EVENT_TIMEOUT)
    assert (
        last_request(apiserver, verb="watch", resource="configmaps").query["resourceVersion"]
        == list_rv
    )

    # Writes from the event loop, through another client (kr8s).
    cm = await kr8s.asyncio.objects.ConfigMap(
        {"metadata": {"name": "watched", "namespace": NS}, "data": {"n": "0"}}, api=kube
    )
    await cm.create()
    added = await stream.next()
    assert added["type"] == "ADDED"
    obj = added["object"]
    assert isinstance(obj, client.V1ConfigMap)
    assert obj.metadata.name == "watched" and obj.data == {"n": "0"}
    assert added["raw_object"]["metadata"]["resourceVersion"] == obj.metadata.resource_version
    assert int(obj.metadata.resource_version) > int(list_rv)

    await cm.patch({"data": {"n": "1"}})
    modified = await stream.next()
    assert modified["type"] == "MODIFIED"
    assert modified["object"].data == {"n": "1"}
    assert int(modified["object"].metadata.resource_version) > int(obj.metadata.resource_version)

    # A write through the official client itself shows up too.
    await call(core.patch_namespaced_config_map, "watched", NS, {"data": {"n": "2"}})
    assert (await stream.next())["object"].data == {"n": "2"}

    await cm.delete()
    deleted = await stream.next()
    assert deleted["type"] == "DELETED"
    assert deleted["object"].metadata.name == "watched"
    assert deleted["object"].data == {"n": "2"}
    assert await asyncio.wait_for(stream.task, EVENT_TIMEOUT) == 4  # "before" never replayed
    assert stream.watch.resource_version == deleted["object"].metadata.resource_version
    await eventually(lambda: apiserver.open_watches == 0, EVENT_TIMEOUT)


async def test_watch_initial_state_and_selector(
    apiserver: APIServer, core: client.CoreV1Api
) -> None:
    await call(core.create_namespaced_config_map, NS, config_map("old", {"w": "yes"}))
    await call(core.create_namespaced_config_map, NS, config_map("other", {"w": "no"}))
    stream = ThreadedWatch(
        core.list_namespaced_config_map,
        NS,
        label_selector="w=yes",
        timeout_seconds=30,
        until=lambda e: e["type"] == "DELETED",
    )
    first = await stream.next()
    # No resourceVersion: synthetic ADDED for what exists and matches.
    assert (first["type"], first["object"].metadata.name) == ("ADDED", "old")
    await eventually(lambda: apiserver.open_watches == 1, EVENT_TIMEOUT)
    # An object entering the selection is ADDED, one leaving it is DELETED.
    await call(
        core.patch_namespaced_config_map, "other", NS, {"metadata": {"labels": {"w": "yes"}}}
    )
    entered = await stream.next()
    assert (entered["type"], entered["object"].metadata.name) == ("ADDED", "other")
    await call(core.patch_namespaced_config_map, "old", NS, {"metadata": {"labels": {"w": "no"}}})
    left = await stream.next()
    assert (left["type"], left["object"].metadata.name) == ("DELETED", "old")
    assert await asyncio.wait_for(stream.task, EVENT_TIMEOUT) == 3


async def test_watch_timeout_ends_cleanly(core: client.CoreV1Api) -> None:
    listed = await call(core.list_namespaced_config_map, NS)
    w = watch.Watch()

    def run() -> list[dict[str, Any]]:
        return list(
            w.stream(
                core.list_namespaced_config_map,
                NS,
                resource_version=listed.metadata.resource_version,
                timeout_seconds=1,
            )
        )

    assert await asyncio.wait_for(call(run), EVENT_TIMEOUT) == []


async def test_watch_expired_resource_version(apiserver: APIServer, core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, NS, config_map("cm"))
    await call(core.patch_namespaced_config_map, "cm", NS, {"data": {"a": "1"}})
    apiserver.compact()
    w = watch.Watch()

    def run() -> list[dict[str, Any]]:
        return list(
            w.stream(
                core.list_namespaced_config_map,
                NS,
                resource_version=created.metadata.resource_version,
                timeout_seconds=5,
            )
        )

    # With timeout_seconds the client does not retry: the 410 ERROR event surfaces.
    with pytest.raises(ApiException) as info:
        await asyncio.wait_for(call(run), EVENT_TIMEOUT)
    assert info.value.status == 410
    assert "too old resource version" in str(info.value.reason)


async def test_watch_custom_objects(
    apiserver: APIServer, api_client: client.ApiClient, custom: client.CustomObjectsApi
) -> None:
    await establish_crd(api_client)
    listed = await call(custom.list_namespaced_custom_object, GROUP, "v1", NS, PLURAL)
    stream = ThreadedWatch(
        custom.list_namespaced_custom_object,
        GROUP,
        "v1",
        NS,
        PLURAL,
        resource_version=listed["metadata"]["resourceVersion"],
        timeout_seconds=30,
        until=lambda e: e["type"] == "DELETED",
    )
    await eventually(lambda: apiserver.open_watches == 1, EVENT_TIMEOUT)
    await call(custom.create_namespaced_custom_object, GROUP, "v1", NS, PLURAL, widget("w", 1))
    await call(
        custom.patch_namespaced_custom_object, GROUP, "v1", NS, PLURAL, "w", {"spec": {"size": 2}}
    )
    await call(custom.delete_namespaced_custom_object, GROUP, "v1", NS, PLURAL, "w")
    events = [await stream.next() for _ in range(3)]
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    # Custom objects have no model: the event object is the dict.
    assert [e["object"]["spec"]["size"] for e in events] == [1, 2, 2]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
