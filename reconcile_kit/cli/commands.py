"""The ``reconcile-kit`` command line.

Only click is imported at module level: the runtime, kr8s and the embedded API server are
imported by the commands that use them, so ``--help`` and ``--version`` start fast.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .loops import LOOPS, run_on

if TYPE_CHECKING:
    import kr8s.asyncio

    from ..client.errors import APIError
    from ..manager.manager import Manager
    from ..testing.apiserver.server import APIServer
    from ..webhooks.certs import CertificateFiles

__all__ = ["main"]

F = TypeVar("F", bound=Callable[..., Any])

_PORT = click.IntRange(0, 65535)  # every port option: a usage error out of range
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@click.group()
@click.version_option(package_name="reconcile-kit")
def main() -> None:
    """reconcile_kit: Kubernetes controllers in Python asyncio."""


_WEBHOOK_HELP = (
    "Where the Service an admission webhook's clientConfig.service names is served"
    " (repeatable; TLS is verified for NAME.NAMESPACE.svc)."
)
_FAIL_HELP = (
    "Fail that share of all resource requests with STATUS (e.g. 500:0.05; repeatable;"
    " for chaos tests, as APIServer.faults.fail)."
)
_LATENCY_HELP = (
    "Delay that share of all resource requests by SECONDS (e.g. 0.25:0.05; repeatable;"
    " for chaos tests, as APIServer.faults.latency)."
)


def _repeated(flag: str, dest: str, metavar: str, help: str) -> Callable[[F], F]:
    """A repeatable option whose values are parsed together by ``_PARSERS[dest]``."""
    return click.option(
        flag,
        dest,
        multiple=True,
        metavar=metavar,
        callback=lambda _ctx, _param, values: _PARSERS[dest](values),
        help=help,
    )


_Check = Callable[[click.Context, click.Parameter, Any], Any]  # Any: the option's value


def _kubernetes_name(rule: str) -> _Check:
    """A click callback checking a name as Kubernetes does: ``rule`` ``label`` (a
    namespace: DNS-1123 label), ``subdomain`` (a ServiceAccount: DNS-1123
    subdomain) or ``path`` (RBAC objects: a path segment); a usage error (exit code 2)
    naming the option, the value and the rule."""

    def check(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        from ..meta import validation

        if value is None:
            return None
        errors = {
            "label": validation.dns1123_label_errors,
            "subdomain": validation.dns1123_subdomain_errors,
            "path": validation.path_segment_errors,
        }[rule](value)
        if errors:
            raise click.BadParameter(f"{value!r}: {'; '.join(errors)}")
        return value

    return check


def _non_empty(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A click callback refusing an empty (or blank) value: a usage error."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty")
    return value


_NAMESPACE = _kubernetes_name("label")
_SERVICE_ACCOUNT = _kubernetes_name("subdomain")
_RING = _kubernetes_name("label")  # a label value of its objects, as Sharding checks
_RBAC_NAME = _kubernetes_name("path")


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=0, type=_PORT, show_default=True, help="Port (0: a free one).")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the kubeconfig (default: a temporary file).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep state in this directory across restarts (SQLite).",
)
@click.option(
    "--token",
    help="Require this bearer token (served over HTTPS unless --no-tls: kubectl, as"
    " client-go, sends no bearer token over plain HTTP).",
)
@click.option(
    "--tls/--no-tls",
    default=None,
    help="Serve HTTPS with a self-signed certificate, its CA in the kubeconfig (default:"
    " with --token or --rbac).",
)
@click.option(
    "--rbac",
    is_flag=True,
    help="Authorize requests with RBAC, as kube-apiserver's --authorization-mode=RBAC:"
    " --token (or a generated one, in the kubeconfig) is the admin's, in system:masters;"
    " ServiceAccounts authenticate with the tokens this server issued (TokenRequest)."
    " Served over HTTPS unless --no-tls.",
)
@click.option("--no-gc", is_flag=True, help="No garbage collector or namespace controller.")
@click.option(
    "--crd-establish-delay",
    default=0.02,
    show_default=True,
    type=click.FloatRange(0),
    help="Seconds until a new CRD is Established and served (0: at once).",
)
@_repeated("--webhook-service", "webhook_services", "NAMESPACE/NAME=HOST:PORT", _WEBHOOK_HELP)
@_repeated("--fail", "failures", "STATUS:FRACTION", _FAIL_HELP)
@_repeated("--latency", "latencies", "SECONDS:FRACTION", _LATENCY_HELP)
def apiserver(
    host: str,
    port: int,
    kubeconfig: Path | None,
    data_dir: Path | None,
    token: str | None,
    tls: bool | None,
    rbac: bool,
    no_gc: bool,
    crd_establish_delay: float,
    webhook_services: dict[tuple[str, str], str],
    failures: list[tuple[int, float]],
    latencies: list[tuple[float, float]],
) -> None:
    """Serve the embedded Kubernetes API server until SIGINT or SIGTERM."""
    _require_embedded_server("reconcile-kit apiserver")
    from ..testing.apiserver.server import APIServer

    if tls is None:
        tls = token is not None or rbac
    elif token is not None and not tls:
        click.echo("warning: --no-tls with --token: kubectl sends no token over HTTP", err=True)
    server = APIServer(
        host=host,
        port=port,
        data_dir=data_dir,
        token=token,
        tls=tls,
        authorization="RBAC" if rbac else "AlwaysAllow",
        garbage_collection=not no_gc,
        kubeconfig_path=kubeconfig,
        record_requests=False,
        crd_establish_delay=crd_establish_delay,
        webhook_services=webhook_services,
    )
    for status, fraction in failures:
        server.faults.fail(status, times=None, fraction=fraction)
    for seconds, fraction in latencies:
        server.faults.latency(seconds, fraction=fraction)
    asyncio.run(_serve(server))


def _require_embedded_server(command: str) -> None:
    """A ClickException (exit code 1, no traceback) naming ``pip install
    'reconcile-kit[testing]'`` when the embedded API server's packages are missing."""
    from ..client.extras import MissingExtraError, require_extra

    try:
        require_extra("testing", feature=f"{command} (the embedded API server)")
    except MissingExtraError as error:
        raise click.ClickException(str(error)) from error


