"""Validation of coordination.k8s.io Leases (kubernetes pkg/apis/coordination/validation
ValidateLeaseSpec). ``strategy`` and ``preferredHolder`` need the CoordinatedLeaderElection
gate, off in 1.32: the strategy drops them before validation (see strategy.py)."""

from __future__ import annotations

from ..store import Obj
from .common import Causes, Validator, invalid, on_object


def _lease(obj: Obj) -> Causes:
    spec = obj.get("spec") or {}
    causes: Causes = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and (not isinstance(duration, int) or duration <= 0):
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        causes.append(
            invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0")
        )
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("coordination.k8s.io", "leases"): on_object(_lease),
}
