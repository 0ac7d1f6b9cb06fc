"""The one request layer: every part of reconcile_kit that talks to the API server sends
through :func:`send` (or :func:`stream` for watches).

It sends through the kr8s Api given (its authentication and transport), maps every error
answer and every connection failure to :mod:`reconcile_kit.client.errors`, and retries what
is safe to retry, as client-go's ``rest.Request`` does:

- a 429, or a 5xx carrying ``Retry-After``, is waited out (the header's seconds, capped at
  :data:`MAX_RETRY_AFTER`; cancellable) and sent again, at most :data:`MAX_TRIES` times in
  all, when the request is safe to repeat: reads, PUT and DELETE, merge / strategic /
  apply patches (repeating one gives the same result), and JSON patches that start with a
  ``test`` precondition. A create (POST) or a plain JSON patch surfaces
  :class:`~reconcile_kit.client.errors.TooManyRequestsError` with ``retry_after``; the
  controller then requeues its key after at least that long;
- a read whose connection was reset is sent again (client-go's ``IsRetryableError``:
  GET on a connection reset or EOF);
- a refused or reset connection is :class:`~reconcile_kit.client.errors.APIUnavailableError`
  and a client-side timeout :class:`~reconcile_kit.client.errors.ServerTimeoutError`, never
  kr8s's misleading ``APITimeoutError`` for a refused connection.

Every HTTP request an api sends is reported to its observers
(:func:`add_request_observer`): each attempt of :func:`send` and :func:`stream`, over the
direct aiohttp route or through httpx, and kr8s's own calls (``obj.refresh()``,
``Kind.get``...) through ``call_api``, once each. The manager's metrics
(``rest_client_requests_total`` and client-go's ``rest_client_*``) are one such observer.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Callable, Container, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict, Unpack, cast

import aiohttp
import httpx
import kr8s
import orjson
from kr8s.asyncio import Api

from . import direct, tracing
from .contenttypes import APPLY_PATCH, JSON, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from .encoding import dumps
from .errors import APIError, APIUnavailableError, ServerTimeoutError, error_from_status
from .fencing import current_fence
from .paths import resource_of
from .ratelimit import TokenBucket, rate_limit_of

__all__ = [
    "MAX_RETRY_AFTER",
    "MAX_TRIES",
    "Reply",
    "RequestLocation",
    "RequestObservation",
    "RequestObserver",
    "Route",
    "StreamRequest",
    "Target",
    "add_request_observer",
    "is_safe_to_repeat",
    "remove_request_observer",
    "retry_after_seconds",
    "send",
    "stream",
    "stream_chunks",
]

_UNBOUNDED = httpx.Timeout(None)
"""A stream's timeouts when its caller gives none: no read bound (a watch may be idle)."""

log = logging.getLogger(__name__)

MAX_TRIES = 10
"""Attempts per request in all, first included (client-go's ``maxRetries`` of 10)."""
MAX_RETRY_AFTER = 30.0
"""The longest ``Retry-After`` waited out in place, in seconds; longer ones surface."""
_RESET_RETRY_DELAY = 0.05  # seconds before re-sending a read whose connection was reset
_IDEMPOTENT_PATCHES = (MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)


@dataclass(frozen=True)
class RequestObservation:
    """One HTTP request an api sent, as its observers see it.

    Attributes:
        method: the HTTP method (``GET``, ``PATCH``...); a watch is a ``GET``.
        path: the URL path (``/api/v1/namespaces/default/configmaps/a``).
        status: the answer's HTTP status; 0 when none came (connection refused or reset,
            client-side timeout).
        seconds: from sending to the answer's headers (a whole answer's body too), in
            seconds; the rate limiter's wait is not included.
        attempt: 1 for a first try; n for the (n-1)-th retry of the same request by
            :func:`send` (429, Retry-After, a reset read).
        rate_limit_wait: seconds the request waited for the client-side rate limiter
            (:mod:`reconcile_kit.client.ratelimit`) before it was sent; 0.0 without one
            (through httpx, the wait is the rate limit's hook's and is not measured: 0.0).
    """

    method: str
    path: str
    status: int
    seconds: float
    attempt: int = 1
    rate_limit_wait: float = 0.0

    @property
    def resource(self) -> str:
        """The resource the path addresses (``configmaps``, ``deployments/status``,
        ``customresourcedefinitions``), or the path for a non-resource URL (``/version``)."""
        return resource_of(self.path)


