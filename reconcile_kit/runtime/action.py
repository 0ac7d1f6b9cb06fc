"""What a reconcile asks for next: :class:`Action` (kube-rs ``Action``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from dataclasses import dataclass
from types import CoroutineType
from typing import Any

__all__ = ["Action", "awaitable_result", "checked_action", "require_sync"]


@dataclass(frozen=True)
class Action:
    """What a reconcile asks for next (kube-rs ``Action``).

    ``Action.requeue(seconds)`` reconciles again after that many seconds (unless a change
    comes first); ``Action.await_change()`` (or returning None) waits for the next event.
    """

    requeue_after: float | None = None

    @classmethod
    def requeue(cls, seconds: float) -> Action:
        """Reconcile this object again after ``seconds`` (unless a change comes first), as
        kube-rs's ``Action::requeue`` and controller-runtime's ``Result.RequeueAfter``.

        Raises:
            ValueError: ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError(f"requeue delay must be >= 0 seconds, got {seconds}")
        return cls(float(seconds))

    @classmethod
    def await_change(cls) -> Action:
        """Reconcile this object again only when it (or a child, or a watched object
        mapped to it) changes, as kube-rs's ``Action::await_change``. Watches can miss
        nothing the cache ends up holding, but a desync (a change the controller's inputs
        do not show, e.g. in an external system) is only caught by a periodic requeue or
        ``resync``: use :meth:`requeue` when the state lives outside Kubernetes."""
        return cls(None)


def awaitable_result(pending: object, what: str, key: object) -> Awaitable[Any]:
    """``pending``, what ``what`` (a user's function) returned for object ``key``, when
    it can be awaited.

    Args:
        pending: the function's return value.
        what: the function's role, for the message (``"reconcile"``, ``"error_policy"``).
        key: the object it was called for (its ``str`` names kind, namespace and name).

    Raises:
        TypeError: ``pending`` is not awaitable: the function is a plain ``def`` (naming
            the object and what it returned, and asking for ``async def``).
    """
    if type(pending) is CoroutineType or inspect.isawaitable(pending):
        return pending
    raise TypeError(
        f"{key}: {what} returned {_shown(pending)}, not an awaitable: define it with "
        f"async def (a plain def's return value cannot be awaited)"
    )


def require_sync(function: object, what: str, signature: str) -> None:
    """Refuse an ``async def`` where a plain function is called synchronously (a predicate,
    a mapper, a converter): its coroutine is never awaited, and is truthy.

    Args:
        function: the user's callable.
        what: its role, for the message (``"predicate"``, ``"mapper"``).
        signature: what it should be, for the message (``"(event) -> bool"``).

    Raises:
        TypeError: ``function`` (or its ``__call__``) is a coroutine function: the message
            names it and asks for a plain ``def``.
    """
    call = type(function).__dict__.get("__call__")  # a callable object's own method
    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call):
        name = getattr(function, "__qualname__", None) or repr(function)
        raise TypeError(
            f"{what} {name} is an async def: a {what} is called synchronously, so its "
            f"coroutine would never run; define it with def, {signature}"
        )


def checked_action(result: object, what: str, key: object) -> Action | None:
    """``result``, the awaited outcome of ``what`` (a reconcile or an error policy) for
    object ``key``, when it is an :class:`Action` or None.

    Args:
        result: the awaited return value.
        what: the function's role, for the message (``"reconcile"``, ``"error_policy"``).
        key: the object it was called for (its ``str`` names kind, namespace and name).

    Raises:
        TypeError: ``result`` is anything else (``True``, a number of seconds, the
            ``Action.requeue`` method itself): the message names the object and the
            value, and says what to return instead.
    """
    if result is None or isinstance(result, Action):
        return result
    hint = ", uncalled" if callable(result) else ""
    raise TypeError(
        f"{key}: {what} returned {_shown(result)}{hint}, not an Action or None: return "
        f"Action.requeue(seconds) to look again later, or None to wait for the next change"
    )


def _shown(value: object) -> str:
    """``value`` for a message: its repr (cut at 80 characters) and its type's name."""
    shown = getattr(value, "__qualname__", None) if callable(value) else None
    shown = shown or repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return f"{shown} ({type(value).__name__})"
