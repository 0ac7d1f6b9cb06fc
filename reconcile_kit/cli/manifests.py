"""``reconcile-kit manifests``: everything that runs a manager in a cluster, derived from the
manager itself, as kubebuilder's ``config/`` (CRDs, RBAC, manager Deployment, webhook
configurations, cert-manager certificates) but generated from the code.

Documents, in apply order: the operator's Namespace (unless ``default`` or another
namespace every cluster has, as kubebuilder's ``config/manager``), the CRDs of the typed
kinds the controllers reconcile and the webhooks convert (``spec.conversion`` to the
webhook Service, CA injected by cert-manager),
the ServiceAccount, the RBAC of ``reconcile-kit rbac``, the Deployment running
``reconcile-kit run TARGET``, a Service for metrics and one for webhooks, the webhook
configurations, and the webhook serving certificate: with ``cert_manager`` a self-signed
cert-manager Issuer and the serving Certificate (cert-manager writes the Secret and injects
its CA into the configurations and CRDs), else a Secret holding a CA and serving
certificate generated here (EC P-256, 365 days) whose CA is every configuration's and
CRD's ``caBundle`` (nothing renews it: generate again before it expires, or use
cert-manager). The Deployment mounts that Secret either way.

Metrics are secure unless the manager says ``metrics_secure=False`` (kubebuilder's scaffold
since v4): HTTPS on port 8443, each scrape authenticated and authorized by the API server
(:mod:`reconcile_kit.manager.metricsauth`); the RBAC adds the operator's
``system:auth-delegator`` binding and the ``<name>-metrics-reader`` ClusterRole to bind a
scraper to; the Service ``<name>-metrics`` (port ``https``, labelled
``app.kubernetes.io/name: <name>`` and ``app.kubernetes.io/component: metrics``) is what a
Prometheus Operator ServiceMonitor selects (``scheme: https``, ``bearerTokenFile``). The
metrics certificate is generated at start (self-signed: the ServiceMonitor sets
``insecureSkipVerify``), or with ``cert_manager`` issued by cert-manager into the Secret
``<name>-metrics-tls`` and mounted (``--metrics-cert-dir``). Plain metrics: HTTP on 8080.
Probes stay plain HTTP on 8081.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..manager.leaderelection import LeaderElection
from ..manager.manager import Manager
from ..webhooks.certs import self_signed_pem
from ..webhooks.registration import ServiceReference, configurations, conversion_stanzas
from . import rbac

__all__ = ["DeploymentSettings", "documents", "render", "write_kustomize"]

HEALTH_PORT = 8081
METRICS_PORT = 8443
"""Secure metrics' port (kubebuilder's)."""
PLAIN_METRICS_PORT = 8080
"""Plain HTTP metrics' port (``metrics_secure=False``)."""
METRICS_CERT_DIR = "/tmp/k8s-metrics-server/metrics-certs"  # kubebuilder's
WEBHOOK_PORT = 9443
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"  # controller-runtime's default
INJECT_CA = "cert-manager.io/inject-ca-from"
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has: the manifests create any other they deploy into."""


@dataclass
class DeploymentSettings:
    """How the manager is deployed.

    Attributes:
        target: what ``reconcile-kit run`` is given in the container (``module:attr``).
        namespace: where the operator runs (Deployment, ServiceAccount, Services, Lease).
        image: the container image holding the operator and reconcile-kit.
        replicas: more than one turns leader election on.
        watch_namespace: a manager limited to one namespace (``run --namespace``).
        cert_manager: add a self-signed cert-manager Issuer and the webhook Certificate
            (cert-manager injects the CA); False: generate the webhook serving certificate
            here, as a Secret, and put its CA in the configurations' ``caBundle``.
        shard: run the replicas active-active (``run --shard``: a ring named after the
            manager, its Leases in ``namespace``; see README: Sharding).
    """

    target: str
    namespace: str = "default"
    image: str = "my-operator:latest"
    replicas: int = 1
    watch_namespace: str | None = None
    cert_manager: bool = False
    shard: bool = False


def documents(manager: Manager, settings: DeploymentSettings) -> list[dict[str, Any]]:
    """The manifests of ``manager`` deployed as ``settings`` say, in apply order."""
    name = manager.name
    tls = _WebhookTLS(manager, settings)
    if settings.watch_namespace is not None:
        manager.namespace = settings.watch_namespace
    if settings.replicas > 1 and manager.leader_election is None:
        manager.leader_election = LeaderElection(f"{name}-leader", namespace=settings.namespace)
    if settings.shard and manager.sharding is None:
        from ..manager.sharding import Sharding

        manager.sharding = Sharding(name, namespace=settings.namespace)
    docs = _crds(manager, settings, tls)
    if settings.namespace not in SYSTEM_NAMESPACES:  # as kubebuilder's config/manager
        docs.insert(0, _object("v1", "Namespace", settings.namespace, None))
    docs.append(_object("v1", "ServiceAccount", name, settings.namespace))
    roles = rbac.manifests(manager, service_account_namespace=settings.namespace)
    docs.extend(doc for _, doc in roles)
    if tls.secret is not None:
        docs.append(tls.secret)
    docs.append(_deployment(manager, settings))
    docs.append(_metrics_service(manager, settings))
    if manager.webhooks is not None:
        docs.append(
            _service(
                _webhook_service(name), settings.namespace, name, WEBHOOK_PORT, "webhooks", 443
            )
        )
        docs.extend(_webhook_configurations(manager, settings, tls))
        if settings.cert_manager:
            docs.extend(_certificates(name, settings.namespace))
    if settings.cert_manager and manager.metrics_secure:
        if manager.webhooks is None:
            docs.append(_issuer(name, settings.namespace))
        docs.append(_metrics_certificate(name, settings.namespace))
    return docs


def render(manager: Manager, settings: DeploymentSettings) -> str:
    """:func:`documents` as one YAML stream."""
    return yaml.safe_dump_all(documents(manager, settings), sort_keys=False)


def write_kustomize(manager: Manager, settings: DeploymentSettings, directory: Path) -> list[Path]:
    """:func:`documents` as a kustomize directory: one file per part and a
    ``kustomization.yaml`` listing them; returns the files written."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for doc in documents(manager, settings):
        parts.setdefault(_part(doc["kind"]), []).append(doc)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for part, docs in parts.items():
        path = directory / f"{part}.yaml"
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        written.append(path)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [path.name for path in written],
    }
    path = directory / "kustomization.yaml"
    path.write_text(yaml.safe_dump(kustomization, sort_keys=False))
    return [*written, path]


