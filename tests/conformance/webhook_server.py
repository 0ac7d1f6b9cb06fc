"""A small HTTPS admission webhook server for the conformance tests (aiohttp, self-signed).

Each path answers with a handler of the AdmissionReview it received and records every
review (``received[path]``). kube-apiserver and the embedded server call it alike: it
listens on 127.0.0.1 with a certificate for that address (and any extra hosts).
"""

from __future__ import annotations

import asyncio
import base64
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from reconcile_kit.webhooks.certs import SelfSignedCertificates

Review = dict[str, Any]
Handler = Callable[[Review], Awaitable[Any] | Any]
"""Answers a review: a response document (dict), or an aiohttp response as it is."""


def answer(review: Review, allowed: bool = True, **response: Any) -> dict[str, Any]:
    """An AdmissionReview response to ``review`` (same uid)."""
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": review["request"]["uid"], "allowed": allowed, **response},
    }


def json_patch(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``patchType``/``patch`` fields of a mutating response."""
    return {"patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(ops)).decode()}


class WebhookServer:
    """Serves ``handlers[path]`` on ``https://127.0.0.1:PORT/<path>``."""

    def __init__(self, hosts: list[str] | None = None) -> None:
        self.certs = SelfSignedCertificates(hosts=["127.0.0.1", *(hosts or [])])
        self.handlers: dict[str, Handler] = {}
        self.received: dict[str, list[Review]] = defaultdict(list)
        self.queries: dict[str, list[dict[str, str]]] = defaultdict(list)
        self._arrived = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def ca_bundle(self) -> str:
        """The caBundle field (base64 of the CA's PEM)."""
        return base64.b64encode(self.certs.ca_bundle).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}/{path}"

    def client_config(self, path: str) -> dict[str, Any]:
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    async def start(self) -> WebhookServer:
        app = web.Application()
        app.router.add_post("/{path}", self._serve)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.certs.ssl_context())
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        review = await request.json()
        self.queries[path].append(dict(request.query))
        async with self._arrived:
            self.received[path].append(review)
            self._arrived.notify_all()
        handler = self.handlers.get(path, lambda r: answer(r))
        result = handler(review)
        if isinstance(result, Awaitable):
            result = await result
        if isinstance(result, web.StreamResponse):
            return result
        return web.json_response(result)

    async def wait_for(
        self, path: str, check: Callable[[Review], bool], timeout: float = 15.0
    ) -> Review:
        """The first review on ``path`` for which ``check`` holds (waits at most ``timeout``)."""

        def found() -> Review | None:
            return next((r for r in self.received[path] if check(r)), None)

        async def wait() -> Review:
            async with self._arrived:
                await self._arrived.wait_for(lambda: found() is not None)
            review = found()
            assert review is not None
            return review

        return await asyncio.wait_for(wait(), timeout)
