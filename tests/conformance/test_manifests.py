"""``reconcile-kit manifests``: every generated manifest is accepted by the API server
(``kubectl apply --dry-run=server``), and the Deployment runs what ``reconcile-kit run``
accepts (issue 18; the webhook configurations of issue 17)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from reconcile_kit.cli.commands import main
from reconcile_kit.client.request import send
from reconcile_kit.testing import install_crds
from reconcile_kit.testing.backends import Backend

KUBECTL = shutil.which("kubectl")
TARGET = "reconcile_kit.examples.website:manager"

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")


def generate(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["manifests", TARGET, "--image", "op:1", *args])
    assert result.exit_code == 0, result.output
    return [doc for doc in yaml.safe_load_all(result.output) if doc]


async def generate_in_subprocess(*args: str) -> list[dict[str, Any]]:
    """``reconcile-kit manifests`` as a user runs it (a process of its own)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "manifests",
        TARGET,
        "--image",
        "op:1",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return [doc for doc in yaml.safe_load_all(out.decode()) if doc]


async def dry_run(backend: Backend, tmp_path: Path, manifests: str) -> str:
    """``kubectl apply --dry-run=server -f -`` against the backend; its output, or fail."""
    return await kubectl_apply(backend, tmp_path, manifests, "--dry-run=server")


async def kubectl_apply(backend: Backend, tmp_path: Path, manifests: str, *flags: str) -> str:
    """``kubectl apply [flags] -f -`` against the backend; its output, or fail."""
    assert KUBECTL is not None
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--cache-dir",
        str(tmp_path / "kubectl-cache"),
        "apply",
        *flags,
        "-f",
        "-",
        env={**os.environ, "KUBECONFIG": str(backend.server.kubeconfig)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(manifests.encode()), 60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"kubectl apply {' '.join(flags)} did not finish in time")
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_generated_manifests_are_accepted_by_the_api_server(
    backend: Backend, tmp_path: Path
) -> None:
    docs = await generate_in_subprocess("--namespace", backend.namespace, "--replicas", "2")
    kinds = [doc["kind"] for doc in docs]
    assert kinds == [
        "Namespace",  # the test's own: not one every cluster has
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ClusterRoleBinding",  # secure metrics: the operator's system:auth-delegator
        "ClusterRole",  # and <name>-metrics-reader, for the scraper
        "Secret",
        "Deployment",
        "Service",
        "Service",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    assert docs[0]["metadata"]["name"] == backend.namespace
    crd = docs[1]
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    metrics, _ = [doc for doc in docs if doc["kind"] == "Service"]
    assert metrics["metadata"]["name"] == "website-metrics"
    assert metrics["spec"]["ports"] == [{"name": "https", "port": 8443, "targetPort": 8443}]
    assert metrics["metadata"]["labels"]["app.kubernetes.io/component"] == "metrics"
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["path"] == "/convert"
    out = await dry_run(backend, tmp_path, yaml.safe_dump_all(docs))
    assert out.count("(server dry run)") == len(docs), out


NAMESPACED = (
    "Namespace",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "Secret",
    "Deployment",
    "Service",
)


async def test_manifests_create_the_namespace_they_deploy_into(
    backend: Backend, tmp_path: Path
) -> None:
    """``manifests --namespace NEW`` applied to a cluster without that namespace: its first
    document creates it (as kubebuilder's config/manager), so the operator's objects are
    created (kubectl's "namespaces ... not found" before). Applied for real: the namespace
    and the documents in it (the cluster-wide ones, webhooks included, are left out)."""
    namespace = f"{backend.namespace}-op"
    docs = await generate_in_subprocess("--namespace", namespace)
    assert (docs[0]["kind"], docs[0]["metadata"]["name"]) == ("Namespace", namespace)
    mine = [doc for doc in docs if doc["kind"] in NAMESPACED]
    try:
        out = await kubectl_apply(backend, tmp_path, yaml.safe_dump_all(mine))
        assert f"namespace/{namespace} created" in out, out
        assert out.count(" created") == len(mine), out
    finally:
        await send(backend.api, "DELETE", base="/api", url=f"namespaces/{namespace}", accept=(404,))
    default = await generate_in_subprocess("--namespace", "default")
    assert "Namespace" not in [doc["kind"] for doc in default]


def test_deployment_runs_what_reconcile_kit_run_accepts() -> None:
    docs = generate("--namespace", "ops", "--replicas", "2", "--watch-namespace", "team-a")
    (deployment,) = [doc for doc in docs if doc["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[:2] == ["run", TARGET]
    assert "--leader-elect" in args and "--webhook-cert-dir" in args
    assert args[args.index("--namespace") + 1] == "team-a"
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    # the same arguments parse (--help: the command line is valid without running it)
    result = CliRunner().invoke(main, [*args, "--help"])
    assert result.exit_code == 0, result.output
    roles = [doc for doc in docs if doc["kind"] == "Role"]
    assert {role["metadata"]["namespace"] for role in roles} == {"team-a", "ops"}
    (webhook_config,) = [d for d in docs if d["kind"] == "ValidatingWebhookConfiguration"]
    assert webhook_config["metadata"]["name"] == "website-validating"
    # no --cert-manager: the CA of the generated Secret, no cert-manager annotation
    assert "annotations" not in webhook_config["metadata"]
    (secret,) = [doc for doc in docs if doc["kind"] == "Secret"]
    assert [w["clientConfig"]["caBundle"] for w in webhook_config["webhooks"]] == [
        secret["data"]["ca.crt"]
    ]
    (service_ref,) = [w["clientConfig"]["service"] for w in webhook_config["webhooks"]]
    assert service_ref == {
        "namespace": "ops",
        "name": "website-webhook",
        "path": "/validate-examples-reconcile-kit-io-v1-website",
        "port": 443,
    }


def test_kustomize_directory(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    result = CliRunner().invoke(
        main, ["manifests", TARGET, "--image", "op:1", "--cert-manager", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    kustomization = yaml.safe_load((out / "kustomization.yaml").read_text())
    assert kustomization["resources"] == [
        "crds.yaml",
        "manager.yaml",
        "rbac.yaml",
        "webhooks.yaml",
        "certificates.yaml",
    ]
    certificates = list(yaml.safe_load_all((out / "certificates.yaml").read_text()))
    assert [doc["kind"] for doc in certificates] == ["Issuer", "Certificate", "Certificate"]
    assert certificates[1]["spec"]["secretName"] == "website-webhook-tls"
    assert certificates[2]["spec"]["secretName"] == "website-metrics-tls"


def stub_crd(plural: str, kind: str) -> dict[str, Any]:
    """A CRD accepting cert-manager's kind with any content (cert-manager's own CRDs are not
    available offline: this checks the documents' identity and namespacing, not their
    fields)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.cert-manager.io"},
        "spec": {
            "group": "cert-manager.io",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


async def test_cert_manager_manifests_are_accepted(backend: Backend, tmp_path: Path) -> None:
    await install_crds(
        backend.api, stub_crd("issuers", "Issuer"), stub_crd("certificates", "Certificate")
    )
    docs = await generate_in_subprocess("--namespace", backend.namespace, "--cert-manager")
    assert [doc["kind"] for doc in docs][-3:] == ["Issuer", "Certificate", "Certificate"]
    out = await dry_run(backend, tmp_path, yaml.safe_dump_all(docs))
    assert out.count("(server dry run)") == len(docs), out
