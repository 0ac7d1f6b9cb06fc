"""A kr8s client for a kubeconfig (or kr8s's discovery), its failures as the toolkit's.

``kr8s.asyncio.api()`` reads the kubeconfig and asks the API server for its version before
it returns. Its failures name no file or server and derive from none of the toolkit's
errors: kr8s's ``ValueError("Unable to find valid credentials")`` when no kubeconfig is
found, PyYAML's errors or a ``TypeError`` for a file that is no kubeconfig, httpx's
``ConnectError`` for a server that cannot be reached, kr8s's ``ServerError`` for an answer
such as 401. :func:`connect` raises :class:`KubeconfigError` or an
:class:`~reconcile_kit.client.errors.APIError` instead; :func:`api_error_of` maps kr8s's
request errors wherever kr8s is called directly.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import kr8s
import kr8s.asyncio
import yaml
from kr8s.asyncio import Api

from .errors import (
    APIError,
    APIUnavailableError,
    ReconcileKitError,
    ServerTimeoutError,
    error_from_status,
)

__all__ = ["KubeconfigError", "api_error_of", "connect"]

NOT_FOUND = "no kubeconfig found (~/.kube/config, $KUBECONFIG) and not in a cluster"


class KubeconfigError(ReconcileKitError, ValueError):
    """No kubeconfig was found (and no in-cluster service account), or a kubeconfig file
    is not one (bad YAML, not a mapping, a missing context): names the file and what is
    wrong."""


async def connect(kubeconfig: str | None = None) -> Api:
    """``kr8s.asyncio.api(kubeconfig=...)``: a new client (``kubeconfig`` None: KUBECONFIG,
    ~/.kube/config, then the in-cluster service account, as kr8s finds them).

    Raises:
        KubeconfigError: no kubeconfig found and not in a cluster (the files
            ``kubeconfig`` or $KUBECONFIG named that do not exist are named), a kubeconfig
            that is a directory, or one that is not a valid kubeconfig (the file named).
        APIUnavailableError: the API server could not be reached (refused, reset, DNS).
        ServerTimeoutError: it did not answer in time.
        APIError: it answered the version request with an error (UnauthorizedError for
            wrong credentials: 401).
    """
    for path in _named_paths(kubeconfig):
        if path.is_dir():  # kr8s's IsADirectoryError read as an unreachable server before
            raise KubeconfigError(f"kubeconfig {path}: is a directory, not a file")
    paths = _kubeconfig_paths(kubeconfig)
    for path in paths:
        _check_kubeconfig(path)
    try:
        return await kr8s.asyncio.api(kubeconfig=kubeconfig)
    except (kr8s.ServerError, kr8s.APITimeoutError) as error:
        raise api_error_of(error, method="GET", path="/version") from error
    except httpx.TimeoutException as error:
        raise ServerTimeoutError(
            f"the API server did not answer: {error}", status=0, method="GET", path="/version"
        ) from error
    except (httpx.TransportError, OSError) as error:
        raise _unavailable(error) from error
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        raise _bad_kubeconfig(error, paths, kubeconfig) from error


def api_error_of(
    error: kr8s.ServerError | kr8s.APITimeoutError, *, method: str = "", path: str = ""
) -> APIError:
    """The toolkit's :class:`~reconcile_kit.client.errors.APIError` for a kr8s request
    error: the subclass of the answer's status for ``kr8s.ServerError`` (401:
    UnauthorizedError, 422: InvalidError...), ServerTimeoutError for
    ``kr8s.APITimeoutError``. ``method`` and ``path`` are used when the error carries no
    request."""
    if isinstance(error, kr8s.APITimeoutError):
        return ServerTimeoutError("no answer in time", status=0, method=method, path=path)
    response = error.response
    if response is None:
        return APIError(str(error), status=0, method=method, path=path)
    request = response.request if _has_request(response) else None
    return error_from_status(
        response.status_code,
        response.content,
        method=request.method if request is not None else method,
        path=request.url.path if request is not None else path,
    )


def _named_paths(kubeconfig: str | None) -> list[Path]:
    """The files kr8s looks for: ``kubeconfig``, else $KUBECONFIG (colon-separated), else
    ~/.kube/config (kr8s skips those that do not exist, as kubectl does for $KUBECONFIG)."""
    spec = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    return [Path(part).expanduser() for part in spec.split(os.pathsep) if part]


def _kubeconfig_paths(kubeconfig: str | None) -> list[Path]:
    """The files kr8s reads: :func:`_named_paths` that exist."""
    return [path for path in _named_paths(kubeconfig) if path.is_file()]


def _not_found(kubeconfig: str | None) -> str:
    """No kubeconfig was read and not in a cluster: the files ``kubeconfig`` or $KUBECONFIG
    named, none of which exists (a mistyped path), or :data:`NOT_FOUND` when neither was
    given and ~/.kube/config does not exist."""
    source = "kubeconfig" if kubeconfig else "$KUBECONFIG" if os.environ.get("KUBECONFIG") else ""
    if not source:
        return NOT_FOUND
    missing = _named_paths(kubeconfig)
    files = ", ".join(map(str, missing))
    verb = "does not exist" if len(missing) == 1 else "do not exist"
    named = f"{source} names" if source == "$KUBECONFIG" else source
    return f"no kubeconfig found ({named} {files}, which {verb}) and not in a cluster"


def _check_kubeconfig(path: Path) -> None:
    """Raise KubeconfigError when ``path`` is not YAML or not a mapping."""
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise KubeconfigError(f"kubeconfig {path}: cannot read it: {error}") from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or type(error).__name__
        raise KubeconfigError(f"kubeconfig {path}: not valid YAML: {problem}{where}") from error
    if document is None:
        raise KubeconfigError(f"kubeconfig {path}: the file is empty")
    if not isinstance(document, dict):
        raise KubeconfigError(
            f"kubeconfig {path}: not a kubeconfig (a YAML mapping with clusters, contexts"
            f" and users): it holds a {type(document).__name__}"
        )


def _bad_kubeconfig(error: Exception, paths: list[Path], kubeconfig: str | None) -> KubeconfigError:
    """The KubeconfigError for what kr8s raised while reading the kubeconfig."""
    if isinstance(error, ValueError) and "Unable to find valid credentials" in str(error):
        if not paths:
            return KubeconfigError(_not_found(kubeconfig))
        return KubeconfigError(f"kubeconfig {', '.join(map(str, paths))}: names no server")
    where = ", ".join(map(str, paths)) or "kubeconfig"
    if isinstance(error, KeyError) and error.args == ("current-context",):
        return KubeconfigError(
            f"kubeconfig {where}: no current-context is set (kubectl config use-context"
            " NAME sets it)"
        )
    detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return KubeconfigError(f"kubeconfig {where}: not a valid kubeconfig ({detail})")


def _unavailable(error: Exception) -> APIUnavailableError:
    where = (
        f"{error.request.url.scheme}://{error.request.url.netloc.decode()}"
        if (isinstance(error, httpx.RequestError) and _has_request(error))
        else "the API server"
    )
    return APIUnavailableError(
        f"cannot reach {where}: {error or type(error).__name__}",
        status=0,
        method="GET",
        path="/version",
    )


def _has_request(error: httpx.RequestError | httpx.Response) -> bool:
    try:
        error.request  # noqa: B018  httpx raises RuntimeError when none was set
    except RuntimeError:
        return False
    return True
