"""Webhook registration: the Validating/MutatingWebhookConfiguration documents and CRD
``spec.conversion`` stanzas of a :class:`~reconcile_kit.webhooks.server.WebhookServer`'s
handlers, pointing at a URL (local development) or a Service (in a cluster), and the
opt-in self-registration of URL-mode configurations while the server runs (as kopf's
``WebhookServer`` + ``admission.managed`` does), removed when it stops.
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kr8s.asyncio import Api

from ..client.contenttypes import APPLY_PATCH, MERGE_PATCH
from ..client.request import send

if TYPE_CHECKING:
    from .admission import AdmissionWebhook
    from .server import WebhookServer

__all__ = [
    "ServiceReference",
    "configurations",
    "conversion_stanzas",
    "register",
    "unregister",
]

log = logging.getLogger("reconcile_kit.webhooks")

GROUP_VERSION = "admissionregistration.k8s.io/v1"
CRD_VERSION = "apiextensions.k8s.io/v1"
MUTATING = "MutatingWebhookConfiguration"
VALIDATING = "ValidatingWebhookConfiguration"


@dataclass(frozen=True)
class ServiceReference:
    """The Service in front of the webhook server (``namespace``/``name``, port 443)."""

    namespace: str
    name: str
    port: int = 443


def configurations(
    server: WebhookServer, target: str | ServiceReference, ca_bundle: bytes | None = None
) -> list[dict[str, Any]]:
    """The webhook configurations of ``server``'s handlers: a MutatingWebhookConfiguration
    ``<name>-mutating`` and a ValidatingWebhookConfiguration ``<name>-validating`` (each
    only when it has webhooks). ``target``: the base URL kube-apiserver calls
    (``https://127.0.0.1:9443``) or a ServiceReference; ``ca_bundle``: PEM bytes of the CA
    (default: the server's certificates'; None-valued when cert-manager injects it)."""
    bundle = server.certificates.ca_bundle if ca_bundle is None else ca_bundle
    return [
        {
            "apiVersion": GROUP_VERSION,
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": [_entry(w, _client_config(target, w.path, bundle)) for w in hooks],
        }
        for kind, name, hooks in _configured(server)
    ]


def _configured(server: WebhookServer) -> list[tuple[str, str, list[AdmissionWebhook]]]:
    """(kind, name, webhooks) of each configuration ``server`` needs (one per kind that
    has webhooks)."""
    found = []
    for mutating, kind in ((True, MUTATING), (False, VALIDATING)):
        hooks = [w for w in server.webhooks if w.mutating == mutating]
        if hooks:
            suffix = "mutating" if mutating else "validating"
            found.append((kind, f"{server.name}-{suffix}", hooks))
    return found


def _url(kind: str, name: str) -> str:
    """A configuration's URL below ``/apis/admissionregistration.k8s.io/v1``."""
    return f"{kind.lower()}s/{name}"


def conversion_stanzas(
    server: WebhookServer, target: str | ServiceReference, ca_bundle: bytes | None = None
) -> dict[str, dict[str, Any]]:
    """CRD name -> the ``spec.conversion`` calling ``server``'s ``/convert``, for each kind
    with converters."""
    bundle = server.certificates.ca_bundle if ca_bundle is None else ca_bundle
    stanzas = {}
    for crd_name in _converted_crds(server):
        stanzas[crd_name] = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": _client_config(target, "/convert", bundle),
            },
        }
    return stanzas


async def register(api: Api, server: WebhookServer, base_url: str) -> None:
    """Apply ``server``'s configurations pointing at ``base_url`` (server-side apply, field
    manager ``server.name``) and set the CRDs' conversion to its ``/convert``.

    Raises:
        APIError: the server refused (ForbiddenError: the ServiceAccount needs create and
            patch on the webhook configurations, patch on customresourcedefinitions).
    """
    for document in configurations(server, base_url):
        await send(
            api,
            "PATCH",
            version=GROUP_VERSION,
            url=_url(document["kind"], document["metadata"]["name"]),
            params={"fieldManager": server.name, "force": "true"},
            body=document,
            content_type=APPLY_PATCH,
        )
    for crd_name, stanza in conversion_stanzas(server, base_url).items():
        await _patch_conversion(api, crd_name, stanza)
    log.info("webhook configurations registered for %s", base_url)


async def unregister(api: Api, server: WebhookServer) -> None:
    """Delete what :func:`register` applied and set the CRDs' conversion back to
    ``None`` (a CRD must not keep calling a server that stopped). A configuration or CRD
    that is gone (404) has nothing left to undo: skipped.

    Raises:
        APIError: the server refused (ForbiddenError: see :func:`register`).
    """
    for kind, name, _ in _configured(server):
        await send(api, "DELETE", version=GROUP_VERSION, url=_url(kind, name), accept=(404,))
    for crd_name in _converted_crds(server):
        stanza = {"strategy": "None", "webhook": None}
        await _patch_conversion(api, crd_name, stanza, accept=(404,))


async def _patch_conversion(
    api: Api, crd_name: str, stanza: dict[str, Any], accept: tuple[int, ...] = ()
) -> None:
    """Merge-patch CRD ``crd_name``'s ``spec.conversion`` to ``stanza`` (statuses in
    ``accept`` are no error)."""
    await send(
        api,
        "PATCH",
        version=CRD_VERSION,
        url=f"customresourcedefinitions/{crd_name}",
        body={"spec": {"conversion": stanza}},
        content_type=MERGE_PATCH,
        accept=accept,
    )


def _converted_crds(server: WebhookServer) -> list[str]:
    return [f"{cls.resource.plural}.{cls.resource.group}" for cls in server.converters.models()]


def _client_config(target: str | ServiceReference, path: str, bundle: bytes) -> dict[str, Any]:
    config: dict[str, Any]
    if isinstance(target, ServiceReference):
        config = {
            "service": {
                "namespace": target.namespace,
                "name": target.name,
                "path": path,
                "port": target.port,
            }
        }
    else:
        config = {"url": target.rstrip("/") + path}
    if bundle:
        config["caBundle"] = base64.b64encode(bundle).decode()
    return config


def _entry(webhook: AdmissionWebhook, client_config: dict[str, Any]) -> dict[str, Any]:
    info = webhook.kind
    resources = [info.plural] + [f"{info.plural}/{sub}" for sub in webhook.subresources]
    entry: dict[str, Any] = {
        "name": webhook.name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client_config,
        "rules": [
            {
                "apiGroups": [info.group],
                "apiVersions": [info.version],
                "operations": list(webhook.operations),
                "resources": resources,
                "scope": "Namespaced" if info.namespaced else "Cluster",
            }
        ],
        "failurePolicy": webhook.failure_policy,
        "matchPolicy": "Equivalent",
        "sideEffects": webhook.side_effects,
        "timeoutSeconds": webhook.timeout_seconds,
        "namespaceSelector": webhook.namespace_selector or {},
        "objectSelector": webhook.object_selector or {},
    }
    if webhook.mutating:
        entry["reinvocationPolicy"] = webhook.reinvocation_policy
    return entry
