"""Every use of kr8s's private names, in one module, behind a check of the kr8s version.

reconcile_kit reaches into kr8s where kr8s has no public way to do what it needs:

- ``Api._session`` (the ``httpx.AsyncClient`` kr8s sends requests with) and
  ``Api._create_session`` (the coroutine that (re)creates it, on first use and on
  re-authentication): the aiohttp transport (:mod:`.transport`), client-side rate limits
  (:mod:`.ratelimit`) and the direct route (:mod:`.direct`) attach to each new client;
- ``APIObject._raw`` and ``APIObject._api`` (an object's state and its api): the cache
  builds objects over its documents without copying them (:mod:`reconcile_kit.patch.snapshot`).

These are not part of kr8s's API and may change in any release, so this module checks,
on first use, that the installed kr8s is one these were read from and tested with
(:data:`SUPPORTED`); on another it raises :class:`UnsupportedKr8sError` naming both
versions. ``RECONCILE_KIT_ALLOW_UNSUPPORTED_KR8S=1`` turns the error into a warning (to try
a newer kr8s before reconcile-kit supports it). ``tests/client/test_kr8s_internals.py``
checks that no other module of reconcile_kit touches a private kr8s name.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import httpx
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from .errors import ReconcileKitError

__all__ = [
    "APIOBJECT_INIT",
    "MINIMUM",
    "SUPPORTED",
    "UNSUPPORTED_FROM",
    "UnsupportedKr8sError",
    "after_new_session",
    "assemble_object",
    "check_version",
    "current_raw",
    "each_session",
    "has_session_hook",
    "plain_init",
    "session",
    "set_raw",
]

Assembled = TypeVar("Assembled", bound=APIObject)

log = logging.getLogger(__name__)

MINIMUM = (0, 20, 15)
"""The oldest kr8s supported (pyproject.toml: ``kr8s>=0.20.15``)."""
UNSUPPORTED_FROM = (0, 21, 0)
"""The first kr8s not supported: its internals are unread and untested (``kr8s<0.21``)."""
SUPPORTED = ">=0.20.15,<0.21"
"""The supported kr8s versions, as a pip specifier."""
ALLOW_ENV = "RECONCILE_KIT_ALLOW_UNSUPPORTED_KR8S"
"""Set to ``1``: an unsupported kr8s logs a warning instead of raising."""

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_checked = False


class UnsupportedKr8sError(ReconcileKitError, RuntimeError):
    """The installed kr8s is not one whose private names reconcile_kit was tested with.

    Attributes:
        installed: the installed kr8s version (``importlib.metadata``), or ``"unknown"``.
    """

    def __init__(self, installed: str) -> None:
        super().__init__(
            f"reconcile-kit supports kr8s {SUPPORTED} (it uses kr8s internals: Api._session, "
            f"Api._create_session, APIObject._raw and _api), but kr8s {installed} is "
            f"installed: pip install 'kr8s{SUPPORTED}' (or set {ALLOW_ENV}=1 to try it)"
        )
        self.installed = installed


def check_version(installed: str | None = None) -> None:
    """Raise :class:`UnsupportedKr8sError` unless kr8s ``installed`` (default: the installed
    distribution's version, from ``importlib.metadata``) is in :data:`SUPPORTED`: its
    release numbers are at least :data:`MINIMUM` and below :data:`UNSUPPORTED_FROM`
    (pre-release and local suffixes are ignored: ``0.20.16rc1`` counts as 0.20.16). With
    ``RECONCILE_KIT_ALLOW_UNSUPPORTED_KR8S=1`` it logs a warning instead."""
    if installed is None:
        try:
            installed = version("kr8s")
        except PackageNotFoundError:  # pragma: no cover - kr8s imported from a source tree
            installed = "unknown"
    match = _VERSION.match(installed)
    numbers = tuple(int(n or 0) for n in match.groups()) if match else None
    if numbers is not None and MINIMUM <= numbers < UNSUPPORTED_FROM:
        return
    if os.environ.get(ALLOW_ENV) == "1":
        log.warning(
            "kr8s %s is not supported (%s): %s=1, going on", installed, SUPPORTED, ALLOW_ENV
        )
        return
    raise UnsupportedKr8sError(installed)


def _require() -> None:
    """:func:`check_version` once per process (its first success is remembered)."""
    global _checked
    if not _checked:
        check_version()
        _checked = True


def session(api: Api) -> httpx.AsyncClient | None:
    """The httpx client ``api`` (a ``kr8s.asyncio.Api``) sends its requests with
    (``Api._session``), or None before its first request (or when it has none)."""
    _require()
    found: httpx.AsyncClient | None = getattr(api, "_session", None)
    return found


def has_session_hook(api: Api) -> bool:
    """Whether ``api`` has the hook :func:`after_new_session` needs (``Api._create_session``
    and ``Api._session``); an object standing in for an Api may not."""
    _require()
    return hasattr(api, "_create_session") and hasattr(api, "_session")


def after_new_session(api: Api, hook: Callable[[httpx.AsyncClient], Awaitable[None]]) -> bool:
    """Call ``hook(client)`` with each httpx client kr8s creates for ``api`` from now on
    (wrapping ``Api._create_session``, which kr8s calls on first use and on
    re-authentication); the current client, if any, is the caller's (:func:`session`).

    Returns False, changing nothing, when ``api`` has no such hook
    (:func:`has_session_hook`). The caller must not install the same hook twice (it would
    run twice).

    Raises:
        UnsupportedKr8sError: the installed kr8s is not a supported version.
    """
    if not has_session_hook(api):
        return False
    inside: Any = api  # kr8s's private names: this module is where they are used
    original = inside._create_session

    async def create_session() -> None:
        await original()
        await hook(inside._session)

    inside._create_session = create_session
    return True


def each_session(api: Api, apply: Callable[[httpx.AsyncClient], None]) -> bool:
    """Call ``apply(client)`` with ``api``'s current httpx client, if any, and with each
    one kr8s creates later (:func:`after_new_session`): how a request hook stays on every
    client. Returns False, changing nothing, when ``api`` has no session hook."""

    async def applied(client: httpx.AsyncClient) -> None:
        apply(client)

    if not after_new_session(api, applied):
        return False
    current = session(api)
    if current is not None:
        apply(current)
    return True


APIOBJECT_INIT = APIObject.__init__
"""kr8s's ``APIObject.__init__``: a class whose ``__init__`` is this one (``cls.__init__ is
APIOBJECT_INIT``) only stores the raw state and the api, so :func:`assemble_object`
builds its objects as it would (a test compared with ``is`` in the cache's hot path)."""


def plain_init(cls: type[Any]) -> bool:
    """Whether kr8s class ``cls`` keeps ``APIObject.__init__`` (:data:`APIOBJECT_INIT`)."""
    return cls.__init__ is APIOBJECT_INIT


def assemble_object(cls: type[Assembled], raw: Mapping[str, Any], api: Api | None) -> Assembled:
    """An object of kr8s class ``cls`` (one with :func:`plain_init`) holding ``raw`` as its
    state (``APIObject._raw``, not converted nor copied) and ``api`` (``APIObject._api``):
    what ``cls(raw, api=api)`` makes, without its conversion of ``raw`` to a Box."""
    if not _checked:
        _require()
    obj = cls.__new__(cls)
    inside: Any = obj
    inside._raw = raw
    inside._api = api
    return obj


_RAW_PROPERTY = APIObject.__dict__["raw"]


def current_raw(obj: object) -> MutableMapping[str, Any] | None:
    """What kr8s's ``APIObject.raw`` returns (the object's state, with ``kind`` and
    ``apiVersion`` stamped from its class), without the dict and the update kr8s builds on
    every read when both are stamped already; None when ``obj`` is no kr8s object or its
    class has a ``raw`` of its own (then read ``obj.raw``)."""
    if getattr(type(obj), "raw", None) is not _RAW_PROPERTY:
        return None
    inside: Any = obj
    raw = inside.__dict__.get("_raw")
    if type(raw) is dict or not isinstance(raw, dict):  # kr8s keeps a Box: anything else
        return None  # is read through the property
    kind, version = inside.kind, inside.version
    if dict.get(raw, "kind") != kind or dict.get(raw, "apiVersion") != version:
        raw.update({"kind": kind, "apiVersion": version})
    return raw


def set_raw(obj: APIObject, raw: Mapping[str, Any]) -> None:
    """Replace kr8s object ``obj``'s state with ``raw`` (``APIObject._raw``), as
    ``obj.raw = raw`` does without converting it."""
    if not _checked:
        _require()
    inside: Any = obj
    inside._raw = raw
