"""Media types of Kubernetes API request bodies, as clients send them in ``Content-Type``.

The four PATCH types are the ``types.PatchType`` values of k8s.io/apimachinery
``pkg/types/patch.go`` (kube-apiserver's ``pkg/endpoints/handlers/patch.go`` picks the
patch algorithm by them): RFC 6902 JSON patch, RFC 7386 JSON merge patch, strategic merge
patch (built-in kinds only) and server-side apply. ``JSON`` and ``YAML`` are the plain
object encodings kube-apiserver accepts and serves.
"""

from __future__ import annotations

from typing import Final

__all__ = ["APPLY_PATCH", "JSON", "JSON_PATCH", "MERGE_PATCH", "STRATEGIC_MERGE_PATCH", "YAML"]

JSON: Final = "application/json"
YAML: Final = "application/yaml"

JSON_PATCH: Final = "application/json-patch+json"
"""RFC 6902: a list of operations (``types.JSONPatchType``)."""
MERGE_PATCH: Final = "application/merge-patch+json"
"""RFC 7386: a partial document, ``null`` deletes (``types.MergePatchType``)."""
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
"""Merge patch with per-field list strategies, for built-in kinds only
(``types.StrategicMergePatchType``)."""
APPLY_PATCH: Final = "application/apply-patch+yaml"
"""Server-side apply: the fields a manager owns (``types.ApplyPatchType``)."""
