"""What only a Pod (not a pod template) gets before validation (k8s.io/kubernetes
pkg/apis/core/v1 SetDefaults_Pod and Convert_v1_Pod_To_core_Pod): requests defaulted from
limits, host ports from container ports under hostNetwork, a negative grace period made 1;
and the QoS class the pod strategy records in its status (pkg/apis/core/helper/qos
ComputePodQOS)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from . import quantity

_QOS_RESOURCES = ("cpu", "memory")


def convert_pod(obj: dict[str, Any]) -> None:
    """Convert_v1_Pod_To_core_Pod: a negative ``terminationGracePeriodSeconds`` is 1 (a
    Pod's only, not a pod template's)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    period = spec.get("terminationGracePeriodSeconds")
    if isinstance(period, int) and not isinstance(period, bool) and period < 0:
        spec["terminationGracePeriodSeconds"] = 1


def default_requests(spec: dict[str, Any]) -> None:
    """Every container's limits stand for its missing requests."""
    for kind in ("containers", "initContainers"):
        for container in spec.get(kind) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources, dict) or not resources.get("limits"):
                continue
            requests = resources.get("requests") or {}
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)
            resources["requests"] = requests


def _positive(values: Any) -> dict[str, Fraction]:
    found: dict[str, Fraction] = {}
    for name, raw in (values or {}).items():
        if name not in _QOS_RESOURCES:
            continue
        try:
            amount = quantity.amount(raw)
        except quantity.QuantityError:
            continue
        if amount > 0:
            found[name] = amount
    return found


def qos_class(spec: dict[str, Any]) -> str:
    """BestEffort without cpu or memory requests and limits, Guaranteed when every
    container limits both and requests equal limits, else Burstable."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for kind in ("containers", "initContainers"):
        for container in spec.get(kind) or []:
            resources = (container.get("resources") if isinstance(container, dict) else None) or {}
            for name, amount in _positive(resources.get("requests")).items():
                requests[name] = requests.get(name, Fraction(0)) + amount
            own_limits = _positive(resources.get("limits"))
            for name, amount in own_limits.items():
                limits[name] = limits.get(name, Fraction(0)) + amount
            if not all(name in own_limits for name in _QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    equal = all(limits.get(name) == amount for name, amount in requests.items())
    return "Guaranteed" if guaranteed and equal and len(requests) == len(limits) else "Burstable"


def default_host_ports(spec: dict[str, Any]) -> None:
    """With hostNetwork, a Pod's container ports are its host ports (SetDefaults_Pod's
    defaultHostNetworkPorts)."""
    if not spec.get("hostNetwork"):
        return
    for kind in ("containers", "initContainers"):
        for container in spec.get(kind) or []:
            for port in (container.get("ports") if isinstance(container, dict) else None) or []:
                if isinstance(port, dict) and not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort")
