"""Probes and lifecycle hooks (kubernetes pkg/apis/core/validation validateProbe,
validateHandler and its actions, validateLifecycle, validateSleepAction)."""

from __future__ import annotations

from typing import Any

from .common import Causes, as_dict, forbidden, invalid, nonnegative, not_supported, required
from .ports import port_num_or_name_causes

_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")
_TIMINGS = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)


def _http_get(action: dict[str, Any], field: str) -> Causes:
    causes = [] if action.get("path") else [required(f"{field}.path")]
    causes += port_num_or_name_causes(action.get("port"), f"{field}.port")
    scheme = action.get("scheme") or ""
    if scheme not in ("HTTP", "HTTPS"):
        causes.append(not_supported(f"{field}.scheme", scheme, ("HTTP", "HTTPS")))
    return causes


def _sleep(action: dict[str, Any], field: str, grace: Any) -> Causes:
    seconds = action.get("seconds") or 0
    if isinstance(grace, int) and isinstance(seconds, int) and not 0 < seconds <= grace:
        detail = (
            f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace})."
            " Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
        )
        return [invalid(field, seconds, detail)]
    return []


def _action_causes(kind: str, action: dict[str, Any], field: str, grace: Any) -> Causes:
    if kind == "exec":
        return [] if action.get("command") else [required(f"{field}.command")]
    if kind == "httpGet":
        return _http_get(action, field)
    if kind in ("tcpSocket", "grpc"):
        return port_num_or_name_causes(action.get("port"), f"{field}.port")
    return _sleep(action, field, grace)


def handler_causes(handler: dict[str, Any], field: str, grace: Any) -> Causes:
    """validateHandler: exactly one handler type, that one valid."""
    present = [kind for kind in _HANDLERS if handler.get(kind) is not None]
    if not present:
        return [required(field, "must specify a handler type")]
    first = present[0]
    causes = _action_causes(first, as_dict(handler[first]), f"{field}.{first}", grace)
    detail = "may not specify more than 1 handler type"
    return causes + [forbidden(f"{field}.{kind}", detail) for kind in present[1:]]


def probe_causes(probe: Any, field: str, kind: str, grace: Any) -> Causes:
    """validateProbe (one handler, non-negative timings, a positive probe grace period),
    successThreshold 1 for liveness and startup probes, no grace period on readiness."""
    if probe is None:
        return []
    probe = as_dict(probe)
    causes = handler_causes(probe, field, grace)
    for key in _TIMINGS:
        causes += nonnegative(f"{field}.{key}", probe.get(key))
    probe_grace = probe.get("terminationGracePeriodSeconds")
    if isinstance(probe_grace, int) and probe_grace <= 0:
        detail = "must be greater than 0"
        causes.append(invalid(f"{field}.terminationGracePeriodSeconds", probe_grace, detail))
    success = probe.get("successThreshold", 1)
    if kind in ("livenessProbe", "startupProbe") and success != 1:
        causes.append(invalid(f"{field}.successThreshold", success, "must be 1"))
    if kind == "readinessProbe" and probe_grace is not None:
        detail = "must not be set for readinessProbes"
        causes.append(invalid(f"{field}.terminationGracePeriodSeconds", probe_grace, detail))
    return causes


def lifecycle_causes(lifecycle: Any, field: str, grace: Any) -> Causes:
    """validateLifecycle: each hook one valid handler."""
    lifecycle = as_dict(lifecycle)
    causes: Causes = []
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            causes += handler_causes(as_dict(lifecycle[hook]), f"{field}.{hook}", grace)
    return causes