def _part(kind: str) -> str:
    if kind == "CustomResourceDefinition":
        return "crds"
    if kind.endswith(("Role", "RoleBinding")):
        return "rbac"
    if kind.endswith("WebhookConfiguration"):
        return "webhooks"
    if kind in ("Issuer", "Certificate", "Secret"):
        return "certificates"
    return "manager"


def _object(api_version: str, kind: str, name: str, namespace: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    metadata["labels"] = {"app.kubernetes.io/managed-by": "reconcile-kit"}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


def _webhook_service(name: str) -> str:
    return f"{name}-webhook"


class _WebhookTLS:
    """The webhook serving certificate of one rendering: cert-manager's (the CA injected
    by annotation), or one generated here (a Secret, and its CA as ``caBundle``)."""

    def __init__(self, manager: Manager, settings: DeploymentSettings) -> None:
        self.secret: dict[str, Any] | None = None
        self.ca_bundle = b""
        self.annotations: dict[str, str] = {}
        if manager.webhooks is None:
            return
        service = _webhook_service(manager.name)
        if settings.cert_manager:
            self.annotations = {INJECT_CA: f"{settings.namespace}/{service}"}
            return
        ns = settings.namespace
        ca, cert, key = self_signed_pem(
            [f"{service}.{ns}.svc", f"{service}.{ns}.svc.cluster.local"]
        )
        self.ca_bundle = ca
        secret = _object("v1", "Secret", f"{service}-tls", ns)
        secret["type"] = "kubernetes.io/tls"
        secret["data"] = {
            name: base64.b64encode(value).decode()
            for name, value in (("tls.crt", cert), ("tls.key", key), ("ca.crt", ca))
        }
        self.secret = secret


def _crds(manager: Manager, settings: DeploymentSettings, tls: _WebhookTLS) -> list[dict[str, Any]]:
    models: dict[tuple[str, str], Any] = {}
    for controller in manager.controllers:
        if controller.model is not None:
            info = controller.model.resource
            models.setdefault((info.group, info.kind), controller.model)
    webhooks = manager.webhooks
    stanzas: dict[str, dict[str, Any]] = {}
    if webhooks is not None:
        for model in webhooks.converters.models():
            models.setdefault((model.resource.group, model.resource.kind), model)
        service = ServiceReference(settings.namespace, _webhook_service(manager.name))
        stanzas = conversion_stanzas(webhooks, service, ca_bundle=tls.ca_bundle)
    docs = []
    for model in models.values():
        crd: dict[str, Any] = model.crd()
        stanza = stanzas.get(crd["metadata"]["name"])
        if stanza is not None:
            crd["spec"]["conversion"] = stanza
            if tls.annotations:
                crd["metadata"].setdefault("annotations", {}).update(tls.annotations)
        docs.append(crd)
    return docs


def _run_arguments(manager: Manager, settings: DeploymentSettings) -> list[str]:
    args = ["run", settings.target, "--health-port", str(HEALTH_PORT)]
    if manager.metrics_secure:
        args += ["--metrics-port", str(METRICS_PORT)]
        if settings.cert_manager:
            args += ["--metrics-cert-dir", METRICS_CERT_DIR]
    else:
        args += ["--metrics-port", str(PLAIN_METRICS_PORT), "--metrics-secure=false"]
    args += ["--log-format", "json"]
    if settings.watch_namespace is not None:
        args += ["--namespace", settings.watch_namespace]
    if manager.leader_election is not None:
        args += ["--leader-elect", "--leader-election-namespace", settings.namespace]
    if manager.sharding is not None:
        args += ["--shard", "--shard-ring", manager.sharding.ring]
        if manager.leader_election is None:
            args += ["--leader-election-namespace", manager.sharding.namespace]
    if manager.webhooks is not None:
        args += ["--webhook-port", str(WEBHOOK_PORT), "--webhook-cert-dir", CERT_DIR]
    return args


def _container(manager: Manager, settings: DeploymentSettings) -> dict[str, Any]:
    ports = [
        {"name": "health", "containerPort": HEALTH_PORT},
        {"name": "metrics", "containerPort": _metrics_port(manager)},
    ]
    mounts: list[dict[str, Any]] = [{"name": "tmp", "mountPath": "/tmp"}]
    if manager.metrics_secure and settings.cert_manager:
        mounts.append({"name": "metrics-certs", "mountPath": METRICS_CERT_DIR, "readOnly": True})
    if manager.webhooks is not None:
        ports.append({"name": "webhooks", "containerPort": WEBHOOK_PORT})
        mounts.append({"name": "webhook-certs", "mountPath": CERT_DIR, "readOnly": True})
    return {
        "name": "manager",
        "image": settings.image,
        "command": ["reconcile-kit"],
        "args": _run_arguments(manager, settings),
        "ports": ports,
        "livenessProbe": _probe("/healthz", 15),
        "readinessProbe": _probe("/readyz", 5),
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"memory": "512Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": mounts,
    }


def _probe(path: str, period: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": "health"},
        "initialDelaySeconds": 5,
        "periodSeconds": period,
    }


def _deployment(manager: Manager, settings: DeploymentSettings) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": manager.name}
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {}}]
    if manager.webhooks is not None:
        secret = {"secretName": f"{_webhook_service(manager.name)}-tls"}
        volumes.append({"name": "webhook-certs", "secret": secret})
    if manager.metrics_secure and settings.cert_manager:
        volumes.append(
            {"name": "metrics-certs", "secret": {"secretName": f"{manager.name}-metrics-tls"}}
        )
    doc = _object("apps/v1", "Deployment", manager.name, settings.namespace)
    doc["spec"] = {
        "replicas": settings.replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "serviceAccountName": manager.name,
                "terminationGracePeriodSeconds": _grace_period(manager),
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 65532,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [_container(manager, settings)],
                "volumes": volumes,
            },
        },
    }
    return doc


