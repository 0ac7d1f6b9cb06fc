"""An aiohttp transport under kr8s's httpx client: the same requests at less CPU each.

kr8s sends every request through httpx, whose default transport (httpcore, h11, anyio)
is the larger part of each request's CPU cost. httpx-aiohttp's ``AiohttpTransport`` carries the
same ``httpx.Request``/``httpx.Response`` objects over aiohttp's C-accelerated HTTP/1.1
client: a raw kr8s PATCH loop goes from ~1,400 to ~2,400 requests/s on this machine class
(benchmarks/run.py, scenarios "ceiling" and "ceiling-aiohttp"). kr8s and every caller keep
using httpx's API.

Requests that upgrade the connection (websockets: ``exec``, ``attach``, ``port-forward``
through httpx-ws) need httpcore's network stream and stay on kr8s's original transport;
so do clients behind a proxy.
"""

from __future__ import annotations

import functools
import logging
import ssl
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport
from kr8s.asyncio import Api

from . import kr8s_internals

__all__ = [
    "AiohttpFirstTransport",
    "acquire_transport",
    "checked_transport",
    "close_session",
    "install_transport",
    "release_aiohttp_transport",
    "release_transport",
    "use_aiohttp_transport",
]

log = logging.getLogger(__name__)

_INSTALLED = "_reconcile_kit_aiohttp"
_USERS = "_reconcile_kit_transport_users"
TRANSPORTS = ("aiohttp", "httpx")


class AiohttpFirstTransport(httpx.AsyncBaseTransport):
    """Plain requests over aiohttp; connection upgrades over ``fallback``.

    Args:
        fallback: the transport httpx built (kept for websocket upgrades, closed with this).
        verify: what kr8s passes httpx as ``verify``: an ``ssl.SSLContext`` (CA, client
            certificate) or True (system defaults).
    """

    def __init__(self, fallback: httpx.AsyncBaseTransport, verify: ssl.SSLContext | bool) -> None:
        self.fast = AiohttpTransport(verify=verify)
        self.fallback = fallback

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` over aiohttp (an ``Upgrade`` over ``fallback``); connection
        failures other than timeouts come out as ``httpx.ConnectError``, as httpx's."""
        if "upgrade" in request.headers:
            return await self.fallback.handle_async_request(request)
        try:
            return await self.fast.handle_async_request(request)
        except httpx.ConnectTimeout as error:
            # httpx-aiohttp maps every aiohttp connection error (refused, reset, DNS) to
            # ConnectTimeout, which kr8s reports as a timeout: keep timeouts, fix the rest
            if _timeout_cause(error):
                raise
            raise httpx.ConnectError(f"{error.__cause__!r}", request=request) from error

    async def aclose(self) -> None:
        """Close the aiohttp connections and the fallback transport."""
        await self.release()
        await self.fallback.aclose()

    async def release(self) -> None:
        """Close the aiohttp connections (a later request opens new ones): aiohttp warns
        about a session still open when it is garbage-collected, httpx does not."""
        await self.fast.aclose()
        self.fast.client = None


def checked_transport(transport: str) -> str:
    """``transport`` when it is one of :data:`TRANSPORTS`; ValueError naming it otherwise."""
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {TRANSPORTS}, got {transport!r}")
    return transport


async def install_transport(api: Api, transport: str) -> None:
    """Give ``api`` the chosen transport: ``"aiohttp"`` installs it, ``"httpx"`` leaves the
    api as kr8s made it."""
    if transport == "aiohttp":
        await use_aiohttp_transport(api)


async def use_aiohttp_transport(api: Api) -> bool:
    """Make ``api`` (a ``kr8s.asyncio.Api``) send its requests over aiohttp, now and after
    kr8s re-creates its httpx client (it does on re-authentication).

    Returns False, changing nothing, when the api goes through a proxy or has no session
    hook (:func:`~reconcile_kit.client.kr8s_internals.has_session_hook`: the kr8s internals
    this relies on). Idempotent.

    Raises:
        UnsupportedKr8sError: a kr8s whose internals are not supported
            (:mod:`reconcile_kit.client.kr8s_internals`).
    """
    if getattr(api, _INSTALLED, False):
        return True
    if not kr8s_internals.has_session_hook(api) or api.auth.proxy:
        log.info("keeping kr8s's default httpx transport")
        return False

    async def swap(session: httpx.AsyncClient) -> None:
        await _swap(api, session)

    kr8s_internals.after_new_session(api, swap)
    setattr(api, _INSTALLED, True)
    session = kr8s_internals.session(api)
    if session is not None and not session.is_closed:
        await _swap(api, session)
    return True


async def release_aiohttp_transport(api: Api) -> None:
    """Close ``api``'s aiohttp connections, if it has the transport (see
    :meth:`AiohttpFirstTransport.release`); the manager does this when it stops."""
    session = kr8s_internals.session(api)
    transport = getattr(session, "_transport", None)
    if isinstance(transport, AiohttpFirstTransport):
        await transport.release()


async def acquire_transport(api: Api, transport: str) -> None:
    """:func:`install_transport`, counted: one more user of ``api``'s connections until it
    calls :func:`release_transport`. A manager and its controllers, or several controllers
    on one api, share the aiohttp connections; the last one to release closes them."""
    await install_transport(api, transport)
    setattr(api, _USERS, getattr(api, _USERS, 0) + 1)


async def release_transport(api: Api) -> None:
    """Give back what :func:`acquire_transport` took; the last user closes ``api``'s aiohttp
    connections (:func:`release_aiohttp_transport`)."""
    users = max(getattr(api, _USERS, 0) - 1, 0)
    setattr(api, _USERS, users)
    if not users:
        await release_aiohttp_transport(api)


async def close_session(api: Api) -> None:
    """Close ``api``'s httpx client with every connection under it (aiohttp's and httpx's),
    for whoever created the api; kr8s opens a new client on the next request."""
    session = kr8s_internals.session(api)
    if session is not None and not session.is_closed:
        await session.aclose()


async def _swap(api: Api, session: httpx.AsyncClient) -> None:
    if not isinstance(session._transport, AiohttpFirstTransport):
        auth: Any = api.auth  # kr8s's auth helper is not typed
        verify = await auth.ssl_context()
        if verify is True:  # no CA, certificate or skip in the kubeconfig: system defaults
            verify = _untrusting() if session.base_url.scheme == "http" else _system_default()
        session._transport = AiohttpFirstTransport(session._transport, verify)


@functools.cache
def _system_default() -> ssl.SSLContext:
    """httpx's default verifying context (certifi's CAs, or ``SSL_CERT_FILE``/``_DIR`` as
    set when first made), made once per process: loading the CA bundle costs ~20 ms of CPU,
    which every new api paid again (a test's, a cluster's of a fleet)."""
    return httpx.create_ssl_context()


@functools.cache
def _untrusting() -> ssl.SSLContext:
    """A verifying context that trusts no CA, for a plain-HTTP server (the embedded one):
    none of its requests uses TLS, and one that did would fail verification."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _timeout_cause(error: BaseException) -> bool:
    cause = error.__cause__
    return cause is None or isinstance(cause, aiohttp.ServerTimeoutError | TimeoutError)
