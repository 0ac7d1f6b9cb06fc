"""kr8s's own writes under a reconcile's write fence: an httpx request hook.

:func:`~reconcile_kit.client.request.send` (PatchHelper, ``ctx.apply``, every helper of
the toolkit) checks the running reconcile's :class:`~.fencing.WriteFence` itself. A
reconcile may also write with kr8s's own methods (``await obj.patch(...)``,
``obj.label(...)``, ``obj.delete()``): those go through the kr8s Api's httpx client, and
:func:`install_fence_check` puts a request hook on it that refuses such a write, before
it is sent, once the replica's Lease was not renewed within its renew deadline
(:class:`~.errors.LeaseExpiredError`, as for the toolkit's own writes). A sharded
replica paused past its Lease (SIGSTOP, a long garbage collection, a frozen VM) and
resumed mid-reconcile so writes nothing with kr8s's methods either.

What the hook cannot add is the server-side precondition on the reconciled object
(:meth:`~.fencing.WriteFence.precondition`): kr8s builds its own bodies. A write with
kr8s's methods keeps the window the module :mod:`~.fencing` describes for writes to
other objects; the toolkit's writes (PatchHelper, ``ctx.apply``...) to the reconciled
object are checked by the API server itself.
"""

from __future__ import annotations

import httpx
from kr8s.asyncio import Api

from . import kr8s_internals
from .fencing import WRITES, current_fence
from .paths import object_of_path

__all__ = ["install_fence_check", "is_fence_check"]

_INSTALLED = "_reconcile_kit_fence_check"


class _FenceCheck:
    """The httpx request hook: the running reconcile's fence checks each write."""

    async def __call__(self, request: httpx.Request) -> None:
        fence = current_fence()
        if fence is None or request.method not in WRITES:
            return
        resource, namespace, name = object_of_path(request.url.path)
        fence.check(request.method, resource, namespace, name)


_HOOK = _FenceCheck()


def is_fence_check(hook: object) -> bool:
    """Whether ``hook`` (an httpx request hook) is the one :func:`install_fence_check`
    attaches."""
    return hook is _HOOK


def install_fence_check(api: Api) -> bool:
    """Make every write ``api`` (a ``kr8s.asyncio.Api``) sends through its httpx client
    inside a fenced reconcile pass the reconcile's fence first (see the module), now and
    on the clients kr8s creates later (re-authentication). Idempotent.

    Returns False, changing nothing, when ``api`` has no session hook
    (:func:`~reconcile_kit.client.kr8s_internals.has_session_hook`).
    """
    if getattr(api, _INSTALLED, False):
        return True
    if not kr8s_internals.each_session(api, _attach):
        return False
    setattr(api, _INSTALLED, True)
    return True


def _attach(session: httpx.AsyncClient) -> None:
    hooks = session.event_hooks["request"]
    if _HOOK not in hooks:
        hooks.append(_HOOK)
