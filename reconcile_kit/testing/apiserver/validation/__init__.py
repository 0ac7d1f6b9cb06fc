"""Kind-specific validation of built-in objects, as kube-apiserver's registry strategies
call kubernetes pkg/apis/<group>/validation on create and update.

One module per API group holds its kinds' validators in a ``VALIDATORS`` table keyed by
(group, plural); a validator sees the whole write (:class:`Write`: the object, the stored
one on an update and the subresource) and returns the causes of a 422 Invalid.
"""

from __future__ import annotations

from .. import certificates
from ..resources import ADMISSION_GROUP, ResourceType
from ..store import Obj
from ..webhookconfig import MUTATING, VALIDATING, configuration_causes
from . import (
    admissionpolicies,
    apiservices,
    apps,
    attachments,
    autoscaling,
    batch,
    claims,
    coordination,
    core,
    endpoints,
    events,
    flowcontrol,
    networking,
    nodes,
    persistentvolumes,
    pods,
    policy,
    priorityclasses,
    quota,
    rbac,
    replication,
    services,
    smallkinds,
    storage,
)
from .common import Causes, Validator, Write, on_object

__all__ = ["Causes", "Write", "kind_causes"]

_OTHERS: dict[tuple[str, str], Validator] = {
    (certificates.GROUP, certificates.PLURAL): on_object(certificates.causes),
    (ADMISSION_GROUP, VALIDATING): on_object(lambda o: configuration_causes(o, mutating=False)),
    (ADMISSION_GROUP, MUTATING): on_object(lambda o: configuration_causes(o, mutating=True)),
}

_VALIDATORS: dict[tuple[str, str], Validator] = {
    **admissionpolicies.VALIDATORS,
    **apiservices.VALIDATORS,
    **apps.VALIDATORS,
    **attachments.VALIDATORS,
    **autoscaling.VALIDATORS,
    **batch.VALIDATORS,
    **claims.VALIDATORS,
    **coordination.VALIDATORS,
    **core.VALIDATORS,
    **endpoints.VALIDATORS,
    **events.VALIDATORS,
    **flowcontrol.VALIDATORS,
    **networking.VALIDATORS,
    **nodes.VALIDATORS,
    **persistentvolumes.VALIDATORS,
    **pods.VALIDATORS,
    **policy.VALIDATORS,
    **priorityclasses.VALIDATORS,
    **quota.VALIDATORS,
    **rbac.VALIDATORS,
    **replication.VALIDATORS,
    **services.VALIDATORS,
    **smallkinds.VALIDATORS,
    **storage.VALIDATORS,
    **_OTHERS,
}


def kind_causes(
    rt: ResourceType,
    obj: Obj,
    old: Obj | None = None,
    subresource: str = "",
    sent: Obj | None = None,
) -> Causes:
    """Field causes of the kind's validation of a write (``old``: the stored object, on an
    update; ``sent``: the object as the update sent it, see :class:`Write`); empty for
    kinds without rules."""
    validator = _VALIDATORS.get((rt.group, rt.plural))
    return validator(Write(obj, old, subresource, sent)) if validator else []
