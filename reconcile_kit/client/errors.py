"""Exceptions raised by reconcile_kit: one hierarchy under :class:`ReconcileKitError`.

Every error about an object names it as ``Kind namespace/name`` (or ``Kind name`` for
cluster-scoped objects) so that logs point at the object and field at fault. Errors the API
server answered (:class:`APIError` and its subclasses, one per Kubernetes ``StatusReason``
that a controller handles differently, as apimachinery's ``k8s.io/apimachinery/pkg/api/errors``
``IsNotFound``, ``IsConflict``...) also carry the HTTP status, the Status ``reason``, the
server's message and, for 422, the field causes. :func:`error_from_status` maps a response.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

import orjson

from .redaction import redact_text


def describe(kind: str, namespace: str | None, name: str | None) -> str:
    """``Kind namespace/name`` (``Kind name`` when cluster-scoped; ``Kind in namespace ns``
    or ``Kind`` without a name) for messages."""
    if name is None:
        return f"{kind} in namespace {namespace}" if namespace else kind
    where = f"{namespace}/{name}" if namespace else name
    return f"{kind} {where}"


class ReconcileKitError(Exception):
    """Base class of reconcile_kit's errors."""


class ObjectError(ReconcileKitError):
    """An error about one Kubernetes object.

    Attributes:
        kind: the object's kind (e.g. ``Deployment``), or None when the error concerns no
            single object (a list, discovery).
        namespace: its namespace, or None when cluster-scoped.
        name: its name.
    """

    def __init__(
        self, message: str, *, kind: str | None, namespace: str | None, name: str | None
    ) -> None:
        named = kind is not None or name is not None
        where = describe(kind or "?", namespace, name) if named else ""
        super().__init__(f"{where}: {message}" if where else message)
        self.kind = kind
        self.namespace = namespace
        self.name = name


class PatchError(ObjectError):
    """A patch could not be computed, found before anything is sent (a changed
    kind/apiVersion/name/namespace, a value JSON cannot hold): names the object and field.
    A patch the server refused is an :class:`APIError`, never a PatchError."""


class ConditionConflictError(PatchError):
    """A condition changed both by this reconcile and on the server since the snapshot."""


class InvalidObjectError(ObjectError):
    """An object in the cluster does not fit its typed model (schema drift, an older
    version): it is reported and not reconciled.

    Attributes:
        problems: ``"field.path: message"`` for each field pydantic refused.
    """

    def __init__(
        self, problems: list[str], *, kind: str | None, namespace: str | None, name: str | None
    ) -> None:
        self.problems = list(problems)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(
            f"does not fit its model: {problems[0]}{more}",
            kind=kind,
            namespace=namespace,
            name=name,
        )


class AlreadyOwnedError(ObjectError):
    """The object already has a different controller owner reference."""


class OwnerReferenceError(ObjectError):
    """An owner reference that Kubernetes would not honour (scope or namespace mismatch)."""


class FencedWriteError(ObjectError):
    """A write refused before it was sent: the replica no longer holds the right to it
    (see :mod:`reconcile_kit.client.fencing`). A controller handles it itself: one INFO
    line, and the key is not retried while the replica lacks that right."""


class LeaseExpiredError(FencedWriteError):
    """The Lease entitling this replica (leadership, or its ring membership) was not
    renewed within its renew deadline, by this process's own clock."""


