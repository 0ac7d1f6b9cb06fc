"""A fleet of embedded API servers for multi-cluster tests: the ``clusters`` fixture of
the pytest plugin, and :class:`EmbeddedFleet` (start, add, stop and restart servers).

``clusters`` is an :class:`EmbeddedFleet` with no server yet; ``await
clusters.start(10)`` starts ten embedded servers named ``cluster-0`` ... ``cluster-9``
(each persisting to a directory of its own, so a stopped server comes back with its
objects on the same port), and ``clusters.provider()`` is a
:class:`~reconcile_kit.multicluster.StaticProvider` of them. Every server is stopped
after the test.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import kr8s.asyncio
import pytest_asyncio

from ..client.transport import close_session
from ..multicluster.cluster import Kubeconfig
from ..multicluster.provider import StaticProvider
from .apiserver.server import APIServer

__all__ = ["EmbeddedFleet", "clusters"]


class EmbeddedFleet:
    """Embedded API servers by cluster name (see the module).

    Args:
        garbage_collection: whether the servers run the garbage collector (as
            :class:`~reconcile_kit.testing.APIServer`'s argument).
    """

    def __init__(self, *, garbage_collection: bool = True) -> None:
        self.garbage_collection = garbage_collection
        self.servers: dict[str, APIServer] = {}
        """The servers by cluster name (stopped ones too)."""
        self._apis: list[kr8s.asyncio.Api] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="reconcile-kit-fleet-")

    async def start(self, count: int, prefix: str = "cluster-") -> list[APIServer]:
        """Start ``count`` more servers named ``<prefix><n>`` (n counting on from the
        servers already there); returns them.

        Raises:
            OSError: a server cannot bind its port.
        """
        started = []
        for _ in range(count):
            name = f"{prefix}{len(self.servers)}"
            started.append(await self.add(name))
        return started

    async def add(self, name: str) -> APIServer:
        """Start one server for cluster ``name``; returns it.

        Raises:
            ValueError: ``name`` is taken.
            OSError: the server cannot bind its port.
        """
        if name in self.servers:
            raise ValueError(f"cluster {name} exists")
        server = APIServer(
            data_dir=Path(self._tmp.name) / name,
            garbage_collection=self.garbage_collection,
            kubeconfig_path=Path(self._tmp.name) / f"{name}.kubeconfig",
        )
        self.servers[name] = await server.start()
        return server

    def source(self, name: str) -> Kubeconfig:
        """How to reach cluster ``name`` (its kubeconfig file)."""
        return Kubeconfig(self.servers[name].kubeconfig)

    def provider(self) -> StaticProvider:
        """A :class:`~reconcile_kit.multicluster.StaticProvider` of every server."""
        return StaticProvider({name: self.source(name) for name in self.servers})

    async def api(self, name: str) -> kr8s.asyncio.Api:
        """A new kr8s asyncio Api on cluster ``name`` (closed after the test)."""
        api: kr8s.asyncio.Api = await kr8s.asyncio.Api(
            kubeconfig=self.servers[name].kubeconfig, bypass_factory=True
        )
        self._apis.append(api)
        return api

    async def stop_server(self, name: str) -> None:
        """Stop cluster ``name``'s server (unreachable: connections are refused)."""
        await self.servers[name].stop()

    async def restart_server(self, name: str) -> None:
        """Start cluster ``name``'s stopped server again, on its port, with its objects.

        Raises:
            OSError: the port was taken meanwhile.
        """
        await self.servers[name].start()

    async def close(self) -> None:
        """Close the apis made by :meth:`api`, stop every server, remove their files."""
        for api in self._apis:
            await close_session(api)
        for server in self.servers.values():
            await server.stop()
        self._tmp.cleanup()


@pytest_asyncio.fixture
async def clusters() -> AsyncIterator[EmbeddedFleet]:
    """An :class:`EmbeddedFleet` (``await clusters.start(n)``), stopped after the test."""
    fleet = EmbeddedFleet()
    try:
        yield fleet
    finally:
        await fleet.close()
