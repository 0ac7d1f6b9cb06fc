"""The Website operator runs on kube-apiserver as a ServiceAccount bound only to the RBAC
`reconcile-kit manifests` generates, with leader election, namespaced and cluster-wide,
with OwnerReferencesPermissionEnforcement on: it reconciles and nothing is forbidden
(issue 18); on the embedded server in its RBAC mode."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import kr8s.asyncio
import pytest
import yaml
from reconcile_kit.examples import website
from reconcile_kit.examples.manager import CRD_PATHS, SAMPLE_PATHS, build_manager

from reconcile_kit import Manager
from reconcile_kit.cli.manifests import DeploymentSettings, documents
from reconcile_kit.testing import eventually, install_crds
from reconcile_kit.testing.backends import Backend
from reconcile_kit.webhooks import SelfSignedCertificates

from .kube import ok, req, token_kubeconfig, token_request
from .test_website import ensure_crd

RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


class Forbidden(logging.Handler):
    """Collects log records that report a refusal (403)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" {record.exc_info[1]}"
        if "forbidden" in text.lower():  # ForbiddenError: "403 Forbidden: ..."
            self.records.append(text)


def path_of(doc: dict[str, Any]) -> str:
    group_version = doc["apiVersion"]
    base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    namespace = doc["metadata"].get("namespace")
    plural = doc["kind"].lower() + "s"
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


async def service_account_api(
    backend: Backend, namespace: str, name: str, tmp_path: Path
) -> kr8s.asyncio.Api:
    """A kr8s Api authenticated as the ServiceAccount (a TokenRequest token)."""
    token = await token_request(backend, namespace, name)
    config = token_kubeconfig(backend, token["status"]["token"], namespace)
    path = tmp_path / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    api: kr8s.asyncio.Api = await kr8s.asyncio.Api(kubeconfig=str(path), bypass_factory=True)
    return api


@asynccontextmanager
async def running_as_service_account(
    backend: Backend,
    tmp_path: Path,
    operator: Manager,
    settings: DeploymentSettings,
    owners: list[tuple[str, str]],
) -> AsyncIterator[None]:
    """Apply the generated ServiceAccount and RBAC, run ``operator`` as that account until
    the block ends; then assert nothing was forbidden."""
    operator.handle_signals = False
    if operator.webhooks is not None:
        operator.webhooks.host, operator.webhooks.requested_port = "127.0.0.1", 0
        operator.webhooks.certificates = SelfSignedCertificates(["127.0.0.1"])
    docs = [d for d in documents(operator, settings) if d["kind"] in RBAC_KINDS]
    assert operator.leader_election is not None
    if settings.watch_namespace is not None:
        assert {d["kind"] for d in docs if d.get("metadata", {}).get("namespace")} == {
            "ServiceAccount",
            "Role",
            "RoleBinding",
        }
    for doc in docs:
        await ok(backend, "POST", path_of(doc), doc)
    sa_api = await service_account_api(backend, settings.namespace, operator.name, tmp_path)
    for kind, child in owners:
        await owner_kind_mapped(sa_api, settings.namespace, kind, child)
    operator.api = sa_api
    forbidden = Forbidden()
    logging.getLogger("reconcile_kit").addHandler(forbidden)
    running = asyncio.create_task(operator.run())
    try:
        await eventually(operator.ready, 30.0, what="the operator leads and its caches synced")
        yield
        election = operator.leader_election
        lease = await ok(
            backend,
            "GET",
            f"/apis/coordination.k8s.io/v1/namespaces/{election.namespace}/leases/{election.name}",
        )
        assert lease["spec"]["holderIdentity"]
    finally:
        operator.stop()
        await asyncio.wait_for(running, 30.0)
        logging.getLogger("reconcile_kit").removeHandler(forbidden)
        await sa_api._session.aclose()
        for doc in docs:
            if "namespace" not in doc["metadata"]:
                await req(backend, "DELETE", f"{path_of(doc)}/{doc['metadata']['name']}")
    assert forbidden.records == []


