"""A real Kubernetes control plane (etcd + kube-apiserver) for integration tests.

:class:`ControlPlane` is the counterpart of the embedded :class:`~.server.APIServer` backed
by the real thing: it starts a pinned ``etcd`` and ``kube-apiserver`` on loopback ports,
authenticates an admin user (group ``system:masters``) by bearer token, writes a
kubeconfig and waits for ``/readyz``, like controller-runtime's envtest
(``pkg/internal/testing/controlplane``). There is no kube-controller-manager, so (as in
envtest) nothing garbage-collects dependents and deleted namespaces stay ``Terminating``.

The binaries come from ``scripts/build-control-plane``, which builds them from Go modules
into ``${XDG_CACHE_HOME:-~/.cache}/reconcile-kit/control-plane/<version>/``; see
:func:`find_binaries` for the other places looked at.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import kr8s.asyncio
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from .tls import self_signed_certificate

__all__ = ["ControlPlane", "ControlPlaneError", "default_binary_dir", "find_binaries"]

KUBERNETES_VERSION = "v1.32.5"
"""The kube-apiserver release ``scripts/build-control-plane`` builds (controlplane/versions.env)."""
ETCD_VERSION = "v3.5.16"
"""The etcd release built with it: the one kubernetes' own go.mod requires."""
BINARIES = ("etcd", "kube-apiserver")
_PORT_ATTEMPTS = 3
ENV_BINARY_DIR = "RECONCILE_KIT_CONTROL_PLANE_DIR"
"""Environment variable naming a directory holding ``etcd`` and ``kube-apiserver``."""


class ControlPlaneError(RuntimeError):
    """The control plane could not be started (missing binaries, a process exited, timeout).

    The message carries the tail of the failing process's log.
    """


def default_binary_dir(version: str = KUBERNETES_VERSION) -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/reconcile-kit/control-plane/<version>``, where
    ``scripts/build-control-plane`` puts the binaries for ``version`` (e.g. ``"v1.32.5"``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "reconcile-kit" / "control-plane" / version


def _complete(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in BINARIES)


def find_binaries(binary_dir: str | Path | None = None) -> Path | None:
    """The first directory holding executable ``etcd`` and ``kube-apiserver``, or None.

    Looked at in order: ``binary_dir``; ``$RECONCILE_KIT_CONTROL_PLANE_DIR``;
    ``$KUBEBUILDER_ASSETS`` (envtest's convention, e.g. from ``setup-envtest``); the build
    script's cache directory, :func:`default_binary_dir`. An explicitly given directory
    (argument or variable) that lacks a binary is not skipped over: the result is None.
    """
    if binary_dir is not None:
        return Path(binary_dir) if _complete(Path(binary_dir)) else None
    for variable in (ENV_BINARY_DIR, "KUBEBUILDER_ASSETS"):
        value = os.environ.get(variable)
        if value:
            return Path(value) if _complete(Path(value)) else None
    directory = default_binary_dir()
    return directory if _complete(directory) else None


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class _Process:
    """One child process with its output in a log file."""

    def __init__(self, name: str, argv: list[str], log_path: Path, append: bool = False) -> None:
        self.name = name
        self.log_path = log_path
        self._log: IO[bytes] = log_path.open("ab" if append else "wb")
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )

    def check_running(self) -> None:
        code = self.popen.poll()
        if code is not None:
            raise ControlPlaneError(
                f"{self.name} exited with status {code}; log "
                f"{self.log_path}:\n{_tail(self.log_path)}"
            )

    def stop(self, timeout: float) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()


