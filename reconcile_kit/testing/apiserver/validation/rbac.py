"""Validation of rbac.authorization.k8s.io kinds (kubernetes pkg/apis/rbac/validation:
rules, role references and subjects, a binding's roleRef fixed once created)."""

from __future__ import annotations

from collections.abc import Callable

from ....meta.validation import dns1123_subdomain_errors
from ..gofmt import go_quote
from ..resources import RBAC_GROUP
from ..store import Obj
from .common import Causes, GoText, Validator, Write, invalid, not_supported, on_object, required
from .rules import label_selector_causes


def _rules(namespaced: bool) -> Callable[[Obj], Causes]:
    """ValidatePolicyRule for each of a Role's or ClusterRole's rules."""

    def validate(obj: Obj) -> Causes:
        causes: Causes = []
        for i, rule in enumerate(obj.get("rules") or []):
            path = f"rules[{i}]"
            if not rule.get("verbs"):
                causes.append(required(f"{path}.verbs", "verbs must contain at least one value"))
            urls = rule.get("nonResourceURLs")
            if urls:
                shown = GoText(f"[]string{{{', '.join(go_quote(str(u)) for u in urls)}}}")
                if namespaced:
                    causes.append(
                        invalid(
                            f"{path}.nonResourceURLs",
                            shown,
                            "namespaced rules cannot apply to non-resource URLs",
                            rendered=True,
                        )
                    )
                if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                    causes.append(
                        invalid(
                            f"{path}.nonResourceURLs",
                            shown,
                            "rules cannot apply to both regular resources and non-resource URLs",
                            rendered=True,
                        )
                    )
                continue
            if not rule.get("apiGroups"):
                causes.append(
                    required(
                        f"{path}.apiGroups", "resource rules must supply at least one api group"
                    )
                )
            if not rule.get("resources"):
                causes.append(
                    required(
                        f"{path}.resources", "resource rules must supply at least one resource"
                    )
                )
        aggregation = obj.get("aggregationRule")
        if not namespaced and isinstance(aggregation, dict):
            selectors = aggregation.get("clusterRoleSelectors") or []
            if not selectors:
                why = "at least one clusterRoleSelector required if aggregationRule is non-nil"
                causes.append(required("aggregationRule.clusterRoleSelectors", why))
            for i, selector in enumerate(selectors):
                field = f"aggregationRule.clusterRoleSelectors[{i}]"
                refused = label_selector_causes(field, selector)
                if refused:  # LabelSelectorAsSelector fails too: its nil selector shown
                    refused.append(invalid(field, "null", "invalid label selector."))
                causes += refused
        return causes

    return validate


def _binding(namespaced: bool) -> Callable[[Obj], Causes]:
    """ValidateRoleBinding / ValidateClusterRoleBinding: the role reference and subjects."""
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)

    def validate(obj: Obj) -> Causes:
        causes: Causes = []
        ref = obj.get("roleRef") or {}
        if ref.get("apiGroup") != RBAC_GROUP:
            causes.append(not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (RBAC_GROUP,)))
        if ref.get("kind") not in kinds:
            causes.append(not_supported("roleRef.kind", ref.get("kind", ""), kinds))
        if not ref.get("name"):
            causes.append(required("roleRef.name"))
        for i, subject in enumerate(obj.get("subjects") or []):
            path = f"subjects[{i}]"
            if not subject.get("name"):
                causes.append(required(f"{path}.name"))
            kind, group = subject.get("kind"), subject.get("apiGroup", "")
            if kind == "ServiceAccount":
                name = subject.get("name")
                if name:
                    for message in dns1123_subdomain_errors(str(name)):
                        causes.append(invalid(f"{path}.name", name, message))
                if group:
                    causes.append(not_supported(f"{path}.apiGroup", group, ("",)))
                if not namespaced and not subject.get("namespace"):
                    causes.append(required(f"{path}.namespace"))
            elif kind in ("User", "Group"):
                if group != RBAC_GROUP:
                    causes.append(not_supported(f"{path}.apiGroup", group, (RBAC_GROUP,)))
            else:
                causes.append(
                    not_supported(f"{path}.kind", kind or "", ("ServiceAccount", "User", "Group"))
                )
        return causes

    return validate


def _binding_write(namespaced: bool) -> Validator:
    """ValidateRoleBindingUpdate / ValidateClusterRoleBindingUpdate: the binding's own
    rules, then "cannot change roleRef"."""
    check = _binding(namespaced)

    def validate(write: Write) -> Causes:
        causes = check(write.obj)
        if write.old is None:
            return causes
        ref, old_ref = write.obj.get("roleRef") or {}, write.old.get("roleRef") or {}
        fields = ("apiGroup", "kind", "name")
        if any(ref.get(f, "") != old_ref.get(f, "") for f in fields):
            shown = ", ".join(f'{f[0].upper()}{f[1:]}:"{ref.get(f, "")}"' for f in fields)
            shown = shown.replace("ApiGroup", "APIGroup")
            causes.append(
                invalid("roleRef", GoText(f"rbac.RoleRef{{{shown}}}"), "cannot change roleRef")
            )
        return causes

    return validate


VALIDATORS: dict[tuple[str, str], Validator] = {
    (RBAC_GROUP, "roles"): on_object(_rules(namespaced=True)),
    (RBAC_GROUP, "clusterroles"): on_object(_rules(namespaced=False)),
    (RBAC_GROUP, "rolebindings"): _binding_write(namespaced=True),
    (RBAC_GROUP, "clusterrolebindings"): _binding_write(namespaced=False),
}
