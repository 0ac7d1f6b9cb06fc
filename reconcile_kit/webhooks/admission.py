"""Validating and mutating admission webhooks: one handler for one kind, as
controller-runtime's ``CustomValidator``/``CustomDefaulter`` and kopf's
``@kopf.on.validate``/``@kopf.on.mutate``.

A handler is called as ``handler(obj, request)`` (plain or async): ``obj`` is the object of
the request (the old object on DELETE) as the kind's class gives it (a typed
:class:`~reconcile_kit.typed.CustomResource`, or a kr8s object), ``request`` the
:class:`~reconcile_kit.webhooks.review.AdmissionRequest`. A validating handler refuses by
raising :class:`~reconcile_kit.webhooks.review.Denied` and may return warnings (a list of
strings). A mutating handler changes ``obj`` in place or returns the object to admit; the
answer is the RFC 6902 JSON patch from the request's object to that one.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import jsonpatch
import orjson
from kr8s.asyncio.objects import APIObject

from ..meta.objects import raw_of
from ..patch.snapshot import build_object, freeze
from ..runtime.resources import KindLike, ResourceInfo, info_from_class, info_of_model
from ..runtime.typed import invalid_object_error, is_model_class
from .review import AdmissionRequest, Denied, admission_response

__all__ = ["AdmissionWebhook", "Handler", "WebhookOptions", "kind_info"]

log = logging.getLogger("reconcile_kit.webhooks")

Handler = Callable[[Any, AdmissionRequest], Any]
OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT", "*"})


class WebhookOptions(TypedDict, total=False):
    """The optional settings of a webhook registration (``WebhookServer.validating`` and
    ``mutating`` keywords): the :class:`AdmissionWebhook` attributes of the same names."""

    name: str
    path: str
    namespace_selector: dict[str, Any] | None
    object_selector: dict[str, Any] | None
    subresources: tuple[str, ...]
    failure_policy: str
    side_effects: str
    timeout_seconds: int
    reinvocation_policy: str


def kind_info(kind: KindLike) -> ResourceInfo:
    """The ResourceInfo of a webhook's kind: a CustomResource class (``model`` set) or a kr8s
    APIObject class.

    Raises:
        TypeError: ``kind`` is neither.
    """
    if is_model_class(kind):
        return info_of_model(kind)
    if isinstance(kind, type) and issubclass(kind, APIObject):
        return info_from_class(kind)
    raise TypeError(
        f"a webhook's kind is a CustomResource class or a kr8s APIObject class, not {kind!r}"
    )


@dataclass
class AdmissionWebhook:
    """One validating or mutating webhook and what its configuration entry says.

    Attributes:
        kind: the kind's ResourceInfo.
        handler: ``handler(obj, request)``, plain or async.
        mutating: a mutating webhook (else validating).
        name: the webhook's name in its configuration (a qualified name with at least three
            dot-separated segments, as kube-apiserver requires).
        path: the URL path it is served at.
        operations: ``CREATE``, ``UPDATE``, ``DELETE``, ``CONNECT`` or ``*``.
        subresources: also intercept these subresources (``"status"``...).
        failure_policy: ``Fail`` or ``Ignore`` (when the webhook cannot be called).
        side_effects: ``None`` or ``NoneOnDryRun``.
        timeout_seconds: how long kube-apiserver waits for the answer (1-30). The handler
            gets one second less (at least half a second), so a slow handler is answered by
            a clear refusal before kube-apiserver gives up.
        namespace_selector: a label selector (``matchLabels``/``matchExpressions``) of
            namespaces limiting what is sent.
        object_selector: a label selector (``matchLabels``/``matchExpressions``) of
            objects limiting what is sent.
        reinvocation_policy: mutating only: ``Never`` or ``IfNeeded``.
    """

    kind: ResourceInfo
    handler: Handler
    mutating: bool
    name: str
    path: str
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    subresources: tuple[str, ...] = ()
    failure_policy: str = "Fail"
    side_effects: str = "None"
    timeout_seconds: int = 10
    namespace_selector: dict[str, Any] | None = None
    object_selector: dict[str, Any] | None = None
    reinvocation_policy: str = "Never"
    calls: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.operations) - OPERATIONS
        if unknown or not self.operations:
            raise ValueError(f"webhook {self.name}: operations {sorted(unknown)} are not known")
        if self.failure_policy not in ("Fail", "Ignore"):
            raise ValueError(f"webhook {self.name}: failure_policy is Fail or Ignore")
        if self.side_effects not in ("None", "NoneOnDryRun"):
            raise ValueError(f"webhook {self.name}: side_effects is None or NoneOnDryRun")
        if not 1 <= self.timeout_seconds <= 30:
            raise ValueError(f"webhook {self.name}: timeout_seconds must be 1-30")
        if self.reinvocation_policy not in ("Never", "IfNeeded"):
            raise ValueError(f"webhook {self.name}: reinvocation_policy is Never or IfNeeded")
        if self.name.count(".") < 2:
            raise ValueError(
                f"webhook name {self.name!r}: kube-apiserver requires a fully qualified name "
                "(at least three segments separated by dots)"
            )

    @property
    def handler_timeout(self) -> float:
        """Seconds the handler may take."""
        return max(0.5, self.timeout_seconds - 1.0)

    async def review(self, request: AdmissionRequest) -> dict[str, Any]:
        """The AdmissionReview answer to ``request``; never raises for a handler's error
        (it becomes a refusal with code 500 naming the handler and the object)."""
        self.calls[request.operation] = self.calls.get(request.operation, 0) + 1
        source = request.object if request.object is not None else request.old_object
        if source is None:
            return admission_response(request.uid, allowed=True)
        try:
            obj = self._build(source)
        except ValueError as err:
            problems = invalid_object_error(source, err).problems
            message = f"{request.where} does not fit {self.kind.kind}: " + "; ".join(problems)
            return admission_response(
                request.uid, allowed=False, code=422, reason="Invalid", message=message
            )
        try:
            result = await asyncio.wait_for(self._call(obj, request), self.handler_timeout)
        except Denied as denied:
            return admission_response(
                request.uid,
                allowed=False,
                code=denied.code,
                reason=denied.reason,
                message=denied.message,
            )
        except TimeoutError:
            message = f"webhook {self.name}: the handler did not answer for {request.where} "
            message += f"within {self.handler_timeout:g} s"
            log.error("%s", message)
            return admission_response(request.uid, allowed=False, code=500, message=message)
        except Exception as error:
            log.exception("webhook %s failed on %s", self.name, request.where)
            message = f"webhook {self.name} failed on {request.where}: "
            message += f"{type(error).__name__}: {error}"
            return admission_response(request.uid, allowed=False, code=500, message=message)
        try:
            if self.mutating:
                return self._mutation(request, source, obj if result is None else result)
            return admission_response(request.uid, allowed=True, warnings=_warnings(result))
        except (TypeError, ValueError) as error:  # what it returned is not an answer
            message = f"webhook {self.name} returned an unusable result for {request.where}: "
            message += f"{type(error).__name__}: {error}"
            log.error("%s", message)
            return admission_response(request.uid, allowed=False, code=500, message=message)

    async def _call(self, obj: Any, request: AdmissionRequest) -> Any:
        result = self.handler(obj, request)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _build(self, source: dict[str, Any]) -> Any:
        model = self.kind.model
        if model is not None:
            return model.from_raw(copy.deepcopy(source))  # a model may hold parts of its input
        return build_object(self.kind.cls, source, None)  # a LazyBox never writes to it

    def _mutation(
        self, request: AdmissionRequest, source: dict[str, Any], obj: Any
    ) -> dict[str, Any]:
        if request.object is None:
            return admission_response(request.uid, allowed=True)  # DELETE: nothing to change
        if isinstance(obj, dict):
            after = obj
        elif hasattr(obj, "to_raw"):
            after = obj.to_raw()
        elif hasattr(obj, "raw"):
            after = freeze(raw_of(obj))
        else:
            raise TypeError(f"a mutating handler returns the object or None, not {obj!r}")
        patch = jsonpatch.make_patch(source, after).patch
        orjson.dumps(patch)  # TypeError here, not in the server, for what JSON cannot hold
        return admission_response(request.uid, allowed=True, patch=patch)


def _warnings(result: Any) -> list[str] | None:
    if result is None:
        return None
    if isinstance(result, str):
        return [result]
    if not isinstance(result, list | tuple):
        raise TypeError(f"a validating handler returns warnings (a list of str), not {result!r}")
    return [str(item) for item in result]