async def owner_kind_mapped(api: kr8s.asyncio.Api, namespace: str, kind: str, child: str) -> None:
    """Wait until kube-apiserver's OwnerReferencesPermissionEnforcement maps ``kind`` (its
    RESTMapper is refreshed every 30 s: k8s.io/apiserver pkg/server/options/admission.go),
    as it would for CRDs installed before the operator is deployed. Probed as the
    ServiceAccount (the plugin skips the mapping for who may finalize anything): a dry-run
    ``child`` (a plural the account may create) naming such an owner."""
    doc = {
        "apiVersion": "v1",
        "kind": {"services": "Service", "configmaps": "ConfigMap"}[child],
        "metadata": {
            "generateName": "probe-",
            "ownerReferences": [
                {
                    "apiVersion": f"{website.GROUP}/v1",
                    "kind": kind,
                    "name": "probe",
                    "uid": "00000000-0000-4000-8000-000000000000",
                    "blockOwnerDeletion": True,
                }
            ],
        },
    }
    if child == "services":
        doc["spec"] = {"ports": [{"port": 80}]}

    async def mapped() -> bool:
        async with api.call_api(
            "POST",
            base="/api",
            version="v1",
            namespace=namespace,
            url=child,
            params={"dryRun": "All"},
            json=doc,
            raise_for_status=False,
        ) as response:
            if response.status_code == 403 and "cannot find RESTMapping" in response.text:
                return False
            assert response.status_code == 201, response.text
            return True

    await eventually(mapped, 45.0, interval=1.0, what=f"{kind} mapped by the gc admission")


async def samples_reconciled(backend: Backend, timeout: float) -> None:
    """Create the example samples in the test's namespace; wait until every owner (not the
    Pods) is Ready."""
    ns = backend.namespace
    samples = [doc for p in SAMPLE_PATHS for doc in yaml.safe_load_all(p.read_text()) if doc]
    for doc in samples:
        await ok(
            backend, "POST", path_of({**doc, "metadata": {**doc["metadata"], "namespace": ns}}), doc
        )
    for doc in samples:
        if doc["kind"] != "Pod":
            path = path_of({**doc, "metadata": {"namespace": ns}}) + f"/{doc['metadata']['name']}"
            await eventually(lambda p=path: ready(backend, p), timeout, what=f"{path} Ready")


def settings_for(backend: Backend, scope: str) -> DeploymentSettings:
    ns = backend.namespace
    return DeploymentSettings(
        target="unused:manager",
        namespace=ns,
        replicas=2,  # leader election on
        watch_namespace=ns if scope == "namespaced" else None,
    )