def _service(
    name: str, namespace: str, app: str, target: int, port_name: str, port: int | None = None
) -> dict[str, Any]:
    doc = _object("v1", "Service", name, namespace)
    doc["spec"] = {
        "selector": {"app.kubernetes.io/name": app},
        "ports": [{"name": port_name, "port": port or target, "targetPort": target}],
    }
    return doc


def _metrics_port(manager: Manager) -> int:
    return METRICS_PORT if manager.metrics_secure else PLAIN_METRICS_PORT


def _metrics_service(manager: Manager, settings: DeploymentSettings) -> dict[str, Any]:
    """The metrics Service, labelled for a ServiceMonitor's selector; its port is named
    ``https`` (secure) or ``http`` (a ServiceMonitor endpoint's ``port``)."""
    port = _metrics_port(manager)
    scheme = "https" if manager.metrics_secure else "http"
    doc = _service(f"{manager.name}-metrics", settings.namespace, manager.name, port, scheme)
    doc["metadata"]["labels"].update(
        {"app.kubernetes.io/name": manager.name, "app.kubernetes.io/component": "metrics"}
    )
    return doc


def _webhook_configurations(
    manager: Manager, settings: DeploymentSettings, tls: _WebhookTLS
) -> list[dict[str, Any]]:
    assert manager.webhooks is not None
    service = ServiceReference(settings.namespace, _webhook_service(manager.name))
    docs = configurations(manager.webhooks, service, ca_bundle=tls.ca_bundle)
    for doc in docs:
        if tls.annotations:
            doc["metadata"]["annotations"] = dict(tls.annotations)
    return docs


