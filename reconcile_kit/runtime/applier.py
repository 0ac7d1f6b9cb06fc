"""Writes of a reconcile: server-side apply of children and statuses, create-or-patch,
status patches (what ``ctx.apply``, ``ctx.apply_status``, ``ctx.create_or_patch``,
``ctx.patch_status`` and ``ctx.update_status`` do; :class:`~reconcile_kit.runtime.context.Context`
hands them to one :class:`Applier`).

Every helper takes an object in the forms a reconcile has: a kr8s object, a typed model
(:class:`~reconcile_kit.typed.CustomResource`) or a dict with apiVersion and kind; the
object then holds the server's answer.
"""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..client import discovery
from ..client.contenttypes import APPLY_PATCH, MERGE_PATCH
from ..client.errors import InvalidError
from ..client.request import Target, send
from ..meta.objects import ObjectRef, describe_object, metadata_of, raw_of
from ..meta.owners import controller_of
from ..meta.shards import copy_shard_labels
from ..patch.mergepatch import apply_merge_patch, create_merge_patch
from ..patch.snapshot import set_raw
from ..patch.typed import TypedTarget, is_typed
from .apply import (
    TWO_CONTROLLERS,
    AppliedIntents,
    apply_body,
    check_controller,
    digest,
    duplicate_item_error,
    intent_key,
    names_controller,
    refused_second_controller,
    status_body,
)
from .resources import resolve_kind
from .sources import CacheView
from .store import Obj

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["Applier", "Writable"]

Writable = TypeVar("Writable", bound="APIObject | CustomResource | MutableMapping[str, Any]")
"""An object a write helper takes: a kr8s object, a typed model or a dict with apiVersion
and kind (it comes back as the same object, holding the server's answer)."""


