"""reconcile_kit: an asyncio toolkit for Kubernetes controllers on kr8s.

The public names live here; import them from ``reconcile_kit``. The package is layered
along the data flow (lower layers never import higher ones):

- ``client``: errors, the aiohttp transport, client-side rate limits, discovery (how
  requests reach the server);
- ``meta``: object metadata rules and helpers (conditions, owners, finalizers, selectors);
- ``typed``: pydantic models of custom resources, their CRDs (``reconcile-kit crd``);
- ``patch``: PatchHelper and the RFC 7386 merge-patch diff it sends;
- ``runtime``: reflector -> store -> work queue -> controller -> reconcile(obj, ctx), and
  the EventRecorder behind ``ctx.recorder``;
- ``manager``: many controllers in one process, leader election, sharding, metrics, logs;
- ``cli``: the ``reconcile-kit`` command;
- ``testing``: ``run_until``, the embedded API server and the real control plane.

Names load on first use (PEP 562), so ``reconcile-kit --version`` and tools that only
need one module do not import kr8s and the whole runtime.
"""

from __future__ import annotations

import importlib
import typing

__version__ = "0.1.0.dev0"

if typing.TYPE_CHECKING:
    from .client.connect import KubeconfigError
    from .client.errors import (
        AlreadyExistsError,
        AlreadyOwnedError,
        APIError,
        APIUnavailableError,
        BadRequestError,
        ConditionConflictError,
        ConflictError,
        ExpiredError,
        FencedWriteError,
        ForbiddenError,
        InternalServerError,
        InvalidError,
        InvalidObjectError,
        LeaseExpiredError,
        ListItemConflictError,
        NotFoundError,
        ObjectError,
        OwnerReferenceError,
        OwnershipLostError,
        PatchError,
        ReconcileKitError,
        ServerTimeoutError,
        TooManyRequestsError,
        UnauthorizedError,
    )
    from .client.extras import MissingExtraError
    from .client.ratelimit import TokenBucket
    from .manager.leaderelection import LeaderElection, LeaseError
    from .manager.logs import configure_logging
    from .manager.manager import Manager
    from .manager.sharding import Sharding
    from .meta.conditions import (
        Reasons,
        get_condition,
        is_false,
        is_true,
        is_unknown,
        mark_not_ready,
        mark_ready,
        mark_reconciling,
        mark_stalled,
        remove_condition,
        set_condition,
        summarize,
    )
    from .meta.finalizers import add_finalizer, has_finalizer, remove_finalizer
    from .meta.objects import ObjectRef
    from .meta.owners import (
        controller_of,
        is_controlled_by,
        remove_owner_reference,
        set_controller_reference,
        set_owner_reference,
    )
    from .patch.helper import PatchHelper
    from .runtime.action import Action
    from .runtime.config import ControllerConfig
    from .runtime.context import Context
    from .runtime.controller import Controller
    from .runtime.events import EventRecorder, EventType
    from .runtime.finalizer import finalizer
    from .runtime.predicates import (
        annotations_changed,
        any_of,
        field_selector,
        generation_changed,
        label_selector,
        labels_changed,
        resource_version_changed,
    )
    from .runtime.queue import RetryPolicy, WorkQueue
    from .runtime.reasons import ReconcileReason
    from .runtime.reflector import Reflector, WatchError
    from .runtime.sources import ReflectorPool
    from .runtime.store import Store
    from .typed.schema import SchemaError

