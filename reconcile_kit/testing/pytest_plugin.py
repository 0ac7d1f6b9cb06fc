"""pytest plugin (loaded by the entry point ``reconcile_kit``, :mod:`.pytest_entry`, when the
``[testing]`` extra is installed): fixtures ``apiserver`` and ``kube``.

``apiserver`` is a fresh embedded :class:`~reconcile_kit.testing.APIServer` per test;
``kube`` is a kr8s asyncio Api bound to it. Both need pytest-asyncio.

Also (from :mod:`.backends`): option ``--backend embedded|real|both``, marker ``backends``,
fixtures ``backend`` (a test's namespace on the embedded server or a real kube-apiserver)
and ``control_plane`` (the session's real control plane); from :mod:`.multicluster`,
fixture ``clusters`` (a fleet of embedded servers for multi-cluster tests).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import kr8s.asyncio
import pytest_asyncio

from ..client.transport import close_session
from .apiserver.server import APIServer
from .backends import (  # hooks and fixtures re-exported for pytest
    backend,
    control_plane,
    pytest_addoption,
    pytest_configure,
    pytest_generate_tests,
)
from .multicluster import clusters

__all__ = [
    "apiserver",
    "backend",
    "clusters",
    "control_plane",
    "kube",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
]


@pytest_asyncio.fixture
async def apiserver() -> AsyncIterator[APIServer]:
    """A running embedded API server, stopped after the test."""
    async with APIServer() as server:
        yield server


@pytest_asyncio.fixture
async def kube(apiserver: APIServer) -> AsyncIterator[kr8s.asyncio.Api]:
    """A kr8s asyncio Api bound to the ``apiserver`` fixture's kubeconfig."""
    api = await apiserver.api()
    yield api
    await close_session(api)