RequestObserver = Callable[[RequestObservation], None]
"""Called once per request (synchronously, on the event loop: it must not block)."""

_OBSERVERS = "_reconcile_kit_request_observers"
_OBSERVED_HERE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "reconcile_kit_request_observed_here", default=False
)


def add_request_observer(api: Api, observer: RequestObserver) -> None:
    """Report every request ``api`` (a ``kr8s.asyncio.Api``) sends from now on to
    ``observer`` (see :class:`RequestObservation`): the toolkit's own (:func:`send`,
    :func:`stream`, on either route) and kr8s's (``call_api`` is wrapped once per api).
    Adding the same observer again changes nothing. An observer that raises is logged and
    the request goes on."""
    observers: list[RequestObserver] | None = getattr(api, _OBSERVERS, None)
    if observers is None:
        observers = []
        _wrap_call_api(api, observers)
        setattr(api, _OBSERVERS, observers)
    if observer not in observers:
        observers.append(observer)


def remove_request_observer(api: Api, observer: RequestObserver) -> None:
    """Stop reporting ``api``'s requests to ``observer`` (nothing when it was not added)."""
    observers: list[RequestObserver] = getattr(api, _OBSERVERS, None) or []
    if observer in observers:
        observers.remove(observer)


def _notify(
    api: Api,
    method: str,
    path: str,
    status: int,
    started: float,
    attempt: int = 1,
    rate_limit_wait: float = 0.0,
) -> None:
    observers: list[RequestObserver] | None = getattr(api, _OBSERVERS, None)
    if not observers:
        return
    seen = RequestObservation(
        method.upper(), path, status, time.monotonic() - started, attempt, rate_limit_wait
    )
    for observer in list(observers):
        try:
            observer(seen)
        except Exception:
            log.exception("request observer %r failed", observer)


def _wrap_call_api(api: Api, observers: list[RequestObserver]) -> None:
    """Make kr8s's own ``call_api`` requests observed (the toolkit's are observed in
    ``_call``, which marks its own call with ``_OBSERVED_HERE``)."""
    original = api.call_api

    @contextlib.asynccontextmanager
    async def call_api(method: str = "GET", *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        if _OBSERVED_HERE.get():
            async with original(method, *args, **kwargs) as response:
                yield response
            return
        started = time.monotonic()
        path = _path(api, kwargs)
        answered = False
        try:
            async with original(method, *args, **kwargs) as response:
                answered = True
                _notify(api, method, _path_of(response) or path, response.status_code, started)
                yield response
        except Exception as error:
            if not answered:
                failed = getattr(error, "response", None)
                status = failed.status_code if failed is not None else 0
                _notify(api, method, path, status, started)
            raise

    api.call_api = call_api  # type: ignore[method-assign]  # observing every request


class Route(TypedDict):
    """The :func:`send` arguments that address one object: its URL's group/version,
    namespace and rest, and the target named in errors (see
    ``reconcile_kit.runtime.resources.ResourceInfo.route``)."""

    version: str
    namespace: str | None
    url: str
    target: Target


@dataclass(frozen=True)
class Target:
    """The object a request is about, named in its errors (any part may be None)."""

    kind: str | None = None
    namespace: str | None = None
    name: str | None = None

    @classmethod
    def of(cls, obj: object) -> Target:
        """The target of an object with a ``raw`` mapping (a kr8s object, a typed model's
        patch target) or of a raw mapping itself: its kind, namespace and name."""
        raw = cast(Mapping[str, Any], getattr(obj, "raw", obj))
        meta = raw.get("metadata") or {}
        return cls(
            raw.get("kind") or getattr(obj, "kind", None), meta.get("namespace"), meta.get("name")
        )


class RequestLocation(TypedDict, total=False):
    """Where a request goes, as :func:`send`'s arguments of the same names."""

    version: str
    base: str
    namespace: str | None
    url: str
    params: Mapping[str, str] | None


class StreamRequest(RequestLocation, total=False):
    """A streaming request (:func:`stream`): where it goes, its client-side timeout and
    headers, as :func:`send`'s arguments of the same names."""

    timeout: httpx.Timeout | None
    headers: Mapping[str, str]


class Reply:
    """An answer the caller accepted: status, body, headers, and the request's method and
    URL path.

    Args:
        status: the HTTP status.
        body: the body as received (bytes), or as text.
        headers: the answer's headers.
        method: the request's method (upper case).
        path: the request's URL path.
    """

    __slots__ = ("_text", "content", "headers", "method", "path", "status")

    def __init__(
        self,
        status: int,
        body: bytes | str,
        headers: Mapping[str, str],
        method: str = "",
        path: str = "",
    ) -> None:
        self.status, self.headers, self.method, self.path = status, headers, method, path
        self.content = body.encode() if isinstance(body, str) else body
        self._text = body if isinstance(body, str) else None

    @property
    def text(self) -> str:
        """The body as text (UTF-8, invalid bytes replaced), decoded when first read."""
        if self._text is None:
            self._text = self.content.decode("utf-8", "replace")
        return self._text

    def json(self) -> Any:  # Any: the server's JSON, shaped as the caller's request says
        """The body decoded as JSON (from its bytes: no text is made)."""
        return orjson.loads(self.content)

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.method} {self.path}, {len(self.content)} bytes)"


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), or None."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def is_safe_to_repeat(method: str, content_type: str | None, body: object) -> bool:
    """Whether sending the request twice has the effect of sending it once (or fails on a
    precondition): reads, PUT, DELETE, merge/strategic/apply patches, and JSON patches
    starting with a ``test`` operation."""
    method = method.upper()
    if method in ("GET", "HEAD", "PUT", "DELETE"):
        return True
    if method != "PATCH":
        return False
    if content_type in _IDEMPOTENT_PATCHES:
        return True
    return (
        content_type == JSON_PATCH
        and isinstance(body, list)
        and bool(body)
        and isinstance(body[0], dict)
        and body[0].get("op") == "test"
    )


