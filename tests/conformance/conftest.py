"""Conformance suite: one test, run on the embedded server and on a real kube-apiserver.

Select the backends with ``pytest --backend embedded|real|both`` (the plugin's option; the
real one needs ``scripts/build-control-plane``). Each test gets a fresh namespace
(``backend.namespace``); cluster-scoped objects get unique names, because on ``real`` one
control plane serves the whole session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from reconcile_kit.testing.backends import Backend

from .kube import Widgets, crd_document, install_crd, req


async def _widgets(backend: Backend, status: bool) -> AsyncIterator[Widgets]:
    group = f"{backend.namespace}.example.com"
    crd = crd_document(group, status=status, scale=status)
    await install_crd(backend, crd)
    yield Widgets(group, crd, backend.namespace)
    await req(
        backend,
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}",
    )


@pytest_asyncio.fixture
async def widgets(backend: Backend) -> AsyncIterator[Widgets]:
    """The Widget CRD (status and scale subresources) in a group of this test's own."""
    async for item in _widgets(backend, status=True):
        yield item


@pytest_asyncio.fixture
async def plain_widgets(backend: Backend) -> AsyncIterator[Widgets]:
    """The Widget CRD without subresources: status is an ordinary field."""
    async for item in _widgets(backend, status=False):
        yield item
