"""Both example operators in one process: ConfigMapGenerator and IPPool.

    reconcile-kit run examples/manager.py:manager --embedded    # on a fresh embedded server
    reconcile-kit run examples/manager.py:manager               # against your kubeconfig
    reconcile-kit rbac examples/manager.py:manager

What the Manager adds to the two controllers (see examples/configmap_generator.py and
examples/ippool.py for the operators themselves):

- **CRDs on start.** An ``on_start`` hook installs the examples' CustomResourceDefinitions
  from the YAML files beside this one: create, or leave an existing one as it is (upgrading
  a CRD is ``kubectl apply``'s job), then wait until the API server reports it
  ``Established``, so the controllers' first LIST finds the resources. Hooks run on every
  replica before leader election, which is why create-or-skip must be idempotent.
- **Leader election.** Only the replica holding the Lease ``reconcile-kit-examples`` runs
  the controllers; a standby takes over when the leader stops renewing it.
- **Probes and metrics.** ``/healthz`` and ``/readyz`` on the health port, ``/metrics`` on
  the metrics port; the ports come from ``EXAMPLES_HEALTH_PORT`` / ``EXAMPLES_METRICS_PORT``
  (default 8081 / 8443, ``off`` to disable), or ``--health-port`` / ``--metrics-port``;
  metrics are served over HTTPS to a bearer token allowed ``get`` on ``/metrics``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kr8s
import yaml
from kr8s.asyncio.objects import CustomResourceDefinition
from reconcile_kit.examples import configmap_generator, ippool

from reconcile_kit import LeaderElection, Manager
from reconcile_kit.client.crds import wait_until_served

log = logging.getLogger("examples.manager")

CRD_PATHS = (configmap_generator.CRD_PATH, ippool.CRD_PATH)
SAMPLE_PATHS = (configmap_generator.SAMPLES_PATH, ippool.SAMPLES_PATH)


async def install_crds(api: Any, paths: Iterable[Path] = CRD_PATHS, *, timeout: int = 30) -> None:
    """Create the CRDs in ``paths`` unless they exist; wait until each is Established and
    served (``reconcile_kit.client.crds.wait_until_served``).

    Raises kr8s's ServerError when the server refuses one, TimeoutError when one is not
    served within ``timeout`` seconds.
    """
    for path in paths:
        for doc in yaml.safe_load_all(path.read_text()):
            crd = CustomResourceDefinition(doc, api=api)
            try:
                await crd.create()
                log.info("installed CRD %s", crd.name)
            except kr8s.ServerError as error:
                if error.response is None or error.response.status_code != 409:
                    raise
                log.info("CRD %s exists; left as it is", crd.name)
            await wait_until_served(api, crd.name, timeout=timeout)


def _port(variable: str, default: int) -> int | None:
    value = os.environ.get(variable, str(default))
    return None if value.lower() in ("", "off", "none") else int(value)


def build_manager(
    *,
    namespace: str | None = None,
    leader_election: bool = True,
    lease_namespace: str = "default",
    health_port: int | None = 8081,
    metrics_port: int | None = 8443,
) -> Manager:
    """A Manager running both example controllers (``namespace``: watch only that one)."""
    manager = Manager(
        name="reconcile-kit-examples",
        namespace=namespace,
        leader_election=(
            LeaderElection("reconcile-kit-examples", namespace=lease_namespace)
            if leader_election
            else None
        ),
        health_port=health_port,
        metrics_port=metrics_port,
    )
    manager.on_start(install_crds)
    manager.add(configmap_generator.controller(), configmap_generator.reconcile)
    manager.add(ippool.controller(), ippool.reconcile)
    # what `reconcile-kit rbac` cannot infer: the pool annotates the pods it watches, and
    # install_crds reads and creates CustomResourceDefinitions
    manager.add_rbac_rule([""], ["pods"], ["get", "patch"])
    manager.add_rbac_rule(
        ["apiextensions.k8s.io"],
        ["customresourcedefinitions"],
        ["create", "get", "list", "watch"],
        namespaced=False,
    )
    return manager


manager = build_manager(
    health_port=_port("EXAMPLES_HEALTH_PORT", 8081),
    metrics_port=_port("EXAMPLES_METRICS_PORT", 8443),
)
"""What ``reconcile-kit run examples/manager.py`` runs."""
