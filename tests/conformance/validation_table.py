"""Shared pieces of the kind-validation conformance tables (issue 28): where each kind
lives, the 422 a refused write gets (its causes and the message kube-apiserver joins from
them), and the create/update runners."""

from __future__ import annotations

import copy
import re
from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req

Cause = tuple[str, str, str]  # reason, field, message

# plural -> (API path prefix, namespaced, Kind, group)
KINDS: dict[str, tuple[str, bool, str, str]] = {
    "services": ("/api/v1", True, "Service", ""),
    "configmaps": ("/api/v1", True, "ConfigMap", ""),
    "secrets": ("/api/v1", True, "Secret", ""),
    "serviceaccounts": ("/api/v1", True, "ServiceAccount", ""),
    "namespaces": ("/api/v1", False, "Namespace", ""),
    "events": ("/api/v1", True, "Event", ""),
    "persistentvolumeclaims": ("/api/v1", True, "PersistentVolumeClaim", ""),
    "replicationcontrollers": ("/api/v1", True, "ReplicationController", ""),
    "persistentvolumes": ("/api/v1", False, "PersistentVolume", ""),
    "endpoints": ("/api/v1", True, "Endpoints", ""),
    "resourcequotas": ("/api/v1", True, "ResourceQuota", ""),
    "limitranges": ("/api/v1", True, "LimitRange", ""),
    "nodes": ("/api/v1", False, "Node", ""),
    "controllerrevisions": ("/apis/apps/v1", True, "ControllerRevision", "apps"),
    "runtimeclasses": ("/apis/node.k8s.io/v1", False, "RuntimeClass", "node.k8s.io"),
    "csidrivers": ("/apis/storage.k8s.io/v1", False, "CSIDriver", "storage.k8s.io"),
    "apiservices": (
        "/apis/apiregistration.k8s.io/v1",
        False,
        "APIService",
        "apiregistration.k8s.io",
    ),
    "flowschemas": (
        "/apis/flowcontrol.apiserver.k8s.io/v1",
        False,
        "FlowSchema",
        "flowcontrol.apiserver.k8s.io",
    ),
    "prioritylevelconfigurations": (
        "/apis/flowcontrol.apiserver.k8s.io/v1",
        False,
        "PriorityLevelConfiguration",
        "flowcontrol.apiserver.k8s.io",
    ),
    "validatingadmissionpolicies": (
        "/apis/admissionregistration.k8s.io/v1",
        False,
        "ValidatingAdmissionPolicy",
        "admissionregistration.k8s.io",
    ),
    "validatingadmissionpolicybindings": (
        "/apis/admissionregistration.k8s.io/v1",
        False,
        "ValidatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io",
    ),
    "csinodes": ("/apis/storage.k8s.io/v1", False, "CSINode", "storage.k8s.io"),
    "volumeattachments": (
        "/apis/storage.k8s.io/v1",
        False,
        "VolumeAttachment",
        "storage.k8s.io",
    ),
    "endpointslices": ("/apis/discovery.k8s.io/v1", True, "EndpointSlice", "discovery.k8s.io"),
    "podtemplates": ("/api/v1", True, "PodTemplate", ""),
    "ingresses": ("/apis/networking.k8s.io/v1", True, "Ingress", "networking.k8s.io"),
    "networkpolicies": (
        "/apis/networking.k8s.io/v1",
        True,
        "NetworkPolicy",
        "networking.k8s.io",
    ),
    "poddisruptionbudgets": ("/apis/policy/v1", True, "PodDisruptionBudget", "policy"),
    "horizontalpodautoscalers": (
        "/apis/autoscaling/v2",
        True,
        "HorizontalPodAutoscaler",
        "autoscaling",
    ),
    "rolebindings": (
        "/apis/rbac.authorization.k8s.io/v1",
        True,
        "RoleBinding",
        "rbac.authorization.k8s.io",
    ),
    "clusterrolebindings": (
        "/apis/rbac.authorization.k8s.io/v1",
        False,
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io",
    ),
    "leases": ("/apis/coordination.k8s.io/v1", True, "Lease", "coordination.k8s.io"),
    "storageclasses": ("/apis/storage.k8s.io/v1", False, "StorageClass", "storage.k8s.io"),
    "priorityclasses": (
        "/apis/scheduling.k8s.io/v1",
        False,
        "PriorityClass",
        "scheduling.k8s.io",
    ),
    "ingressclasses": (
        "/apis/networking.k8s.io/v1",
        False,
        "IngressClass",
        "networking.k8s.io",
    ),
    # served from core's internal Event: its 422 names the kind without a group
    "events.k8s.io/events": ("/apis/events.k8s.io/v1", True, "Event", ""),
}

