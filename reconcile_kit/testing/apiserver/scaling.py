"""Writes of the ``/scale`` subresource in the embedded API server: a PUT, a patch or a
server-side apply of an autoscaling/v1 Scale sets the replicas of the object behind it
(k8s.io/apiserver's ScaleHandler: applied replicas are owned with subresource ``scale``).
"""

from __future__ import annotations

from typing import Any

from ...client.contenttypes import APPLY_PATCH
from . import errors
from .admission import Steps, run_sync
from .deletion import Deletion
from .patching import apply_patch
from .resources import ResourceType
from .store import Obj
from .writes import Result, WriteOptions, check_replicas, clone, set_path


class ScaleWrites(Deletion):
    """:class:`~.deletion.Deletion` and the writes of ``/scale``."""

    def write_scale(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Obj, opts: WriteOptions
    ) -> Result:
        """PUT of a Scale without admission webhooks."""
        return run_sync(self.write_scale_steps(rt, namespace, name, scale, opts))

    def write_scale_steps(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Obj, opts: WriteOptions
    ) -> Steps:
        """Set the replicas of the object behind a Scale (PUT or patched Scale)."""
        assert rt.scale is not None
        body_name = (scale.get("metadata") or {}).get("name") or ""
        if not body_name:  # the handler's checkName, as for any update
            raise errors.bad_request(
                f"the name of the object ({name} based on URL) was undeterminable:"
                " name must be provided"
            )
        if body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            raise errors.not_found(rt.group, f"{rt.plural}/scale", name)
        replicas = (scale.get("spec") or {}).get("replicas")
        check_replicas(name, replicas)
        obj = clone(self.present(rt, old))
        set_path(obj, rt.scale.spec_replicas, replicas)
        obj, opts = yield from self._admit_mutate(rt, "UPDATE", obj, old, opts, "scale")
        # scaleUpdatedObjectInfo: the object keeps its resourceVersion unless the Scale has one
        sent = dict(scale.get("metadata") or {})
        sent["resourceVersion"] = sent.get("resourceVersion") or old["metadata"]["resourceVersion"]
        self._check_preconditions(rt, {"metadata": sent}, old)
        result = yield from self._write_update(rt, obj, old, opts, "scale")
        return Result(200, self.get_scale(rt, namespace, name), result.warnings)

    def patch_scale_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        patch: Any,
        opts: WriteOptions,
    ) -> Steps:
        """A merge/JSON/strategic patch of a Scale (or a server-side apply)."""
        if content_type == APPLY_PATCH:
            return (yield from self.apply_scale_steps(rt, namespace, name, patch, opts))
        scale = self.get_scale(rt, namespace, name)
        scale_rt = ResourceType("autoscaling", "v1", "scale", "scale", "Scale", rt.namespaced)
        patched = apply_patch(scale_rt, scale, content_type, patch, opts.field_validation)
        return (yield from self.write_scale_steps(rt, namespace, name, patched, opts))

    def apply_scale(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Any, opts: WriteOptions
    ) -> Result:
        """Server-side apply of a Scale without admission webhooks."""
        return run_sync(self.apply_scale_steps(rt, namespace, name, scale, opts))

    def apply_scale_steps(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Any, opts: WriteOptions
    ) -> Steps:
        """Server-side apply of a Scale: the replicas go to the object behind it, owned by
        the applier with subresource ``scale`` (k8s.io/apiserver's ScaleHandler)."""
        assert rt.scale is not None
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            raise errors.not_found(rt.group, f"{rt.plural}/scale", name)
        replicas = ((scale if isinstance(scale, dict) else {}).get("spec") or {}).get("replicas")
        config: Obj = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": name}}
        if namespace:
            config["metadata"]["namespace"] = namespace
        if replicas is not None:
            set_path(config, rt.scale.spec_replicas, replicas)
        result = yield from self._apply(rt, namespace, name, config, old, opts, "scale")
        return Result(200, self.get_scale(rt, namespace, name), result.warnings)
