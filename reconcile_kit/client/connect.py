"""A kr8s client for a kubeconfig (or kr8s's discovery), its failures as the toolkit's.

``kr8s.asyncio.api()`` asks the API server for its version before it returns: a server
that cannot be reached fails it with httpx's ``ConnectError``, which names no server and
derives from none of the toolkit's errors.
"""

from __future__ import annotations

import httpx
import kr8s
import kr8s.asyncio
from kr8s.asyncio import Api

from .errors import APIUnavailableError, ServerTimeoutError

__all__ = ["connect"]


async def connect(kubeconfig: str | None = None) -> Api:
    """``kr8s.asyncio.api(kubeconfig=...)``: a new client (``kubeconfig`` None: KUBECONFIG,
    ~/.kube/config, then the in-cluster service account, as kr8s finds them).

    Raises:
        APIUnavailableError: the API server could not be reached (refused, reset, DNS).
        ServerTimeoutError: it did not answer in time.
    """
    try:
        return await kr8s.asyncio.api(kubeconfig=kubeconfig)
    except httpx.TimeoutException as error:
        raise ServerTimeoutError(
            f"the API server did not answer: {error}", status=0, method="GET", path="/version"
        ) from error
    except (httpx.TransportError, OSError) as error:
        where = (
            f"{error.request.url.scheme}://{error.request.url.netloc.decode()}"
            if (isinstance(error, httpx.RequestError) and _has_request(error))
            else "the API server"
        )
        raise APIUnavailableError(
            f"cannot reach {where}: {error or type(error).__name__}",
            status=0,
            method="GET",
            path="/version",
        ) from error


def _has_request(error: httpx.RequestError) -> bool:
    try:
        error.request  # noqa: B018  httpx raises RuntimeError when none was set
    except RuntimeError:
        return False
    return True
