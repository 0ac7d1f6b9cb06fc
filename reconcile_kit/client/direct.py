"""The toolkit's own requests straight over aiohttp: the lean request path (issue 19).

:func:`~reconcile_kit.client.request.send` (every PATCH, GET, LIST, apply and delete the
toolkit makes) and :func:`~reconcile_kit.client.request.stream_chunks` (the reflectors'
watches) went through kr8s's httpx client, whose per-request model
(``httpx.Request``/``Response``, URL and header objects, hooks, the transport adapter)
cost about a third of a controller's CPU by profile (py-spy, 1,000 objects, real control
plane). When the api carries reconcile_kit's aiohttp transport
(:mod:`reconcile_kit.client.transport`), :func:`route` hands them what they need to
send the same request on the same aiohttp connection pool itself: the httpx client's base
URL, headers (kr8s's ``Authorization``, ``User-Agent``), timeouts and TLS settings (in
the pool's connector), and the client-side rate limit (:mod:`.ratelimit`). kr8s's own
calls keep using httpx on the same pool. A client kr8s re-creates (re-authentication) is
picked up at the next request; any other request hook on the client, a proxy or an SNI
override keep the httpx path.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

import aiohttp
import httpx
from kr8s.asyncio import Api
from multidict import CIMultiDict
from yarl import URL

from . import kr8s_internals
from .ratelimit import request_hooks_are_ours
from .transport import AiohttpFirstTransport

__all__ = ["Route", "client_timeout", "own_headers", "route", "stream_timeout"]


@dataclass(frozen=True)
class Route:
    """How to send a request of one kr8s httpx client over its aiohttp pool."""

    transport: AiohttpFirstTransport
    base_url: str
    headers: dict[str, str]
    timeout: aiohttp.ClientTimeout
    _origin: URL = field(init=False, repr=False, compare=False)
    _sent: dict[tuple[tuple[str, str], ...], CIMultiDict[str]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_origin", URL(self.base_url))

    def headers_with(self, extra: Mapping[str, str] | None) -> CIMultiDict[str]:
        """The route's headers with ``extra`` (names in any case) over them, built once per
        set of extra headers (a request's ``Content-Type``...): aiohttp copies them."""
        key = tuple(extra.items()) if extra else ()
        found = self._sent.get(key)
        if found is None:
            merged = {**self.headers, **{name.lower(): value for name, value in key}}
            found = self._sent[key] = CIMultiDict(merged)
        return found

    def url(self, path: str) -> URL:
        """The absolute URL of ``path`` (``/apis/...``) under the base URL. A path of
        unreserved characters only (names, namespaces, plurals) is taken as it is: yarl's
        parse of a new URL string (its cache holds 128) cost ~4 µs a request, 0.5 µs so."""
        if _PLAIN_PATH(path):
            return self._origin.with_path(self._origin.path.rstrip("/") + path, encoded=True)
        return URL(self.base_url + path)

    @property
    def session(self) -> aiohttp.ClientSession:
        """The aiohttp session under the transport (opened on first use, as the transport
        does: :meth:`AiohttpFirstTransport.release` closes it between runs)."""
        fast = self.transport.fast
        if not isinstance(fast.client, aiohttp.ClientSession) or fast.client.closed:
            fast.client = fast.get_client()
        return fast.client


_PLAIN_PATH = re.compile(r"[A-Za-z0-9._~/-]*").fullmatch
_ROUTES: weakref.WeakKeyDictionary[httpx.AsyncClient, Route] = weakref.WeakKeyDictionary()


def route(api: Api) -> Route | None:
    """The direct route of ``api`` (a ``kr8s.asyncio.Api``), or None when its requests must
    go through httpx (no aiohttp transport, client closed, proxy, SNI override, foreign
    request or response hooks)."""
    session = kr8s_internals.session(api)
    if session is None or session.is_closed:
        return None
    if session.event_hooks["response"] or not request_hooks_are_ours(session):
        return None
    found = _ROUTES.get(session)
    if found is not None:
        return found
    transport = session._transport
    if not isinstance(transport, AiohttpFirstTransport) or api.auth.tls_server_name:
        return None
    found = Route(
        transport=transport,
        base_url=str(session.base_url).rstrip("/"),
        headers=own_headers(session.headers),
        timeout=client_timeout(session.timeout, default=True),
    )
    _ROUTES[session] = found
    return found


def own_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` (an httpx client's: names in any case) without those aiohttp sends by
    itself with the same value (``Accept: */*``, ``Accept-Encoding: gzip, deflate``:
    ``ClientRequest.DEFAULT_HEADERS``) and HTTP/1.1's default ``Connection: keep-alive``:
    aiohttp copies every header it is given twice per request, in Python (issue 31), and
    the request on the wire means the same."""
    implied = {name.lower(): value for name, value in aiohttp.ClientRequest.DEFAULT_HEADERS.items()}
    implied["connection"] = "keep-alive"
    return {
        name.lower(): value for name, value in headers.items() if implied.get(name.lower()) != value
    }


REQUEST_READ_TIMEOUT = 70.0
"""Seconds a request without a timeout of its own (kr8s sets none) may take in all:
kube-apiserver ends any request that is not a watch within its ``--request-timeout`` (60 s
by default, a 504 then), so a longer one is on a connection that died unseen (a network
partition that drops packets) and would hold a reconcile, or the sharder, forever. A bound
on the whole request (aiohttp's ``total``: one timer per request) rather than on each
silence (``sock_read``: a timer re-armed at every chunk received; 2.9% of the instructions
of a reconcile against 1.8%, benchmarks/instructions.py)."""
CONNECT_TIMEOUT = 30.0
"""Seconds to open a connection when the client sets no bound (client-go's dialer: 30 s)."""


def client_timeout(timeout: httpx.Timeout, *, default: bool = False) -> aiohttp.ClientTimeout:
    """httpx's timeouts (seconds) as aiohttp's, as httpx-aiohttp maps them; with
    ``default`` (a client's own timeouts, used by requests that give none) a request
    without a read timeout takes at most :data:`REQUEST_READ_TIMEOUT` in all and one
    without a connect timeout :data:`CONNECT_TIMEOUT` to connect."""
    read, connect, total = timeout.read, timeout.connect, None
    if default:
        total = REQUEST_READ_TIMEOUT if read is None else None
        connect = CONNECT_TIMEOUT if connect is None else connect
    return aiohttp.ClientTimeout(
        total=total, sock_connect=connect, sock_read=read, connect=timeout.pool
    )


def stream_timeout(timeout: httpx.Timeout) -> aiohttp.ClientTimeout:
    """httpx's timeouts (seconds) for a stream read to its end (a watch): the read
    timeout bounds the whole stream, one timer, rather than each read (aiohttp re-arms a
    read timer on every chunk received: ~2 µs per watch event, issue 31). A watch asks
    the server to end it first (``timeoutSeconds``), so the bound on a stalled
    connection is the same."""
    return aiohttp.ClientTimeout(
        total=timeout.read, sock_connect=timeout.connect, connect=timeout.pool
    )
