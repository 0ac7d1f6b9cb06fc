"""Where benchmarks/run.py runs a scenario: a fresh embedded API server, or the real
control plane (kube-apiserver and etcd, built by scripts/build-control-plane).

A target knows how to reset itself for a scenario (a new embedded server; on the real
control plane: the benchmark's Widgets deleted and created again), how to tell when
Widgets become Ready, and how many requests it served.

Requests are counted from the embedded server's request log (every request) or from
kube-apiserver's ``apiserver_request_total`` metric (requests on Widgets only: discovery
is not in it). The client's first request is known only on the embedded server (its
request log); on the real control plane throughput is taken over the Ready window.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml
from apiserver import percentile

GROUP = "bench.reconcile-kit.io"
VERSION = "v1"
PLURAL = "widgets"
KIND = "Widget"
NAMESPACE = "default"
COLLECTION = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
WRITE_VERBS = frozenset({"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY"})

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "widget", "kind": KIND, "listKind": "WidgetList"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str) -> dict[str, Any]:
    """A Widget whose JSON (with the server's managedFields) is about 5.5 KB."""
    payload = {f"field{i:02d}": f"{i:02d}" + "x" * 78 for i in range(48)}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"bench": "run"}},
        "spec": {"seq": 0, "payload": payload},
    }


def name_of(i: int) -> str:
    return f"w-{i:05d}"


def is_ready(obj: dict[str, Any]) -> bool:
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return True
    return False


class Connection:
    """How to reach a server over HTTP: its URL, TLS context and auth header."""

    def __init__(
        self,
        url: str,
        kubeconfig: str | Path,
        context: ssl.SSLContext | None = None,
        token: str | None = None,
    ) -> None:
        self.url = url
        self.kubeconfig = Path(kubeconfig)
        self.ssl: ssl.SSLContext | bool = context if context is not None else False
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    @classmethod
    def from_kubeconfig(cls, kubeconfig: str | Path) -> Connection:
        """The first cluster and user of ``kubeconfig`` (server, CA data, bearer token)."""
        config = yaml.safe_load(Path(kubeconfig).read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0].get("user") or {}
        ca = cluster.get("certificate-authority-data")
        context = ssl.create_default_context(cadata=base64.b64decode(ca).decode()) if ca else None
        return cls(cluster["server"], kubeconfig, context, user.get("token"))

    def session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            headers=self.headers, connector=aiohttp.TCPConnector(ssl=self.ssl)
        )

    async def call(self, method: str, path: str) -> tuple[int, bytes]:
        """One request on its own session: (status, body)."""
        async with (
            self.session() as session,
            session.request(method, f"{self.url}{path}") as response,
        ):
            return response.status, await response.read()


async def patch_spec(session: aiohttp.ClientSession, url: str, name: str, seq: int) -> None:
    """A merge PATCH of the Widget's spec.seq (``session`` carries TLS and auth)."""
    async with session.patch(
        f"{url}{COLLECTION}/{name}",
        data=orjson.dumps({"spec": {"seq": seq}}),
        headers={"Content-Type": "application/merge-patch+json"},
    ) as response:
        if response.status != 200:
            raise RuntimeError(f"patch {name}: {response.status}")


async def populate(conn: Connection, count: int, concurrency: int = 16) -> None:
    """Install the CRD and create ``count`` Widgets through HTTP."""
    headers = {"Content-Type": "application/json"}
    async with conn.session() as session:
        async with session.post(
            f"{conn.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            data=orjson.dumps(CRD),
            headers=headers,
        ) as response:
            if response.status not in (201, 409):
                raise RuntimeError(f"CRD: {response.status} {await response.text()}")
        for _ in range(200):  # the CRD is served once established
            async with session.get(f"{conn.url}{COLLECTION}") as response:
                if response.status == 200:
                    break
            await asyncio.sleep(0.05)
        queue = list(range(count))

        async def worker() -> None:
            while queue:
                body = orjson.dumps(widget(name_of(queue.pop())))
                async with session.post(
                    f"{conn.url}{COLLECTION}", data=body, headers=headers
                ) as response:
                    if response.status != 201:
                        raise RuntimeError(f"create: {response.status} {await response.text()}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))


class ReadyWatch:
    """When Widgets became Ready: the first, the last, and (if known) the client's first
    request. Subclasses feed :meth:`saw`."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.ready: set[str] = set()
        self.times: list[float] = []  # perf_counter of each object's first Ready
        self.first = 0.0
        self.last = 0.0
        self.first_request = 0.0
        self.done = asyncio.Event()

    def saw(self, obj: dict[str, Any]) -> None:
        if not is_ready(obj):
            return
        name = obj["metadata"]["name"]
        if name in self.ready:
            return
        now = time.perf_counter()
        if not self.ready:
            self.first = now
        self.ready.add(name)
        self.times.append(now)
        if len(self.ready) >= self.total:
            self.last = now
            self.done.set()

    async def wait(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.done.wait(), timeout)
        finally:
            await self.close()

    async def close(self) -> None:
        pass

    def window(self) -> float:
        return self.last - self.first

    def timings(self, objects: int, started: float) -> dict[str, float]:
        """Throughput from the client's first request to the last Ready object (the
        primary figure; the Ready window where the first request is unknown), over the
        first-to-last-Ready window, and the wall time from the launch; the latency p50/p99
        of an object's first Ready from the client's first request (else its launch)."""
        seconds = self.last - self.first_request if self.first_request else self.window()
        origin = self.first_request or started
        waits = sorted(t - origin for t in self.times)
        return {
            "ready_p50_seconds": percentile(waits, 50),
            "ready_p99_seconds": percentile(waits, 99),
            "seconds": seconds,
            "window_seconds": self.window(),
            "wall_seconds": self.last - started,
            "per_second": objects / seconds,
            "window_per_second": objects / self.window(),
        }


class StoreReadyWatch(ReadyWatch):
    """From the embedded server's store (no requests), and its request log."""

    def __init__(self, server: Any, total: int) -> None:
        super().__init__(total)
        store = server.cluster.store
        self.key = next(k for k in store.storage_keys() if PLURAL in k and GROUP in k)
        for obj in store.items(self.key):
            self.saw(obj)
        self.first = self.last = 0.0
        self._unsubscribe = store.subscribe(self._on_event)
        log, append = server.requests, server.requests.append

        def first(record: Any) -> None:
            if not self.first_request:
                self.first_request = time.perf_counter()
            append(record)

        log.append = first  # an instance attribute: RequestLog is a list subclass

    def _on_event(self, event: Any) -> None:
        if event.key == self.key and event.obj is not None:
            self.saw(event.obj)

    async def close(self) -> None:
        self._unsubscribe()


