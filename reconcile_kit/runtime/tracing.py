"""A span per reconcile when OpenTelemetry tracing is on (see
:mod:`reconcile_kit.client.tracing`): ``reconcile <Kind>`` with the object, the reasons,
the attempt, the result and the requeue delay; the API requests the reconcile sends are
its child spans."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..client.tracing import tracer
from .context import Context

__all__ = ["traced"]


def traced(
    reconcile: Callable[[Any, Context], Awaitable[Any]], controller: str
) -> Callable[[Any, Context], Awaitable[Any]]:
    """``reconcile`` in a span per call when tracing is on (checked at each call, so a
    tracer provider set later is used); unchanged behaviour otherwise. An error is
    recorded on the span (status ERROR) and raised as it was."""

    def run(obj: Any, ctx: Context) -> Awaitable[Any]:
        found = tracer()
        if found is None:  # the reconcile's own awaitable: no frame of ours around it
            return reconcile(obj, ctx)
        return _in_span(found, reconcile, obj, ctx, controller)

    return run


async def _in_span(
    found: Any,
    reconcile: Callable[[Any, Context], Awaitable[Any]],
    obj: Any,
    ctx: Context,
    controller: str,
) -> Any:
    """Await ``reconcile(obj, ctx)`` in a span of tracer ``found``."""
    key = ctx.key
    attributes: dict[str, Any] = {
        "k8s.kind": key.kind,
        "k8s.name": key.name,
        "reconcile_kit.controller": controller,
        "reconcile_kit.reasons": sorted(ctx.reasons),
        "reconcile_kit.attempt": ctx.attempt,
    }
    if key.namespace:
        attributes["k8s.namespace"] = key.namespace
    with found.start_as_current_span(
        f"reconcile {key.kind.split('.', 1)[0]}", attributes=attributes
    ) as span:
        try:
            action = await reconcile(obj, ctx)
        except BaseException:
            span.set_attribute("reconcile_kit.result", "error")
            raise
        requeue = getattr(action, "requeue_after", None)
        span.set_attribute(
            "reconcile_kit.result", "success" if requeue is None else "requeue_after"
        )
        if requeue is not None:
            span.set_attribute("reconcile_kit.requeue_after", float(requeue))
        return action
