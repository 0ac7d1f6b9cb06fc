"""Validation of core/v1 Nodes (kubernetes pkg/apis/core/validation ValidateNode and
ValidateNodeUpdate): taints (reported under ``metadata.taints``, as kubernetes does),
capacity and allocatable quantities, pod CIDRs (valid, one per IP family, no duplicates),
and on an update pod CIDRs and provider ID fixed once set. An update runs ValidateNode,
then ValidateNodeUpdate, as the strategy does; a ``/status`` update only the latter.

Left out: the node annotations' rules, configSource, duplicate status addresses."""

from __future__ import annotations

from typing import Any

from ....meta.validation import label_value_errors, qualified_name_errors
from .. import errors
from ..gofmt import go_quote
from ..store import Obj
from .common import (
    Causes,
    GoText,
    Validator,
    Write,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    invalids,
    not_supported,
    required,
)
from .quota import quantity_value_causes
from .rules import cidr_causes, parse_cidr

_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_FIXED = 'node updates may not change {} except from "" to valid'


def _taint_value(taint: dict[str, Any]) -> GoText:
    """A core.Taint as Go's ``%#v`` prints it (an unset TimeAdded as ``<nil>``)."""
    added = "<nil>" if taint.get("timeAdded") is None else "0x0"
    fields = ", ".join(
        f"{name}:{go_quote(str(taint.get(key) or ''))}"
        for name, key in (("Key", "key"), ("Value", "value"), ("Effect", "effect"))
    )
    return GoText(f"core.Taint{{{fields}, TimeAdded:{added}}}")


def _taint(taint: dict[str, Any], path: str) -> Causes:
    key = str(taint.get("key") or "")
    causes = invalids(f"{path}.key", key, qualified_name_errors(key))
    value = str(taint.get("value") or "")
    value_errors = label_value_errors(value)
    if value_errors:
        causes.append(invalid(f"{path}.value", value, ";".join(value_errors)))
    effect = str(taint.get("effect") or "")
    if not effect:
        causes.append(required(f"{path}.effect"))
    elif effect not in _EFFECTS:
        causes.append(not_supported(f"{path}.effect", effect, _EFFECTS))
    return causes


def _taints(taints: list[Any]) -> Causes:
    """validateNodeTaints: keys, values, effects, unique by key and effect."""
    causes: Causes = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        taint, path = as_dict(taint), f"metadata.taints[{i}]"
        causes += _taint(taint, path)
        pair = (str(taint.get("key") or ""), str(taint.get("effect") or ""))
        if pair in seen:
            message = (
                f"Duplicate value: {_taint_value(taint)}: taints must be unique by key and"
                " effect pair"
            )
            causes.append(errors.cause("FieldValueDuplicate", path, message))
            continue
        seen.add(pair)
    return causes


def _resources(status: dict[str, Any]) -> Causes:
    """ValidateNodeResources: capacity and allocatable quantities."""
    causes: Causes = []
    for key in ("capacity", "allocatable"):
        values = as_dict(status.get(key))
        for name in sorted(values):
            causes += quantity_value_causes(name, values[name], f"status.{key}.{name}")
    return causes


def _dual_stack_error(cidrs: list[str]) -> str | None:
    for i, cidr in enumerate(cidrs):
        if parse_cidr(cidr) is None:
            return f"invalid CIDR[{i}]: <nil> (invalid CIDR address: {cidr})"
    return None


def _dual_stack(cidrs: list[str], field: str) -> Causes:
    """IsDualStackCIDRStrings: its error, then one CIDR per family at most."""
    causes: Causes = []
    error = _dual_stack_error(cidrs)
    if error is not None:
        message = (
            f"Internal error: invalid PodCIDRs. failed to check with dual stack with error:{error}"
        )
        causes.append(errors.cause("InternalError", field, message))
    families = {net.version for net in map(parse_cidr, cidrs) if net is not None}
    if error is not None or families != {4, 6} or len(cidrs) > 2:
        shown = "[]string{" + ", ".join(go_quote(c) for c in cidrs) + "}"
        detail = "may specify no more than one CIDR for each IP family"
        causes.append(invalid(field, shown, detail, rendered=True))
    return causes


def _pod_cidrs(cidrs: list[str]) -> Causes:
    field = "spec.podCIDRs"
    causes: Causes = []
    for i, cidr in enumerate(cidrs):
        causes += cidr_causes(f"{field}[{i}]", cidr)
    if len(cidrs) < 2:
        return causes
    causes += _dual_stack(cidrs, field)
    causes += [duplicate(f"{field}[{i}]", c) for i, c in enumerate(cidrs) if c in cidrs[:i]]
    return causes


def _node(obj: Obj) -> Causes:
    """ValidateNode."""
    spec = as_dict(obj.get("spec"))
    causes = _taints(as_list(spec.get("taints")))
    causes += _resources(as_dict(obj.get("status")))
    return causes + _pod_cidrs([str(c) for c in as_list(spec.get("podCIDRs"))])


def _cidrs_kept(cidrs: list[Any], old: list[Any]) -> Causes:
    """Pod CIDRs once set may not change: one cause per changed entry (or one for a
    different count)."""
    if not old:
        return []
    changed = 1 if len(cidrs) != len(old) else sum(a != b for a, b in zip(cidrs, old, strict=True))
    return [forbidden("spec.podCIDRs", _FIXED.format("podCIDR"))] * changed


def _node_update(obj: Obj, old: Obj) -> Causes:
    """ValidateNodeUpdate."""
    spec, old_spec = as_dict(obj.get("spec")), as_dict(old.get("spec"))
    causes = _resources(as_dict(obj.get("status")))
    causes += _cidrs_kept(as_list(spec.get("podCIDRs")), as_list(old_spec.get("podCIDRs")))
    provider = old_spec.get("providerID") or ""
    if provider and provider != (spec.get("providerID") or ""):
        causes.append(forbidden("spec.providerID", _FIXED.format("providerID")))
    return causes + _taints(as_list(spec.get("taints")))


def _write(write: Write) -> Causes:
    if write.old is None:
        return _node(write.obj)
    if write.subresource == "status":
        return _node_update(write.obj, write.old)
    if write.subresource:
        return []
    return _node(write.obj) + _node_update(write.obj, write.old)


VALIDATORS: dict[tuple[str, str], Validator] = {("", "nodes"): _write}
