"""Fields kube-apiserver derives from others when it converts a write (k8s.io/kubernetes
pkg/apis/*/v1 conversion.go) or admits it (pkg/registry/*/strategy.go, admission plugins),
by the kind's moment: on create only, on every update, on a status update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import claimsources, hpaversions
from .gozero import go_equal
from .store import Obj

__all__ = ["CREATE_ONLY", "STATUS_UPDATE", "UPDATE"]

NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
"""apps/v1 DeprecatedTemplateGeneration: the internal DaemonSetSpec.TemplateGeneration."""


def _not_ready_taint(obj: Obj) -> None:
    """The TaintNodesByCondition admission plugin: a new Node gets the not-ready taint (on
    create only; an update that drops it keeps it dropped)."""
    taints = obj.setdefault("spec", {}).get("taints") or []
    if not any(isinstance(t, dict) and t.get("key") == NOT_READY_TAINT["key"] for t in taints):
        taints.append(dict(NOT_READY_TAINT))
    obj["spec"]["taints"] = taints


def _template_generation(obj: Obj) -> int:
    annotations = obj.get("metadata", {}).get("annotations") or {}
    value = annotations.get(TEMPLATE_GENERATION, "")
    return int(value) if isinstance(value, str) and value.lstrip("-").isdigit() else 0


def _set_template_generation(obj: Obj, generation: int) -> None:
    annotations = obj["metadata"].get("annotations") or {}
    obj["metadata"]["annotations"] = {**annotations, TEMPLATE_GENERATION: str(generation)}


def _daemonset_create(obj: Obj) -> None:
    """daemonSetStrategy.PrepareForCreate: TemplateGeneration at least 1."""
    _set_template_generation(obj, max(_template_generation(obj), 1))


def _daemonset_update(new: Obj, old: Obj) -> None:
    """daemonSetStrategy.PrepareForUpdate: the stored TemplateGeneration, one more when the
    pod template changed."""
    generation = _template_generation(old)
    template, old_template = (
        (new.get("spec") or {}).get("template"),
        (old.get("spec") or {}).get("template"),
    )
    if not go_equal(template, old_template):
        generation += 1
    _set_template_generation(new, generation)


def _daemonset_status(new: Obj, old: Obj) -> None:
    """daemonSetStatusStrategy: the spec (and its TemplateGeneration) stay the stored ones."""
    _set_template_generation(new, _template_generation(old))


def pod_ips(obj: Obj) -> None:
    """Convert_v1_PodStatus_To_core_PodStatus and back: ``podIP`` is authoritative and
    becomes ``podIPs[0]``; ``podIP`` is then ``podIPs[0].ip``."""
    status: Any = obj.get("status")
    if not isinstance(status, dict):
        return
    pod_ip, ips = status.get("podIP") or "", status.get("podIPs") or []
    if pod_ip and (not ips or not isinstance(ips[0], dict) or ips[0].get("ip") != pod_ip):
        status["podIPs"] = [{"ip": pod_ip}]
    elif ips and isinstance(ips[0], dict) and ips[0].get("ip"):
        status["podIP"] = ips[0]["ip"]


def _pod_update(new: Obj, old: Obj) -> None:
    pod_ips(new)


CREATE_ONLY: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("", "nodes"): _not_ready_taint,
    ("apps", "daemonsets"): _daemonset_create,
    ("", "pods"): pod_ips,
    ("", "persistentvolumeclaims"): claimsources.prepare_create,
    (hpaversions.GROUP, hpaversions.PLURAL): hpaversions.prepare_create,
}
UPDATE: dict[tuple[str, str], Callable[[Obj, Obj], None]] = {
    ("apps", "daemonsets"): _daemonset_update,
    ("", "persistentvolumeclaims"): claimsources.prepare_update,
    (hpaversions.GROUP, hpaversions.PLURAL): hpaversions.prepare_update,
}
STATUS_UPDATE: dict[tuple[str, str], Callable[[Obj, Obj], None]] = {
    ("apps", "daemonsets"): _daemonset_status,
    ("", "pods"): _pod_update,
    (hpaversions.GROUP, hpaversions.PLURAL): hpaversions.prepare_status_update,
}