@dataclass(slots=True)
class Applier:
    """The writes of one reconcile (one object): ``ctx.apply`` and the other write helpers
    of :class:`~reconcile_kit.runtime.context.Context` are its methods.

    Args:
        controller_name: the default field manager of server-side applies.
        api: the controller's kr8s Api (dicts and typed models are written through it).
        key: the object being reconciled (its controller reference marks its children).
        cache: the controller's caches (a child it watches is read from them, not GET).
        intents: what this controller last applied to each child (None: always send).
    """

    controller_name: str
    api: Api
    key: ObjectRef
    cache: CacheView
    intents: AppliedIntents | None

    async def apply(
        self, obj: Writable, *, field_manager: str | None = None, force: bool = True
    ) -> Writable:
        """Server-side apply ``obj`` (a kr8s object, a typed model or a dict with apiVersion
        and kind, holding the fields this reconcile sets):
        one PATCH ``application/apply-patch+yaml`` with ``fieldManager`` = the controller's
        name unless ``field_manager`` is given, ``force=true`` unless ``force`` is False.
        Creates the object or updates the fields this manager owns; fields it applied before
        and no longer sets are removed (unless another manager owns them); lists and maps
        merge as their schema says. ``obj`` then holds the server's answer. As
        controller-runtime's ``client.Apply`` (Kubernetes docs, "Server-Side Apply").

        A child whose controller reference names the object being reconciled gets that
        object's shard labels (``shard.reconcile-kit.io/<ring>``, see
        :mod:`reconcile_kit.meta.shards`), so a sharded controller's ``owns()`` watch sees
        it and it follows its owner when the owner moves to another replica.

        Sends nothing when the same intent was applied before and the controller's cache
        (the kind is ``owns``-ed) still holds the child at the resourceVersion that apply
        returned, or later values that still hold the intent (the rules:
        :mod:`reconcile_kit.runtime.apply`).

        Raises:
            AlreadyOwnedError: ``obj`` names a controller (``set_controller_reference``) and
                the child is controlled by another object (another uid): nothing is sent
                or changed. Checked on the cached child (a kind the controller does not
                watch, or a child its cache does not hold, new or not seen yet, costs one
                GET first: ``owns`` it), and from the server's 422 "Only
                one reference can have Controller set to true". Names the child and both
                controllers.
            ConflictError: with ``force=False``, fields other managers own
                (``field_conflicts`` lists managers and paths).
            ListItemConflictError: an InvalidError (422 "Duplicate value") because a list
                item of ``obj`` repeats the name of an item another field manager owns
                (someone changed a list-map key, e.g. a Service port): names the field,
                the value, that item's key and its owners (one GET to find them). The same
                apply fails until that item changes: report it (Stalled), do not retry.
            APIError: any other refusal (InvalidError, ForbiddenError...), naming ``obj``;
                never a PatchError (the one rule of every write helper: docs/errors.md).
            TypeError: ``obj`` is none of the three forms (a str, None, a kr8s class, an
                un-awaited coroutine...): names what it got; nothing is sent.
        """
        target, raw = await self._target(obj, "apply")
        body = apply_body(raw)
        self._label_like_owner(body)
        await self._apply(target, body, field_manager, force, "")
        if isinstance(obj, MutableMapping):
            _copy_into(obj, target)
        return obj

    async def _target(self, obj: Writable, helper: str) -> tuple[Any, Obj]:
        """What an apply writes through (a kr8s object; a typed model's TypedTarget; for a
        dict, a kr8s object of its kind holding a copy) and its JSON now (``obj`` checked
        to be one of the forms ``ctx.<helper>`` takes)."""
        _check_writable(obj, helper)
        if isinstance(obj, MutableMapping):
            written = await self._object_of(obj)
            return written, cast(Obj, raw_of(written))
        if is_typed(obj):
            _check_named(obj, obj.metadata.name if obj.metadata is not None else None)
            target = TypedTarget(obj, self.api)
            return target, target.raw
        return obj, cast(Obj, raw_of(cast(APIObject, obj)))

    def _label_like_owner(self, body: Obj) -> None:
        """Copy the reconciled object's shard labels onto a child it controls."""
        ref = controller_of(body)
        if ref is None or not ref.get("uid"):
            return
        owner = self.cache.primary.get(self.key.namespace, self.key.name)
        if owner is not None and metadata_of(owner).get("uid") == ref["uid"]:
            copy_shard_labels(owner, body)

    async def apply_status(
        self, obj: Writable, *, field_manager: str | None = None, force: bool = True
    ) -> Writable:
        """Server-side apply ``obj``'s ``status`` to its ``/status`` subresource (identity
        and status only), as :meth:`apply` (its arguments, skipping and errors)."""
        target, raw = await self._target(obj, "apply_status")
        await self._apply(target, status_body(raw), field_manager, force, "status")
        if isinstance(obj, MutableMapping):
            _copy_into(obj, target)
        return obj

    async def _apply(
        self, obj: Any, body: Obj, field_manager: str | None, force: bool, subresource: str
    ) -> Any:
        manager = field_manager or self.controller_name
        watched, cached = self._cached(obj)
        if cached is None and names_controller(body):
            # no cache to ask, or it has not seen the child (new, or not yet): who controls
            # it now? (an apply naming another controller would take it over silently)
            cached = await self._live(obj)
        check_controller(body, cached)
        key = intent_key(body, manager + (f"/{subresource}" if subresource else ""))
        body_digest = digest(body)
        intents = self.intents if watched else None  # unwatched: nothing to compare with
        if intents is not None and intents.unchanged(key, body_digest, cached, body):
            assert cached is not None
            _adopt(obj, dict(cached))  # applied before, and the cache still holds it
            return obj
        params = {"fieldManager": manager, **({"force": "true"} if force else {})}
        url = f"{obj.endpoint}/{obj.name}" + (f"/{subresource}" if subresource else "")
        try:
            reply = await send(
                obj.api,
                "PATCH",
                url=url,
                params=params,
                body=body,
                content_type=APPLY_PATCH,
                **_where(obj),
            )
        except InvalidError as err:
            if TWO_CONTROLLERS in err.server_message:
                raise refused_second_controller(body, err.server_message) from err
            if not any(c.get("reason") == "FieldValueDuplicate" for c in err.causes):
                raise
            # who holds the other item? one GET, only on this refusal
            conflict = duplicate_item_error(body, await self._live(obj), err, manager)
            if conflict is None:
                raise
            raise conflict from err
        answer = reply.json()
        if intents is not None:
            intents.remember(key, body_digest, answer)
        _adopt(obj, answer)
        return obj

    async def _live(self, obj: Any) -> Obj | None:
        """GET ``obj`` (None when it does not exist)."""
        url = f"{obj.endpoint}/{obj.name}"
        reply = await send(obj.api, "GET", url=url, accept=(404,), **_where(obj))
        return None if reply.status == 404 else dict(reply.json())

    async def create_or_patch(
        self, obj: Writable, mutate: Callable[[Writable], object] | None = None
    ) -> str:
        """Create ``obj`` (a kr8s object, a typed model or a dict with apiVersion and kind;
        ``mutate`` gets it in the same form) or merge-patch the existing one, as
        controller-runtime's ``controllerutil.CreateOrPatch``: read it, then a POST, a
        PATCH, or nothing.

        The existing object is read from the controller's cache when it watches the kind
        (``owns``; as controller-runtime's cached client: nothing sent when unchanged), else
        (or when the cache does not hold it yet) by one GET. Without ``mutate``, the fields
        ``obj`` sets are patched onto the existing object (keys it leaves out are kept;
        ``ownerReferences`` merged by uid, so another owner's reference survives). With
        ``mutate`` (``Callable[[obj], None]``, plain or async), ``obj`` is first filled
        with the existing object (if any), ``mutate(obj)`` changes it, and the difference
        is patched; on create, ``mutate`` gets ``obj`` as given. ``status`` is not written
        (:meth:`apply_status`, :meth:`patch_status`).

        The limits of merge patches (RFC 7386): a list is replaced whole, so another
        writer's list items (containers, ports, tolerations...) added since the read are
        lost; a key is removed only by ``mutate`` deleting it. :meth:`apply` (server-side
        apply) has neither limit: prefer it.

        Returns:
            ``"created"``, ``"updated"`` or ``"unchanged"`` (controller-runtime's
            ``OperationResult`` values).

        Raises:
            AlreadyOwnedError: ``obj`` names a controller and another object (another uid)
                controls the existing one; nothing is sent.
            APIError: the server refused (ConflictError/AlreadyExistsError when another
                writer created it between the read and the POST).
            TypeError: ``obj`` is none of the three forms (as :meth:`apply`).
        """
        _check_writable(obj, "create_or_patch")
        if isinstance(obj, MutableMapping) or is_typed(obj):
            return await self._create_or_patch_form(obj, mutate)
        return await self._create_or_patch(obj, mutate)

    async def _create_or_patch(self, obj: Any, mutate: Callable[[Any], object] | None) -> str:
        """:meth:`create_or_patch` of a kr8s object."""
        where = _where(obj)
        _, current = self._cached(obj)
        if current is None:
            current = await self._live(obj)
        if current is None:
            await _call(mutate, obj)
            created = await send(
                obj.api, "POST", url=obj.endpoint, body=_desired(raw_of(obj)), **where
            )
            set_raw(obj, created.json())
            return "created"
        if mutate is None:
            desired = _desired(raw_of(obj))
            check_controller(desired, current)
            _merge_owner_references(desired, current)
            patch, _ = create_merge_patch(_restricted(current, desired), desired)
        else:
            set_raw(obj, orjson.loads(orjson.dumps(current)))
            await _call(mutate, obj)
            desired = _without_status(raw_of(obj))
            check_controller(desired, current)
            patch, _ = create_merge_patch(_without_status(current), desired)
        if not patch or apply_merge_patch(dict(current), patch) == current:
            set_raw(obj, dict(current))
            return "unchanged"
        patched = await send(
            obj.api,
            "PATCH",
            url=f"{obj.endpoint}/{obj.name}",
            body=patch,
            content_type=MERGE_PATCH,
            **where,
        )
        set_raw(obj, patched.json())
        return "updated"

    async def _create_or_patch_form(self, obj: Any, mutate: Callable[[Any], object] | None) -> str:
        """:meth:`create_or_patch` of a dict or a typed model: done on a kr8s object of its
        kind; ``mutate`` gets ``obj`` itself, filled with the existing object; ``obj`` ends
        as the server's answer."""
        if isinstance(obj, MutableMapping):
            written = await self._object_of(obj)
        else:
            _check_named(obj, obj.metadata.name if obj.metadata is not None else None)
            written = obj.kr8s_class()(obj.to_raw(), api=self.api)

        async def mutate_form(kobj: Any) -> None:
            assert mutate is not None
            _copy_into(obj, kobj)
            await _call(mutate, obj)
            set_raw(kobj, _json_of(obj))

        result = await self._create_or_patch(written, None if mutate is None else mutate_form)
        _copy_into(obj, written)
        return result

    async def _object_of(self, raw: MutableMapping[str, Any]) -> Any:
        """A kr8s object of ``raw``'s kind on the controller's api, holding a copy of it:
        kr8s's class for the kind, else one made from API discovery.

        Raises:
            ValueError: ``raw`` lacks apiVersion, kind or metadata.name (naming the object),
                or the API server does not serve that kind.
        """
        api_version, kind = raw.get("apiVersion"), raw.get("kind")
        if not api_version or not kind:
            raise ValueError(
                f"{describe_object(raw)}: a dict written by a helper needs apiVersion and kind"
            )
        _check_named(raw, metadata_of(raw).get("name"))
        from kr8s.asyncio.objects import get_class

        try:
            cls = get_class(kind, api_version)
        except KeyError:
            cls = await self._served_class(raw, str(kind), str(api_version))
        return cls(orjson.loads(orjson.dumps(dict(raw))), api=self.api)

    async def _served_class(
        self, raw: MutableMapping[str, Any], kind: str, api_version: str
    ) -> type[APIObject]:
        """The kr8s class of ``kind`` at ``api_version``, from API discovery.

        Raises:
            ValueError: the API server does not serve that kind, or not at that version
                (naming the object).
        """
        group, _, version = api_version.rpartition("/")
        try:
            info = await resolve_kind(self.api, f"{kind}.{group}/{version}" if group else kind)
        except ValueError as error:
            raise ValueError(f"{describe_object(raw)}: {error}") from error
        if info.api_version != api_version:  # the core group's kind, another version
            raise ValueError(
                f"{describe_object(raw)}: apiVersion {api_version!r} of kind {kind} is not "
                f"served by the API server (it serves {info.api_version})"
            )
        return info.cls

    def _cached(self, child: Any) -> tuple[bool, Obj | None]:
        """Whether the controller caches the child's kind, and the child as cached (None:
        not watched, or not in the cache)."""
        kind = cast(
            "type[APIObject]", type(child._object if isinstance(child, TypedTarget) else child)
        )
        try:
            store = self.cache.store_for(kind)
        except KeyError:
            return False, None
        return True, store.get(child.namespace if child.namespaced else "", child.name)

    async def patch_status(self, obj: Writable, status: dict[str, Any]) -> None:
        """Merge-patch ``status`` into ``obj``'s status (``/status`` where the kind has it);
        ``obj`` (a kr8s object, a typed model or a dict with apiVersion and kind) then holds
        the server's answer.

        Raises:
            ValueError: a dict without apiVersion or kind, or of a kind the API server does
                not serve (naming the object).
            TypeError: ``obj`` is none of the three forms (as :meth:`apply`), or
                ``status`` is not a mapping (naming the object and what it got).
            APIError: the server refused.
        """
        _check_writable(obj, "patch_status")
        if not isinstance(status, Mapping):  # before a dict's kind is looked up
            raise TypeError(
                f"{describe_object(cast(Any, obj))}: ctx.patch_status takes the status "
                f"fields as a dict, not {_described(status)}; a typed model's status: set "
                "obj.status and call ctx.update_status(obj) or ctx.apply_status(obj)"
            )
        target, _ = await self._target(obj, "patch_status")
        separate = await discovery.has_status_subresource(
            target.api, target.version, target.endpoint
        )
        url = f"{target.endpoint}/{target.name}" + ("/status" if separate else "")
        reply = await send(
            target.api,
            "PATCH",
            url=url,
            body={"status": status},
            content_type=MERGE_PATCH,
            **_where(target),
        )
        self._answer(obj, target, reply.json())

    async def update_status(self, obj: Writable) -> None:
        """PUT ``obj`` (a kr8s object, a typed model or a dict with apiVersion and kind) to
        its ``/status`` with its resourceVersion; ``obj`` then holds the server's answer.

        Raises:
            ValueError: a dict without apiVersion or kind, or of a kind the API server does
                not serve (naming the object).
            ConflictError: 409, the object changed since it was read.
            TypeError: ``obj`` is none of the three forms (as :meth:`apply`).
            APIError: any other refusal.
        """
        target, raw = await self._target(obj, "update_status")
        reply = await send(
            target.api,
            "PUT",
            url=f"{target.endpoint}/{target.name}/status",
            body=raw,
            retry=False,  # a 409 means the object changed: the reconcile decides again
            **_where(target),
        )
        self._answer(obj, target, reply.json())

    @staticmethod
    def _answer(obj: Any, target: Any, state: dict[str, Any]) -> None:
        """Make ``obj`` and what it was written through (``_target``) hold ``state``."""
        _adopt(target, state)
        if isinstance(obj, MutableMapping):
            _copy_into(obj, target)