def _failures(values: tuple[str, ...]) -> list[tuple[int, float]]:
    """``--fail STATUS:FRACTION`` values, checked as ``Faults.fail`` checks them."""
    from ..testing.apiserver.faults import Faults

    failures = []
    for value in values:
        status, _, fraction = value.partition(":")
        try:
            parsed = (int(status), float(fraction))
        except ValueError:
            raise click.BadParameter(f"{value!r}: expected STATUS:FRACTION") from None
        if parsed[0] not in Faults.FAILURE_CODES or not 0.0 <= parsed[1] <= 1.0:
            raise click.BadParameter(
                f"{value!r}: STATUS one of {Faults.FAILURE_CODES}, FRACTION within 0 and 1"
            )
        failures.append(parsed)
    return failures


def _latencies(values: tuple[str, ...]) -> list[tuple[float, float]]:
    """``--latency SECONDS:FRACTION`` values, checked as ``Faults.latency`` checks them."""
    latencies = []
    for value in values:
        seconds, _, fraction = value.partition(":")
        try:
            parsed = (float(seconds), float(fraction or "1"))
        except ValueError:
            raise click.BadParameter(f"{value!r}: expected SECONDS:FRACTION") from None
        if parsed[0] < 0 or not 0.0 <= parsed[1] <= 1.0:
            raise click.BadParameter(f"{value!r}: SECONDS >= 0, FRACTION within 0 and 1")
        latencies.append(parsed)
    return latencies


