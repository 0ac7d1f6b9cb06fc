"""Website: a custom resource that owns a Deployment and a Service (the common operator).

::

    apiVersion: examples.reconcile-kit.io/v1
    kind: Website
    metadata: {name: shop}
    spec: {image: "nginx:1.27", replicas: 2, port: 8080}

becomes a Deployment ``shop`` running ``spec.replicas`` pods of ``spec.image`` listening on
``spec.port``, and a Service ``shop`` in front of them on port 80.

Design:

- **Children by server-side apply.** Each reconcile builds the Deployment and the Service
  it wants, holding only the fields this operator cares about, and ``ctx.apply``-s them
  (field manager ``website``). The API server merges them with what others set: defaults
  (``imagePullPolicy``, ``strategy``...), a sidecar container added by someone else, an
  HPA's ``replicas`` if it takes that field over. A field this operator stops setting is
  removed. Once converged, a reconcile sends no request at all: ``ctx.apply`` remembers
  what it applied and skips while the cached child still holds it.
- **Ownership.** ``set_controller_reference`` makes the Website the children's controller
  (garbage collection, and ``.owns()`` reconciles the Website when a child changes). A
  Deployment or Service of that name controlled by something else is never touched:
  ``ctx.apply`` raises AlreadyOwnedError and the Website reports ``Stalled``.
- **Status (kstatus).** From the Deployment's own status: ``Ready=True`` once its
  ``observedGeneration`` caught up and all replicas are updated and available, else
  ``Ready=False`` / ``Reconciling=True`` with reason ``Progressing`` (a cluster without
  kube-controller-manager, like the embedded server or envtest, stays there).
- **Schema.** The CRD (``website-crd.yaml``) is generated from the pydantic model below:
  ``reconcile-kit crd examples/website.py > examples/website-crd.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from kr8s.asyncio.objects import Deployment, Service, new_class
from pydantic import Field

from reconcile_kit import (
    AlreadyOwnedError,
    Context,
    Controller,
    PatchHelper,
    Reasons,
    generation_changed,
    mark_not_ready,
    mark_ready,
    mark_reconciling,
    mark_stalled,
    set_controller_reference,
)
from reconcile_kit.typed import Condition, CustomResource, KubeModel, ListType, PrinterColumn

CRD_PATH = Path(__file__).with_name("website-crd.yaml")
GROUP = "examples.reconcile-kit.io"
OWNED = ("Ready", "Reconciling", "Stalled")
OWNED_ELSEWHERE = "ChildOwnedElsewhere"


class WebsiteSpec(KubeModel):
    """What the Website should run."""

    image: Annotated[str, Field(min_length=1)]
    replicas: Annotated[int, Field(ge=0, le=50)] = 1
    port: Annotated[int, Field(ge=1, le=65535)] = 8080


class WebsiteStatus(KubeModel):
    """What the operator observed."""

    ready_replicas: int = 0
    observed_generation: int | None = None
    conditions: Annotated[list[Condition], ListType.map("type")] = Field(default_factory=list)


class Website(
    CustomResource,
    group=GROUP,
    version="v1",
    kind="Website",
    short_names=["site"],
    printer_columns=[
        PrinterColumn("Image", ".spec.image"),
        PrinterColumn("Ready", ".status.readyReplicas", "integer"),
    ],
):
    """A web site: a Deployment of ``spec.image`` behind a Service."""

    spec: WebsiteSpec
    status: WebsiteStatus | None = None


WebsiteKind = new_class("Website", f"{GROUP}/v1", namespaced=True, plural="websites")
"""The kr8s class the controller watches (typed controllers, Controller(Website), are not
there yet: the reconcile reads ``site.raw``)."""


def _labels(site: Any) -> dict[str, str]:
    return {"app.kubernetes.io/name": site.name, "app.kubernetes.io/managed-by": "website"}


def desired_deployment(site: Any) -> dict[str, Any]:
    """The Deployment ``site`` asks for: the fields this operator applies."""
    spec = site.raw["spec"]
    labels = _labels(site)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": site.name, "namespace": site.namespace, "labels": labels},
        "spec": {
            "replicas": spec.get("replicas", 1),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": spec["image"],
                            "ports": [{"name": "http", "containerPort": spec.get("port", 8080)}],
                        }
                    ]
                },
            },
        },
    }


def desired_service(site: Any) -> dict[str, Any]:
    """The Service ``site`` asks for: port 80 to the pods' ``spec.port``."""
    labels = _labels(site)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": site.name, "namespace": site.namespace, "labels": labels},
        "spec": {
            "selector": labels,
            "ports": [
                {"name": "http", "port": 80, "targetPort": site.raw["spec"].get("port", 8080)}
            ],
        },
    }


async def reconcile(site: Any, ctx: Context) -> None:
    """Apply the Website's Deployment and Service; report the Deployment's progress."""
    generation = site.raw["metadata"].get("generation")
    async with PatchHelper(site, observed_generation=True, owned_conditions=OWNED):
        deployment = Deployment(desired_deployment(site), api=ctx.api)
        service = Service(desired_service(site), api=ctx.api)
        try:
            for child in (deployment, service):
                set_controller_reference(site, child)
                await ctx.apply(child)
        except AlreadyOwnedError as error:
            message = f"{error}"
            mark_stalled(site, OWNED_ELSEWHERE, message, observed_generation=generation)
            mark_not_ready(site, OWNED_ELSEWHERE, message, observed_generation=generation)
            return
        _report(site, deployment.raw, generation)


def _report(site: Any, deployment: dict[str, Any], generation: int | None) -> None:
    """kstatus conditions from the Deployment's status."""
    wanted = deployment["spec"].get("replicas", 1)
    status = deployment.get("status") or {}
    site.raw.setdefault("status", {})["readyReplicas"] = status.get("readyReplicas", 0)
    caught_up = status.get("observedGeneration", 0) >= deployment["metadata"]["generation"]
    done = all(status.get(k, 0) >= wanted for k in ("updatedReplicas", "availableReplicas"))
    if caught_up and done:
        message = f"{wanted} replica(s) available"
        mark_ready(site, Reasons.RECONCILED, message, observed_generation=generation)
        return
    message = f"{status.get('availableReplicas', 0)}/{wanted} replica(s) available"
    mark_reconciling(site, Reasons.PROGRESSING, message, observed_generation=generation)
    mark_not_ready(site, Reasons.PROGRESSING, message, observed_generation=generation)


def controller(api: Any = None, *, namespace: str | None = None) -> Controller:
    """The Website controller: Websites (spec changes), their Deployments and Services."""
    return (
        Controller(
            WebsiteKind,
            api=api,
            namespace=namespace,
            name="website",
            predicates=[generation_changed],
        )
        .owns(Deployment)
        .owns(Service)
    )