def _check_writable(obj: object, helper: str) -> None:
    """Refuse what no write helper can send.

    Raises:
        TypeError: ``obj`` is not a kr8s object, a typed model or a dict (where
            ``AttributeError: 'str' object has no attribute 'raw'`` came out): names what
            it got and what ``ctx.<helper>`` takes.
    """
    if isinstance(obj, APIObject | MutableMapping) or is_typed(obj):
        return
    raise TypeError(
        f"ctx.{helper} takes a kr8s object, a typed model (a CustomResource) or a dict with "
        f"apiVersion and kind, not {_described(obj)}"
    )


def _described(value: object) -> str:
    """What a helper got that it does not take, for its TypeError."""
    if isinstance(value, type):
        return f"the class {value.__name__} (pass an object of it)"
    if inspect.isawaitable(value):
        return f"an awaitable {type(value).__name__} (await it first)"
    if value is None:
        return "None"
    return f"a {type(value).__name__}: {reprlib.repr(value)}"


def _check_named(obj: Any, name: object) -> None:
    """Refuse an object (a dict or a typed model) a write helper cannot address.

    Raises:
        ValueError: ``name`` (its metadata.name) is empty: names the object's kind and
            namespace (where kr8s said only "Resource does not have a name", or raised a
            BoxKeyError for a missing metadata).
    """
    if not name:
        generated = " (metadata.generateName is not enough)"
        if not metadata_of(obj if isinstance(obj, MutableMapping) else obj.to_raw()).get(
            "generateName"
        ):
            generated = ""
        raise ValueError(
            f"{describe_object(obj)}: metadata.name is missing{generated}: a write helper "
            "addresses the object by its name"
        )


