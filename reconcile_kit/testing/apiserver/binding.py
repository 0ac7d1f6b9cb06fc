"""``POST /api/v1/namespaces/{ns}/bindings`` (and ``pods/{name}/binding``): a scheduler
assigning a Pod to a Node (kubernetes pkg/registry/core/pod/storage BindingREST: the pod
gets ``spec.nodeName``, the Binding's annotations and a PodScheduled condition; the answer
is a Status).
"""

from __future__ import annotations

from typing import Any

from ...meta.time import now_time
from . import errors
from .cluster import Cluster
from .store import Obj
from .writes import Result, clone

__all__ = ["bind"]


def _scheduled(pod: Obj) -> None:
    status = pod.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": now_time()})
    status["conditions"] = conditions


def bind(cluster: Cluster, namespace: str, body: Any) -> Result:
    """Assign the pod the Binding names to its target node (409 when already assigned)."""
    binding: Obj = body if isinstance(body, dict) else {}
    meta = binding.get("metadata") or {}
    name = str(meta.get("name") or "")
    node = str((binding.get("target") or {}).get("name") or "")
    stored = cluster.store.get("/pods", namespace, name)
    if stored is None:
        raise errors.not_found("", "pods", name)
    if stored["spec"].get("nodeName"):
        raise errors.conflict(
            "",
            "pods/binding",
            name,
            f'pod {name} is already assigned to node "{stored["spec"]["nodeName"]}"',
        )
    pod = clone(stored)
    pod["spec"]["nodeName"] = node
    annotations = {**(pod["metadata"].get("annotations") or {}), **(meta.get("annotations") or {})}
    if annotations:
        pod["metadata"]["annotations"] = annotations
    _scheduled(pod)
    cluster.store.update("/pods", pod)  # the storage's own update, past the pod's update rules
    return Result(
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