def _webhook_services(values: tuple[str, ...]) -> dict[tuple[str, str], str]:
    """``--webhook-service NAMESPACE/NAME=HOST:PORT`` values as APIServer takes them."""
    services: dict[tuple[str, str], str] = {}
    for value in values:
        service, _, address = value.partition("=")
        namespace, _, name = service.partition("/")
        host, _, port = address.rpartition(":")
        if not (namespace and name and host and port.isdigit()):
            raise click.BadParameter(f"{value!r}: expected NAMESPACE/NAME=HOST:PORT")
        services[(namespace, name)] = address
    return services


async def _serve(server: APIServer) -> None:
    """Serve until SIGINT or SIGTERM.

    Raises:
        click.ClickException: the address cannot be bound (--host or --port named).
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    started = False
    try:
        async with server:
            started = True
            click.echo(f"embedded API server listening on {server.url}")
            click.echo(f"kubeconfig: {server.kubeconfig}")
            click.echo(f"try: KUBECONFIG={server.kubeconfig} kubectl get namespaces")
            await stop.wait()
            click.echo("stopping")
    except OSError as error:
        if started:
            raise
        raise click.ClickException(_bind_failed(error, server.host, server.port)) from error


def _bind_failed(error: OSError, host: str, port: int) -> str:
    """One line for a server that could not listen on ``host:port``, naming the option
    (--host or --port) at fault."""
    import errno
    import os
    import socket

    if isinstance(error, socket.gaierror):
        return f"--host {host}: cannot resolve it ({error.strerror})"
    if error.errno == errno.EADDRINUSE:
        return f"--port {port}: address already in use"
    if error.errno == errno.EACCES:
        return f"--port {port}: permission denied (below 1024 needs privileges)"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"--host {host}: {os.strerror(error.errno).lower()}"
    return f"--host {host} --port {port}: {error.strerror or error}"


_PARSERS: dict[str, Callable[[tuple[str, ...]], object]] = {
    "webhook_services": _webhook_services,
    "failures": _failures,
    "latencies": _latencies,
}


@main.command()
@click.argument("target")
@click.option(
    "--embedded",
    is_flag=True,
    help="Run against a fresh embedded API server (its kubeconfig is printed).",
)
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False),
    help="Use this kubeconfig (default: kr8s discovery: KUBECONFIG, ~/.kube/config,"
    " then the in-cluster service account).",
)
@click.option("--namespace", callback=_NAMESPACE, help="Only watch this namespace.")
@click.option("--leader-elect", is_flag=True, help="Run only while holding the leader lease.")
@click.option("--health-port", type=_PORT, help="Serve /healthz and /readyz.")
@click.option(
    "--metrics-port",
    type=_PORT,
    help="Serve /metrics (over HTTPS with authentication and authorization unless"
    " --metrics-secure=false).",
)
@click.option(
    "--metrics-secure",
    type=click.BOOL,
    help="Serve /metrics over HTTPS, answering only scrapes whose bearer token is allowed"
    " `get` on /metrics (TokenReview, SubjectAccessReview), as kubebuilder's scaffold;"
    " --metrics-secure=false: plain HTTP, no checks (default: the manager's, true).",
)
@click.option(
    "--metrics-cert-dir",
    type=click.Path(file_okay=False),
    help="Serve secure metrics with tls.crt/tls.key from this directory (a mounted Secret),"
    " reloaded when renewed; default: a self-signed certificate generated at start.",
)
@click.option(
    "--qps",
    type=click.FloatRange(min=0, min_open=True),
    help="Client-side rate limit of the API requests, in requests per second (client-go's"
    " QPS; default: the manager's, which is no limit unless TARGET sets one).",
)
@click.option(
    "--burst",
    type=click.IntRange(min=1),
    help="Requests at once before --qps applies (client-go's Burst; default 10 with --qps).",
)
@click.option(
    "--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--log-level",
    type=click.Choice(_LOG_LEVELS, case_sensitive=False),
    default="INFO",
    show_default=True,
)
@click.option(
    "--loop",
    type=click.Choice(LOOPS),
    default="asyncio",
    show_default=True,
    help="The event loop: asyncio's own, uvloop (the [uvloop] extra: its loop and TLS"
    " transport are C), or auto: uvloop when installed (as uvicorn's --loop auto).",
)
@click.option(
    "--leader-election-namespace",
    callback=_NAMESPACE,
    help="The Leases' namespace with --leader-elect or --shard (default: --namespace, else"
    " default).",
)
@click.option(
    "--shard",
    is_flag=True,
    help="Run active-active: join a ring of replicas that share the objects of the"
    " controllers (see README: Sharding); other replicas run with the same flags.",
)
@click.option(
    "--shard-identity",
    help="This replica's name in the ring (default: the host name and a random suffix).",
)
@click.option("--shard-ring", callback=_RING, help="The ring's name (default: the manager's name).")
@click.option("--webhook-port", type=_PORT, help="Serve the manager's webhooks on this port.")
@click.option(
    "--webhook-cert-dir",
    type=click.Path(file_okay=False),
    help="Serve the webhooks with tls.crt/tls.key from this directory (a mounted Secret,"
    " e.g. cert-manager's), reloaded when renewed.",
)
def run(
    target: str,
    embedded: bool,
    kubeconfig: str | None,
    log_format: str,
    log_level: str,
    loop: str,
    **flags: Any,  # Any: each flag as its click option types it (see _RunOptions)
) -> None:
    """Run the Manager (or controllers) TARGET defines: module:attr or path.py[:attr].

    SIGTERM or SIGINT at any point (loading TARGET, starting the embedded server, on_start
    hooks, leader election, running) stops it gracefully, with exit code 0.
    """
    from ..client.tracing import configure_from_environment
    from ..manager.logs import configure_logging

    if embedded and kubeconfig is not None:
        raise click.UsageError("--embedded and --kubeconfig exclude each other")
    if embedded:
        _require_embedded_server("reconcile-kit run --embedded")
    configure_logging(log_format, log_level.upper())
    try:
        configure_from_environment()  # OTEL_TRACES_EXPORTER & co. (the tracing extra)
    except RuntimeError as err:
        raise click.ClickException(str(err)) from err
    options = _RunOptions(**flags)
    run_on(loop, _run(target, embedded, kubeconfig, options))


class _RunOptions:
    """What ``reconcile-kit run``'s flags change in the loaded manager: its keyword
    arguments of the same names (``namespace``, ``leader_elect``, ``shard``,
    ``metrics_port``, ``qps``...; a flag not given is None or False)."""

    def __init__(self, **flags: Any) -> None:
        self.flags = flags

    def flag(self, name: str) -> Any:  # Any: the flag's value as click typed it
        """The value of the flag ``name`` (None when not given)."""
        return self.flags.get(name)

    def configure(self, manager: Manager) -> None:
        """Apply the flags to ``manager``; UsageError for flags that do not fit it."""
        from ..manager.leaderelection import LeaderElection

        if self.flag("namespace") is not None:
            manager.namespace = self.flag("namespace")
        if self.flag("leader_elect") and manager.leader_election is None:
            lease_namespace = (
                self.flag("leader_election_namespace") or manager.namespace or "default"
            )
            manager.leader_election = LeaderElection(
                f"{manager.name}-leader", namespace=lease_namespace
            )
        if (self.flag("shard_ring") or self.flag("shard_identity")) and not self.flag("shard"):
            raise click.UsageError("--shard-ring/--shard-identity need --shard")
        if self.flag("leader_election_namespace") and not (
            self.flag("leader_elect") or self.flag("shard")
        ):
            raise click.UsageError("--leader-election-namespace needs --leader-elect or --shard")
        if self.flag("shard") and manager.sharding is None:
            from ..manager.sharding import Sharding

            settings: dict[str, Any] = {
                "namespace": self.flag("leader_election_namespace")
                or manager.namespace
                or "default"
            }
            if self.flag("shard_identity") is not None:
                settings["identity"] = self.flag("shard_identity")
            try:
                manager.sharding = Sharding(self.flag("shard_ring") or manager.name, **settings)
            except ValueError as error:
                raise click.UsageError(f"--shard: {error}") from None
        if self.flag("health_port") is not None:
            manager.health_port = self.flag("health_port")
        if self.flag("metrics_port") is not None:
            manager.metrics_port = self.flag("metrics_port")
        if self.flag("metrics_secure") is not None:
            manager.metrics_secure = self.flag("metrics_secure")
        if self.flag("metrics_cert_dir") is not None:
            if not manager.metrics_secure:
                raise click.UsageError("--metrics-cert-dir needs secure metrics")
            manager.metrics_certificates = _certificate_files(
                "metrics", self.flag("metrics_cert_dir")
            )
        if (
            manager.metrics_secure
            and manager.metrics_port is not None
            and manager.metrics_port == manager.health_port
        ):
            raise click.UsageError(
                "--metrics-port: secure metrics (HTTPS) need a port other than --health-port"
                " (or --metrics-secure=false)"
            )
        manager.qps = self.flag("qps") if self.flag("qps") is not None else manager.qps
        manager.burst = self.flag("burst") if self.flag("burst") is not None else manager.burst
        if manager.burst is not None and manager.qps is None:
            raise click.UsageError("--burst needs --qps (the manager sets no qps)")
        webhooks = manager.webhooks
        if (self.flag("webhook_port") or self.flag("webhook_cert_dir")) and webhooks is None:
            raise click.UsageError("--webhook-port/--webhook-cert-dir: TARGET has no webhooks")
        if webhooks is not None and self.flag("webhook_port") is not None:
            webhooks.requested_port = self.flag("webhook_port")
        if webhooks is not None and self.flag("webhook_cert_dir") is not None:
            webhooks.certificates = _certificate_files("webhook", self.flag("webhook_cert_dir"))


def _certificate_files(purpose: str, directory: str) -> CertificateFiles:
    """The certificate files in ``directory`` (``--PURPOSE-cert-dir``), loaded now.

    Raises:
        click.ClickException: a file is missing or is no PEM certificate or key (the
            option, the directory and the file named).
    """
    import ssl

    from ..webhooks.certs import CertificateFiles

    files = CertificateFiles(Path(directory), purpose=purpose)
    option = f"--{purpose}-cert-dir {directory}"
    try:
        files.ssl_context()
    except ssl.SSLError as error:
        raise click.ClickException(
            f"{option}: {purpose} serving certificate: {files.cert_name} and"
            f" {files.key_name} are not a PEM certificate and its key ({error})"
        ) from error
    except OSError as error:  # FileNotFoundError: the file named
        raise click.ClickException(f"{option}: {error}") from error
    return files


async def _run(target: str, embedded: bool, kubeconfig: str | None, options: _RunOptions) -> None:
    from ..client.connect import KubeconfigError
    from ..client.errors import APIError

    loaded: list[Manager] = []
    stopping = asyncio.Event()

    def stop(sig: signal.Signals) -> None:
        if not stopping.is_set():
            logging.getLogger(__name__).info("%s received; stopping gracefully", sig.name)
        stopping.set()
        for manager in loaded:
            manager.stop()

    # for the whole command: a signal before the manager runs, or after, is graceful too
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop, sig)
    try:
        await _load_and_run(target, embedded, kubeconfig, options, loaded, stopping)
    except KubeconfigError as error:  # none found, or not one: one line, exit 1
        hint = ": pass --kubeconfig or --embedded" if kubeconfig is None else ""
        raise click.ClickException(f"{error}{hint}") from error
    except APIError as error:  # refused or never reached: one line, exit 1
        raise click.ClickException(_api_error_line(error)) from error
    except OSError as error:  # a port the manager could not bind: the option named
        line = _port_error_line(error)
        if line is None:
            raise
        raise click.ClickException(line) from error
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


_PORT_OPTIONS = {
    "health_port ": "--health-port ",
    "metrics_port ": "--metrics-port ",
    "webhooks port ": "--webhook-port ",
}


def _port_error_line(error: OSError) -> str | None:
    """``--health-port 8081: address already in use`` for the Manager's bind error
    (``health_port 8081: ...``); None for another OSError."""
    text = error.strerror or ""
    for attribute, option in _PORT_OPTIONS.items():
        if text.startswith(attribute):
            return option + text.removeprefix(attribute)
    return None


def _api_error_line(error: APIError) -> str:
    """What ``run`` prints for an APIError out of the manager: its message, and for a 401
    what to check."""
    from ..client.errors import UnauthorizedError

    if isinstance(error, UnauthorizedError):
        return f"{error} (the kubeconfig's credentials are missing, wrong or expired)"
    return str(error)


async def _load_and_run(
    target: str,
    embedded: bool,
    kubeconfig: str | None,
    options: _RunOptions,
    loaded: list[Manager],
    stopping: asyncio.Event,
) -> None:
    from ..client.connect import connect

    manager = await _load_manager(target)
    manager.handle_signals = False  # this command handles them, before and after run()
    loaded.append(manager)
    if stopping.is_set():
        return
    options.configure(manager)
    if not embedded:
        if kubeconfig is None:
            await _run_manager(manager)  # on its api (kr8s discovery when it has none)
        else:
            await _run_on(manager, await connect(kubeconfig))
        return
    from ..testing.apiserver.server import APIServer

    async with APIServer() as server:
        click.echo(f"embedded API server: {server.url}")
        click.echo(f"kubeconfig: {server.kubeconfig}", err=False)
        await _run_on(manager, await server.api(), before=_announce_embedded(server))


async def _install_crds(manager: Manager, api: kr8s.asyncio.Api) -> list[str]:
    """Install the CRDs of ``manager``'s typed kinds (:func:`.crd.manager_crds`) in a
    fresh embedded server; their names."""
    from ..testing.crds import install_crds
    from .crd import manager_crds

    documents = manager_crds(manager)
    await install_crds(api, *documents)
    return [document["metadata"]["name"] for document in documents]


async def _load_manager(target: str) -> Manager:
    """The Manager TARGET defines (:func:`.target.load_manager`); a TARGET that cannot be
    loaded is a ClickException (``Error: TARGET: ...``, exit code 1), the same for every
    subcommand."""
    from .target import TargetError, load_manager

    try:
        return await load_manager(target)
    except TargetError as err:
        raise click.ClickException(str(err)) from err


def _announce_embedded(
    server: APIServer,
) -> Callable[[Manager, kr8s.asyncio.Api], Awaitable[None]]:
    """What ``run --embedded`` does before the manager starts: install its CRDs, then say
    how to reach the server."""

    async def announce(manager: Manager, api: kr8s.asyncio.Api) -> None:
        crds = await _install_crds(manager, api)
        if crds:
            click.echo(f"CRDs installed: {', '.join(crds)}")
        click.echo(f"try: KUBECONFIG={server.kubeconfig} kubectl get all -A")

    return announce


async def _run_on(
    manager: Manager,
    api: kr8s.asyncio.Api,
    before: Callable[[Manager, kr8s.asyncio.Api], Awaitable[None]] | None = None,
) -> None:
    """Run ``manager`` on ``api``, which this command created and so closes (also when
    ``before``, awaited first, fails)."""
    from ..client.transport import close_session

    manager.api = api
    try:
        if before is not None:
            await before(manager, api)
        await _run_manager(manager)
    finally:
        await close_session(api)


async def _run_manager(manager: Manager) -> None:
    """Run ``manager``, or the MultiClusterManager it belongs to (which runs it)."""
    from ..multicluster.manager import fleet_of

    fleet = fleet_of(manager)
    await (fleet.run() if fleet is not None else manager.run())


@main.command()
@click.argument("target")
@click.option("--name", callback=_RBAC_NAME, help="The roles' names (default: the manager's name).")
@click.option(
    "--namespace",
    callback=_NAMESPACE,
    help="For a manager run with --namespace: a Role and RoleBinding in that namespace (plus"
    " a ClusterRole only for cluster-scoped kinds).",
)
@click.option(
    "--leader-elect",
    is_flag=True,
    help="Include the Lease Role `run --leader-elect` needs (in the Lease's namespace).",
)
@click.option(
    "--shard",
    is_flag=True,
    help="Include the Lease Role `run --shard` needs (in the ring's namespace).",
)
@click.option("--shard-ring", callback=_RING, help="The ring's name (default: the manager's name).")
@click.option(
    "--service-account",
    callback=_SERVICE_ACCOUNT,
    help="The ServiceAccount the bindings name (default: the manager's name).",
)
@click.option(
    "--service-account-namespace",
    callback=_NAMESPACE,
    help="Its namespace (default: --namespace, else the manager's namespace, else default).",
)
@click.option(
    "--metrics-secure",
    type=click.BOOL,
    help="Include what `run`'s secure metrics need (the auth-delegator binding and the"
    " metrics-reader ClusterRole); default: as the manager says (true unless it sets"
    " metrics_secure=False). --metrics-secure=false leaves them out.",
)
def rbac(
    target: str,
    name: str | None,
    namespace: str | None,
    leader_elect: bool,
    shard: bool,
    shard_ring: str | None,
    service_account: str | None,
    service_account_namespace: str | None,
    metrics_secure: bool | None,
) -> None:
    """Print the RBAC YAML (roles and their bindings to a ServiceAccount) the manager TARGET
    needs, run as ``reconcile-kit run TARGET`` with the same --namespace, --leader-elect and
    --shard."""
    from ..manager.leaderelection import LeaderElection
    from .rbac import render

    if shard_ring is not None and not shard:
        raise click.UsageError("--shard-ring needs --shard")
    manager = asyncio.run(_load_manager(target))
    if namespace is not None:
        manager.namespace = namespace
    if leader_elect and manager.leader_election is None:
        manager.leader_election = LeaderElection(
            f"{manager.name}-leader", namespace=manager.namespace or "default"
        )
    if shard and manager.sharding is None:
        from ..manager.sharding import Sharding

        manager.sharding = Sharding(
            shard_ring or manager.name, namespace=manager.namespace or "default"
        )
    yaml_text = render(
        manager,
        name,
        service_account=service_account,
        service_account_namespace=service_account_namespace,
        metrics_secure=metrics_secure,
    )
    click.echo(yaml_text, nl=False)


@main.command()
@click.argument("target")
@click.option(
    "--namespace",
    default="default",
    show_default=True,
    callback=_NAMESPACE,
    help="Where the operator runs.",
)
@click.option(
    "--image", required=True, callback=_non_empty, help="The container image of the operator."
)
@click.option(
    "--replicas",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="More than one turns leader election on.",
)
@click.option("--shard", is_flag=True, help="Run the replicas active-active (`run --shard`).")
@click.option("--watch-namespace", callback=_NAMESPACE, help="Only watch this namespace.")
@click.option(
    "--cert-manager",
    is_flag=True,
    help="Have cert-manager issue the webhook serving certificate (a self-signed Issuer and a"
    " Certificate; it injects the CA). Without it, a certificate is generated here: a Secret"
    " and the configurations' caBundle (valid 365 days, not renewed).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False),
    help="Write a kustomize directory here instead of printing one YAML stream.",
)
def manifests(target: str, output: str | None, **deployment: Any) -> None:
    """Print the manifests that run the manager TARGET in a cluster: CRDs, ServiceAccount,
    RBAC, Deployment (``reconcile-kit run TARGET``), Services, webhook configurations.
    With --shard the replicas join a ring named after the manager."""
    from .manifests import DeploymentSettings, render, write_kustomize

    manager = asyncio.run(_load_manager(target))
    # the options of the same names: namespace, image, replicas, shard, watch_namespace...
    settings = DeploymentSettings(target=target, **deployment)
    if output is None:
        click.echo(render(manager, settings), nl=False)
    else:
        for path in write_kustomize(manager, settings, Path(output)):
            click.echo(str(path))
    if manager.webhooks is not None and not settings.cert_manager:
        click.echo(
            f"note: the webhook serving certificate (Secret {manager.name}-webhook-tls in"
            f" {settings.namespace}, its private key included) was generated now, self-signed,"
            " valid 365 days and not renewed; --cert-manager has cert-manager issue and renew it",
            err=True,
        )


@main.command()
@click.argument("name")
@click.option(
    "--directory",
    type=click.Path(file_okay=False),
    help="Where to write the project (default: ./NAME).",
)
@click.option(
    "--kind",
    help="The custom resource's kind (default: NAME without -operator, in CamelCase:"
    " guestbook-operator gives Guestbook, my-operator MyOperator).",
)
@click.option(
    "--group",
    help="Its API group (default: what the kind is made of, lower case, + .example.com:"
    " guestbook.example.com, myoperator.example.com).",
)
def init(name: str, directory: str | None, kind: str | None, group: str | None) -> None:
    """Scaffold a new operator project NAME (a DNS label, e.g. guestbook-operator): a typed
    resource and its reconcile, a test on the embedded API server, a Dockerfile, a README."""
    from .scaffold import ProjectNameError, ProjectNames, scaffold

    try:
        names = ProjectNames(name, kind, group)
    except ProjectNameError as err:  # a usage error naming the argument or option at fault
        given = {"kind": kind, "group": group}.get(err.part) is not None
        hint = _hint(err.part if given else "name")
        raise click.BadParameter(str(err), param_hint=hint) from None
    try:
        written = scaffold(Path(directory or name), names)
    except FileExistsError as err:
        hint = _hint("directory" if directory else "name")
        raise click.BadParameter(str(err), param_hint=hint) from None
    for path in written:
        click.echo(f"created {path}")
    click.echo(f"next: cd {directory or name} && pip install -e '.[test]' && pytest")


def _hint(part: str) -> str:
    """How a usage error of ``init`` names ``part``: ``'NAME'`` or ``'--kind'``."""
    return "'NAME'" if part == "name" else f"'--{part}'"


@main.command()
@click.argument("target")
def crd(target: str) -> None:
    """Print the CustomResourceDefinition YAML of the typed resources TARGET names: a module
    or file (every CustomResource class in it), or ``module:Class``. A kind defined in
    several versions (one class each) gives one CRD with all of them."""
    from .crd import render_crds

    try:
        click.echo(render_crds(target), nl=False)
    except (ValueError, ImportError) as err:
        raise click.ClickException(str(err)) from err


@main.command()
@click.option(
    "--objects",
    type=click.IntRange(1),
    default=200,
    show_default=True,
    help="How many ConfigMapGenerators to create.",
)
@click.option("--keep", is_flag=True, help="Leave the server running (prints its kubeconfig).")
@click.option(
    "--timeout",
    default=120.0,
    show_default=True,
    type=click.FloatRange(0, min_open=True),
    help="Seconds to converge.",
)
def demo(objects: int, keep: bool, timeout: float) -> None:
    """Run the example operators on an embedded API server and watch them converge."""
    _require_embedded_server("reconcile-kit demo")
    from .demo import run_demo

    raise SystemExit(run_demo(objects, keep, timeout))
