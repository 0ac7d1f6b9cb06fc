"""The built-in kinds kube-apiserver serves in more than one form of one stored object, and
the conversion between them: a HorizontalPodAutoscaler as autoscaling/v1 and v2
(:mod:`.hpaversions`), an Event as core/v1 and events.k8s.io/v1 (:mod:`.eventversions`).
Reads, writes, watches and admission go through here."""

from __future__ import annotations

from . import eventversions, hpaversions
from .resources import ResourceType
from .store import Obj


def handles(rt: ResourceType) -> bool:
    """Whether ``rt`` is a form of a kind stored in one form and served in others."""
    return hpaversions.handles(rt) or eventversions.handles(rt)


def converts(rt: ResourceType) -> bool:
    """Whether ``rt`` serves its kind in a form it is not stored in."""
    return hpaversions.converts(rt) or eventversions.converts(rt)


def served_form(rt: ResourceType, obj: Obj) -> Obj:
    """``obj`` (stored, or in any of its kind's forms) as ``rt`` serves it."""
    if hpaversions.handles(rt):
        return hpaversions.served_form(rt, obj)
    if eventversions.handles(rt):
        return eventversions.served_form(rt, obj)
    return obj


def storage_form(rt: ResourceType, obj: Obj) -> Obj:
    """``obj`` (in one of ``rt``'s kind's forms) as stored."""
    if hpaversions.handles(rt):
        return hpaversions.storage_form(obj)
    if eventversions.handles(rt):
        return eventversions.storage_form(obj)
    return obj
