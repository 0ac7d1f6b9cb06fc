"""Objects kube-apiserver creates when it starts, beyond namespaces and priority classes.

* ClusterRoles of its bootstrap RBAC policy (k8s.io/kubernetes
  plugin/pkg/auth/authorizer/rbac/bootstrappolicy ``ClusterRoles``) that clients bind to:
  ``cluster-admin`` and ``system:auth-delegator`` (TokenReview and SubjectAccessReview, as
  webhook and proxy servers need), labelled and annotated as the policy's reconciler writes
  them. The roles bound to every authenticated user stay in code (:mod:`.rbac`).
* The ``default/kubernetes`` Service of its endpoint reconciler (pkg/controlplane
  ``controller/kubernetesservice``): port ``https`` 443 to the server's own port, the
  first address of the service range.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CLUSTER_ROLES", "KUBERNETES_SERVICE_IP", "cluster_role", "kubernetes_service"]

_POLICY_METADATA: dict[str, Any] = {
    "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
    "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
}


def _create(group: str, resource: str) -> dict[str, Any]:
    return {"verbs": ["create"], "apiGroups": [group], "resources": [resource]}


CLUSTER_ROLES: dict[str, list[dict[str, Any]]] = {
    "cluster-admin": [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
    ],
    "system:auth-delegator": [
        _create("authentication.k8s.io", "tokenreviews"),
        _create("authorization.k8s.io", "subjectaccessreviews"),
    ],
}
"""Bootstrap ClusterRoles stored as objects: name -> rules, as kube-apiserver 1.32 serves them."""

KUBERNETES_SERVICE_IP = "10.0.0.1"
"""The first address of the service range (10.0.0.0/24, as the real control plane's)."""


def cluster_role(name: str) -> dict[str, Any]:
    """The bootstrap ClusterRole ``name`` as a create body."""
    metadata = {"name": name, **{key: dict(value) for key, value in _POLICY_METADATA.items()}}
    return {"metadata": metadata, "rules": [dict(rule) for rule in CLUSTER_ROLES[name]]}


def kubernetes_service(port: int) -> dict[str, Any]:
    """The ``kubernetes`` Service in ``default`` for a server listening on ``port``."""
    return {
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
            "clusterIP": KUBERNETES_SERVICE_IP,
            "clusterIPs": [KUBERNETES_SERVICE_IP],
            "type": "ClusterIP",
            "sessionAffinity": "None",
        },
    }
