"""HTTP helpers for the conformance suite: raw requests that keep status, body and headers."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from reconcile_kit.client.crds import wait_until_served
from reconcile_kit.testing.backends import Backend

from ..crds import widget_crd
from ..kubehttp import send, split_path

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
T = TypeVar("T")


@dataclass
class Reply:
    """One response: status code, decoded JSON body (or text) and headers."""

    status: int
    body: Any
    headers: httpx.Headers

    def __iter__(self) -> Any:  # status, body = await req(...)
        return iter((self.status, self.body))


async def req(
    backend: Backend,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = "application/json",
    params: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> Reply:
    """Send one request through the backend's kr8s session (no retries, no raising)."""
    status, decoded, headers = await send(
        backend.api, method, path, body, content_type, params, raw
    )
    return Reply(status, decoded, headers)


def admin_http(backend: Backend) -> httpx.AsyncClient:
    """An HTTP client to the backend as the tests' admin (its token, if any), sending paths
    as written (kr8s's ``call_api`` adds a slash to a path without a resource); TLS is not
    verified (loopback)."""
    token = backend.server.token
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(base_url=backend.server.url, headers=headers, verify=False, timeout=10)


async def kubectl(backend: Backend, cache_dir: Path, *args: str) -> tuple[int, str, str]:
    """Run kubectl against ``backend`` (its own discovery cache in ``cache_dir``): exit code,
    stdout and stderr."""
    ran = await asyncio.to_thread(
        subprocess.run,
        [
            "kubectl",
            "--kubeconfig",
            backend.server.kubeconfig,
            "--cache-dir",
            str(cache_dir),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return ran.returncode, ran.stdout, ran.stderr


async def ok(backend: Backend, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
    """:func:`req` that fails the test unless the status is 2xx; returns the body."""
    reply = await req(backend, method, path, body, **kwargs)
    assert 200 <= reply.status < 300, (method, path, reply.status, reply.body)
    return reply.body


def status_body(
    code: int, reason: str, message: str, details: dict[str, Any] | None
) -> dict[str, Any]:
    """A Status object as kube-apiserver writes it (apimachinery api/errors)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


async def watch_events(
    backend: Backend,
    path: str,
    params: dict[str, str],
) -> AsyncIterator[dict[str, Any]]:
    """Yield decoded watch events until the server ends the stream."""
    lines = watch_lines(backend, path, params)
    try:
        async for line in lines:
            yield json.loads(line)
    finally:
        await lines.aclose()


async def watch_lines(backend: Backend, path: str, params: dict[str, str]) -> AsyncIterator[bytes]:
    """Yield a watch's lines as the server sent them (JSON bytes) until it ends the stream."""
    base, version, url = split_path(path)
    async with backend.api.call_api(
        "GET", version=version, base=base, url=url, stream=True, params={"watch": "1", **params}
    ) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.strip():
                yield line.encode()


async def collect(events: AsyncIterator[T], count: int, timeout: float = 15.0) -> list[T]:
    """The next ``count`` events or lines (fails the test after ``timeout`` seconds)."""
    got: list[T] = []

    async def take() -> None:
        async for event in events:
            got.append(event)
            if len(got) == count:
                return

    try:
        await asyncio.wait_for(take(), timeout)
    except TimeoutError:
        pytest.fail(f"expected {count} watch events, got {got}")
    return got


@dataclass
class Widgets:
    """A Widget CRD installed for one test, in a group of its own."""

    group: str
    crd: dict[str, Any]
    namespace: str

    @property
    def name(self) -> str:
        return f"widgets.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/v1"

    @property
    def path(self) -> str:
        return f"/apis/{self.group}/v1/namespaces/{self.namespace}/widgets"

    def widget(self, name: str = "w1", size: Any = 1, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": "Widget",
            "metadata": {"name": name},
            "spec": {"size": size, **spec},
        }


def schema_crd(
    group: str,
    kind: str,
    schema: dict[str, Any],
    subresources: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A namespaced CRD of ``kind`` (plural: lower-case + "s") with one version, v1."""
    plural = kind.lower() + "s"
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    if subresources:
        version["subresources"] = subresources
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [version],
        },
    }


def crd_document(group: str, status: bool = True, scale: bool = True) -> dict[str, Any]:
    """tests.crds.widget_crd moved into ``group``."""
    crd = copy.deepcopy(widget_crd(status, scale))
    crd["metadata"]["name"] = f"widgets.{group}"
    crd["spec"]["group"] = group
    return crd


async def install_crd(backend: Backend, crd: dict[str, Any]) -> None:
    """Create ``crd`` (refusing 409: each test's CRD is new) and wait until it is
    Established and its resources are served."""
    await ok(backend, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    await wait_until_served(backend.api, crd["metadata"]["name"])


async def token_request(backend: Backend, namespace: str, name: str) -> dict[str, Any]:
    """The TokenRequest answer for ServiceAccount ``namespace/name`` (its token in
    ``status.token``)."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"
    answer: dict[str, Any] = await ok(backend, "POST", path, body)
    return answer


def token_kubeconfig(backend: Backend, token: str, namespace: str) -> dict[str, Any]:
    """The backend's kubeconfig authenticating with ``token``, defaulting to ``namespace``."""
    config = backend.server.kubeconfig_dict()
    context = config["contexts"][0]["context"]
    config["users"] = [{"name": context["user"], "user": {"token": token}}]
    context["namespace"] = namespace
    return config
