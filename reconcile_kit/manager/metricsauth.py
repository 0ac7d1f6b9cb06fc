"""Authenticated, authorized ``/metrics`` over HTTPS: the manager's secure metrics server
(the default; ``Manager(metrics_secure=False)`` or ``reconcile-kit run --metrics-secure=false``
serve plain HTTP with no checks).

Each scrape is checked against the API server as controller-runtime's
``filters.WithAuthenticationAndAuthorization`` (pkg/metrics/filters) does it:

1. authentication: the ``Authorization: Bearer <token>`` header's token is sent in a
   ``TokenReview`` (authentication.k8s.io/v1); no token, or a token the API server does not
   authenticate, is answered ``401 Unauthorized``;
2. authorization: a ``SubjectAccessReview`` (authorization.k8s.io/v1) asks whether that
   user may ``<method in lower case>`` the non-resource URL (the request's path, e.g.
   ``get`` ``/metrics``); a refusal is ``403 Forbidden``;
3. a review that fails (the API server unreachable or refusing the review itself) is
   ``500``, and is not cached.

Answers are cached as controller-runtime configures k8s.io/apiserver's delegating
authenticator and authorizer: token reviews for 1 minute, allowed access reviews for 5
minutes, denied ones for 30 seconds; each review request times out after 10 seconds.

The operator's ServiceAccount needs ``create`` on ``tokenreviews`` and
``subjectaccessreviews``: the ``system:auth-delegator`` ClusterRole, which
``reconcile-kit rbac`` and ``manifests`` bind. A scraper (Prometheus) needs ``get`` on the
non-resource URL ``/metrics``: the ``<name>-metrics-reader`` ClusterRole they emit.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from aiohttp import web
from aiohttp.typedefs import Middleware
from kr8s.asyncio import Api

from ..client.errors import APIError
from ..client.request import send
from ..webhooks.certs import Certificates, SelfSignedCertificates
from ..webhooks.serving import MAX_SCRAPE_BODY, REQUEST_TIMEOUT, TLSSite, request_timeout

__all__ = [
    "ALLOW_CACHE_TTL",
    "AUTHENTICATION_CACHE_TTL",
    "DENY_CACHE_TTL",
    "REVIEW_TIMEOUT",
    "DelegatingAuth",
    "ReviewedUser",
    "SecureMetricsServer",
]

log = logging.getLogger("reconcile_kit.manager.metrics")

AUTHENTICATION_CACHE_TTL = 60.0
"""Seconds a TokenReview's answer is reused (controller-runtime: ``CacheTTL: 1 * time.Minute``)."""
ALLOW_CACHE_TTL = 300.0
"""Seconds an allowed SubjectAccessReview is reused (``AllowCacheTTL: 5 * time.Minute``)."""
DENY_CACHE_TTL = 30.0
"""Seconds a denied SubjectAccessReview is reused (``DenyCacheTTL: 30 * time.Second``)."""
REVIEW_TIMEOUT = 10.0
"""Seconds one review request may take (``TokenAccessReviewTimeout: 10 * time.Second``)."""
CACHE_SIZE = 4096
"""Entries each cache keeps (the oldest go first), so that a flood of made-up tokens cannot
grow memory."""


