"""IPPool: an IP address pool operator (in the spirit of Cluster API's IPAM providers).

An IPPool hands out the addresses of ``spec.cidr`` to the Pods of its namespace annotated
``examples.reconcile-kit.io/pool: <pool name>``::

    apiVersion: examples.reconcile-kit.io/v1
    kind: IPPool
    metadata: {name: lab}
    spec: {cidr: 10.20.0.0/29, releaseTerminating: false}

The reconciler gives each such pod the lowest free address (never the network or the
broadcast address), records it in ``status.allocations`` (``{"10.20.0.1": {"pod": "web",
"namespace": "default"}}``), writes it onto the pod as the annotation
``examples.reconcile-kit.io/ip``, and releases the addresses of pods that are gone (or no
longer ask for this pool). A pod being deleted keeps its address until it is gone, unless
``spec.releaseTerminating``. Pending pods are fine: nothing here needs them to run.

Design:

- **Allocations live in status, not spec.** They are the controller's observations, not the
  user's wishes: writing spec would bump ``metadata.generation`` on every allocation, fight
  ``kubectl apply``/GitOps over the field, and need spec write access. Status can be lost
  (a backup restored without it), so it must be reconstructible from the world: that is
  what the pod annotation is for. A pod whose annotation names a free address of the pool
  gets that address back. A map keyed by address (not a list) lets the PatchHelper's merge
  patch add and remove single allocations.
- **Fresh reads where it matters.** Reconciles get objects from the cache, which may not
  yet hold this controller's previous status write (a pod event can arrive first). Handing
  out an address twice is the one mistake this operator must not make, so it re-reads the
  pool (one GET) before planning. Pods come from the cache: a pod the cache has not seen yet
  is served by the reconcile its event triggers, a gone pod still cached is released by the
  reconcile its deletion triggers.
- **Watches.** ``.watches(Pod, pool_of)`` maps a pod event to the pool its annotation names
  (a deleted pod's last state still names it). The ``generation_changed`` predicate keeps
  the status writes from retriggering the pool. A pod moved to another pool is released by
  the old pool at its next reconcile (any event, or ``resync``).
- **Conditions (kstatus).** ``Ready=True`` with reason ``Reconciled`` (addresses handed out,
  or a new generation seen) or ``OrphansCleaned`` (this run released addresses), kept as is
  when a reconcile changes nothing; ``Ready=False`` and ``Stalled=True`` with reason
  ``PoolFull`` while pods wait for an address, or ``InvalidCIDR``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kr8s import NotFoundError
from kr8s.asyncio.objects import Pod, new_class

from reconcile_kit import (
    Action,
    Context,
    Controller,
    PatchHelper,
    Reasons,
    generation_changed,
    get_condition,
    mark_not_ready,
    mark_ready,
    mark_stalled,
)

GROUP = "examples.reconcile-kit.io"
POOL_ANNOTATION = f"{GROUP}/pool"
IP_ANNOTATION = f"{GROUP}/ip"
CRD_PATH = Path(__file__).resolve().parent / "ippool-crd.yaml"
SAMPLES_PATH = Path(__file__).resolve().parent / "samples" / "ippool.yaml"
POOL_FULL, ORPHANS_CLEANED, INVALID_CIDR = "PoolFull", "OrphansCleaned", "InvalidCIDR"
OWNED = ("Ready", "Stalled")  # conditions no one else writes: ours win a three-way merge

IPPool = new_class("IPPool", f"{GROUP}/v1", namespaced=True, plural="ippools")
"""The kr8s class of the custom resource."""

Allocations = dict[str, dict[str, str]]


def pool_of(pod: dict[str, Any]) -> list[tuple[str, str]]:
    """The mapper: a pod event reconciles the pool its annotation names (same namespace)."""
    meta = pod.get("metadata") or {}
    pool = (meta.get("annotations") or {}).get(POOL_ANNOTATION)
    return [(meta.get("namespace", ""), pool)] if pool else []


@dataclass
class Plan:
    """What one reconcile decided (pure data, see :func:`plan`)."""

    allocations: Allocations
    released: list[str] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)


def plan(
    network: ipaddress.IPv4Network,
    allocations: Allocations,
    pods: list[dict[str, Any]],
    release_terminating: bool,
) -> Plan:
    """The pool's next allocations, given the current ones and its member ``pods``.

    Kept: allocations of member pods, inside ``network``, one per pod (terminating pods'
    too, unless ``release_terminating``). Then, oldest pod first, each live pod without an
    address gets the one its annotation names if that is free (recovery of a lost status),
    else the lowest free one; pods left over wait.
    """
    members = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
    result = Plan(allocations={})
    holders: dict[str, str] = {}  # pod name -> its address
    for ip, holder in sorted(allocations.items(), key=lambda item: _order(item[0])):
        pod = members.get((holder.get("namespace", ""), holder.get("pod", "")))
        address = _address(ip)
        if pod is None or (release_terminating and _terminating(pod)):
            result.released.append(f"{ip} ({holder.get('pod')})")
        elif address is None or address not in network or holder["pod"] in holders:
            result.released.append(f"{ip} ({holder['pod']}: outside {network} or a duplicate)")
        else:
            result.allocations[ip] = holder
            holders[holder["pod"]] = ip
    used = {_address(ip) for ip in result.allocations}
    unserved = [
        p for p in _by_age(pods) if p["metadata"]["name"] not in holders and not _terminating(p)
    ]
    for pod in unserved:  # addresses named by the pods' annotations come first
        claimed = _address((pod["metadata"].get("annotations") or {}).get(IP_ANNOTATION, ""))
        if claimed is not None and claimed in network and claimed not in used:
            used.add(claimed)
            holders[pod["metadata"]["name"]] = str(claimed)
    free = (ip for ip in network.hosts() if ip not in used)  # lowest first, lazily
    for pod in unserved:
        name, namespace = pod["metadata"]["name"], pod["metadata"]["namespace"]
        chosen = holders.get(name) or next((str(a) for a in free), None)
        if chosen is None:
            result.waiting.append(name)
        else:
            result.allocations[chosen] = {"pod": name, "namespace": namespace}
            result.assigned.append(f"{chosen} ({name})")
    return result


async def reconcile(pool: Any, ctx: Context) -> Action | None:
    """Hand out addresses, release orphans, report; then annotate the pods."""
    try:
        await pool.refresh()  # never plan on a cached copy older than our last write
    except NotFoundError:
        return None
    spec, generation = pool.raw.get("spec") or {}, pool.raw["metadata"].get("generation")
    async with PatchHelper(pool, observed_generation=True, owned_conditions=OWNED):
        try:
            network = ipaddress.IPv4Network(spec.get("cidr", ""), strict=True)
        except ValueError as error:
            mark_stalled(pool, INVALID_CIDR, str(error), observed_generation=generation)
            mark_not_ready(pool, INVALID_CIDR, str(error), observed_generation=generation)
            return None
        members = [
            p
            for p in ctx.list(namespace=pool.namespace, kind=Pod)
            if pool_of(p) == [(pool.namespace, pool.name)]
        ]
        status = pool.raw.setdefault("status", {})
        result = plan(
            network, status.get("allocations") or {}, members, bool(spec.get("releaseTerminating"))
        )
        if result.allocations:
            status["allocations"] = result.allocations
        else:
            status.pop("allocations", None)
        capacity = max(network.num_addresses - (2 if network.prefixlen < 31 else 0), 0)
        status["allocated"] = len(result.allocations)
        status["free"] = capacity - len(result.allocations)
        summary = f"{len(result.allocations)} of {capacity} addresses allocated"
        _report(pool, ctx, result, summary, generation)
    await _annotate(ctx, members, result.allocations)
    return None


def _report(pool: Any, ctx: Context, result: Plan, summary: str, generation: int) -> None:
    """Set the conditions; record an Event when one changes (never on a no-op reconcile)."""
    ready = get_condition(pool, "Ready") or {}
    if result.waiting:
        message = f"no address left for {_some(result.waiting)}; {summary}"
        changed = mark_stalled(pool, POOL_FULL, message, observed_generation=generation)
        changed |= mark_not_ready(pool, POOL_FULL, message, observed_generation=generation)
        event = ("Warning", POOL_FULL, message)
    elif result.released:
        message = f"released {_some(result.released)}; {summary}"
        changed = mark_ready(pool, ORPHANS_CLEANED, message, observed_generation=generation)
        event = ("Normal", ORPHANS_CLEANED, message)
    elif (
        result.assigned
        or ready.get("status") != "True"
        or (ready.get("observedGeneration") != generation)
    ):
        changed = mark_ready(pool, Reasons.RECONCILED, summary, observed_generation=generation)
        event = ("Normal", Reasons.RECONCILED, summary)
    else:
        return  # nothing happened: keep the conditions, so nothing is written
    ctx.log.info("%s: %s", event[1], event[2])
    if changed:
        ctx.recorder.event(pool, *event)


async def _annotate(ctx: Context, pods: list[dict[str, Any]], allocations: Allocations) -> None:
    """Write each live pod's address onto it (removed from a pod that has none)."""
    address = {holder["pod"]: ip for ip, holder in allocations.items()}
    for raw in pods:
        annotations = raw["metadata"].get("annotations") or {}
        wanted = address.get(raw["metadata"]["name"])
        if _terminating(raw) or annotations.get(IP_ANNOTATION) == wanted:
            continue
        # server-side apply of this one annotation: applied without it, it goes (this
        # controller set it); the pod's other fields and annotations are not touched
        meta: dict[str, Any] = {
            "name": raw["metadata"]["name"],
            "namespace": raw["metadata"]["namespace"],
        }
        if wanted is not None:
            meta["annotations"] = {IP_ANNOTATION: wanted}
        await ctx.apply(Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta}, api=ctx.api))


def controller(
    api: Any = None, *, namespace: str | None = None, resync: float | None = None
) -> Controller:
    """The IPPool controller: pools (spec changes only) and the pods that name them."""
    return Controller(
        IPPool,
        api=api,
        namespace=namespace,
        name="ippool",
        predicates=[generation_changed],
        resync=resync,
    ).watches(Pod, pool_of)


def _address(text: str) -> ipaddress.IPv4Address | None:
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        return None


def _order(text: str) -> tuple[int, str]:
    address = _address(text)
    return (0, f"{int(address):010d}") if address is not None else (1, text)


def _some(items: list[str], limit: int = 5) -> str:
    """``a, b, c`` -- at most ``limit`` of them, so that a message stays short."""
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _terminating(pod: dict[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _by_age(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        pods, key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"])
    )
