"""ConfigMapGenerator: a custom resource that keeps an owned ConfigMap holding ``spec.content``.

The classic kube-rs ``configmapgen`` example, written with reconcile_kit::

    apiVersion: examples.reconcile-kit.io/v1
    kind: ConfigMapGenerator
    metadata: {name: web-settings}
    spec:
      content: {LOG_LEVEL: info, LISTEN: ":8080"}

becomes a ConfigMap ``web-settings`` whose ``data`` is exactly ``spec.content``.

Design:

- **Ownership.** The ConfigMap has the generator's name and a controller owner reference to
  it (``set_controller_reference``), so the garbage collector deletes it with the generator
  and ``.owns(ConfigMap)`` reconciles the generator whenever its ConfigMap changes: an edit
  or deletion by hand is repaired. A ConfigMap of that name controlled by something else is
  left alone (``Stalled``, reason ``ConfigMapOwnedElsewhere``; its events go to its own
  controller, so the generator requeues itself to look again); an unowned one is adopted.
- **Writing the child.** ``ctx.apply`` server-side applies the ConfigMap the generator asks
  for (field manager ``configmapgenerator``): it creates it, sets the keys of
  ``spec.content``, and removes the keys this controller applied before and no longer
  wants; keys or owner references another writer added are left alone. While neither the
  generator nor its ConfigMap changes, nothing is sent at all.
- **Status.** One ``PatchHelper(observed_generation=True)`` around the reconcile: it sends
  ``status`` to the ``/status`` subresource only when something changed, with
  ``observedGeneration`` set. Conditions follow kstatus: on a new generation the controller
  first writes ``Reconciling=True`` (``helper.patch()`` mid-block), and when done
  ``Ready=True`` with reason ``Reconciled`` (``mark_ready`` drops ``Reconciling``).
- **The cache lags our own writes.** A run triggered by a ConfigMap event may get a cached
  generator that does not yet show the status the previous run wrote. Hence
  ``owned_conditions``: the conditions' three-way merge would otherwise take that previous
  run for "another writer" and raise ConditionConflictError (with them owned, a condition
  already on the server is not written again). And ``Reconciling`` is only written when a
  spec event (created/updated) triggered the run, else a stale ``observedGeneration`` would
  flip it on and off again after the work was done.
- **Events.** The ``generation_changed`` predicate keeps the controller's own status writes
  (which never bump ``metadata.generation``) from triggering it again; events of the owned
  ConfigMaps bypass primary predicates, so drift still reconciles the owner.

Run it with ``reconcile-kit run examples/manager.py:manager --embedded`` (both examples).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kr8s.asyncio.objects import ConfigMap, new_class

from reconcile_kit import (
    Action,
    AlreadyOwnedError,
    Context,
    Controller,
    PatchHelper,
    Reasons,
    ReconcileReason,
    generation_changed,
    mark_not_ready,
    mark_ready,
    mark_reconciling,
    mark_stalled,
    set_controller_reference,
)

GROUP = "examples.reconcile-kit.io"
CRD_PATH = Path(__file__).resolve().parent / "configmapgenerator-crd.yaml"
"""The CustomResourceDefinition (``kubectl apply -f`` it, or let examples/manager.py)."""
SAMPLES_PATH = Path(__file__).resolve().parent / "samples" / "configmapgenerators.yaml"

ConfigMapGenerator = new_class(
    "ConfigMapGenerator", f"{GROUP}/v1", namespaced=True, plural="configmapgenerators"
)
"""The kr8s class of the custom resource."""

GENERATOR_LABEL = f"{GROUP}/generator"
OWNED_ELSEWHERE = "ConfigMapOwnedElsewhere"
OWNED = ("Ready", "Reconciling", "Stalled")
"""The conditions only this controller writes (see ``owned_conditions`` below)."""
SPEC_EVENTS = frozenset({ReconcileReason.CREATED, ReconcileReason.UPDATED})
RECHECK_OWNED_ELSEWHERE = 30.0
"""Seconds until a generator whose ConfigMap name is taken looks again."""


def desired_configmap(generator: Any) -> dict[str, Any]:
    """The ConfigMap ``generator`` asks for: the fields this controller applies."""
    content: dict[str, str] = dict((generator.raw.get("spec") or {}).get("content") or {})
    metadata: dict[str, Any] = {
        "name": generator.name,
        "namespace": generator.namespace,
        "labels": {GENERATOR_LABEL: generator.name},
    }
    configmap: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    if content:
        configmap["data"] = content
    return configmap


async def reconcile(generator: Any, ctx: Context) -> Action | None:
    """Make the generator's ConfigMap hold ``spec.content``; report it in the status."""
    generation = generator.raw["metadata"].get("generation")
    async with PatchHelper(generator, observed_generation=True, owned_conditions=OWNED) as helper:
        status = generator.raw.get("status") or {}
        if ctx.reasons & SPEC_EVENTS and status.get("observedGeneration") != generation:
            mark_reconciling(
                generator,
                Reasons.PROGRESSING,
                f"applying generation {generation}",
                observed_generation=generation,
            )
            await helper.patch()  # kstatus: InProgress while we work on it

        configmap = ConfigMap(desired_configmap(generator), api=ctx.api)
        set_controller_reference(generator, configmap)
        try:
            await ctx.apply(configmap)
        except AlreadyOwnedError as error:
            message = f"ConfigMap {generator.name} belongs to another controller: {error}"
            mark_stalled(generator, OWNED_ELSEWHERE, message, observed_generation=generation)
            mark_not_ready(generator, OWNED_ELSEWHERE, message, observed_generation=generation)
            # not our child, so its deletion would not wake us: look again later
            return Action.requeue(RECHECK_OWNED_ELSEWHERE)

        keys = len((generator.raw.get("spec") or {}).get("content") or {})
        generator.raw.setdefault("status", {}).update({"configMap": generator.name, "keys": keys})
        mark_ready(
            generator,
            Reasons.RECONCILED,
            f"ConfigMap {generator.name} holds {keys} key(s)",
            observed_generation=generation,
        )
    return None


def controller(
    api: Any = None, *, namespace: str | None = None, resync: float | None = None
) -> Controller:
    """The ConfigMapGenerator controller: generators (spec changes only) and their ConfigMaps.

    ``api`` may be None when a Manager supplies it; ``resync``: also reconcile every
    generator this often, in seconds (None: only on events).
    """
    return Controller(
        ConfigMapGenerator,
        api=api,
        namespace=namespace,
        name="configmapgenerator",
        predicates=[generation_changed],
        resync=resync,
    ).owns(ConfigMap)