_ADDRESS = re.compile(r"0x[0-9a-f]+")
PREFIX = "\n…"
"""Ends an expected cause message of which only the first line is compared (a cmp.Diff
follows it on kube-apiserver)."""


def collection(backend: Backend, plural: str) -> str:
    prefix, namespaced, _, _ = KINDS[plural]
    where = f"/namespaces/{backend.namespace}" if namespaced else ""
    return f"{prefix}{where}/{plural.rsplit('/', 1)[-1]}"


def named(backend: Backend, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with its name made unique for a cluster-scoped kind."""
    body = copy.deepcopy(body)
    if not KINDS[plural][1]:
        body["metadata"]["name"] = f"{backend.namespace}-{body['metadata']['name']}"
    return body


def expected_message(plural: str, name: str, causes: list[Cause]) -> str:
    """StatusError's message for NewInvalid: ``Kind[.group] "name" is invalid: ...``."""
    _, _, kind, group = KINDS[plural]
    qualified = f"{kind}.{group}" if group else kind
    parts = [f"{field}: {message}" if field else f": {message}" for _, field, message in causes]
    parts = list(dict.fromkeys(parts))  # the aggregate error shows a message once
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return f'{qualified} "{name}" is invalid: {joined}'


def check_invalid(plural: str, name: str, reply: Any, causes: list[Cause]) -> None:
    """A 422 Invalid whose causes and message are exactly ``causes`` (pointer addresses in
    a Go ``%#v`` value are ignored)."""
    assert reply.status == 422, reply.body
    body = reply.body
    message = _ADDRESS.sub("0x", body["message"])
    got = []
    for cause, want in zip(body["details"]["causes"], causes + [("", "", "")] * 99, strict=False):
        text = _ADDRESS.sub("0x", cause["message"])
        if want[2].endswith(PREFIX) and text.startswith(want[2][: -len(PREFIX)]):
            message = message.replace(text, want[2])  # only the start of this one is compared
            text = want[2]
        got.append((cause["reason"], cause.get("field", ""), text))
    assert got == causes, got
    assert message == expected_message(plural, name, causes), message
    assert body["reason"] == "Invalid"


async def create_refused(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    body = named(backend, plural, body)
    reply = await req(backend, "POST", collection(backend, plural), body)
    if not causes:
        assert reply.status == 201, reply.body
        return
    check_invalid(plural, body["metadata"]["name"], reply, causes)


async def update_refused(
    backend: Backend,
    plural: str,
    body: dict[str, Any],
    patch: dict[str, Any],
    causes: list[Cause],
    subresource: str = "",
) -> None:
    """Create ``body``, merge-patch it (or its ``subresource``) with ``patch``: refused
    with ``causes`` (or, with none expected, accepted)."""
    body = named(backend, plural, body)
    name = body["metadata"]["name"]
    await ok(backend, "POST", collection(backend, plural), body)
    path = f"{collection(backend, plural)}/{name}" + (f"/{subresource}" if subresource else "")
    reply = await req(backend, "PATCH", path, patch, content_type=MERGE)
    if not causes:
        assert reply.status == 200, reply.body
        return
    check_invalid(plural, name, reply, causes)
