"""A container's environment (kubernetes pkg/apis/core/validation ValidateEnv,
validateEnvVarValueFrom, ValidateEnvFrom), with relaxed variable names
(RelaxedEnvironmentVariableValidation, on by default in 1.32)."""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_subdomain_errors
from .common import Causes, as_dict, invalid, required


def _env_name_errors(name: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on in 1.32)."""
    if any(not (" " <= c <= "~") or c == "=" for c in name):
        return [
            "a valid environment variable name must consist only of printable ASCII"
            " characters other than '='"
        ]
    return []


def _value_from_causes(var: dict[str, Any], field: str) -> Causes:
    """validateEnvVarValueFrom: exactly one source, and no ``value`` beside it."""
    if "valueFrom" not in var or var["valueFrom"] is None:
        return []
    source = as_dict(var["valueFrom"])
    kinds = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
    count = sum(1 for kind in kinds if source.get(kind) is not None)
    if count == 0:
        detail = (
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or"
            " `secretKeyRef`"
        )
        return [invalid(field, "", detail)]
    if var.get("value"):
        return [invalid(field, "", "may not be specified when `value` is not empty")]
    if count > 1:
        return [invalid(field, "", "may not have more than one field specified at a time")]
    return []


def env_causes(env: list[Any], field: str) -> Causes:
    """ValidateEnv: every variable named (relaxed names), valueFrom consistent."""
    causes: Causes = []
    for i, var in enumerate(env):
        var, path = as_dict(var), f"{field}[{i}]"
        name = str(var.get("name") or "")
        if not name:
            causes.append(required(f"{path}.name"))
        causes += [invalid(f"{path}.name", name, m) for m in _env_name_errors(name)]
        causes += _value_from_causes(var, f"{path}.valueFrom")
    return causes


def _name_prefix_errors(name: str) -> list[str]:
    """NameIsDNSSubdomain with prefix (ValidateConfigMapName(name, true)): a trailing
    ``-`` is allowed."""
    masked = name[:-1] + "a" if name.endswith("-") else name
    return dns1123_subdomain_errors(masked)


def _ref_causes(ref: dict[str, Any], field: str) -> Causes:
    name = str(ref.get("name") or "")
    if not name:
        return [required(f"{field}.name")]
    return [invalid(f"{field}.name", name, m) for m in _name_prefix_errors(name)]


def env_from_causes(sources: list[Any], field: str) -> Causes:
    """ValidateEnvFrom: a valid prefix, exactly one of configMapRef and secretRef, named
    (the count errors are reported on the list, as Go does)."""
    causes: Causes = []
    for i, source in enumerate(sources):
        source, path = as_dict(source), f"{field}[{i}]"
        prefix = str(source.get("prefix") or "")
        causes += [invalid(f"{path}.prefix", prefix, m) for m in _env_name_errors(prefix)]
        refs = [key for key in ("configMapRef", "secretRef") if source.get(key) is not None]
        for key in refs:
            causes += _ref_causes(as_dict(source[key]), f"{path}.{key}")
        if not refs:
            detail = "must specify one of: `configMapRef` or `secretRef`"
            causes.append(invalid(field, "", detail))
        elif len(refs) > 1:
            detail = "may not have more than one field specified at a time"
            causes.append(invalid(field, "", detail))
    return causes
