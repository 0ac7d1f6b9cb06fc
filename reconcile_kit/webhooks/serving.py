"""Limits shared by the HTTPS servers reconcile_kit runs in an operator's pod (the webhook
server and the secure metrics server): how large a request body may be, how long one
request may take, and the TLS settings (:func:`~reconcile_kit.webhooks.certs.harden`: TLS
1.2 or later, HTTP/1.1 only).

Where the numbers come from:

- kube-apiserver refuses a request body over 3 MiB (``MaxRequestBodyBytes``, k8s.io/apiserver
  ``server/config.go``), and an AdmissionReview carries the object and, on UPDATE, the old
  object, plus less than 1 MiB around them: controller-runtime's admission handler reads at
  most 7 MiB (``maxRequestSize`` in ``pkg/webhook/admission/http.go``); so does the
  webhook server here (:data:`MAX_ADMISSION_BODY`), answering 413 beyond it.
- kube-apiserver waits at most 30 s for a webhook (``timeoutSeconds`` is 1 to 30, default
  10): an answer later than that is thrown away, so a request is cut off after
  :data:`REQUEST_TIMEOUT` seconds with 503 (as Go's ``http.TimeoutHandler`` answers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from .certs import Certificates

__all__ = [
    "MAX_ADMISSION_BODY",
    "MAX_SCRAPE_BODY",
    "REQUEST_TIMEOUT",
    "TLSSite",
    "request_timeout",
]

log = logging.getLogger("reconcile_kit.webhooks")

MAX_ADMISSION_BODY = 7 * 1024 * 1024
"""Bytes of a webhook request body (two objects of kube-apiserver's 3 MiB limit and the
review around them; controller-runtime's ``maxRequestSize``); a larger one gets 413."""

MAX_SCRAPE_BODY = 64 * 1024
"""Bytes of a request body the metrics server would read (aiohttp's ``client_max_size``);
its handler reads none: a scrape is a GET."""

REQUEST_TIMEOUT = 30.0
"""Seconds one request may take, from its headers to its answer: kube-apiserver's largest
webhook ``timeoutSeconds``."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def request_timeout(seconds: float) -> Middleware:
    """An aiohttp middleware that answers 503 when a request (reading its body and the
    handler's work) takes longer than ``seconds`` (a positive float), as Go's
    ``http.TimeoutHandler``; the handler is cancelled.

    Raises:
        ValueError: ``seconds <= 0``.
    """
    if seconds <= 0:
        raise ValueError(f"a request timeout is positive, not {seconds!r}")

    @web.middleware
    async def bounded(request: web.Request, handler: Handler) -> web.StreamResponse:
        deadline = asyncio.timeout(seconds)
        try:
            async with deadline:
                return await handler(request)
        except TimeoutError:
            if not deadline.expired():
                raise
            log.warning("%s %s: no answer within %g s", request.method, request.path, seconds)
            return web.Response(status=503, text=f"request timed out after {seconds:g} s")

    return bounded


class TLSSite:
    """An aiohttp application served over TLS (the webhook server's and the secure
    metrics server's): bound on start, its certificate files re-read every
    ``reload_interval`` seconds (a renewed certificate serves new connections without a
    restart, as controller-runtime's certwatcher), closed on stop.

    Args:
        name: what the server is, in log lines (``"webhook server"``).
        reload_interval: seconds between checks of the certificate files.
    """

    def __init__(self, name: str, reload_interval: float) -> None:
        self.name = name
        self.reload_interval = reload_interval
        self.port: int | None = None
        """The bound port while serving (None: stopped)."""
        self._runner: web.AppRunner | None = None
        self._reloader: asyncio.Task[None] | None = None

    @property
    def serving(self) -> bool:
        """Whether the site is listening."""
        return self._runner is not None

    async def start(
        self, app: web.Application, host: str, port: int, certificates: Certificates
    ) -> int:
        """Listen on ``host:port`` (0: any free port) with ``certificates``; returns the
        bound port.

        Raises:
            RuntimeError: the site is already listening.
            OSError: the address cannot be bound.
        """
        if self._runner is not None:
            raise RuntimeError(f"the {self.name} is already started")
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=certificates.ssl_context())
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        sockets = getattr(site._server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        self._reloader = asyncio.create_task(self._reload(certificates))
        return self.port

    async def stop(self) -> None:
        """Stop listening (in-flight requests are finished first). Idempotent."""
        if self._reloader is not None:
            self._reloader.cancel()
            await asyncio.gather(self._reloader, return_exceptions=True)
            self._reloader = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.port = None

    async def _reload(self, certificates: Certificates) -> None:
        while True:
            await asyncio.sleep(self.reload_interval)
            try:
                if certificates.reload():
                    log.info("%s: serving certificate reloaded", self.name)
            except Exception:
                log.exception("%s: the serving certificate could not be reloaded", self.name)