class StreamReadyWatch(ReadyWatch):
    """From a watch stream on the Widgets (real control plane)."""

    def __init__(
        self, conn: Connection, total: int, items: Iterable[dict[str, Any]], resource_version: str
    ) -> None:
        super().__init__(total)
        for obj in items:
            self.saw(obj)
        self.first = self.last = 0.0
        self._task = asyncio.create_task(self._follow(conn, resource_version))

    async def _follow(self, conn: Connection, resource_version: str) -> None:
        params = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true"}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with conn.session() as session:
            while not self.done.is_set():
                async with session.get(
                    f"{conn.url}{COLLECTION}", params=params, timeout=timeout
                ) as response:
                    async for line in response.content:
                        event = orjson.loads(line)
                        obj = event.get("object") or {}
                        params["resourceVersion"] = obj.get("metadata", {}).get(
                            "resourceVersion", params["resourceVersion"]
                        )
                        if event.get("type") in ("ADDED", "MODIFIED"):
                            self.saw(obj)

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


class _Clients:
    """kr8s clients handed to a scenario, closed when it ends (their aiohttp connections
    would otherwise be reported unclosed)."""

    def __init__(self) -> None:
        self._apis: list[Any] = []

    def _keep(self, api: Any) -> Any:
        self._apis.append(api)
        return api

    async def _close_clients(self) -> None:
        for api in self._apis:
            if api._session is not None:
                await api._session.aclose()
        self._apis.clear()


class EmbeddedTarget(_Clients):
    """A fresh embedded API server (in this process) for every scenario."""

    name = "embedded"

    def __init__(self) -> None:
        super().__init__()
        self.server: Any = None
        self.conn: Connection | None = None

    async def fresh(self, objects: int) -> Connection:
        from reconcile_kit.testing import APIServer

        self.server = APIServer(bookmark_interval=1.0)
        await self.server.start()
        self.conn = Connection(self.server.url, self.server.kubeconfig)
        await populate(self.conn, objects)
        await self.mark()
        return self.conn

    async def ready_watch(self, total: int) -> ReadyWatch:
        return StoreReadyWatch(self.server, total)

    async def mark(self) -> None:
        """Count requests from now on."""
        self.server.requests.clear()

    async def requests(self) -> int:
        return len(self.server.requests)

    async def writes(self) -> int:
        return len(self.server.requests.writes())

    async def api(self) -> Any:
        return self._keep(await self.server.api())

    async def release(self) -> None:
        await self._close_clients()
        await self.server.stop()


class RealTarget(_Clients):
    """The real control plane, started once; every scenario deletes and re-creates the
    benchmark's Widgets."""

    name = "real"

    def __init__(self, plane: Any) -> None:
        super().__init__()
        self.plane = plane
        config = plane.kubeconfig_dict()
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
        self.conn = Connection(
            plane.url,
            plane.kubeconfig,
            ssl.create_default_context(cadata=ca.decode()),
            config["users"][0]["user"]["token"],
        )
        self._base = (0, 0)

    async def fresh(self, objects: int) -> Connection:
        status, body = await self.conn.call("DELETE", COLLECTION)
        if status not in (200, 404):
            raise RuntimeError(f"deletecollection: {status} {body[:500]!r}")
        await populate(self.conn, objects)
        await self.mark()
        return self.conn

    async def ready_watch(self, total: int) -> ReadyWatch:
        listed = orjson.loads((await self.conn.call("GET", COLLECTION))[1])
        return StreamReadyWatch(
            self.conn, total, listed["items"], listed["metadata"]["resourceVersion"]
        )

    async def _counts(self, verbs: frozenset[str] | None) -> int:
        text = (await self.conn.call("GET", "/metrics"))[1].decode()
        total = 0.0
        for line in text.splitlines():
            if (
                not line.startswith("apiserver_request_total{")
                or f'resource="{PLURAL}"' not in line
            ):
                continue
            labels, value = line.rsplit(" ", 1)
            verb = labels.split('verb="', 1)[1].split('"', 1)[0]
            if verbs is None or verb in verbs:
                total += float(value)
        return int(total)

    async def mark(self) -> None:
        """Count requests from now on."""
        self._base = (await self._counts(None), await self._counts(WRITE_VERBS))

    async def requests(self) -> int:
        return await self._counts(None) - self._base[0]

    async def writes(self) -> int:
        return await self._counts(WRITE_VERBS) - self._base[1]

    async def api(self) -> Any:
        return self._keep(await self.plane.api())

    async def release(self) -> None:
        await self._close_clients()

    def server_pid(self) -> int:
        return int(self.plane.pids()["kube-apiserver"])