class OwnershipLostError(FencedWriteError):
    """The reconciled object carries another replica's shard label at the server.

    Attributes:
        owner: the shard label's value seen at the server (None: unlabelled).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str | None,
        namespace: str | None,
        name: str | None,
        owner: str | None = None,
    ) -> None:
        super().__init__(message, kind=kind, namespace=namespace, name=name)
        self.owner = owner


class RequestDetails(TypedDict, total=False):
    """What an :class:`APIError` says of the request it answers: the ``Retry-After`` it
    got (seconds), the method and path, and the object (kind, namespace, name)."""

    retry_after: float | None
    method: str
    path: str
    kind: str | None
    namespace: str | None
    name: str | None


class StatusDetails(RequestDetails, total=False):
    """The keyword arguments of :class:`APIError` (a subclass's ``**kwargs``): the answer's
    Status fields and the request they answer."""

    status: int
    reason: str
    causes: Sequence[Mapping[str, Any]]


class APIError(ObjectError):
    """The API server refused a request or could not be reached.

    Attributes:
        status: the HTTP status (0 when no answer came: see :class:`APIUnavailableError`).
        reason: the Status ``reason`` (``NotFound``, ``Conflict``, ``Invalid``...), or "".
        server_message: the Status ``message`` (the response body when it is no Status),
            bearer tokens removed (:func:`~reconcile_kit.client.redaction.redact_text`).
        causes: ``details.causes`` of the Status (``{"field", "reason", "message"}`` maps).
        retry_after: seconds the server asked to wait (``Retry-After``), or None.
        method: the request's HTTP method; path: its URL path.
    """

    def __init__(
        self,
        server_message: str,
        *,
        status: int,
        reason: str = "",
        causes: Sequence[Mapping[str, Any]] = (),
        retry_after: float | None = None,
        method: str = "",
        path: str = "",
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
    ) -> None:
        self.server_message = redact_text(server_message)  # never a bearer token in a log
        self.status = status
        self.reason = reason
        self.causes = [dict(c) for c in causes]
        self.retry_after = retry_after
        self.method = method
        self.path = path
        super().__init__(self._text(), kind=kind, namespace=namespace, name=name)

    def _text(self) -> str:
        request = f"{self.method} {self.path}".strip()
        answer = f"{self.status} {self.reason}".strip() if self.status else "no answer"
        return (
            f"{request}: {answer}: {self.server_message}"
            if request
            else (f"{answer}: {self.server_message}")
        )


class BadRequestError(APIError):
    """400 Bad Request: a malformed request or query parameter."""


class UnauthorizedError(APIError):
    """401 Unauthorized: the credentials are missing, wrong or expired."""


class ForbiddenError(APIError):
    """403 Forbidden: RBAC (or an admission plugin) denied the request.

    Attributes:
        verb: the verb of the RBAC rule the request needed (``get``).
        resource: the rule's resource (``leases``).
        group: the rule's API group (``coordination.k8s.io``).
        scope: where the rule is needed (``namespace x`` or ``cluster-wide``).
    """

    def __init__(self, server_message: str, **kwargs: Unpack[StatusDetails]) -> None:
        self.verb, self.group, self.resource, self.scope = _rbac_rule(
            str(kwargs.get("method", "")), str(kwargs.get("path", ""))
        )
        super().__init__(server_message, **kwargs)

    def _text(self) -> str:
        text = super()._text()
        if "cannot set blockOwnerDeletion" in text:
            return f"{text} ({_owner_reference_hint(text)})"
        rule = self.resource + (f".{self.group}" if self.group else "")
        needs = f"needs {self.verb} on {rule} {self.scope}" if self.resource else ""
        return f"{text} ({needs})" if needs else text


def _owner_reference_hint(text: str) -> str:
    """What a refusal of the OwnerReferencesPermissionEnforcement admission plugin means
    (kubernetes plugin/pkg/admission/gc)."""
    if "cannot find RESTMapping" in text:
        # k8s.io/apiserver pkg/server/options/admission.go resets that mapper every 30 s
        return (
            "the API server's admission does not know the owner's kind yet: a CRD created "
            "less than 30 s ago is mapped at kube-apiserver's next 30 s refresh; a retry "
            "then succeeds"
        )
    return (
        "OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs update on the "
        "owner's <resource>/finalizers (reconcile-kit rbac grants it to owners)"
    )


class NotFoundError(APIError):
    """404 Not Found: the object (or the resource type) does not exist."""


class ConflictError(APIError):
    """409 Conflict: the object changed since it was read (a resourceVersion precondition
    failed), or a server-side apply without ``force`` touches fields another field manager
    owns (the message then lists managers and paths, as kube-apiserver's).

    Attributes:
        field_conflicts: for a server-side apply conflict, ``(manager, path)`` pairs, e.g.
            ``('"helm"', ".spec.replicas")`` or ``('"kubectl" using v1', ".data.x")``.
    """

    def __init__(self, server_message: str, **kwargs: Unpack[StatusDetails]) -> None:
        kwargs.setdefault("status", 409)
        kwargs.setdefault("reason", "Conflict")
        super().__init__(server_message, **kwargs)

    @property
    def field_conflicts(self) -> list[tuple[str, str]]:
        """A server-side apply conflict's ``(manager, field path)`` pairs, from the Status
        causes of reason ``FieldManagerConflict`` (empty for other conflicts)."""
        return [
            (str(c.get("message", "")).removeprefix("conflict with "), str(c.get("field", "")))
            for c in self.causes
            if c.get("reason") == "FieldManagerConflict"
        ]


class AlreadyExistsError(ConflictError):
    """409 with reason AlreadyExists: a create found an object of that name."""


class ExpiredError(APIError):
    """410 Gone: a watch or list continue token's resourceVersion is too old."""


class InvalidError(APIError):
    """422 Unprocessable Entity: the object fails validation; :attr:`causes` name the
    fields."""

    def _text(self) -> str:
        fields = ", ".join(
            f"{c.get('field')}: {c.get('message')}" for c in self.causes if c.get("field")
        )
        text = super()._text()
        return f"{text} [{fields}]" if fields and fields not in text else text


class ListItemConflictError(InvalidError):
    """422 refusing a server-side apply whose list item repeats a unique field (a name) of an
    item another field manager owns: someone changed a list-map key of the child (a Service
    port 5432 -> 15432), so the applied item is a second item with the same name. The same
    apply fails again until that item is changed back or removed: report it, do not retry.

    Attributes:
        field: the refused field (``spec.ports[1].name``).
        value: the repeated value (``"db"``).
        item: the other item's list-map key fields (``{"port": 15432, "protocol": "TCP"}``).
        owners: the field managers owning that item, as ``manager (Operation)``.
    """

    def __init__(
        self,
        server_message: str,
        *,
        field: str,
        value: object,
        item: Mapping[str, Any],
        owners: Sequence[str],
        **details: Unpack[StatusDetails],
    ) -> None:
        self.field = field
        self.value = value
        self.item = dict(item)
        self.owners = list(owners)
        super().__init__(server_message, **details)


class TooManyRequestsError(APIError):
    """429 Too Many Requests (API priority and fairness, or a rate limit); wait at least
    :attr:`retry_after` seconds before trying again."""


class InternalServerError(APIError):
    """500 Internal Server Error."""


class APIUnavailableError(APIError):
    """The API server could not be reached (connection refused or reset, DNS) or answered
    503 Service Unavailable. Never a timeout: see :class:`ServerTimeoutError`."""


class ServerTimeoutError(APIError):
    """The request timed out: 504, a Status with reason ``Timeout``/``ServerTimeout``, or
    no answer within the client's timeout (status 0)."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: ExpiredError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalServerError,
    503: APIUnavailableError,
    504: ServerTimeoutError,
}


def error_from_status(
    status: int, body: str | bytes, **request: Unpack[RequestDetails]
) -> APIError:
    """The :class:`APIError` subclass for an HTTP ``status`` and its body (a Kubernetes
    Status object, or anything else), naming the object when given (``request``: the
    :class:`RequestDetails`)."""
    document = _status_document(body)
    reason = str(document.get("reason") or "")
    message = str(document.get("message") or (body.decode() if isinstance(body, bytes) else body))
    cls = _BY_STATUS.get(status, APIError)
    if reason == "AlreadyExists":
        cls = AlreadyExistsError
    elif reason in ("Timeout", "ServerTimeout"):
        cls = ServerTimeoutError
    causes = (document.get("details") or {}).get("causes") or ()
    return cls(message.strip(), status=status, reason=reason, causes=causes, **request)


def _status_document(body: str | bytes) -> dict[str, Any]:
    try:
        document = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        return {}
    return document if isinstance(document, dict) else {}


_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def _rbac_rule(method: str, path: str) -> tuple[str, str, str, str]:
    """``(verb, group, resource, scope)`` an RBAC rule needs for ``method path`` (as
    kube-apiserver's RequestInfoFactory reads a request); resource "" when not a resource
    URL."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return _VERBS.get(method, method.lower()), "", "", ""
    scope = "cluster-wide"
    if len(rest) >= 3 and rest[0] == "namespaces":
        scope, rest = f"in namespace {rest[1]}", rest[2:]
    if not rest:
        return _VERBS.get(method, method.lower()), group, "", ""
    resource = rest[0] + (f"/{rest[2]}" if len(rest) >= 3 else "")
    verb = _VERBS.get(method, method.lower())
    if len(rest) == 1:  # a collection
        verb = {"get": "list", "delete": "deletecollection"}.get(verb, verb)
        if "watch=" in path:
            verb = "watch"
    return verb, group, resource, scope


def error_tree() -> str:
    """The exception hierarchy under :class:`ReconcileKitError` as a Markdown nested list,
    each class with the first line of its docstring (docs/errors.md holds it; a test fails
    when the page differs)."""
    lines: list[str] = []

    def walk(cls: type[Exception], depth: int) -> None:
        paragraph = (cls.__doc__ or "").strip().split("\n\n", 1)[0]
        summary = " ".join(paragraph.split()).rstrip(".").replace("``", "`")
        summary = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", summary)  # Sphinx roles: code
        lines.append(f"{'    ' * depth}* `{cls.__name__}`: {summary}")
        for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
            if sub.__module__ == __name__:
                walk(sub, depth + 1)

    walk(ReconcileKitError, 0)
    return "\n".join(lines) + "\n"


# The public names: every class defined here (the exception hierarchy and the TypedDicts
# of its details) and the three helpers; computed so the list cannot drift from the classes.
__all__ = sorted(
    [
        *(
            name
            for name, value in list(globals().items())
            if isinstance(value, type) and value.__module__ == __name__ and name[0] != "_"
        ),
        "describe",
        "error_from_status",
        "error_tree",
    ]
)