async def ready(backend: Backend, path: str) -> bool:
    reply = await req(backend, "GET", path)
    conditions = ((reply.body or {}).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


@pytest.mark.parametrize("scope", ["namespaced", "cluster-wide"])
async def test_website_runs_with_exactly_the_generated_rbac(
    backend: Backend, tmp_path: Path, scope: str
) -> None:
    await ensure_crd(backend)
    ns = backend.namespace
    operator = website.manager()
    operator.name = backend.unique("website")  # cluster-scoped role names
    site = {
        "apiVersion": f"{website.GROUP}/v1",
        "kind": "Website",
        "metadata": {"name": "shop", "namespace": ns},
        "spec": {"image": "nginx:1.27", "replicas": 2},
    }
    settings = settings_for(backend, scope)
    owners = [("Website", "services")]
    async with running_as_service_account(backend, tmp_path, operator, settings, owners):
        await ok(backend, "POST", f"/apis/{website.GROUP}/v1/namespaces/{ns}/websites", site)

        async def reconciled() -> bool:
            deployment = await req(
                backend, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/shop"
            )
            service = await req(backend, "GET", f"/api/v1/namespaces/{ns}/services/shop")
            shop = await ok(
                backend, "GET", f"/apis/{website.GROUP}/v1/namespaces/{ns}/websites/shop"
            )
            conditions = (shop.get("status") or {}).get("conditions") or []
            return deployment.status == 200 and service.status == 200 and bool(conditions)

        await eventually(reconciled, 30.0, what="the Website reconciled as the ServiceAccount")
        deployment = await ok(backend, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/shop")
        (owner,) = deployment["metadata"]["ownerReferences"]
        assert owner["kind"] == "Website" and owner["blockOwnerDeletion"] is True


@pytest.mark.parametrize("scope", ["namespaced", "cluster-wide"])
async def test_example_operators_run_with_exactly_the_generated_rbac(
    backend: Backend, tmp_path: Path, scope: str
) -> None:
    ns = backend.namespace
    await install_crds(
        backend.api, *(y for p in CRD_PATHS for y in yaml.safe_load_all(p.read_text()))
    )
    operator = build_manager(
        namespace=None, lease_namespace=ns, health_port=None, metrics_port=None
    )
    operator.name = backend.unique("examples")
    settings = settings_for(backend, scope)
    owners = [("ConfigMapGenerator", "configmaps")]
    async with running_as_service_account(backend, tmp_path, operator, settings, owners):
        await samples_reconciled(backend, 30.0)


async def test_without_the_finalizers_rule_block_owner_deletion_is_forbidden(
    backend: Backend, tmp_path: Path
) -> None:
    """The control plane does enforce owner references: the rule the generator adds
    (``update`` on ``websites/finalizers``) is what makes the test above pass."""
    await ensure_crd(backend)
    ns = backend.namespace
    operator = website.manager()
    operator.name = backend.unique("website")
    settings = DeploymentSettings(target="x:manager", namespace=ns, watch_namespace=ns)
    docs = [d for d in documents(operator, settings) if d["kind"] in RBAC_KINDS]
    (role,) = [d for d in docs if d["kind"] == "Role"]
    kept = [r for r in role["rules"] if r["resources"] != ["websites/finalizers"]]
    assert len(kept) == len(role["rules"]) - 1
    role["rules"] = kept
    for doc in docs:
        await ok(backend, "POST", path_of(doc), doc)
    owner = await ok(
        backend,
        "POST",
        f"/apis/{website.GROUP}/v1/namespaces/{ns}/websites",
        {
            "apiVersion": f"{website.GROUP}/v1",
            "kind": "Website",
            "metadata": {"name": "o"},
            "spec": {"image": "nginx:1.27"},
        },
    )
    sa_api = await service_account_api(backend, ns, operator.name, tmp_path)
    child = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "o",
            "ownerReferences": [
                {
                    "apiVersion": f"{website.GROUP}/v1",
                    "kind": "Website",
                    "name": "o",
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"ports": [{"port": 80}]},
    }
    try:
        async with sa_api.call_api(
            "PATCH",
            base="/api",
            version="v1",
            namespace=ns,
            url="services/o",
            params={"fieldManager": "website", "force": "true"},
            content=yaml.safe_dump(child),
            headers={"Content-Type": "application/apply-patch+yaml"},
            raise_for_status=False,
        ) as response:
            assert response.status_code == 403, response.text
            assert "cannot set blockOwnerDeletion" in response.text
    finally:
        await sa_api._session.aclose()


async def test_a_sharded_replica_runs_with_exactly_the_generated_rbac(
    backend: Backend, tmp_path: Path
) -> None:
    """`manifests --shard`: the ring's Leases (membership, sharder election, the ring
    watch) and the shard labels, as the ServiceAccount with the generated RBAC."""
    await ensure_crd(backend)
    ns = backend.namespace
    operator = website.manager()
    operator.name = backend.unique("website")
    settings = DeploymentSettings(
        target="unused:manager", namespace=ns, replicas=2, watch_namespace=ns, shard=True
    )
    site = {
        "apiVersion": f"{website.GROUP}/v1",
        "kind": "Website",
        "metadata": {"name": "shop", "namespace": ns},
        "spec": {"image": "nginx:1.27", "replicas": 1},
    }
    label = f"shard.reconcile-kit.io/{operator.name}"
    async with running_as_service_account(backend, tmp_path, operator, settings, []):
        assert operator.sharding is not None
        await ok(backend, "POST", f"/apis/{website.GROUP}/v1/namespaces/{ns}/websites", site)

        async def reconciled() -> bool:
            shop = await ok(
                backend, "GET", f"/apis/{website.GROUP}/v1/namespaces/{ns}/websites/shop"
            )
            deployment = await req(
                backend, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/shop"
            )
            labels = shop["metadata"].get("labels") or {}
            return labels.get(label) == operator.sharding.identity and deployment.status == 200

        await eventually(reconciled, 30.0, what="the Website labelled and reconciled")
        deployment = await ok(backend, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/shop")
        assert deployment["metadata"]["labels"][label] == operator.sharding.identity
