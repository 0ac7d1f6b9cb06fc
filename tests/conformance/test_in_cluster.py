"""The operator started the way a pod starts it (issue 18): `reconcile-kit run` with no
kubeconfig, the ServiceAccount's token, CA and namespace mounted at
/var/run/secrets/kubernetes.io/serviceaccount and KUBERNETES_SERVICE_HOST/PORT set, bound
only to its generated RBAC: it finds the API server as kr8s does in a pod and reconciles
the samples.

The mount is made in a private mount namespace (``unshare -m``, a tmpfs over /run), so the
host's /var/run is untouched; where unshare is not permitted the test is skipped."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml
from reconcile_kit.examples.manager import CRD_PATHS, build_manager

from reconcile_kit.cli.manifests import DeploymentSettings, documents
from reconcile_kit.testing import install_crds
from reconcile_kit.testing.backends import Backend

from .kube import ok, req, token_request
from .test_rbac_enforced import (
    RBAC_KINDS,
    owner_kind_mapped,
    path_of,
    samples_reconciled,
    service_account_api,
)

UNSHARE = shutil.which("unshare")
MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
POD_SHELL = (
    'mount -t tmpfs tmpfs /run && mkdir -p "$SA_MOUNT" && cp "$SA_SOURCE"/* "$SA_MOUNT"/ '
    '&& exec "$@"'
)


def mount_namespaces_permitted() -> bool:
    if UNSHARE is None:
        return False
    probe = subprocess.run(
        [UNSHARE, "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs tmpfs /run"],
        capture_output=True,
        timeout=10,
    )
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(
    not mount_namespaces_permitted(), reason="unshare -m (a private mount namespace) not permitted"
)


async def test_operator_runs_in_cluster_as_its_service_account(
    backend: Backend, tmp_path: Path
) -> None:
    ns = backend.namespace
    await install_crds(
        backend.api, *(doc for p in CRD_PATHS for doc in yaml.safe_load_all(p.read_text()))
    )
    operator = build_manager(health_port=None, metrics_port=None)
    operator.name = backend.unique("examples")
    assert operator.leader_election is not None
    operator.leader_election.namespace = ns  # the Lease lives with the operator
    operator.leader_election.name = operator.name
    settings = DeploymentSettings(target="operator.py:manager", namespace=ns)
    docs = [d for d in documents(operator, settings) if d["kind"] in RBAC_KINDS]
    for doc in docs:
        await ok(backend, "POST", path_of(doc), doc)
    token = await token_request(backend, ns, operator.name)
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(token["status"]["token"])
    cluster = backend.server.kubeconfig_dict()["clusters"][0]["cluster"]
    (account / "ca.crt").write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    (account / "namespace").write_text(ns)
    address = urlparse(backend.server.url)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KUBECONFIG",) and not key.startswith("PYTEST")
    }
    env.update(
        HOME=str(tmp_path),  # no ~/.kube/config: kr8s falls back to the service account
        KUBERNETES_SERVICE_HOST=str(address.hostname),
        KUBERNETES_SERVICE_PORT=str(address.port),
        SA_SOURCE=str(account),
        SA_MOUNT=MOUNT,
        EXAMPLES_HEALTH_PORT="off",
        EXAMPLES_METRICS_PORT="off",
    )
    # the target names the same Lease and ServiceAccount as the RBAC applied above
    shim = tmp_path / "operator.py"
    shim.write_text(
        "from reconcile_kit.examples.manager import build_manager\n"
        f"manager = build_manager(lease_namespace={ns!r}, health_port=None, metrics_port=None)\n"
        f"manager.name = {operator.name!r}\n"
        f"manager.leader_election.name = {operator.name!r}\n"
    )
    command = [str(Path(sys.executable).parent / "reconcile-kit"), "run", f"{shim}:manager"]
    sa_api = await service_account_api(backend, ns, operator.name, tmp_path)
    try:  # as deployed after its CRDs: kube-apiserver's admission maps their kinds first
        await owner_kind_mapped(sa_api, ns, "ConfigMapGenerator", "configmaps")
    finally:
        await sa_api._session.aclose()
    assert UNSHARE is not None
    process = await asyncio.create_subprocess_exec(
        UNSHARE,
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        POD_SHELL,
        "sh",
        *command,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        await samples_reconciled(backend, 60.0)
        lease = await ok(
            backend, "GET", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{operator.name}"
        )
        assert lease["spec"]["holderIdentity"]
    finally:
        if process.returncode is None:
            process.terminate()
        output, _ = await asyncio.wait_for(process.communicate(), 30)
        for doc in docs:
            if "namespace" not in doc["metadata"]:
                await req(backend, "DELETE", f"{path_of(doc)}/{doc['metadata']['name']}")
    text = output.decode()
    assert process.returncode == 0, text
    assert "forbidden" not in text.lower(), text  # ForbiddenError: "403 Forbidden: ..."
