"""The Website example's webhooks through the API server (issue 17): its manager serves and
registers them; ``kubectl apply`` of an invalid Website is refused with the handler's
message, the mutating webhook labels, v1alpha1 objects are converted and reconciled."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
import yaml
from reconcile_kit.examples import website

from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend
from reconcile_kit.webhooks import SelfSignedCertificates

from .kube import ok, req
from .test_website import ensure_crd

KUBECTL = shutil.which("kubectl")


async def kubectl_apply(
    backend: Backend, tmp_path: Path, doc: dict[str, object]
) -> tuple[int, str]:
    assert KUBECTL is not None
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(doc))
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--cache-dir",
        str(tmp_path / "kubectl-cache"),
        "apply",
        "-f",
        str(path),
        env={**os.environ, "KUBECONFIG": str(backend.server.kubeconfig)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, (out + err).decode()


def site(namespace: str, name: str, version: str = "v1", **spec: object) -> dict[str, object]:
    return {
        "apiVersion": f"{website.GROUP}/{version}",
        "kind": "Website",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
async def test_website_webhooks_through_the_api_server(backend: Backend, tmp_path: Path) -> None:
    await ensure_crd(backend)
    operator = website.manager(namespace=backend.namespace)
    operator.api = backend.api
    operator.handle_signals = False
    webhooks = operator.webhooks
    assert webhooks is not None
    webhooks.host, webhooks.requested_port = "127.0.0.1", 0
    webhooks.certificates = SelfSignedCertificates(["127.0.0.1"])
    webhooks.register_host = "127.0.0.1"
    webhooks.name = backend.unique("website")
    only_here = {"matchLabels": {"kubernetes.io/metadata.name": backend.namespace}}
    for hook in webhooks.webhooks:
        hook.namespace_selector = only_here  # one control plane serves every test
    ns = backend.namespace
    path = f"/apis/{website.GROUP}/{{}}/namespaces/{ns}/websites"
    running = asyncio.create_task(operator.run())
    try:
        await eventually(operator.ready, 20.0, what="website manager ready")

        async def storage_rebuilt() -> bool:
            # registering the conversion makes kube-apiserver rebuild the CRD's storage:
            # 503 "apiserver is shutting down" for a moment
            for version in ("v1", "v1alpha1"):
                if (await req(backend, "GET", path.format(version))).status != 200:
                    return False
            return True

        await eventually(storage_rebuilt, 10.0, interval=0.05, what="Website storage rebuilt")
        code, output = await kubectl_apply(
            backend, tmp_path, site(ns, "huge", image="nginx:1.27", replicas=20)
        )
        assert code == 1, output
        assert (
            'admission webhook "vwebsite.examples.reconcile-kit.io" denied the request: '
            "spec.replicas: 20 is more than 10; annotate examples.reconcile-kit.io/large: "
            '"true" to allow it'
        ) in output
        code, output = await kubectl_apply(
            backend, tmp_path, site(ns, "shop", image="nginx:latest", replicas=2)
        )
        assert code == 0, output
        assert "spec.image: 'nginx:latest' is ':latest'; pin a version or a digest" in output
        shop = await ok(backend, "GET", path.format("v1") + "/shop")
        assert shop["metadata"]["labels"] == {website.TIER: "web"}
        await ok(
            backend,
            "POST",
            path.format("v1alpha1"),
            site(ns, "old", "v1alpha1", image="nginx:1.27", size=3),
        )
        old = await ok(backend, "GET", path.format("v1") + "/old")
        assert old["spec"] == {"image": "nginx:1.27", "replicas": 3, "port": 8080}

        async def reconciled() -> bool:
            reply = await req(backend, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/old")
            back = await req(backend, "GET", path.format("v1alpha1") + "/old")
            conditions = (back.body.get("status") or {}).get("conditions")
            return reply.status == 200 and reply.body["spec"]["replicas"] == 3 and bool(conditions)

        await eventually(reconciled, 20.0, what="the v1alpha1 Website reconciled")
        back = await ok(backend, "GET", path.format("v1alpha1") + "/old")
        assert back["spec"] == {"image": "nginx:1.27", "size": 3, "port": 8080}
        assert {c["type"] for c in back["status"]["conditions"]} >= {"Ready"}
    finally:
        operator.stop()
        await asyncio.wait_for(running, 30.0)
    crd = await ok(
        backend,
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/websites.examples.reconcile-kit.io",
    )
    assert crd["spec"]["conversion"] == {"strategy": "None"}
