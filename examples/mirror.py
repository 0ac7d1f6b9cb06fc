"""A small operator: ConfigMaps annotated ``example.com/mirror: "true"`` are mirrored into
a Secret of the same name that the ConfigMap owns (deleting the ConfigMap deletes it).

    reconcile-kit run examples/mirror.py:manager --embedded
"""

from __future__ import annotations

from typing import Any

from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import (
    Action,
    Context,
    Controller,
    Manager,
    PatchHelper,
    annotations_changed,
    any_of,
    resource_version_changed,
    set_controller_reference,
)

ANNOTATION = "example.com/mirror"


async def reconcile(cm: Any, ctx: Context) -> Action | None:
    if (cm.raw["metadata"].get("annotations") or {}).get(ANNOTATION) != "true":
        return None
    secret = await Secret(
        {
            "metadata": {"name": cm.name, "namespace": cm.namespace},
            "stringData": dict(cm.raw.get("data") or {}),
        },
        api=ctx.api,
    )
    set_controller_reference(cm, secret)
    await ctx.apply(secret)
    async with PatchHelper(cm):
        cm.raw["metadata"].setdefault("labels", {})["example.com/mirrored"] = "true"
    ctx.log.info("mirrored %s into a Secret", cm.name)
    return Action.requeue(300)


manager = Manager(name="mirror")
manager.add(
    Controller(ConfigMap, predicates=[any_of(annotations_changed, resource_version_changed)]).owns(
        Secret
    ),
    reconcile,
)
