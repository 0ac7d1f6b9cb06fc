"""Checks of a write's object against what it changes, made before the kind's strategy:
the uid an update may not change (k8s.io/apiserver pkg/registry/rest/update.go
BeforeUpdate) and the apiVersion/kind an applied configuration must name (k8s.io/apimachinery
pkg/util/managedfields/internal/versioncheck.go).
"""

from __future__ import annotations

from typing import Any

from . import errors
from .gofmt import go_quote
from .resources import ResourceType
from .store import Obj
from .validation.batch import generated_selector_causes

__all__ = ["check_applied_kind", "check_uid_unchanged"]


_CHECKED_ONCE = {("", "events"), ("events.k8s.io", "events"), ("policy", "poddisruptionbudgets")}
"""Kinds whose strategy's ValidateUpdate does not check the metadata's update again
(ValidateObjectMeta only): an update that sets another uid gets the cause once."""


def check_uid_unchanged(rt: ResourceType, new: Obj, old: Obj) -> None:
    """An update that sets another uid: 422 "field is immutable", its cause from
    BeforeUpdate's validateCommonFields, then the strategy's causes that read the uid (a
    Job's generated selector and labels), then the cause again from the strategy's
    ValidateObjectMetaUpdate (not for :data:`_CHECKED_ONCE`); the message names each
    once (the aggregate drops duplicates)."""
    uid = new["metadata"].get("uid")
    if not uid or uid == old["metadata"].get("uid"):
        return
    cause = errors.cause(
        "FieldValueInvalid", "metadata.uid", f"Invalid value: {go_quote(uid)}: field is immutable"
    )
    kind = (rt.group, rt.plural)
    causes = [cause]
    if kind == ("batch", "jobs"):
        causes += generated_selector_causes(new)
    if kind not in _CHECKED_ONCE:
        causes.append(dict(cause))
    raise errors.invalid(rt.kind, rt.group, old["metadata"]["name"], causes)


def _group_version(api_version: Any) -> tuple[str, str]:
    """schema.ParseGroupVersion: "v1" is the core group, "a/b" group a version b, anything
    else (no, or more than one slash) the empty GroupVersion."""
    if not isinstance(api_version, str) or not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return "", ""


def check_applied_kind(rt: ResourceType, config: Obj) -> None:
    """versionCheckManager.Apply: the configuration's GroupVersionKind must be the
    endpoint's (400 "invalid object type: <gvk>")."""
    group, version = _group_version(config.get("apiVersion"))
    kind = config.get("kind")
    kind = kind if isinstance(kind, str) else ""
    if (group, version, kind) != (rt.group, rt.version, rt.kind):
        raise errors.bad_request(f"invalid object type: {group}/{version}, Kind={kind}")
