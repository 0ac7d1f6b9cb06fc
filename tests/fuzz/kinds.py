"""Every kind under fuzzing, by kind name."""

from __future__ import annotations

from . import core, networking, rbac, workloads
from .spec import KindSpec

KINDS: dict[str, KindSpec] = {
    spec.kind: spec for spec in (*core.KINDS, *workloads.KINDS, *networking.KINDS, *rbac.KINDS)
}
