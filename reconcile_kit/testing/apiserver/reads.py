"""Reads of the embedded API server's storage: an object as a version serves it (and the
conversion steps of a CRD with a conversion webhook), GET, LIST with ``limit``/``continue``
paging through one consistent snapshot and field selectors checked as kube-apiserver 1.32
checks them (k8s.io/apiserver pkg/storage/etcd3 store.go GetList), and the autoscaling/v1
Scale view of an object.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Callable, Generator, Iterator
from typing import Any

from ...meta.selectors import FieldSelector, label_selector_to_string
from . import builtinversions, errors
from .continuetokens import InvalidToken, decode_continue, encode_continue
from .crd import CRD_KEY
from .crdconversion import Convert, webhook_converts
from .fieldlabels import field_labels_of
from .registry import Registry
from .resources import ResourceType
from .store import Obj, Store
from .watch import Filter
from .writes import get_path


def _position_key(position: str) -> tuple[str, str]:
    """A continue position ``namespace/name`` as a sort key (names hold no "/")."""
    namespace, _, name = position.rpartition("/")
    return (namespace, name)


def _continue_token(list_rv: int, last: str, in_namespace: bool) -> str:
    """The token continuing after position ``last`` (``namespace/name``); a list in one
    namespace keys it relative to the namespace's prefix, as etcd3's store."""
    namespace, _, name = last.rpartition("/")
    return encode_continue(list_rv, "" if in_namespace else namespace, name, in_namespace)


def _field_label_error(rt: ResourceType, path: str) -> str:
    """The default field label conversion's error, or a custom resource's (kube-apiserver
    1.32); built-in kinds with their own conversion are :mod:`.fieldlabels`'."""
    if rt.crd_name is not None:
        return f"field label not supported: {path}"
    # runtime.DefaultMetaV1FieldSelectorConversion
    return f'"{path}" is not a known field selector: only "metadata.name", "metadata.namespace"'


