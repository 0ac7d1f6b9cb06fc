"""``reconcile-kit crd``: CRD YAML from typed resources (reconcile_kit.typed)."""

from __future__ import annotations

import yaml

from ..typed.crd import crd_document, custom_resources
from ..typed.resource import CustomResource
from .target import import_module

__all__ = ["render_crds"]


def render_crds(target: str) -> str:
    """The CRDs of TARGET (``module``, ``path.py``, ``module:Class``) as one YAML stream,
    one CRD per kind.

    Raises:
        ValueError: TARGET names no CustomResource class.
    """
    spec, _, attr = target.rpartition(":") if ":" in target else (target, "", "")
    classes = custom_resources(import_module(spec, target), attr)
    kinds: dict[tuple[str, str], list[type[CustomResource]]] = {}
    for cls in classes:
        kinds.setdefault((cls.resource.group, cls.resource.kind), []).append(cls)
    documents = [
        crd_document(*group) if len(group) > 1 else crd_document(group[0])
        for group in kinds.values()
    ]
    return yaml.safe_dump_all(documents, sort_keys=False)
