"""Typed models used by the tests: one exercising every schema marker."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field

from reconcile_kit.typed import (
    Condition,
    CustomResource,
    IntOrString,
    KubeModel,
    ListType,
    MapType,
    PreserveUnknownFields,
    PrinterColumn,
    Rule,
    Scale,
)


class Tier(StrEnum):
    FRONTEND = "frontend"
    BACKEND = "backend"


class Port(KubeModel):
    """A named port."""

    name: Annotated[str, Field(min_length=1, max_length=15, pattern=r"^[a-z][a-z0-9-]*$")]
    container_port: Annotated[int, Field(ge=1, le=65535)]
    protocol: Literal["TCP", "UDP"] = "TCP"


class GadgetSpec(KubeModel):
    """What a Gadget should be."""

    replicas: Annotated[int, Field(ge=0, le=10)] = 1
    ratio: Annotated[float, Field(gt=0, lt=1)] | None = None
    image: Annotated[str, Field(max_length=40)]
    tier: Tier = Tier.FRONTEND
    ports: Annotated[list[Port], ListType.map("name"), Field(max_length=4)] = Field(
        default_factory=list
    )
    tags: Annotated[list[str], ListType.set()] = Field(default_factory=list)
    selector: Annotated[dict[str, str], MapType.atomic] = Field(default_factory=dict)
    max_surge: IntOrString = "25%"
    extra: Annotated[dict[str, Any], PreserveUnknownFields] = Field(default_factory=dict)
    anything: Any = None
    min_size: int = 0
    max_size: int = 5


class GadgetStatus(KubeModel):
    ready_replicas: int = 0
    conditions: Annotated[list[Condition], ListType.map("type")] = Field(default_factory=list)


class Gadget(
    CustomResource,
    group="typed.example.com",
    version="v1",
    kind="Gadget",
    short_names=["gd"],
    categories=["all"],
    printer_columns=[PrinterColumn("Replicas", ".spec.replicas", "integer")],
    scale=Scale(".spec.replicas", ".status.readyReplicas"),
):
    """A test kind exercising every marker."""

    spec: Annotated[
        GadgetSpec,
        Rule("self.minSize <= self.maxSize", message="minSize must not exceed maxSize"),
    ]
    status: GadgetStatus | None = None