def _issuer(name: str, namespace: str) -> dict[str, Any]:
    issuer = _object("cert-manager.io/v1", "Issuer", f"{name}-selfsigned", namespace)
    issuer["spec"] = {"selfSigned": {}}
    return issuer


def _metrics_certificate(name: str, namespace: str) -> dict[str, Any]:
    service = f"{name}-metrics"
    certificate = _object("cert-manager.io/v1", "Certificate", service, namespace)
    certificate["spec"] = {
        "secretName": f"{name}-metrics-tls",
        "dnsNames": [f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local"],
        "issuerRef": {"kind": "Issuer", "name": f"{name}-selfsigned"},
    }
    return certificate


def _certificates(name: str, namespace: str) -> list[dict[str, Any]]:
    service = _webhook_service(name)
    issuer = _issuer(name, namespace)
    certificate = _object("cert-manager.io/v1", "Certificate", service, namespace)
    certificate["spec"] = {
        "secretName": f"{service}-tls",
        "dnsNames": [f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local"],
        "issuerRef": {"kind": "Issuer", "name": f"{name}-selfsigned"},
    }
    return [issuer, certificate]


def _grace_period(manager: Manager) -> int:
    """Seconds the pod gets to stop: the controllers' graceful shutdown, plus a sharded
    replica's hand-over, twice ``drain_timeout`` (moving its objects to their new owners,
    then, when it runs the sharder, waiting for the sharder's moves), plus 10."""
    seconds = manager.graceful_shutdown_timeout
    sharding = manager.sharding
    if sharding is not None:
        drain = sharding.drain_timeout
        seconds += 2 * (manager.graceful_shutdown_timeout if drain is None else drain)
    return int(seconds) + 10
