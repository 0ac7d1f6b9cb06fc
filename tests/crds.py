"""Documents used by the tests: CRDs, custom resources, a Deployment."""

from __future__ import annotations

from typing import Any

WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


def widget_crd(status: bool = True, scale: bool = True) -> dict[str, Any]:
    subresources: dict[str, Any] = {}
    if status:
        subresources["status"] = {}
    if scale:
        subresources["scale"] = {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "shortNames": ["wd"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": subresources,
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "required": ["size"],
                                    "properties": {
                                        "size": {"type": "integer", "minimum": 1},
                                        "replicas": {"type": "integer", "default": 1},
                                        "color": {"type": "string", "enum": ["red", "blue"]},
                                        "extra": {
                                            "type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True,
                                        },
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "ready": {"type": "boolean"},
                                        "replicas": {"type": "integer"},
                                        "selector": {"type": "string"},
                                        "observedGeneration": {"type": "integer"},
                                        "conditions": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True,
                                            },
                                        },
                                    },
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def widget(name: str = "w1", size: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": size, **spec},
    }


def deployment(name: str = "web") -> dict[str, Any]:
    """A one-replica nginx Deployment (apps/v1)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "a", "image": "nginx:1"}]},
            },
        },
    }


async def install_crd(api: Any, crd: dict[str, Any], timeout: float = 10.0) -> None:
    """Create ``crd`` and wait until its resources are served (as on a cluster, where a
    new CRD's resources answer 404 for a moment: the embedded server does the same)."""
    from reconcile_kit.testing import eventually

    from .kubehttp import call

    status, body = await call(
        api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
    )
    assert status == 201, body
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    version = crd["spec"]["versions"][0]["name"]

    async def served() -> bool:
        return (await call(api, "GET", f"/apis/{group}/{version}/{plural}"))[0] == 200

    await eventually(served, timeout, interval=0.01, what=f"CRD {crd['metadata']['name']} served")