def _where(obj: Any) -> dict[str, Any]:
    """``send`` arguments locating ``obj`` (a kr8s object): version, namespace, target."""
    namespace = obj.namespace if obj.namespaced else None
    return {
        "version": obj.version,
        "namespace": namespace,
        "target": Target.of(obj),
    }


def _adopt(obj: Any, state: dict[str, Any]) -> None:
    """Make ``obj`` (a kr8s object, or a typed one's TypedTarget) hold ``state``."""
    if isinstance(obj, TypedTarget):
        obj.commit(state)
    else:
        set_raw(obj, state)


def _json_of(obj: Any) -> dict[str, Any]:
    """A JSON copy of a dict's, a typed model's or a kr8s object's state."""
    state = obj.to_raw() if is_typed(obj) else dict(raw_of(obj))
    loaded: dict[str, Any] = orjson.loads(orjson.dumps(state))
    return loaded


def _copy_into(obj: Any, written: Any) -> None:
    """Make ``obj`` (a dict or a typed model) hold the state of the kr8s object
    ``written``; a typed model is bound to it."""
    if obj is written:
        return
    state = _json_of(written)
    if isinstance(obj, MutableMapping):
        obj.clear()
        obj.update(state)
    elif is_typed(obj):
        obj.replace_with(state)
        obj._object = written


