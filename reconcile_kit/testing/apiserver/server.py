"""The embedded Kubernetes API server: an in-process stand-in for kube-apiserver."""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import yaml
from aiohttp import web

from ..tls import self_signed_certificate
from .admission import Admission
from .app import Handler
from .cluster import Cluster
from .controllers import ControlLoops
from .faults import Faults
from .persistence import SQLitePersistence
from .registry import Registry
from .requestlog import RequestLog
from .store import Store
from .watch import WatchHub

if TYPE_CHECKING:
    import kr8s.asyncio


class APIServer:
    """An in-process Kubernetes API server (aiohttp) that kr8s, kubectl and client-go accept.

    Args:
        host: address to bind (loopback by default).
        port: TCP port; 0 picks a free one.
        data_dir: directory whose SQLite file keeps state across restarts (None: memory).
        token: bearer token every request must carry (None: no authentication).
        tls: serve HTTPS with a self-signed certificate put in the kubeconfig.
        garbage_collection: run the garbage collector and namespace controller, as a
            cluster with kube-controller-manager does (False mimics envtest).
        cluster_role_aggregation: fill aggregated ClusterRoles' rules, as
            kube-controller-manager's clusterrole-aggregation controller does (False: they
            keep the rules they were written with, as on a control plane without it).
        bookmark_interval: seconds between BOOKMARK events on watches that allow them.
        history_size: watch events kept; older resourceVersions get 410 Expired.
        kubeconfig_path: where to write the kubeconfig (default: a fresh temporary file).
        record_requests: keep the request log (``requests``); a long-running server
            started from the command line turns it off so memory stays flat.
        crd_establish_delay: seconds from a CRD's create to its Established condition and
            its resources being served (kube-apiserver's controllers take ~10-40 ms: code
            that uses a new CRD without waiting fails here as on a cluster); 0: at once.
        authorization: ``"AlwaysAllow"`` (default) or ``"RBAC"``: requests are authorized
            by the stored Roles, ClusterRoles and bindings as kube-apiserver's RBAC
            authorizer does (``token`` is then the admin, in ``system:masters``; one is
            generated when not given), ServiceAccounts authenticate with TokenRequest
            tokens (``POST .../serviceaccounts/<name>/token``), and the
            OwnerReferencesPermissionEnforcement admission plugin applies. See
            :mod:`.rbac` for what is not implemented. kubectl (client-go) sends bearer
            tokens only over HTTPS: use ``tls=True`` with it.
        webhook_services: where admission webhooks configured by ``clientConfig.service``
            are served: ``{(namespace, name): "host:port"}`` (there is no kube-proxy);
            their certificate is still verified for ``NAME.NAMESPACE.svc``.

    Use ``async with APIServer() as server:`` (or ``await start()``/``await stop()``).
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: str | Path | None = None,
        token: str | None = None,
        tls: bool = False,
        garbage_collection: bool = True,
        cluster_role_aggregation: bool = True,
        bookmark_interval: float = 1.0,
        history_size: int = 100_000,
        kubeconfig_path: str | Path | None = None,
        record_requests: bool = True,
        crd_establish_delay: float = 0.02,
        authorization: str = "AlwaysAllow",
        webhook_services: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        if authorization not in ("AlwaysAllow", "RBAC"):
            raise ValueError(f"authorization is AlwaysAllow or RBAC, not {authorization!r}")
        if authorization == "RBAC" and token is None:
            token = secrets.token_urlsafe(24)
        self.authorization = authorization
        self.host = host
        self.port = port
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.token = token
        self.tls = tls
        self.garbage_collection = garbage_collection
        self.cluster_role_aggregation = cluster_role_aggregation
        self.bookmark_interval = bookmark_interval
        self.history_size = history_size
        self._kubeconfig_path = Path(kubeconfig_path) if kubeconfig_path else None
        self.requests = RequestLog()
        self.record_requests = record_requests
        self.crd_establish_delay = crd_establish_delay
        self.faults = Faults()
        self.webhook_services = dict(webhook_services or {})
        self._admission: Admission | None = None
        self._runner: web.AppRunner | None = None
        self._loops: ControlLoops | None = None
        self._cluster: Cluster | None = None
        self._hub: WatchHub | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._ca_pem: bytes | None = None
        self.url = ""
        self.kubeconfig = ""

    @property
    def cluster(self) -> Cluster:
        """The server's state and semantics (for tests that need to look inside)."""
        if self._cluster is None:
            raise RuntimeError("the API server is not running")
        return self._cluster

    async def start(self) -> APIServer:
        """Start serving; returns self. Raises OSError if the port cannot be bound."""
        persistence = SQLitePersistence(self.data_dir) if self.data_dir is not None else None
        store = Store(self.history_size, persistence)
        self._cluster = Cluster(store, Registry(), self.crd_establish_delay)
        self._hub = WatchHub(store)
        self._cluster.on_crd_removed.append(self._hub.close_key)
        self._loops = ControlLoops(
            self._cluster, self.garbage_collection, self.cluster_role_aggregation
        )
        self._loops.start()
        self._admission = Admission(self._cluster, self.webhook_services)
        handler = Handler(
            self._cluster,
            self._hub,
            self.faults,
            self.requests if self.record_requests else None,
            self.token,
            self.bookmark_interval,
            self._admission,
            self.authorization,
        )
        self._runner = web.AppRunner(
            handler.app(), handler_cancellation=True, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        ssl_context = None
        if self.tls:
            self._tmp = self._tmp or tempfile.TemporaryDirectory(prefix="reconcile-kit-")
            ssl_context, self._ca_pem = self_signed_certificate(Path(self._tmp.name), self.host)
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ssl_context)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1]
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://{self.host}:{self.port}"
        self._cluster.ensure_kubernetes_service(self.port)
        self.kubeconfig = str(self._write_kubeconfig())
        return self

    async def stop(self) -> None:
        """Close watches, stop serving and release storage."""
        if self._hub is not None:
            self._hub.close_all()
        if self._loops is not None:
            await self._loops.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._admission is not None:
            await self._admission.close()
            self._admission = None
        if self._cluster is not None:
            self._cluster.store.close()

    async def __aenter__(self) -> APIServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _write_kubeconfig(self) -> Path:
        if self._kubeconfig_path is not None:
            path = self._kubeconfig_path
            path.parent.mkdir(parents=True, exist_ok=True)
        else:
            self._tmp = self._tmp or tempfile.TemporaryDirectory(prefix="reconcile-kit-")
            path = Path(self._tmp.name) / f"kubeconfig-{self.port}"
        path.write_text(yaml.safe_dump(self.kubeconfig_dict(), sort_keys=False))
        return path

    def kubeconfig_dict(self) -> dict[str, Any]:
        """The kubeconfig (as a dict) that points a client at this server."""
        cluster: dict[str, Any] = {"server": self.url}
        if self._ca_pem is not None:
            import base64

            cluster["certificate-authority-data"] = base64.b64encode(self._ca_pem).decode()
        user: dict[str, Any] = {"token": self.token} if self.token else {}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "reconcile-kit", "cluster": cluster}],
            "users": [{"name": "reconcile-kit", "user": user}],
            "contexts": [
                {
                    "name": "reconcile-kit",
                    "context": {
                        "cluster": "reconcile-kit",
                        "user": "reconcile-kit",
                        "namespace": "default",
                    },
                }
            ],
            "current-context": "reconcile-kit",
        }

    async def api(self) -> kr8s.asyncio.Api:
        """A kr8s asyncio Api bound to this server's kubeconfig only."""
        if not self.kubeconfig:
            raise RuntimeError("the API server is not running")
        import kr8s.asyncio  # here: serving needs no client (kr8s takes ~0.4 s to import)

        return await kr8s.asyncio.api(kubeconfig=self.kubeconfig)

    def close_watches(self) -> int:
        """End every open watch stream, as an apiserver restart does; returns how many."""
        return self._hub.close_all() if self._hub is not None else 0

    def compact(self) -> None:
        """Compact the event history: watches and continue tokens from before now get 410."""
        self.cluster.store.compact()

    async def settled(self) -> None:
        """Wait until garbage collection and the other control loops have nothing pending."""
        if self._loops is not None:
            await self._loops.settled()

    @property
    def open_watches(self) -> int:
        return self._hub.open_count if self._hub is not None else 0
