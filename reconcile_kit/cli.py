"""The ``reconcile-kit`` command line."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import click

from .testing.server import APIServer


@click.group()
@click.version_option(package_name="reconcile-kit")
def main() -> None:
    """reconcile_kit: Kubernetes controllers in Python asyncio."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=0, type=int, show_default=True, help="Port (0: a free one).")
@click.option(
    "--kubeconfig",
    "kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the kubeconfig (default: a temporary file).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep state in this directory across restarts (SQLite).",
)
@click.option("--token", default=None, help="Require this bearer token.")
@click.option("--no-gc", is_flag=True, help="No garbage collector or namespace controller.")
def apiserver(
    host: str,
    port: int,
    kubeconfig: Path | None,
    data_dir: Path | None,
    token: str | None,
    no_gc: bool,
) -> None:
    """Serve the embedded Kubernetes API server until SIGINT or SIGTERM."""
    server = APIServer(
        host=host,
        port=port,
        data_dir=data_dir,
        token=token,
        garbage_collection=not no_gc,
        kubeconfig_path=kubeconfig,
        record_requests=False,
    )
    asyncio.run(_serve(server))


async def _serve(server: APIServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        click.echo(f"embedded API server listening on {server.url}")
        click.echo(f"kubeconfig: {server.kubeconfig}")
        click.echo(f"try: KUBECONFIG={server.kubeconfig} kubectl get namespaces")
        await stop.wait()
        click.echo("stopping")
