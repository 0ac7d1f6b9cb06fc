"""kr8s's own test suite, run against the embedded API server or a real kube-apiserver.

The tests come from the installed kr8s wheel (``kr8s/tests``; one module here per module
there, see ``test_*.py``) with its fixtures (``kr8s/conftest.py``). kr8s runs them on a kind
cluster through pytest-kind's ``k8s_cluster``; :class:`Cluster` stands in for it, pointing
at the backend ``--backend`` selects (``both``: every test on each, ids ``[embedded]`` and
``[real]``). ``exclusions.toml`` lists the tests left out (they need a kubelet or
kube-controller-manager, or kind's client-certificate kubeconfig or admin name, or fail on
both backends) and the expected failures on one backend, each with its reason.

Like kind's, the stand-in cluster has a pod in ``kube-system`` (kind's control plane runs as
pods there; here one that never runs, ``component=kube-apiserver`` as kind's is labelled):
kr8s's tests list, select and tabulate pods there.

The embedded server runs as the conformance suite's does (RBAC authorization, TLS, no
garbage collector or namespace controller, like the real control plane, which has no
kube-controller-manager), in a thread of its own: kr8s's fixtures call ``kubectl``
synchronously from inside the tests' event loops.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import shutil
import subprocess
import threading
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("kr8s.tests")

from kr8s.conftest import (  # noqa: E402, F401  (kr8s's fixtures, for the tests here only)
    HERE,
    bad_pod_spec,
    ensure_new_api_between_tests,
    example_crd_spec,
    example_deployment_spec,
    example_pod_spec,
    example_service_spec,
    kubectl_proxy,
    run_id,
    serviceaccount,
)

from reconcile_kit.testing import APIServer  # noqa: E402
from reconcile_kit.testing.backends import selected_backends  # noqa: E402
from reconcile_kit.testing.controlplane import ControlPlane  # noqa: E402

HERE_DIR = Path(__file__).parent
EXCLUSIONS = HERE_DIR / "exclusions.toml"
KUBECTL = shutil.which("kubectl")
START_TIMEOUT = 30.0
KUBECTL_TIMEOUT = 60.0
TEST_TIMEOUT = 60  # seconds per test, with pytest-timeout: kr8s's waits have none
SEEDED_POD = ("kube-system", "kube-apiserver-stand-in")
PAUSE = "registry.k8s.io/pause:3.10"


@dataclass
class Cluster:
    """What kr8s's tests use of pytest-kind's ``KindCluster``."""

    kubeconfig_path: Path
    kubectl_path: str

    def kubectl(self, *args: str) -> str:
        """Run kubectl against this cluster; its stdout. Fails with kubectl's stderr when
        it exits non-zero."""
        done = subprocess.run(
            [self.kubectl_path, *args],
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig_path)},
            capture_output=True,
            text=True,
            timeout=KUBECTL_TIMEOUT,
        )
        if done.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: exit {done.returncode}: {done.stderr}")
        return done.stdout


class ThreadedAPIServer:
    """An :class:`APIServer` serving from an event loop in a thread of its own."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="embedded-apiserver", daemon=True
        )

    def __enter__(self) -> APIServer:
        self._thread.start()
        try:
            self._run(self.server.__aenter__())
        except BaseException:
            self._end_loop()
            raise
        return self.server

    def __exit__(self, *exc: object) -> None:
        try:
            self._run(self.server.__aexit__(None, None, None))
        finally:
            self._end_loop()

    def _end_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT)
        self._loop.close()

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(START_TIMEOUT)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One ``k8s_cluster`` per selected backend (the package's tests run on each in turn)."""
    if "k8s_cluster" in metafunc.fixturenames:
        names = selected_backends(metafunc.config)
        metafunc.parametrize("k8s_cluster", names, indirect=True, scope="package", ids=names)


@pytest.fixture(scope="package")
def k8s_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """pytest-kind's fixture on the embedded server or the real control plane; like kr8s's
    own, it points ``$KUBECONFIG`` at it (restored afterwards)."""
    if KUBECTL is None:
        pytest.skip("kr8s's fixtures need kubectl on the PATH")
    if request.param == "real":
        plane: ControlPlane = request.getfixturevalue("control_plane")
        yield from _pointed_at(Path(plane.kubeconfig), KUBECTL)
        return
    server = APIServer(garbage_collection=False, authorization="RBAC", tls=True)
    with ThreadedAPIServer(server):
        yield from _pointed_at(Path(server.kubeconfig), KUBECTL)


def _pointed_at(kubeconfig: Path, kubectl: str) -> Iterator[Cluster]:
    saved = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    cluster = Cluster(kubeconfig, kubectl)
    namespace, name = SEEDED_POD
    labels = "component=kube-apiserver,tier=control-plane"
    try:
        cluster.kubectl("run", name, "-n", namespace, f"--image={PAUSE}", f"--labels={labels}")
        yield cluster
        cluster.kubectl("delete", "pod", name, "-n", namespace, "--wait=false")
    finally:
        if saved is None:
            del os.environ["KUBECONFIG"]
        else:
            os.environ["KUBECONFIG"] = saved


@pytest.fixture(scope="package")
def k8s_token(k8s_cluster: Cluster) -> Iterator[str]:
    """kr8s's ``k8s_token`` (its ServiceAccount ``pytest`` and a token for it), scoped as
    ``k8s_cluster`` is here."""
    manifest = str(HERE / "tests" / "resources" / "serviceaccount.yaml")
    k8s_cluster.kubectl("apply", "-f", manifest)
    yield k8s_cluster.kubectl("create", "token", "pytest")
    k8s_cluster.kubectl("delete", "-f", manifest)


@pytest.fixture(autouse=True)
def ns(k8s_cluster: Cluster, run_id: str) -> Iterator[str]:  # noqa: F811
    """kr8s's ``ns`` with 8 random hex digits, not 4: without a namespace controller (on
    both backends, as without kube-controller-manager) a deleted namespace stays
    Terminating, and 4 digits collide in one run (kind's controller removes them)."""
    name = f"kr8s-pytest-{run_id}-{uuid.uuid4().hex[:8]}"
    k8s_cluster.kubectl("create", "namespace", name)
    yield name
    k8s_cluster.kubectl("delete", "namespace", name, "--wait=false")


@pytest.fixture(autouse=True)
def httpx_logs_as_kr8s_expects() -> Iterator[None]:
    """kr8s's tests read httpx's INFO request lines (test_api_resources_cache); a
    reconcile_kit command run earlier in the session (``reconcile_kit.manager.logs``)
    set the ``httpx`` logger to WARNING."""
    logger = logging.getLogger("httpx")
    level = logger.level
    logger.setLevel(logging.NOTSET)
    yield
    logger.setLevel(level)


@pytest.fixture
def ensure_gc() -> Iterator[None]:
    """kr8s's ``ensure_gc`` (its tests of dynamic classes ask for it; the wheel's conftest
    lacks it): a garbage collection before and after the test."""
    gc.collect()
    yield
    gc.collect()


def _exclusions() -> dict[str, Any]:
    with EXCLUSIONS.open("rb") as file:
        return tomllib.load(file)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the excluded tests and mark the expected failures (strict), by
    ``module::function`` as ``exclusions.toml`` names them."""
    listed = _exclusions()
    skips = {
        test: group["reason"] for group in listed.get("exclude", []) for test in group["tests"]
    }
    xfails = {
        (entry["test"], entry["backend"]): entry["reason"] for entry in listed.get("xfail", [])
    }
    for item in items:
        if not isinstance(item, pytest.Function) or HERE_DIR not in Path(item.path).parents:
            continue
        item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))
        key = f"{Path(item.path).name}::{item.originalname}"
        if key in skips:
            item.add_marker(pytest.mark.skip(reason=skips[key]))
        backend = item.callspec.params.get("k8s_cluster")
        reason = xfails.get((key, backend))
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
