"""reconcile_kit: an asyncio toolkit for Kubernetes controllers on kr8s."""

from .client.errors import (
    AlreadyOwnedError,
    ConditionConflictError,
    ConflictError,
    ObjectError,
    OwnerReferenceError,
    PatchError,
    ReconcileKitError,
)
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
from .meta.finalizers import add_finalizer, finalizer, has_finalizer, remove_finalizer
from .meta.objects import ObjectRef
from .meta.owners import (
    controller_of,
    is_controlled_by,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from .patch.helper import PatchHelper
from .runtime.context import Context
from .runtime.controller import Action, Controller, Trigger
from .runtime.queue import RetryPolicy, WorkQueue
from .runtime.reflector import Reflector, ReflectorPool
from .runtime.store import Store

__version__ = "0.1.0.dev0"

__all__ = [
    "Action",
    "AlreadyOwnedError",
    "ConditionConflictError",
    "ConflictError",
    "Context",
    "Controller",
    "ObjectError",
    "ObjectRef",
    "OwnerReferenceError",
    "PatchError",
    "PatchHelper",
    "Reasons",
    "ReconcileKitError",
    "Reflector",
    "ReflectorPool",
    "RetryPolicy",
    "Store",
    "Trigger",
    "WorkQueue",
    "add_finalizer",
    "controller_of",
    "finalizer",
    "get_condition",
    "has_finalizer",
    "is_controlled_by",
    "is_false",
    "is_true",
    "is_unknown",
    "mark_not_ready",
    "mark_ready",
    "mark_reconciling",
    "mark_stalled",
    "remove_condition",
    "remove_finalizer",
    "remove_owner_reference",
    "set_condition",
    "set_controller_reference",
    "set_owner_reference",
    "summarize",
]