async def send(
    api: Api,
    method: str,
    *,
    version: str = "v1",
    base: str = "",
    namespace: str | None = None,
    url: str = "",
    params: Mapping[str, str] | None = None,
    body: object = None,
    content_type: str = JSON,
    target: Target | None = None,
    accept: Container[int] = (),
    retry: bool | None = None,
    timeout: httpx.Timeout | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """Send one request through ``api`` (a ``kr8s.asyncio.Api``) and return its 2xx answer,
    or an answer whose status is in ``accept`` (e.g. 404 where absence is expected).

    Args:
        method: ``GET``, ``POST``, ``PUT``, ``PATCH``, ``DELETE``.
        version: the URL's group/version, as kr8s builds the URL
            (``/apis/{version}/namespaces/{namespace}/{url}``).
        base: the URL's prefix (empty: kr8s's ``/apis``; ``base="/api"`` for core).
        namespace: the URL's namespace.
        url: the rest of the URL.
        params: query parameters.
        body: a JSON-serialisable document, or bytes sent as they are.
        content_type: the body's media type (see :mod:`reconcile_kit.client.contenttypes`).
        target: the object named in errors.
        retry: whether 429/Retry-After answers are retried here; default
            :func:`is_safe_to_repeat`.
        timeout: an ``httpx.Timeout`` (seconds) for this request, else kr8s's.
        headers: extra request headers (e.g. ``Accept`` asking for
            ``PartialObjectMetadataList``).

    Raises:
        APIError: the subclass for the status (NotFoundError, ConflictError, InvalidError,
            ForbiddenError, TooManyRequestsError...), APIUnavailableError when the server
            cannot be reached, ServerTimeoutError when it does not answer in time.
        FencedWriteError: inside a fenced reconcile (:mod:`reconcile_kit.client.fencing`),
            a write the replica has no right to any more, refused before sending
            (LeaseExpiredError, OwnershipLostError); a write to the reconciled object of a
            sharded controller carries the fence's precondition.
        TypeError: ``body`` is not JSON-serialisable.
        PatchError: ``body`` holds a float NaN or infinity (JSON has none; orjson would
            send ``null``), the field named.
    """
    where = target or Target()
    fence = current_fence()
    guarded = fence is not None and fence.guards(where.kind, where.namespace, where.name)
    if guarded:
        assert fence is not None
        body = fence.precondition(method.upper(), content_type, body)
    content = (
        body
        if isinstance(body, bytes) or body is None
        else dumps(body, kind=where.kind, namespace=where.namespace, name=where.name)
    )
    repeatable = is_safe_to_repeat(method, content_type, body) if retry is None else retry
    extra: dict[str, Any] = {}
    if content is not None:
        extra = {"content": content, "headers": {"Content-Type": content_type}}
    if headers:
        extra["headers"] = {**extra.get("headers", {}), **headers}
    if timeout is not None:
        extra["timeout"] = timeout
    request: dict[str, Any] = {"version": version, "base": base, "namespace": namespace}
    request.update(url=url, params=params, **extra)
    for attempt in range(1, MAX_TRIES + 1):
        if fence is not None:  # before every attempt: a Retry-After wait may outlast the Lease
            fence.check(method.upper(), where.kind, where.namespace, where.name)
        way = _lean_route(api)
        if way is not None:  # the lean path: no context managers around a whole answer
            answer = await _call_direct(
                way, api, method, where, retry_reads=attempt < MAX_TRIES, attempt=attempt, **request
            )
            outcome = _outcome(answer, method, where, accept)
        else:
            async with _call(
                api, method, where, retry_reads=attempt < MAX_TRIES, attempt=attempt, **request
            ) as response:
                outcome = _outcome(response, method, where, accept)
        if outcome is None:  # a read's connection was reset: send it again
            await asyncio.sleep(_RESET_RETRY_DELAY)
            continue
        if isinstance(outcome, Reply):
            if guarded and outcome.status < 300:
                assert fence is not None
                fence.observe(_document(outcome.content))
            return outcome
        error = outcome
        wait = _wait_before_retry(error, repeatable, attempt)
        if wait is None:
            raise error
        log.debug("%s; retrying after %.1f s (attempt %d)", error, wait, attempt)
        await asyncio.sleep(wait)
    raise error


def _outcome(
    response: httpx.Response | _Answer | None, method: str, where: Target, accept: Container[int]
) -> Reply | APIError | None:
    """What an answer means to :func:`send`: the Reply to return, the error to raise or
    retry on, or None (no answer: a reset read to send again)."""
    if response is None:
        return None
    status = response.status_code
    if status < 300 or status in accept:
        return Reply(status, response.content, response.headers, method.upper(), _path_of(response))
    return _error(response, method, where)


def _document(body: bytes) -> Any:
    """``body`` decoded as JSON, or None."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


@contextlib.asynccontextmanager
async def stream(
    api: Api,
    method: str = "GET",
    *,
    target: Target | None = None,
    accept: Container[int] = (),
    **request: Unpack[StreamRequest],
) -> AsyncIterator[httpx.Response]:
    """Open a streaming request (a watch) through ``api``; yields the httpx response once
    its status is 2xx or in ``accept``. Takes :func:`send`'s URL arguments (``version``,
    ``base``, ``namespace``, ``url``, ``params``, ``timeout``) and ``headers``. Raises as
    :func:`send`, without retrying (the reflector owns a watch's retries)."""
    where = target or Target()
    async with _call(api, method, where, stream=True, retry_reads=False, **request) as response:
        assert isinstance(response, httpx.Response)  # streams never take the direct route
        if response.status_code >= 300 and response.status_code not in accept:
            await response.aread()
            raise _error(response, method, where)
        yield response


@dataclass(frozen=True)
class _Answer:
    """A whole answer received over the direct route (what ``send`` reads of a response)."""

    status_code: int
    content: bytes
    headers: Mapping[str, str]
    path: str

    @property
    def text(self) -> str:
        """The body as text (UTF-8, invalid bytes replaced)."""
        return self.content.decode("utf-8", "replace")


@contextlib.asynccontextmanager
async def _call(
    api: Api, method: str, target: Target, *, retry_reads: bool, attempt: int = 1, **request: Any
) -> AsyncIterator[httpx.Response | _Answer | None]:
    """:func:`_call_untraced`, in a CLIENT span carrying the trace context when tracing is
    on (:mod:`.tracing`)."""
    if tracing.tracer() is None:
        async with _call_untraced(
            api, method, target, retry_reads=retry_reads, attempt=attempt, **request
        ) as response:
            yield response
        return
    headers = dict(request.pop("headers", None) or {})
    with tracing.request_span(method, _path(api, request), headers, attempt) as span:
        async with _call_untraced(
            api,
            method,
            target,
            retry_reads=retry_reads,
            attempt=attempt,
            headers=headers,
            **request,
        ) as response:
            if response is not None:
                tracing.answered(span, response.status_code)
            yield response


@contextlib.asynccontextmanager
async def _call_untraced(
    api: Api, method: str, target: Target, *, retry_reads: bool, attempt: int = 1, **request: Any
) -> AsyncIterator[httpx.Response | _Answer | None]:
    """kr8s's ``call_api`` without raising for status, its transport failures mapped;
    yields None for a read whose connection was reset when it may be retried. A whole
    (not streamed) request goes around httpx when the api allows (:mod:`.direct`). Each
    request is reported to the api's observers once (:func:`add_request_observer`)."""
    way = None if request.get("stream") else direct.route(api)
    if way is not None:
        yield await _call_direct(
            way, api, method, target, retry_reads=retry_reads, attempt=attempt, **request
        )
        return
    answered = False
    started = time.monotonic()
    marked: contextvars.Token[bool] | None = _OBSERVED_HERE.set(True)
    try:
        async with api.call_api(method, raise_for_status=False, **request) as response:
            answered = True
            if marked is not None:
                _OBSERVED_HERE.reset(marked)
                marked = None
            _notify(api, method, _path_of(response), response.status_code, started, attempt)
            yield response
    except (httpx.TransportError, kr8s.APITimeoutError) as failure:
        if not answered:
            _notify(api, method, _path(api, request), 0, started, attempt)
        error = _transport_error(failure, method, _path(api, request), target)
        reset = _was_reset(failure)
        if not answered and retry_reads and method.upper() == "GET" and reset:
            log.debug("%s; retrying the read", error)
            yield None
            return
        raise error from failure
    finally:
        if marked is not None:
            _OBSERVED_HERE.reset(marked)


@contextlib.asynccontextmanager
async def stream_chunks(
    api: Api,
    method: str = "GET",
    *,
    target: Target | None = None,
    accept: Container[int] = (),
    **request: Unpack[StreamRequest],
) -> AsyncIterator[AsyncIterator[bytes]]:
    """As :func:`stream`, yielding the body's chunks (bytes, as they arrive) rather than
    the response: over the direct route when the api allows it (:mod:`.direct`; a watch's
    events then skip httpx's response and stream models), else over httpx. Failures of
    the connection while reading are raised as :func:`send` raises them."""
    way = _lean_route(api)
    if way is None:
        async with stream(api, method, target=target, accept=accept, **request) as response:
            yield response.aiter_bytes()
        return
    where = target or Target()
    bucket = rate_limit_of(api)
    waited = 0.0 if bucket is None else await _rate_limited(bucket)
    path = api._construct_url(
        request.get("version", "v1"),
        request.get("base", ""),
        request.get("namespace"),
        request.get("url", ""),
    )
    started, answered = time.monotonic(), False
    try:
        if request.get("timeout") is None:  # a stream is unbounded unless its caller says
            request = {**request, "timeout": _UNBOUNDED}
        options = _direct_options(way, request, direct.stream_timeout)
        async with way.session.request(method, way.url(path), **options) as response:
            answered = True
            _notify(api, method, response.url.path, response.status, started, 1, waited)
            if response.status >= 300 and response.status not in accept:
                answer = _Answer(
                    response.status, await response.read(), response.headers, response.url.path
                )
                raise _error(answer, method, where)
            yield response.content.iter_any()
    except (aiohttp.ClientError, TimeoutError, OSError) as failure:
        if not answered:
            _notify(api, method, path, 0, started, 1, waited)
        raise _transport_error(failure, method, path, where) from failure


async def _rate_limited(bucket: TokenBucket) -> float:
    """Wait for a token of the api's client-side rate limit (:mod:`.ratelimit`): seconds
    waited."""
    before = time.monotonic()
    await bucket.acquire()
    return time.monotonic() - before


def _direct_options(
    way: direct.Route,
    request: Mapping[str, Any],
    timeouts: Callable[[httpx.Timeout], aiohttp.ClientTimeout] = direct.client_timeout,
) -> dict[str, Any]:
    """aiohttp's keywords for a request of :func:`send`'s arguments (``params``,
    ``content``, ``headers``, ``timeout``) over ``way``; ``timeouts`` maps a given httpx
    timeout (:func:`~.direct.stream_timeout` for a stream)."""
    params, timeout = request.get("params"), request.get("timeout")
    return {
        "params": None if params is None else {k: _param(v) for k, v in params.items()},
        "data": request.get("content"),
        "headers": way.headers_with(request.get("headers")),
        "timeout": way.timeout if timeout is None else timeouts(timeout),
    }


def _lean_route(api: Api) -> direct.Route | None:
    """The direct route of ``api`` for :func:`send` and :func:`stream_chunks` to take
    themselves; None with tracing on (the traced path wraps requests in spans) or when
    :func:`direct.route` has none."""
    return direct.route(api) if tracing.tracer() is None else None


async def _call_direct(
    way: direct.Route,
    api: Api,
    method: str,
    target: Target,
    *,
    retry_reads: bool,
    attempt: int = 1,
    version: str = "v1",
    base: str = "",
    namespace: str | None = None,
    url: str = "",
    params: Mapping[str, str] | None = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: httpx.Timeout | None = None,
) -> _Answer | None:
    """One request over the direct route, read whole; its failures mapped as ``_call``'s."""
    bucket = rate_limit_of(api)
    waited = 0.0 if bucket is None else await _rate_limited(bucket)
    path = api._construct_url(version, base, namespace, url)
    started = time.monotonic()
    options = {"params": params, "content": content, "headers": headers, "timeout": timeout}
    try:
        async with way.session.request(
            method, way.url(path), **_direct_options(way, options)
        ) as response:
            answer = _Answer(
                response.status, await response.read(), response.headers, response.url.path
            )
    except (aiohttp.ClientError, TimeoutError, OSError) as failure:
        _notify(api, method, path, 0, started, attempt, waited)
        error = _transport_error(failure, method, path, target)
        if retry_reads and method.upper() == "GET" and _was_reset(failure):
            log.debug("%s; retrying the read", error)
            return None
        raise error from failure
    _notify(api, method, answer.path, answer.status_code, started, attempt, waited)
    return answer


def _param(value: Any) -> str:
    """A query value as httpx writes it (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _error(response: httpx.Response | _Answer, method: str, target: Target) -> APIError:
    return error_from_status(
        response.status_code,
        response.text,
        retry_after=retry_after_seconds(response.headers),
        method=method.upper(),
        path=_path_of(response),
        kind=target.kind,
        namespace=target.namespace,
        name=target.name,
    )


def _path_of(response: httpx.Response | _Answer) -> str:
    if isinstance(response, _Answer):
        return response.path
    return response.request.url.path if response.request else ""


def _wait_before_retry(error: APIError, repeatable: bool, attempt: int) -> float | None:
    """Seconds to wait before sending again, or None to raise ``error``."""
    if not repeatable or attempt >= MAX_TRIES or error.retry_after is None:
        return None
    if error.status != 429 and error.status < 500:
        return None
    if error.retry_after > MAX_RETRY_AFTER:
        return None
    return error.retry_after


def _transport_error(failure: Exception, method: str, path: str, target: Target) -> APIError:
    """APIUnavailableError for a connection that failed, ServerTimeoutError for one that
    timed out; httpx-aiohttp reports aiohttp's connection errors as ConnectTimeout, so the
    chain of causes decides."""
    timed_out = _timed_out(failure)
    cls = ServerTimeoutError if timed_out else APIUnavailableError
    what = "no answer in time" if timed_out else f"cannot reach the API server ({_root(failure)})"
    return cls(
        what,
        status=0,
        method=method.upper(),
        path=path,
        kind=target.kind,
        namespace=target.namespace,
        name=target.name,
    )


def _chain(failure: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = failure
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _root(failure: BaseException) -> str:
    root = _chain(failure)[-1]
    return f"{type(root).__name__}: {root}" if str(root) else type(root).__name__


def _timed_out(failure: BaseException) -> bool:
    for cause in _chain(failure):
        if isinstance(cause, aiohttp.ServerTimeoutError | asyncio.TimeoutError | TimeoutError):
            return True
        if isinstance(cause, aiohttp.ClientConnectionError | httpx.ConnectError | OSError):
            return False
    return isinstance(failure, httpx.TimeoutException) and not isinstance(
        failure, httpx.ConnectTimeout
    )


def _was_reset(failure: BaseException) -> bool:
    return any(
        isinstance(
            cause,
            aiohttp.ServerDisconnectedError
            | ConnectionResetError
            | httpx.RemoteProtocolError
            | httpx.ReadError,
        )
        for cause in _chain(failure)
    )


def _path(api: Api, request: Mapping[str, Any]) -> str:
    try:
        url = api._construct_url(
            request.get("version", "v1"),
            request.get("base", ""),
            request.get("namespace"),
            request.get("url", ""),
        )
    except Exception:  # only for the message
        return str(request.get("url", ""))
    return httpx.URL(str(url)).path
