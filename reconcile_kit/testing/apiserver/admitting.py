"""Where a write of the embedded API server calls the admission chain: the
admission.Attributes of a request (a ``/scale`` write reviewed as an autoscaling/v1 Scale),
mutating admission of the decoded object (its managedFields worked out first, as
kube-apiserver's field manager runs before admission) and validating admission of the
object to store. Each call is a step the write yields (:mod:`.admission` runs the webhooks
and sends their answer back).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import Any

from . import errors
from .admission import Attributes, Mutate, Step, Validate, options_for
from .admission import wanted as admission_wanted
from .crdlifecycle import CRDLifecycle
from .decoding import decode_fields
from .gozero import fill_go_zero
from .resources import ResourceType
from .store import Obj
from .strategy import kind_defaults
from .writes import WriteOptions, check_replicas, clone, record_manager, set_path


class AdmissionCalls(CRDLifecycle):
    """:class:`~.crdlifecycle.CRDLifecycle` and the admission steps of a write."""

    def _attrs(
        self,
        rt: ResourceType,
        operation: str,
        obj: Obj | None,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
        options: Obj | None = None,
    ) -> Attributes:
        if subresource == "scale":  # reviewed as autoscaling/v1 Scale objects
            attrs = self._attrs(rt, operation, obj, old, opts, "", options)
            attrs.subresource = "scale"
            attrs.kind = ("autoscaling", "v1", "Scale")
            attrs.obj = None if obj is None else self._scale_of(rt, obj)
            attrs.old = None if old is None else self._scale_of(rt, old)
            return attrs
        source = obj if obj is not None else old
        assert source is not None
        meta = source["metadata"]
        namespace = (meta.get("namespace") or "") if rt.namespaced else ""
        if (rt.group, rt.plural) == ("", "namespaces"):
            namespace = meta.get("name") or ""  # a namespace is its own (RequestInfo)
        return Attributes(
            rt,
            operation,
            namespace,
            meta.get("name") or "",
            subresource,
            None if obj is None else self.present(rt, obj),
            None if old is None else self.present(rt, old),
            opts.dry_run,
            options if options is not None else options_for(operation, opts.query),
            user_info=opts.user_info,
        )

    @staticmethod
    def _guard(rt: ResourceType, old: Obj | None) -> tuple[str, str, str, str] | None:
        if old is None:
            return None
        meta = old["metadata"]
        return (rt.storage_key, meta.get("namespace") or "", meta["name"], meta["resourceVersion"])

    def _admit_mutate(
        self,
        rt: ResourceType,
        operation: str,
        obj: Obj,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
    ) -> Generator[Step, Any, tuple[Obj, WriteOptions]]:
        """Mutating admission of ``obj`` as decoded and defaulted (before the strategy);
        the object to go on with (``obj`` itself unless a webhook changed it) and the
        options: when a webhook changed it, managedFields are those of the object before
        (kube-apiserver's field manager runs before admission: what webhooks set is
        nobody's)."""
        if not admission_wanted(self, rt, subresource, mutating=True):
            return obj, opts
        if subresource == "scale":
            return (yield from self._admit_mutate_scale(rt, obj, old, opts))
        view = clone(obj)
        decoded = decode_fields(rt, view, opts)
        kind_defaults(rt, view)
        shown = clone(view)  # as kube-apiserver serialises the Go object for the webhook
        fill_go_zero(rt.api_version, rt.kind, shown)
        attrs = self._attrs(rt, operation, shown, old, opts, subresource)
        answer = yield Mutate(attrs, self._guard(rt, old))
        if not isinstance(answer, dict) or answer == attrs.obj:
            return obj, opts
        meta = answer.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise errors.internal("a mutating webhook replaced metadata by a non-object")
        if rt.namespaced:
            meta["namespace"] = obj["metadata"].get("namespace")
        if opts.managed is None:
            before = clone(view)
            record_manager(rt, before, old, opts, subresource)
            opts = replace(opts, managed=before["metadata"].get("managedFields") or [])
        # the decoding's warnings stand; unknown fields a webhook adds are dropped silently
        opts = replace(opts, decode_warnings=decoded, field_validation="Ignore")
        return answer, opts

    def _admit_mutate_scale(
        self, rt: ResourceType, obj: Obj, old: Obj | None, opts: WriteOptions
    ) -> Generator[Step, Any, tuple[Obj, WriteOptions]]:
        """Mutating admission of a ``/scale`` write: webhooks see and patch the Scale; its
        ``spec.replicas`` goes back into the object behind it."""
        assert rt.scale is not None
        attrs = self._attrs(rt, "UPDATE", obj, old, opts, "scale")
        answer = yield Mutate(attrs, self._guard(rt, old))
        if not isinstance(answer, dict) or answer == attrs.obj:
            return obj, opts
        replicas = (answer.get("spec") or {}).get("replicas")
        check_replicas(obj["metadata"]["name"], replicas)
        changed = clone(obj)
        set_path(changed, rt.scale.spec_replicas, replicas)
        return changed, opts

    def _admit_validate(
        self,
        rt: ResourceType,
        operation: str,
        obj: Obj,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
    ) -> Generator[Step, Any, None]:
        """Validating admission of the object as it will be stored."""
        if not admission_wanted(self, rt, subresource, mutating=False):
            return
        yield Validate(
            self._attrs(rt, operation, obj, old, opts, subresource), self._guard(rt, old)
        )