@dataclass(frozen=True)
class ReviewedUser:
    """The user a TokenReview authenticated: ``status.user`` of the review."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass
class _Cache:
    """A bounded TTL cache (least recently stored entries dropped first)."""

    size: int = CACHE_SIZE
    entries: OrderedDict[Any, tuple[float, Any]] = field(default_factory=OrderedDict)

    def get(self, key: Any) -> tuple[bool, Any]:
        found = self.entries.get(key)
        if found is None:
            return False, None
        expires, value = found
        if expires <= time.monotonic():
            del self.entries[key]
            return False, None
        return True, value

    def put(self, key: Any, value: Any, ttl: float) -> None:
        self.entries[key] = (time.monotonic() + ttl, value)
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


class DelegatingAuth:
    """Authenticates bearer tokens with TokenReviews and authorizes non-resource requests
    with SubjectAccessReviews sent through ``api`` (a kr8s asyncio Api), caching the
    answers: controller-runtime's ``filters.WithAuthenticationAndAuthorization``.

    Args:
        api: the operator's kr8s asyncio Api (its ServiceAccount needs
            ``system:auth-delegator``).
        authentication_ttl: seconds a token's review is reused (default 60).
        allow_ttl: seconds an allowed access review is reused (default 300).
        deny_ttl: seconds a denied access review is reused (default 30).
        review_timeout: seconds one review request may take (default 10).
    """

    def __init__(
        self,
        api: Api,
        *,
        authentication_ttl: float = AUTHENTICATION_CACHE_TTL,
        allow_ttl: float = ALLOW_CACHE_TTL,
        deny_ttl: float = DENY_CACHE_TTL,
        review_timeout: float = REVIEW_TIMEOUT,
    ) -> None:
        self.api = api
        self._tokens = _Cache()
        self.authentication_ttl = authentication_ttl
        self._decisions = _Cache()
        self.allow_ttl = allow_ttl
        self.deny_ttl = deny_ttl
        self.review_timeout = review_timeout

    async def authenticate(self, token: str) -> ReviewedUser | None:
        """The user ``token`` belongs to, or None when the API server does not authenticate
        it. Raises :class:`~reconcile_kit.client.errors.APIError` when the review fails."""
        key = hashlib.sha256(token.encode()).digest()  # the cache never holds the token
        hit, user = self._tokens.get(key)
        if hit:
            return user  # type: ignore[no-any-return]
        status = await self._review("authentication.k8s.io/v1", "TokenReview", {"token": token})
        user = _user(status.get("user") or {}) if status.get("authenticated") else None
        self._tokens.put(key, user, self.authentication_ttl)
        return user

    async def authorize(self, user: ReviewedUser, verb: str, path: str) -> tuple[bool, str]:
        """Whether ``user`` may ``verb`` (``get``) the non-resource URL ``path``, and the
        API server's reason. Raises :class:`~reconcile_kit.client.errors.APIError` when the
        review fails."""
        key = (user, verb, path)
        hit, decision = self._decisions.get(key)
        if hit:
            return decision  # type: ignore[no-any-return]
        spec: dict[str, Any] = {
            "user": user.username,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {name: list(values) for name, values in user.extra}
        status = await self._review("authorization.k8s.io/v1", "SubjectAccessReview", spec)
        allowed = bool(status.get("allowed")) and not status.get("denied")
        decision = (allowed, str(status.get("reason") or ""))
        self._decisions.put(key, decision, self.allow_ttl if allowed else self.deny_ttl)
        return decision

    async def _review(self, version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
        """POST a ``kind`` review of ``spec`` (its resource: the kind's plural, lower case)
        and return the answer's ``status``; retried as a read (a review changes nothing)."""
        reply = await send(
            self.api,
            "POST",
            version=version,
            url=kind.lower() + "s",
            body={"apiVersion": version, "kind": kind, "spec": spec},
            retry=True,
            timeout=httpx.Timeout(self.review_timeout),
        )
        status: dict[str, Any] = reply.json().get("status") or {}
        return status

    def middleware(self) -> Middleware:
        """An aiohttp middleware checking every request: 401 without a token the API
        server authenticates, 403 when the user may not ``get`` the path, 500 when a
        review fails; otherwise the handler answers."""

        @web.middleware
        async def check(request: web.Request, handler: _Handler) -> web.StreamResponse:
            scheme, _, token = request.headers.get("Authorization", "").partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                return web.Response(status=401, text="Unauthorized")
            try:
                user = await self.authenticate(token)
            except APIError as error:
                log.error("metrics: authentication failed: %s", error)
                return web.Response(status=500, text="Authentication failed")
            if user is None:
                log.debug("metrics: a scrape's token was not authenticated")
                return web.Response(status=401, text="Unauthorized")
            verb = request.method.lower()
            try:
                allowed, reason = await self.authorize(user, verb, request.path)
            except APIError as error:
                log.error("metrics: authorization for user %s failed: %s", user.username, error)
                text = f"Authorization for user {user.username} failed"
                return web.Response(status=500, text=text)
            if not allowed:
                log.debug("metrics: %s %s denied to %s: %s", verb, request.path, user, reason)
                text = f"Authorization denied for user {user.username}"
                return web.Response(status=403, text=text)
            return await handler(request)

        return check


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _user(raw: dict[str, Any]) -> ReviewedUser:
    extra = raw.get("extra") or {}
    return ReviewedUser(
        username=str(raw.get("username") or ""),
        uid=str(raw.get("uid") or ""),
        groups=tuple(raw.get("groups") or ()),
        extra=tuple(sorted((k, tuple(v or ())) for k, v in extra.items())),
    )


class SecureMetricsServer:
    """The HTTPS server of ``/metrics`` behind :class:`DelegatingAuth` (what
    :class:`~reconcile_kit.manager.Manager` starts with ``metrics_secure=True``).

    Args:
        handler: answers an authorized ``GET /metrics``.
        auth: checks each request.
        host: the address to bind.
        port: the port (0: any free port; see :attr:`port`).
        certificates: the serving certificate; default a generated self-signed one for
            127.0.0.1 and localhost (as controller-runtime generates one when no
            certificate directory is given). Files (``CertificateFiles``) are reloaded
            every ``reload_interval`` seconds when they change.
        reload_interval: seconds between checks of the certificate files.
        request_timeout: seconds one request may take (503 after).
    """

    def __init__(
        self,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
        auth: DelegatingAuth,
        *,
        host: str,
        port: int,
        certificates: Certificates | None = None,
        reload_interval: float = 10.0,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        self.handler = handler
        self.auth = auth
        self.certificates = certificates or SelfSignedCertificates()
        self.host = host
        self.requested_port = port
        self._site = TLSSite("metrics server", reload_interval)
        self.reload_interval = reload_interval
        self.request_timeout = request_timeout

    async def start(self) -> None:
        """Listen over TLS (1.2 or later, HTTP/1.1 only)."""
        app = web.Application(
            client_max_size=MAX_SCRAPE_BODY,
            middlewares=[request_timeout(self.request_timeout), self.auth.middleware()],
        )
        app.router.add_get("/metrics", self.handler)
        port = await self._site.start(app, self.host, self.requested_port, self.certificates)
        log.info("serving /metrics over HTTPS on port %d (authenticated, authorized)", port)

    async def stop(self) -> None:
        """Stop listening."""
        await self._site.stop()

    @property
    def port(self) -> int | None:
        """The bound port while serving (None: stopped)."""
        return self._site.port