async def _call(mutate: Callable[[Any], object] | None, obj: Any) -> None:
    if mutate is not None:
        result = mutate(obj)
        if inspect.isawaitable(result):
            await result


def _merge_owner_references(desired: dict[str, Any], current: Any) -> None:
    """``desired``'s ownerReferences merged by uid onto the existing ones (a merge patch
    would replace the list and drop another owner's reference)."""
    mine = metadata_of(desired).get("ownerReferences")
    if mine is None:
        return
    refs = {r.get("uid"): r for r in metadata_of(current).get("ownerReferences") or []}
    refs.update({r.get("uid"): r for r in mine})
    desired["metadata"]["ownerReferences"] = list(refs.values())


def _desired(raw: Any) -> dict[str, Any]:
    """What create_or_patch writes: ``raw`` without server fields and status."""
    return apply_body(raw)


def _without_status(raw: Any) -> dict[str, Any]:
    """``raw`` without its status (a shallow copy)."""
    return {k: v for k, v in dict(raw).items() if k != "status"}


def _restricted(current: Any, desired: dict[str, Any]) -> dict[str, Any]:
    """The parts of ``current`` that ``desired`` sets (keys it leaves out are not touched)."""
    result: dict[str, Any] = {}
    for key, value in desired.items():
        if key not in current:
            continue
        if isinstance(value, dict) and isinstance(current[key], dict):
            result[key] = _restricted(current[key], value)
        else:
            result[key] = current[key]
    return result