class ClusterReads:
    """The state of the embedded API server (its storage and served types) and its reads;
    the base of :class:`~reconcile_kit.testing.apiserver.cluster.Cluster`.

    Args:
        store: object storage (with history and optional persistence).
        registry: served resource types.
        crd_establish_delay: seconds between a CRD's create and its Established condition.
    """

    def __init__(self, store: Store, registry: Registry, crd_establish_delay: float = 0.0) -> None:
        self.store = store
        self.registry = registry
        self.crd_establish_delay = crd_establish_delay
        """Seconds between a CRD's create and its Established condition (and its resources
        being served): kube-apiserver's establishing controller takes ~10-40 ms; 0: at once."""
        self.on_crd_removed: list[Callable[[str], None]] = []

    def _rt(self, group: str, plural: str) -> ResourceType:
        rt = self.registry.storage_type(f"{group}/{plural}")
        assert rt is not None
        return rt

    def present(self, rt: ResourceType, obj: Obj) -> Obj:
        """``obj`` as served by ``rt``'s version (custom resources store one version). A
        CRD with a conversion webhook leaves it in its stored version: the request handler
        converts it (asynchronously, :mod:`.crdconversion`); a HorizontalPodAutoscaler or an
        Event is converted between its forms (:mod:`.builtinversions`)."""
        if builtinversions.handles(rt):
            return builtinversions.served_form(rt, obj)
        if obj.get("apiVersion") != rt.api_version:
            if rt.crd_name is not None and webhook_converts(self.crd_of(rt)):
                return obj
            return {**obj, "apiVersion": rt.api_version}
        return obj

    def crd_of(self, rt: ResourceType) -> Obj | None:
        """The CustomResourceDefinition of a custom resource type (None for built-ins)."""
        if rt.crd_name is None:
            return None
        return self.store.get(CRD_KEY, "", rt.crd_name)

    def _in_version(self, rt: ResourceType, obj: Obj) -> Generator[Convert, Any, Obj]:
        """``obj`` (as stored) in ``rt``'s version, by the CRD's webhook if it has one."""
        crd = self.crd_of(rt)
        if obj.get("apiVersion") != rt.api_version and webhook_converts(crd):
            assert crd is not None
            converted = yield Convert([obj], rt.api_version, crd)
            return dict(converted[0])
        return self.present(rt, obj)

    def _storage_form(self, rt: ResourceType, obj: Obj) -> Generator[Convert, Any, Obj]:
        """``obj`` (in ``rt``'s version) in the storage version, by the CRD's webhook if it
        has one."""
        storage = self.registry.storage_type(rt.storage_key) or rt
        crd = self.crd_of(rt)
        if storage.api_version != obj.get("apiVersion") and webhook_converts(crd):
            assert crd is not None
            converted = yield Convert([obj], storage.api_version, crd)
            return dict(converted[0])
        return self._to_storage(rt, obj)

    def _to_storage(self, rt: ResourceType, obj: Obj) -> Obj:
        storage = self.registry.storage_type(rt.storage_key) or rt
        if builtinversions.handles(rt):
            return builtinversions.storage_form(rt, obj)
        obj["apiVersion"] = storage.api_version
        return obj

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        """The stored object ``name`` as ``rt``'s version serves it; 404 APIError if none."""
        obj = self.store.get(rt.storage_key, namespace or "", name)
        if obj is None:
            raise errors.not_found(rt.group, rt.plural, name)
        return self.present(rt, obj)

    def check_field_selector(self, rt: ResourceType, selector: FieldSelector) -> None:
        """A 400 APIError, worded as kube-apiserver 1.32's, when ``selector`` names a field
        ``rt`` has no field label for (``metadata.name`` and ``metadata.namespace`` always
        work)."""
        own = field_labels_of(rt)
        if own is not None:
            for path in sorted(selector.fields()):
                own.check(path)
            return
        allowed = {"metadata.name", "metadata.namespace", *rt.field_labels}
        for path in sorted(selector.fields()):
            if path not in allowed:
                raise errors.bad_request(_field_label_error(rt, path))

    def list_objects(
        self,
        rt: ResourceType,
        selection: Filter,
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> Obj:
        """A List body; ``limit``/``continue`` page through one consistent snapshot."""
        self.check_field_selector(rt, selection.fields)
        start = ""
        list_rv = self.store.rv
        if continue_token:
            list_rv, start = self._decode_continue(
                continue_token, selection.namespace, resource_version
            )
        elif resource_version == "0":
            limit = 0  # served by the watch cache, which ignores the limit at "0"
        elif resource_version_match == "Exact" or (
            limit > 0 and resource_version and not resource_version_match
        ):
            # Exact, or a limited list at a resourceVersion without a match (the legacy
            # exact read): etcd at that revision (the watch cache's shouldDelegateList)
            list_rv = int(resource_version)
            if list_rv > self.store.rv:  # etcd's answer for a revision it has not reached
                raise errors.unknown(
                    500, "etcdserver: mvcc: required revision is a future revision"
                )
            if self.store.too_old(list_rv):
                raise errors.expired(
                    f"too old resource version: {list_rv} ({self.store.compacted_rv})"
                )
        return self._page(rt, selection, limit, start, list_rv)

    def _candidates(
        self, rt: ResourceType, namespace: str | None, start: str, list_rv: int
    ) -> tuple[Iterator[tuple[tuple[str, str], Obj | None]], int | None]:
        """The objects of ``rt`` at ``list_rv`` after ``start`` (in ``namespace``), in key
        order, without touching those before ``start``: a page costs O(page + log N).
        Also how many keys lie ahead when that is known without looking (no rewind)."""
        keys = self.store.sorted_keys(rt.storage_key)
        low, high = 0, len(keys)
        if namespace is not None:
            low = bisect.bisect_left(keys, (namespace, ""))
            high = bisect.bisect_left(keys, (namespace + "\x00", ""))
        if start:
            low = max(low, bisect.bisect_right(keys, _position_key(start), low, high))
        key = rt.storage_key
        if list_rv == self.store.rv:
            ahead = (k for k in itertools.islice(keys, low, high))
            return ((k, self.store.get_by_key(key, k)) for k in ahead), high - low
        before = self.store.changes_since(key, list_rv)
        extra = sorted(
            k
            for k in before
            if (namespace is None or k[0] == namespace) and (not start or k > _position_key(start))
        )
        merged = heapq.merge(itertools.islice(keys, low, high), extra)
        unique = (k for k, _ in itertools.groupby(merged))
        return (
            (k, before[k] if k in before else self.store.get_by_key(key, k)) for k in unique
        ), None

    def _page(
        self,
        rt: ResourceType,
        selection: Filter,
        limit: int,
        start: str,
        list_rv: int,
    ) -> Obj:
        candidates, ahead = self._candidates(rt, selection.namespace, start, list_rv)
        unfiltered = selection.labels.empty() and selection.fields.empty()
        items: list[Obj] = []
        more = False
        last = ""
        seen = 0
        for ident, obj in candidates:
            seen += 1
            if obj is None:
                continue
            if limit and len(items) >= limit:
                # any object after the page's last, selected or not (the watch cache's
                # hasMoreListItems, etcd3's hasMore): the selector is not run ahead
                more = True
                break
            if not selection.matches(obj):
                continue
            items.append(self._list_item(rt, obj))
            last = f"{ident[0]}/{ident[1]}"
        metadata: Obj = {"resourceVersion": str(list_rv)}
        if more:
            metadata["continue"] = _continue_token(list_rv, last, bool(selection.namespace))
            if unfiltered:
                # etcd3 store: counted only when no selector filters the rest.
                remaining = (
                    (ahead - seen + 1)
                    if ahead is not None
                    else 1 + sum(1 for _, o in candidates if o is not None)
                )
                metadata["remainingItemCount"] = remaining
        elif rt.crd_name is not None:
            metadata["continue"] = ""  # an UnstructuredList always carries it
        return {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": metadata,
            "items": items,
        }

    def _list_item(self, rt: ResourceType, obj: Obj) -> Obj:
        if rt.builtin:
            if builtinversions.handles(rt):
                obj = self.present(rt, obj)
            # typed lists carry no per-item apiVersion/kind, as kube-apiserver's JSON encoding
            return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        return self.present(rt, obj)

    def _decode_continue(
        self, token: str, in_namespace: str | None, resource_version: str
    ) -> tuple[int, str]:
        try:
            list_rv, namespace, name = decode_continue(token)
        except InvalidToken as exc:
            raise errors.bad_request(f"invalid continue token: {exc}") from None
        if resource_version not in ("", "0"):  # etcd3 store resolveGetListRev
            raise errors.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        start = f"{in_namespace or namespace}/{name}"
        if list_rv == -1:
            # An "inconsistent" token from a 410: continue at the latest state.
            return self.store.rv, start
        if self.store.too_old(list_rv):
            # etcd3 store handleCompactedErrorForPaging: the Status carries a token that
            # continues after the same key at the latest resourceVersion.
            err = errors.expired(
                "The provided continue parameter is too old to display a consistent list result."
                " You can start a new list without the continue parameter, or use the continue"
                " token in this response to retrieve the remainder of the results. Continuing"
                " with the provided token results in an inconsistent list - objects that were"
                " created, modified, or deleted between the time the first chunk was returned"
                " and now may show up in the list."
            )
            err.list_metadata = {"continue": _continue_token(-1, start, bool(in_namespace))}
            raise err
        return list_rv, start

    def get_scale(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        """The autoscaling/v1 Scale view of an object."""
        found = self.store.get(rt.storage_key, namespace or "", name)
        if found is None:
            raise errors.not_found(rt.group, f"{rt.plural}/scale", name)
        return self._scale_of(rt, found)

    def _scale_of(self, rt: ResourceType, found: Obj) -> Obj:
        assert rt.scale is not None
        obj = self.present(rt, found)
        paths = rt.scale
        selector: Any = get_path(obj, paths.label_selector) if paths.label_selector else None
        if paths.selector_is_struct and isinstance(selector, dict):
            selector = label_selector_to_string(selector)
        elif isinstance(selector, dict):  # a ReplicationController's map: SelectorFromSet
            selector = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        meta = obj["metadata"]
        status: Obj = {"replicas": get_path(obj, paths.status_replicas) or 0}
        if selector:
            status["selector"] = selector
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": get_path(obj, paths.spec_replicas) or 0},
            "status": status,
        }
