"""Differences the fuzzer finds today, per kind: its properties are expected failures
(``xfail(strict=False)``: a run that passes is reported as XPASS, not as an error).

Each entry says what differs; the differences registry
(reconcile_kit/testing/apiserver/differences.py, "Stored shape of some built-in kinds")
lists them too.
"""

from __future__ import annotations

KNOWN_UNTIL_VALIDATION_MERGED: frozenset[str] = frozenset()
"""Kinds whose ``invalid`` and ``update`` properties (invalidating mutations, changes of
immutable fields) fail until the port of kube-apiserver's validation
(reconcile_kit/testing/apiserver/validation/) is merged: the embedded server still accepts
objects kube-apiserver rejects, or rejects them with other causes."""

_TEMPLATE_CLAIMS = (
    "spec.volumeClaimTemplates[] lack apiVersion, kind, spec.volumeMode and status.phase"
)

KNOWN_SHAPE_DIFFERENCES: dict[str, str] = {
    "StatefulSet": _TEMPLATE_CLAIMS,
}
"""Kinds whose ``valid`` and ``update`` properties fail on the stored object's shape (not
validation), with what differs."""
