"""Running one test against the embedded API server and a real kube-apiserver.

Part of the pytest plugin (``reconcile_kit.testing.pytest_plugin`` imports it):

* option ``--backend {embedded,real,both}`` (default ``embedded``, or
  ``$RECONCILE_KIT_BACKEND``) selects the backends a test using the ``backend`` fixture runs
  on; ``both`` parametrises it twice (test ids ``[embedded]`` and ``[real]``);
* marker ``@pytest.mark.backends("embedded", reason=...)`` limits a test to some backends
  (e.g. one that needs :attr:`APIServer.faults`, or a deliberate difference);
* fixture ``backend``: a :class:`Backend` with a fresh namespace and a kr8s client. The
  embedded server is started per test, without garbage collection (as the real control
  plane, which has no kube-controller-manager); the real :class:`~.controlplane.ControlPlane` once
  per session (fixture ``control_plane``; it takes seconds to start), so tests isolate
  themselves by namespace and by unique names for cluster-scoped objects.

Asking for ``real`` without binaries fails the test with the build command in the message.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Literal

import kr8s.asyncio
import pytest
import pytest_asyncio

from ..client.transport import close_session
from .apiserver.server import APIServer
from .controlplane import ControlPlane, ControlPlaneError, find_binaries

__all__ = [
    "Backend",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "selected_backends",
]

BackendName = Literal["embedded", "real"]

BACKENDS: tuple[BackendName, ...] = ("embedded", "real")


@dataclass
class Backend:
    """What a backend-parametrised test gets.

    Attributes:
        name: ``"embedded"`` or ``"real"``.
        server: the :class:`APIServer` or :class:`ControlPlane` (``url``, ``kubeconfig``).
        api: a kr8s asyncio Api whose default namespace is ``namespace``.
        namespace: a namespace created for this test.
    """

    name: BackendName
    server: APIServer | ControlPlane
    api: kr8s.asyncio.Api
    namespace: str

    @property
    def real(self) -> bool:
        """True on kube-apiserver."""
        return self.name == "real"

    @property
    def embedded(self) -> APIServer:
        """The embedded server (for ``requests``/``faults``); fails the test on ``real``."""
        if not isinstance(self.server, APIServer):
            pytest.fail(
                "this test needs the embedded server: mark it @pytest.mark.backends('embedded')"
            )
        return self.server

    def compact(self) -> None:
        """Compact the server's history up to now (see each server's ``compact``)."""
        self.server.compact()

    def unique(self, prefix: str) -> str:
        """A name unique in this session (for cluster-scoped objects): ``prefix-<hex>``."""
        return f"{prefix}-{secrets.token_hex(4)}"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--backend``."""
    group = parser.getgroup("reconcile_kit")
    group.addoption(
        "--backend",
        choices=("embedded", "real", "both"),
        default=os.environ.get("RECONCILE_KIT_BACKEND", "embedded"),
        help="API server(s) for tests using the `backend` fixture: the embedded server "
        "(default), a real kube-apiserver + etcd (scripts/build-control-plane), or both",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``backends`` marker."""
    config.addinivalue_line(
        "markers",
        "backends(*names, reason=''): run only on these backends "
        "('embedded', 'real'); reason says why (e.g. a deliberate difference)",
    )


def selected_backends(config: pytest.Config) -> tuple[BackendName, ...]:
    """The backends ``--backend`` asks for."""
    choice = config.getoption("--backend", default="embedded")
    if choice == "both":
        return BACKENDS
    return ("real",) if choice == "real" else ("embedded",)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``backend`` over the selected backends the test's marker allows."""
    if "backend" not in metafunc.fixturenames:
        return
    allowed: tuple[str, ...] = BACKENDS
    reason = ""
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is not None:
        allowed = tuple(marker.args)
        reason = str(marker.kwargs.get("reason", ""))
        unknown = set(allowed) - set(BACKENDS)
        if unknown:
            raise pytest.UsageError(
                f"unknown backend(s) {sorted(unknown)} in {metafunc.definition.nodeid}"
            )
    params = []
    for name in selected_backends(metafunc.config):
        marks = (
            []
            if name in allowed
            else [pytest.mark.skip(reason=f"not on the {name} backend: {reason or 'marked'}")]
        )
        params.append(pytest.param(name, marks=marks, id=name))
    metafunc.parametrize("backend", params, indirect=True)


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """A real control plane (etcd + kube-apiserver) shared by the session, with RBAC
    authorization (the tests' admin token is in ``system:masters``) and the
    OwnerReferencesPermissionEnforcement admission plugin on, as OpenShift runs it: a
    ServiceAccount setting ``blockOwnerDeletion`` needs ``update`` on the owner's
    finalizers.

    Fails (rather than skips) when the binaries are missing: a run asked for it.
    """
    if find_binaries() is None:
        pytest.fail(
            "--backend real needs etcd and kube-apiserver: run "
            "scripts/build-control-plane (or set RECONCILE_KIT_CONTROL_PLANE_DIR)"
        )
    try:
        plugins = "--enable-admission-plugins=OwnerReferencesPermissionEnforcement"
        plane = ControlPlane(apiserver_args=[plugins]).start_sync()
    except ControlPlaneError as error:
        pytest.fail(str(error))
    try:
        yield plane
    finally:
        plane.stop_sync()


async def _client(server: APIServer | ControlPlane, namespace: str) -> kr8s.asyncio.Api:
    # A new client (not kr8s's cache, which may hold one bound to an earlier test's loop).
    api: kr8s.asyncio.Api = await kr8s.asyncio.Api(
        kubeconfig=server.kubeconfig, namespace=namespace, bypass_factory=True
    )
    return api


async def _close(api: kr8s.asyncio.Api) -> None:
    await close_session(api)


@pytest_asyncio.fixture
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    """A :class:`Backend` for ``request.param`` (set by ``--backend``), with a fresh
    namespace ``t-<hex>``; the namespace is deleted afterwards (on ``real`` it then stays
    Terminating: no namespace controller, as in envtest)."""
    name: BackendName = request.param
    namespace = f"t-{secrets.token_hex(4)}"
    if name == "real":
        plane: ControlPlane = request.getfixturevalue("control_plane")
        async for item in _serve(name, plane, namespace):
            yield item
        return
    # No garbage collector, namespace controller or ClusterRole aggregation, like a control
    # plane without kube-controller-manager (and envtest): that difference is not under test. RBAC
    # authorization and OwnerReferencesPermissionEnforcement as on the real control plane.
    async with APIServer(
        garbage_collection=False, cluster_role_aggregation=False, authorization="RBAC", tls=True
    ) as server:
        async for item in _serve(name, server, namespace):
            yield item


async def _serve(
    name: BackendName, server: APIServer | ControlPlane, namespace: str
) -> AsyncIterator[Backend]:
    api = await _client(server, namespace)
    try:
        body = json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )
        async with api.call_api("POST", version="v1", url="namespaces", content=body):
            pass
        yield Backend(name, server, api, namespace)
        async with api.call_api(
            "DELETE", version="v1", url=f"namespaces/{namespace}", raise_for_status=False
        ):
            pass
    finally:
        await _close(api)
