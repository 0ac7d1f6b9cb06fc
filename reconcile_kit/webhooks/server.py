"""The webhook server: an HTTPS aiohttp server answering AdmissionReviews and
ConversionReviews for the handlers registered on it (controller-runtime's
``webhook.Server`` + ``WebhookBuilder``, kopf's admission server).

.. code-block:: python

    webhooks = WebhookServer(port=9443, certificates=SelfSignedCertificates(["127.0.0.1"]))

    @webhooks.validating(Website)
    def check(site: Website, request: AdmissionRequest) -> list[str] | None:
        if site.spec.replicas > 10:
            raise Denied("spec.replicas: at most 10", code=422, reason="Invalid")
        return None

    manager = Manager(webhooks=webhooks)

Paths follow controller-runtime: ``/validate-<group with dots as dashes>-<version>-<kind>``,
``/mutate-...`` and ``/convert``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Unpack

import orjson
from aiohttp import web

from ..client.tracing import server_span
from ..runtime.resources import KindLike
from .admission import AdmissionWebhook, Handler, WebhookOptions, kind_info
from .certs import Certificates, SelfSignedCertificates
from .conversion import Converter, Converters, conversion_response
from .review import AdmissionRequest
from .serving import MAX_ADMISSION_BODY, REQUEST_TIMEOUT, TLSSite, request_timeout

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["WebhookServer"]

log = logging.getLogger("reconcile_kit.webhooks")

MAX_BODY = MAX_ADMISSION_BODY


class WebhookServer:
    """Serves the registered admission and conversion webhooks over HTTPS.

    Args:
        host: the address to bind.
        port: the port (9443 as controller-runtime; 0: any free port, see :attr:`port`).
        certificates: the serving certificate (:class:`SelfSignedCertificates` for
            development and tests, :class:`CertificateFiles` for a mounted Secret); default
            a generated one for 127.0.0.1 and localhost.
        reload_interval: seconds between checks of the certificate files for a renewal.
        name: prefix of the configurations' names, and the field manager that registers
            them.
        register_host: opt-in self-registration for local development: while the server
            runs under a Manager, Validating/MutatingWebhookConfigurations (and the CRDs'
            conversion) point at ``https://<register_host>:<port>``; removed when it stops
            (as kopf's self-registration). The host must be in the certificate.
        request_timeout: seconds one request may take before it is answered 503 (default
            30: kube-apiserver's largest webhook ``timeoutSeconds``).

    The server speaks HTTP/1.1 over TLS 1.2 or later only (HTTP/2 is refused in the
    handshake), reads request bodies up to 7 MiB (an UPDATE review of two objects of
    kube-apiserver's 3 MiB limit; 413 beyond), and bounds each request by
    ``request_timeout`` (:mod:`reconcile_kit.webhooks.serving`).

    Register handlers with :meth:`validating`, :meth:`mutating` and :meth:`converter`, then
    give the server to a :class:`~reconcile_kit.manager.Manager` (``webhooks=``), which
    starts it before its controllers and stops it last; or use :meth:`start`/:meth:`stop`.
    """

    def __init__(
        self,
        *,
        host: str = "0.0.0.0",
        port: int = 9443,
        certificates: Certificates | None = None,
        reload_interval: float = 10.0,
        name: str = "reconcile-kit",
        register_host: str | None = None,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        self.host = host
        self.request_timeout = request_timeout
        self.webhooks: list[AdmissionWebhook] = []
        self.requested_port = port
        self._certificates = certificates
        self.converters = Converters()
        self.reload_interval = reload_interval
        self._site = TLSSite("webhook server", reload_interval)
        self.name = name
        self.register_host = register_host

    @property
    def certificates(self) -> Certificates:
        """The serving certificates (a generated self-signed one, made when first needed,
        unless given)."""
        if self._certificates is None:
            self._certificates = SelfSignedCertificates()
        return self._certificates

    @certificates.setter
    def certificates(self, value: Certificates) -> None:
        self._certificates = value

    # --- registration ----------------------------------------------------------------------

    def validating(
        self,
        kind: KindLike,
        *,
        operations: tuple[str, ...] = ("CREATE", "UPDATE"),
        **options: Unpack[WebhookOptions],
    ) -> Callable[[Handler], Handler]:
        """Decorator registering a validating handler for ``kind`` (a CustomResource class
        or a kr8s APIObject class). ``options``: the :class:`AdmissionWebhook` attributes
        ``name``, ``path``, ``subresources``, ``failure_policy``, ``side_effects``,
        ``timeout_seconds``, ``namespace_selector``, ``object_selector``.

        Raises:
            ValueError: a path already served, or invalid settings.
        """
        return self._register(kind, False, operations, options)

    def mutating(
        self,
        kind: KindLike,
        *,
        operations: tuple[str, ...] = ("CREATE", "UPDATE"),
        **options: Unpack[WebhookOptions],
    ) -> Callable[[Handler], Handler]:
        """Decorator registering a mutating handler for ``kind``; as :meth:`validating`,
        plus ``reinvocation_policy`` (``Never`` or ``IfNeeded``)."""
        return self._register(kind, True, operations, options)

    def converter(
        self, source: type[CustomResource], target: type[CustomResource]
    ) -> Callable[[Converter], Converter]:
        """Decorator registering a function converting a ``source`` model into a ``target``
        model (two versions of one CustomResource kind), served at ``/convert``."""

        def register(function: Converter) -> Converter:
            self.converters.add(source, target, function)
            return function

        return register

    def _register(
        self,
        kind: KindLike,
        mutating: bool,
        operations: tuple[str, ...],
        options: WebhookOptions,
    ) -> Callable[[Handler], Handler]:
        info = kind_info(kind)
        prefix = "mutate" if mutating else "validate"
        path = options.pop("path", None) or "/" + "-".join(
            [prefix, info.group.replace(".", "-"), info.version, info.kind.lower()]
        )
        name = options.pop("name", None) or _default_name(prefix, info.kind, info.group)
        if any(w.path == path for w in self.webhooks) or path == "/convert":
            raise ValueError(f"webhook path {path} is already served")
        if not mutating and "reinvocation_policy" in options:
            raise ValueError("reinvocation_policy is for mutating webhooks")

        settings: WebhookOptions = {**options, "name": name, "path": path}

        def register(handler: Handler) -> Handler:
            webhook = AdmissionWebhook(
                kind=info,
                handler=handler,
                mutating=mutating,
                operations=tuple(operations),
                **settings,
            )
            self.webhooks.append(webhook)
            return handler

        return register

    # --- serving ---------------------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """Whether the server is listening."""
        return self.port is not None

    async def start(self) -> None:
        """Listen on ``host:port`` over TLS.

        Raises:
            RuntimeError: the server is already started.
        """
        app = web.Application(
            client_max_size=MAX_BODY, middlewares=[request_timeout(self.request_timeout)]
        )
        for webhook in self.webhooks:
            app.router.add_post(webhook.path, self._admission_handler(webhook))
        app.router.add_post("/convert", self._convert)
        app.router.add_get("/healthz", self._healthz)
        port = await self._site.start(app, self.host, self.requested_port, self.certificates)
        log.info("webhook server serving %d webhooks on port %d", len(self.webhooks), port)

    async def stop(self) -> None:
        """Stop listening (in-flight requests are finished first)."""
        await self._site.stop()

    @property
    def port(self) -> int | None:
        """The bound port while serving (None: stopped)."""
        return self._site.port

    @property
    def url(self) -> str:
        """``https://<register_host or host>:<port>`` of the running server."""
        if self.port is None:
            raise RuntimeError("the webhook server is not started")
        host = self.register_host or self.host
        host = f"[{host}]" if ":" in host else host
        return f"https://{host}:{self.port}"

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _admission_handler(self, webhook: AdmissionWebhook) -> Callable[[web.Request], Any]:
        async def handle(request: web.Request) -> web.Response:
            try:
                review = AdmissionRequest.from_review(orjson.loads(await request.read()))
            except ValueError as error:  # orjson.JSONDecodeError is a ValueError
                return _bad_request(f"webhook {webhook.name}: {error}")
            attributes = {
                "reconcile_kit.webhook": webhook.name,
                "k8s.operation": review.operation,
                "k8s.kind": review.kind.get("kind", ""),
                "k8s.name": review.name or "",
            }
            with server_span(f"webhook {webhook.name}", request.headers, attributes) as span:
                answer = await webhook.review(review)
                if span is not None:
                    response = answer.get("response") or {}
                    span.set_attribute("reconcile_kit.allowed", bool(response.get("allowed")))
            return web.Response(body=orjson.dumps(answer), content_type="application/json")

        return handle

    async def _convert(self, request: web.Request) -> web.Response:
        try:
            with server_span("webhook convert", request.headers, {}):
                answer = conversion_response(orjson.loads(await request.read()), self.converters)
        except ValueError as error:
            return _bad_request(f"conversion webhook: {error}")
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")


def _default_name(prefix: str, kind: str, group: str) -> str:
    """``vwebsite.example.com`` (validate) / ``mwebsite.example.com`` (mutate), as
    kubebuilder's markers name them; ``.reconcile-kit.io`` is added where kube-apiserver's
    three-segment rule needs it (``vdeployment.apps.reconcile-kit.io``)."""
    name = f"{prefix[0]}{kind.lower()}.{group or 'core'}"
    return name if name.count(".") >= 2 else f"{name}.reconcile-kit.io"


def _bad_request(message: str) -> web.Response:
    log.warning("%s", message)
    return web.Response(status=400, text=message)