class ControlPlane:
    """etcd and kube-apiserver as child processes, with the embedded server's surface.

    Like :class:`~reconcile_kit.testing.APIServer`: ``url``, ``kubeconfig`` (a file path),
    ``await api()``, ``compact()``, ``async with ControlPlane() as cp:``; also usable
    synchronously (``with ControlPlane() as cp:`` or :meth:`start_sync`), e.g. from a
    session-scoped fixture, since the processes are not tied to an event loop.

    Args:
        binary_dir: directory holding ``etcd`` and ``kube-apiserver`` (None: see
            :func:`find_binaries`).
        host: loopback address both processes listen on.
        token: the admin user's bearer token (None: a random one). The user is ``admin`` in
            group ``system:masters``, which RBAC allows everything.
        startup_timeout: seconds to wait for etcd health and then for ``/readyz``.
        stop_timeout: seconds each process gets after SIGTERM before SIGKILL.
        kubeconfig_path: where to write the kubeconfig (default: in the temporary directory).
        apiserver_args: extra ``--flag=value`` arguments for kube-apiserver (appended, so they
            override the defaults).
        etcd_args: extra arguments for etcd.

    Raises (from start): :class:`ControlPlaneError` when the binaries are missing, a process
    exits or readiness is not reached in time.
    """

    def __init__(
        self,
        *,
        binary_dir: str | Path | None = None,
        host: str = "127.0.0.1",
        token: str | None = None,
        startup_timeout: float = 90.0,
        stop_timeout: float = 10.0,
        kubeconfig_path: str | Path | None = None,
        apiserver_args: Sequence[str] = (),
        etcd_args: Sequence[str] = (),
    ) -> None:
        self.binary_dir = Path(binary_dir) if binary_dir is not None else None
        self.host = host
        self.token = token or secrets.token_urlsafe(24)
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.apiserver_args = list(apiserver_args)
        self.etcd_args = list(etcd_args)
        self._kubeconfig_path = Path(kubeconfig_path) if kubeconfig_path else None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._etcd: _Process | None = None
        self._apiserver: _Process | None = None
        self._apiserver_argv: list[str] = []
        self._ca_pem = b""
        self.url = ""
        self.etcd_url = ""
        self.kubeconfig = ""
        self.workdir: Path | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> ControlPlane:
        """Start etcd and kube-apiserver and wait until ready; returns self.

        :meth:`start_sync` in a worker thread (typically 3-5 s). Cancelling the await does
        not interrupt that thread; call :meth:`stop` afterwards to clean up.
        """
        return await asyncio.to_thread(self.start_sync)

    async def stop(self) -> None:
        """Stop both processes and remove the temporary directory (see stop_sync)."""
        await asyncio.to_thread(self.stop_sync)

    def start_sync(self) -> ControlPlane:
        """Blocking :meth:`start`: start etcd, wait for its ``/health``, start kube-apiserver,
        wait for ``/readyz`` and for the ``default`` namespace. Returns self.

        Raises :class:`ControlPlaneError`; nothing is left running when it does.
        """
        binaries = find_binaries(self.binary_dir)
        if binaries is None:
            where = (
                self.binary_dir
                or f"${ENV_BINARY_DIR}, $KUBEBUILDER_ASSETS or {default_binary_dir()}"
            )
            raise ControlPlaneError(
                f"no etcd and kube-apiserver in {where}; "
                "build them with scripts/build-control-plane"
            )
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            self._tmp = tempfile.TemporaryDirectory(prefix="reconcile-kit-cp-")
            self.workdir = Path(self._tmp.name)
            _running.add(self)
            try:
                self._start_etcd(binaries)
                self._start_apiserver(binaries)
                return self
            except ControlPlaneError as error:
                self.stop_sync()
                # A port picked free was taken before the process bound it: pick again.
                if "address already in use" not in str(error) or attempt == _PORT_ATTEMPTS:
                    raise
            except BaseException:
                self.stop_sync()
                raise
        raise AssertionError("unreachable")

    def stop_sync(self) -> None:
        """Blocking :meth:`stop`: SIGTERM kube-apiserver then etcd (SIGKILL after
        ``stop_timeout`` seconds each), then delete the data and certificate directory."""
        for process in (self._apiserver, self._etcd):
            if process is not None:
                process.stop(self.stop_timeout)
        self._apiserver = self._etcd = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        _running.discard(self)

    async def __aenter__(self) -> ControlPlane:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def __enter__(self) -> ControlPlane:
        return self.start_sync()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_sync()

    # -- processes -------------------------------------------------------------------------

    def _start_etcd(self, binaries: Path) -> None:
        assert self.workdir is not None
        client, peer = _free_port(self.host), _free_port(self.host)
        self.etcd_url = f"http://{self.host}:{client}"
        peer_url = f"http://{self.host}:{peer}"
        argv = [
            str(binaries / "etcd"),
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
            *self.etcd_args,
        ]
        self._etcd = _Process("etcd", argv, self.workdir / "etcd.log")
        deadline = time.monotonic() + self.startup_timeout
        self._wait(self._etcd, deadline, lambda: self._etcd_healthy())

    def _etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as response:
                return bool(json.load(response).get("health") == "true")
        except (OSError, ValueError):
            return False

    def _start_apiserver(self, binaries: Path) -> None:
        assert self.workdir is not None
        certs = self.workdir / "certs"
        certs.mkdir()
        _, self._ca_pem = self_signed_certificate(certs, self.host)
        signing_key = ec.generate_private_key(ec.SECP256R1())
        sa_key, sa_pub = certs / "sa.key", certs / "sa.pub"
        sa_key.write_bytes(
            signing_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        sa_pub.write_bytes(
            signing_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(f'{self.token},admin,admin,"system:masters"\n')
        port = _free_port(self.host)
        self.url = f"https://{self.host}:{port}"
        argv = [
            str(binaries / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            f"--cert-dir={certs}",
            f"--tls-cert-file={certs / 'tls.crt'}",
            f"--tls-private-key-file={certs / 'tls.key'}",
            f"--secure-port={port}",
            f"--bind-address={self.host}",
            f"--advertise-address={self.host}",
            "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-issuer={self.url}/",
            f"--service-account-key-file={sa_pub}",
            f"--service-account-signing-key-file={sa_key}",
            f"--token-auth-file={tokens}",
            "--authorization-mode=RBAC",
            "--allow-privileged=true",
            # Pods would need the "default" ServiceAccount, which only
            # kube-controller-manager creates.
            "--disable-admission-plugins=ServiceAccount",
            "--profiling=false",
            *self.apiserver_args,
        ]
        self._apiserver_argv = argv
        self._apiserver = _Process("kube-apiserver", argv, self.workdir / "kube-apiserver.log")
        self.kubeconfig = str(self._write_kubeconfig())
        self._wait_apiserver_ready()

    async def restart_apiserver(self, *, crash: bool = True) -> None:
        """Stop kube-apiserver and start it again on the same port, certificates and etcd:
        every watch and connection drops and the server answers again once ready. For
        chaos tests. ``crash``: SIGKILL (a crashed server: down about 3-5 s here), else
        SIGTERM (kube-apiserver's graceful shutdown first drains its requests: about 12 s).

        Raises:
            ControlPlaneError: it is not running, or not ready again in time.
        """
        await asyncio.to_thread(self._restart_apiserver_sync, crash)

    def _restart_apiserver_sync(self, crash: bool) -> None:
        if self._apiserver is None or self.workdir is None:
            raise ControlPlaneError("kube-apiserver is not running")
        if crash:
            self._apiserver.popen.kill()
        self._apiserver.stop(self.stop_timeout)
        log = self.workdir / "kube-apiserver.log"
        self._apiserver = _Process("kube-apiserver", self._apiserver_argv, log, append=True)
        self._wait_apiserver_ready()

    def _wait_apiserver_ready(self) -> None:
        assert self._apiserver is not None
        deadline = time.monotonic() + self.startup_timeout
        context = ssl.create_default_context(cadata=self._ca_pem.decode())
        self._wait(self._apiserver, deadline, lambda: self._get("/readyz", context) == 200)
        # /readyz can pass before the bootstrap controller has created "default".
        self._wait(
            self._apiserver,
            deadline,
            lambda: self._get("/api/v1/namespaces/default", context) == 200,
        )

    def _get(self, path: str, context: ssl.SSLContext) -> int:
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Bearer {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5, context=context) as response:
                status: int = response.status
                return status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            return 0

    def _wait(self, process: _Process, deadline: float, ready: Callable[[], bool]) -> None:
        """Poll ``ready()`` (a readiness endpoint; there is no event to await) every 50 ms."""
        while not ready():
            process.check_running()
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"{process.name} not ready after {self.startup_timeout}s; log "
                    f"{process.log_path}:\n{_tail(process.log_path)}"
                )
            time.sleep(0.05)

    # -- clients ---------------------------------------------------------------------------

    def kubeconfig_dict(self) -> dict[str, Any]:
        """The kubeconfig (as a dict): this server, its CA, the admin token, namespace
        ``default``."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "reconcile-kit",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self._ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": "reconcile-kit",
                    "context": {
                        "cluster": "reconcile-kit",
                        "user": "admin",
                        "namespace": "default",
                    },
                }
            ],
            "current-context": "reconcile-kit",
        }

    def _write_kubeconfig(self) -> Path:
        if self._kubeconfig_path is not None:
            path = self._kubeconfig_path
            path.parent.mkdir(parents=True, exist_ok=True)
        else:
            assert self.workdir is not None
            path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(self.kubeconfig_dict(), sort_keys=False))
        path.chmod(0o600)
        return path

    async def api(self) -> kr8s.asyncio.Api:
        """A new kr8s asyncio Api for this control plane's kubeconfig.

        Not kr8s's per-thread-and-loop cache (``kr8s.asyncio.api()``): a control plane may
        outlive event loops (session fixtures), and a cached client bound to a closed loop
        would be handed out again. Close it with
        ``await reconcile_kit.client.transport.close_session(api)`` if needed.
        """
        if not self.kubeconfig:
            raise RuntimeError("the control plane is not running")
        api: kr8s.asyncio.Api = await kr8s.asyncio.Api(
            kubeconfig=self.kubeconfig, bypass_factory=True
        )
        return api

    # -- storage ---------------------------------------------------------------------------

    def pids(self) -> dict[str, int]:
        """Process ids of the running ``kube-apiserver`` and ``etcd`` (to measure them)."""
        return {
            process.name: process.popen.pid
            for process in (self._apiserver, self._etcd)
            if process is not None
        }

    def _etcd_call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.etcd_url}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            result: dict[str, Any] = json.load(response)
            return result

    def etcd_revision(self) -> int:
        """etcd's current revision (= the newest resourceVersion kube-apiserver wrote)."""
        key = base64.b64encode(b"/registry/").decode()
        header = self._etcd_call("/v3/kv/range", {"key": key, "limit": 1})["header"]
        return int(header["revision"])

    def compact(self) -> None:
        """Compact etcd's history up to now (kube-apiserver itself does so every 5 minutes).

        Continue tokens issued before then get 410 Expired. Watches are served from
        kube-apiserver's watch cache, which keeps its own window of recent events, so a
        watch from an older resourceVersion may still succeed (unlike the embedded server,
        whose ``compact()`` expires both).
        """
        self._etcd_call(
            "/v3/kv/compaction", {"revision": str(self.etcd_revision()), "physical": True}
        )

    @property
    def logs(self) -> dict[str, Path]:
        """The processes' log files (``etcd``, ``kube-apiserver``), while running."""
        if self.workdir is None:
            return {}
        return {name: self.workdir / f"{name}.log" for name in BINARIES}


_running: set[ControlPlane] = set()


@atexit.register
def _stop_leftovers() -> None:
    for plane in list(_running):
        with contextlib.suppress(Exception):
            plane.stop_sync()
