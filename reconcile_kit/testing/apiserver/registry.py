"""The set of resources the embedded API server serves, and lookups into it."""

from __future__ import annotations

from collections.abc import Iterator

from .resources import ResourceType, builtin_types

_GROUP_ORDER = {
    group: index
    for index, group in enumerate(
        (
            "apiregistration.k8s.io",
            "apps",
            "events.k8s.io",
            "authentication.k8s.io",
            "authorization.k8s.io",
            "autoscaling",
            "batch",
            "certificates.k8s.io",
            "networking.k8s.io",
            "policy",
            "rbac.authorization.k8s.io",
            "storage.k8s.io",
            "admissionregistration.k8s.io",
            "apiextensions.k8s.io",
            "scheduling.k8s.io",
            "coordination.k8s.io",
            "node.k8s.io",
            "discovery.k8s.io",
            "flowcontrol.apiserver.k8s.io",
        )
    )
}
"""The order kube-apiserver 1.32 lists its groups in (/apis, as measured)."""


class Registry:
    """Resource types by group/version/plural; built-ins first, CRD-defined ones added live."""

    def __init__(self) -> None:
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        self._preferred: dict[str, str] = {}
        for rt in builtin_types():
            self.add(rt)

    def add(self, rt: ResourceType, preferred: bool = False) -> None:
        """Serve ``rt``; ``preferred`` makes its version the group's preferred one."""
        self._types[(rt.group, rt.version, rt.plural)] = rt
        if preferred or rt.group not in self._preferred:
            self._preferred[rt.group] = rt.version

    def remove_crd(self, crd_name: str) -> None:
        """Stop serving every version defined by the CRD ``crd_name``."""
        for key, rt in list(self._types.items()):
            if rt.crd_name == crd_name:
                del self._types[key]
        self._preferred = {g: v for g, v in self._preferred.items() if self.resources(g, v)}
        for rt in self._types.values():
            self._preferred.setdefault(rt.group, rt.version)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def storage_type(self, storage_key: str) -> ResourceType | None:
        """The type objects under ``storage_key`` are stored as (the storage version)."""
        candidates = [rt for rt in self._types.values() if rt.storage_key == storage_key]
        for rt in candidates:
            if rt.stored:
                return rt
        return candidates[0] if candidates else None

    def all(self) -> Iterator[ResourceType]:
        return iter(list(self._types.values()))

    def groups(self) -> list[tuple[str, list[str], str]]:
        """``(group, versions, preferred_version)`` for every named group: the built-in ones
        in kube-apiserver's order, then the others in insertion order."""
        seen: dict[str, list[str]] = {}
        for group, version, _ in self._types:
            if group and version not in seen.setdefault(group, []):
                seen[group].append(version)
        ordered = sorted(seen, key=lambda g: _GROUP_ORDER.get(g, len(_GROUP_ORDER)))
        return [(g, seen[g], self._preferred.get(g, seen[g][0])) for g in ordered]

    def resources(self, group: str, version: str) -> list[ResourceType]:
        return [rt for (g, v, _), rt in self._types.items() if g == group and v == version]