# public name -> the module defining it (relative to this package)
_EXPORTS: dict[str, str] = {
    "APIError": "client.errors",
    "APIUnavailableError": "client.errors",
    "Action": "runtime.action",
    "AlreadyExistsError": "client.errors",
    "AlreadyOwnedError": "client.errors",
    "BadRequestError": "client.errors",
    "ConditionConflictError": "client.errors",
    "ConflictError": "client.errors",
    "Context": "runtime.context",
    "Controller": "runtime.controller",
    "ControllerConfig": "runtime.config",
    "EventRecorder": "runtime.events",
    "EventType": "runtime.events",
    "ExpiredError": "client.errors",
    "FencedWriteError": "client.errors",
    "ForbiddenError": "client.errors",
    "InternalServerError": "client.errors",
    "InvalidError": "client.errors",
    "InvalidObjectError": "client.errors",
    "ListItemConflictError": "client.errors",
    "KubeconfigError": "client.connect",
    "LeaderElection": "manager.leaderelection",
    "LeaseError": "manager.leaderelection",
    "LeaseExpiredError": "client.errors",
    "Manager": "manager.manager",
    "MissingExtraError": "client.extras",
    "NotFoundError": "client.errors",
    "ObjectError": "client.errors",
    "ObjectRef": "meta.objects",
    "OwnerReferenceError": "client.errors",
    "OwnershipLostError": "client.errors",
    "PatchError": "client.errors",
    "PatchHelper": "patch.helper",
    "Reasons": "meta.conditions",
    "ReconcileKitError": "client.errors",
    "ReconcileReason": "runtime.reasons",
    "Reflector": "runtime.reflector",
    "ReflectorPool": "runtime.sources",
    "RetryPolicy": "runtime.queue",
    "SchemaError": "typed.schema",
    "ServerTimeoutError": "client.errors",
    "Sharding": "manager.sharding",
    "Store": "runtime.store",
    "TokenBucket": "client.ratelimit",
    "TooManyRequestsError": "client.errors",
    "UnauthorizedError": "client.errors",
    "WatchError": "runtime.reflector",
    "WorkQueue": "runtime.queue",
    "add_finalizer": "meta.finalizers",
    "annotations_changed": "runtime.predicates",
    "any_of": "runtime.predicates",
    "configure_logging": "manager.logs",
    "controller_of": "meta.owners",
    "field_selector": "runtime.predicates",
    "finalizer": "runtime.finalizer",
    "generation_changed": "runtime.predicates",
    "get_condition": "meta.conditions",
    "has_finalizer": "meta.finalizers",
    "is_controlled_by": "meta.owners",
    "is_false": "meta.conditions",
    "is_true": "meta.conditions",
    "is_unknown": "meta.conditions",
    "label_selector": "runtime.predicates",
    "labels_changed": "runtime.predicates",
    "mark_not_ready": "meta.conditions",
    "mark_ready": "meta.conditions",
    "mark_reconciling": "meta.conditions",
    "mark_stalled": "meta.conditions",
    "remove_condition": "meta.conditions",
    "remove_finalizer": "meta.finalizers",
    "remove_owner_reference": "meta.owners",
    "resource_version_changed": "runtime.predicates",
    "set_condition": "meta.conditions",
    "set_controller_reference": "meta.owners",
    "set_owner_reference": "meta.owners",
    "summarize": "meta.conditions",
}

__all__ = [
    "APIError",
    "APIUnavailableError",
    "Action",
    "AlreadyExistsError",
    "AlreadyOwnedError",
    "BadRequestError",
    "ConditionConflictError",
    "ConflictError",
    "Context",
    "Controller",
    "ControllerConfig",
    "EventRecorder",
    "EventType",
    "ExpiredError",
    "FencedWriteError",
    "ForbiddenError",
    "InternalServerError",
    "InvalidError",
    "InvalidObjectError",
    "KubeconfigError",
    "LeaderElection",
    "LeaseError",
    "LeaseExpiredError",
    "ListItemConflictError",
    "Manager",
    "MissingExtraError",
    "NotFoundError",
    "ObjectError",
    "ObjectRef",
    "OwnerReferenceError",
    "OwnershipLostError",
    "PatchError",
    "PatchHelper",
    "Reasons",
    "ReconcileKitError",
    "ReconcileReason",
    "Reflector",
    "ReflectorPool",
    "RetryPolicy",
    "SchemaError",
    "ServerTimeoutError",
    "Sharding",
    "Store",
    "TokenBucket",
    "TooManyRequestsError",
    "UnauthorizedError",
    "WatchError",
    "WorkQueue",
    "add_finalizer",
    "annotations_changed",
    "any_of",
    "configure_logging",
    "controller_of",
    "field_selector",
    "finalizer",
    "generation_changed",
    "get_condition",
    "has_finalizer",
    "is_controlled_by",
    "is_false",
    "is_true",
    "is_unknown",
    "label_selector",
    "labels_changed",
    "mark_not_ready",
    "mark_ready",
    "mark_reconciling",
    "mark_stalled",
    "remove_condition",
    "remove_finalizer",
    "remove_owner_reference",
    "resource_version_changed",
    "set_condition",
    "set_controller_reference",
    "set_owner_reference",
    "summarize",
]


def __getattr__(name: str) -> typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
