"""A fault-injecting reverse proxy in front of kube-apiserver (chaos runs on the real
backend, as ``reconcile-kit apiserver --fail/--latency`` on the embedded one).

Clients speak plain HTTP to the proxy with their bearer token; it forwards each request to
the upstream server over TLS, streaming the answer back (watches included). Of the resource
requests (``/api/...`` and ``/apis/...``), a drawn share is delayed and a drawn share is
answered with a Kubernetes Status of the chosen code instead of being forwarded, as the
embedded server's fault injection does. Discovery and health paths pass untouched.
"""

from __future__ import annotations

import asyncio
import random
import ssl
from collections.abc import Sequence

import aiohttp
import orjson
from aiohttp import web

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}
_REASONS = {
    409: "Conflict",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}


class FaultProxy:
    """Forward to ``upstream`` (https URL, verified with ``context``), injecting
    ``failures`` (``[(status, fraction)]``) and ``latency`` (``(seconds, fraction)``)
    into resource requests; ``seed`` makes the draws repeatable."""

    def __init__(
        self,
        upstream: str,
        context: ssl.SSLContext,
        *,
        failures: Sequence[tuple[int, float]] = (),
        latency: tuple[float, float] = (0.0, 0.0),
        seed: int | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.context = context
        self.failures = list(failures)
        self.latency = latency
        self.rng = random.Random(seed)
        self.injected: dict[int, int] = {}
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        """Listen on a free loopback port; returns the proxy's URL."""
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        connector = aiohttp.TCPConnector(ssl=self.context, limit=0)
        self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def _fault(self, path: str) -> int | None:
        if not path.startswith(("/api/", "/apis/")):
            return None
        for status, fraction in self.failures:
            if self.rng.random() < fraction:
                return status
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        seconds, fraction = self.latency
        resource = request.path.startswith(("/api/", "/apis/"))
        if seconds and resource and self.rng.random() < fraction:
            await asyncio.sleep(seconds)  # the injected latency itself
        status = self._fault(request.path)
        if status is not None:
            self.injected[status] = self.injected.get(status, 0) + 1
            body = {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"injected fault ({status})",
                "reason": _REASONS.get(status, ""),
                "code": status,
            }
            return web.Response(
                status=status, body=orjson.dumps(body), content_type="application/json"
            )
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        try:
            data = await request.read() if request.can_read_body else None
        except ConnectionResetError:  # the client went away mid-body (a SIGKILLed replica)
            return web.Response(status=400, text="request body cut short")
        try:
            upstream = await self._session.request(
                request.method,
                self.upstream + request.rel_url.raw_path_qs,
                headers=headers,
                data=data,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=5),
            )
        except aiohttp.ClientError:
            return web.Response(status=503, text="upstream unavailable")  # a restart
        reply = web.StreamResponse(status=upstream.status)
        for key, value in upstream.headers.items():
            if key.lower() not in _HOP:
                reply.headers[key] = value
        try:
            await reply.prepare(request)
            async for chunk in upstream.content.iter_any():
                await reply.write(chunk)
            await reply.write_eof()
        except (aiohttp.ClientError, ConnectionResetError):
            pass  # either side dropped the stream (a restart): the other's ends too
        finally:
            upstream.release()
        return reply
