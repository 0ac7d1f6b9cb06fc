"""``reconcile-kit crd``: CRD YAML from typed resources (reconcile_kit.typed)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import yaml

from ..typed.crd import crd_document, custom_resources
from ..typed.resource import CustomResource
from .target import TargetError, attribute, import_module

if TYPE_CHECKING:
    from ..manager.manager import Manager

__all__ = ["crd_documents", "manager_crds", "render_crds"]


def render_crds(target: str) -> str:
    """The CRDs of TARGET (``module``, ``path.py``, ``module:Class``) as one YAML stream,
    one CRD per kind.

    Raises:
        TargetError: TARGET cannot be imported, has no such attribute, or names no
            CustomResource class (TARGET named as given).
    """
    spec, _, attr = target.rpartition(":") if ":" in target else (target, "", "")
    module = import_module(spec, target)
    if attr:
        found = attribute(module, spec, target, attr)
        if not (isinstance(found, type) and issubclass(found, CustomResource)):
            raise TargetError(f"{target}: {attr} is not a CustomResource class")
    try:
        classes = custom_resources(module, attr)
    except ValueError as error:
        raise TargetError(f"{target}: defines no CustomResource class") from error
    return yaml.safe_dump_all(crd_documents(classes), sort_keys=False)


def crd_documents(classes: Iterable[type[CustomResource]]) -> list[dict[str, Any]]:
    """One CRD document per kind of ``classes`` (the versions of a kind in one CRD)."""
    kinds: dict[tuple[str, str], list[type[CustomResource]]] = {}
    for cls in classes:
        versions = kinds.setdefault((cls.resource.group, cls.resource.kind), [])
        if cls not in versions:
            versions.append(cls)
    return [
        crd_document(*group) if len(group) > 1 else crd_document(group[0])
        for group in kinds.values()
    ]


def manager_crds(manager: Manager) -> list[dict[str, Any]]:
    """The CRDs of the typed kinds (CustomResource classes) ``manager``'s controllers
    reconcile, own or watch: what ``reconcile-kit run --embedded`` installs in its fresh
    API server before the manager starts, as envtest installs a test's CRDs."""
    classes: list[type[CustomResource]] = []
    for controller in manager.controllers:
        for kind in (controller.model, *(source.kind for source in controller.sources)):
            if isinstance(kind, type) and issubclass(kind, CustomResource):
                classes.append(kind)
    return crd_documents(classes)
