"""Active-active sharding: managers in one process over one embedded API server, on a
fast-forwarded clock (looptime)."""

from __future__ import annotations

import asyncio
from typing import Any

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller, Manager, set_controller_reference
from reconcile_kit.manager.sharding import Sharding, ring
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

pytestmark = pytest.mark.looptime

LABEL = "shard.reconcile-kit.io/operator"
DRAIN = "drain.shard.reconcile-kit.io/operator"


class Book:
    """Every reconcile's start and end per replica, and any overlap on one key."""

    def __init__(self) -> None:
        self.active: dict[str, str] = {}
        self.overlaps: list[tuple[str, str, str]] = []
        self.runs: list[tuple[str, str]] = []  # (key, replica) in start order
        self.deleted: list[tuple[str, str]] = []  # on_delete calls (key, replica)

    def by(self, key: str) -> set[str]:
        return {who for k, who in self.runs if k == key}


class Replica:
    def __init__(
        self,
        api: Any,
        identity: str,
        book: Book,
        *,
        children: bool = False,
        predicates: Any = (),
        namespace: str = "default",
        lease: tuple[float, float, float] = (3, 2, 0.5),
    ) -> None:
        self.identity = identity
        self.book = book
        self.children = children
        self.sharding = Sharding(
            "operator",
            namespace=namespace,
            identity=identity,
            lease_duration=lease[0],
            renew_deadline=lease[1],
            retry_period=lease[2],
        )
        self.manager = Manager(
            api,
            namespace=namespace,
            sharding=self.sharding,
            graceful_shutdown_timeout=10,
            handle_signals=False,
        )
        controller = Controller(
            ConfigMap, label_selector="app=demo", concurrency=4, predicates=predicates
        )
        if children:
            controller.owns(Secret)
        self.controller = self.manager.add(controller, self.reconcile, on_delete=self.on_delete)
        self.task: asyncio.Task[None] | None = None

    async def reconcile(self, obj: Any, ctx: Context) -> None:
        key = f"{obj.namespace}/{obj.name}"
        other = self.book.active.get(key)
        if other is not None:
            self.book.overlaps.append((key, other, self.identity))
        self.book.active[key] = self.identity
        self.book.runs.append((key, self.identity))
        try:
            assert obj.labels.get(LABEL) == self.identity
            await asyncio.sleep(0.2)  # work, so that a second reconciler would overlap
            if self.children:
                secret = Secret(
                    {"metadata": {"name": obj.name, "namespace": obj.namespace}}, api=ctx.api
                )
                if int(obj.name.rpartition("-")[2]) % 2:
                    set_controller_reference(obj, secret)  # copies the shard label
                else:  # a hand-made reference: ctx.apply copies the shard label
                    secret.raw["metadata"]["ownerReferences"] = [
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "name": obj.name,
                            "uid": obj.metadata.uid,
                            "controller": True,
                        }
                    ]
                await ctx.apply(secret)
        finally:
            if self.book.active.get(key) == self.identity:
                del self.book.active[key]

    async def on_delete(self, obj: Any, ctx: Context) -> None:
        self.book.deleted.append((f"{obj.namespace}/{obj.name}", self.identity))

    def start(self) -> None:
        self.task = asyncio.create_task(self.manager.run())

    async def stop(self) -> None:
        assert self.task is not None
        self.manager.stop()
        await asyncio.wait_for(self.task, 60)

    async def kill(self) -> None:
        """Die without releasing anything (as a killed process would)."""
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    def share(self) -> set[str]:
        reflector = self.controller.reflector
        assert reflector is not None
        return {f"{ns}/{name}" for ns, name in reflector.store.list_keys()}


async def create_configmaps(kube: kr8s.asyncio.Api, count: int, ns: str = "default") -> list[str]:
    for i in range(count):
        body = {"metadata": {"name": f"cm-{i}", "labels": {"app": "demo"}}}
        await call(kube, "POST", f"/api/v1/namespaces/{ns}/configmaps", body)
    return [f"{ns}/cm-{i}" for i in range(count)]


async def owners(kube: kr8s.asyncio.Api, ns: str = "default") -> dict[str, str | None]:
    _, listing = await call(kube, "GET", f"/api/v1/namespaces/{ns}/configmaps")
    return {
        f"{ns}/{item['metadata']['name']}": (item["metadata"].get("labels") or {}).get(LABEL)
        for item in listing["items"]
        if (item["metadata"].get("labels") or {}).get("app") == "demo"
    }


async def settled(
    kube: kr8s.asyncio.Api, replicas: list[Replica], book: Book, ns: str = "default"
) -> bool:
    """Every object labelled with its rendezvous owner among ``replicas``, in exactly
    that replica's cache, not draining, and reconciled by it since."""
    members = [r.identity for r in replicas]
    current = await owners(kube, ns)
    if any(owner != ring.owner(key, members) for key, owner in current.items()):
        return False
    for replica in replicas:
        mine = {key for key, owner in current.items() if owner == replica.identity}
        if replica.share() != mine:
            return False
    last: dict[str, str] = {}
    for key, who in book.runs:
        last[key] = who
    return all(last.get(key) == owner for key, owner in current.items())


async def start_ring(
    kube: kr8s.asyncio.Api, book: Book, replicas: list[Replica], count: int
) -> list[str]:
    """Start ``replicas``, create ``count`` ConfigMaps and wait until each is labelled
    for, cached by and reconciled by its rendezvous owner; returns their keys."""
    for replica in replicas:
        replica.start()
    await eventually(lambda: all(r.manager.ready() for r in replicas), 60, interval=0.05)
    keys = await create_configmaps(kube, count)
    await eventually(lambda: settled(kube, replicas, book), 60, interval=0.1)
    return keys


async def test_shards_hand_over_on_stop_expiry_and_join(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    book = Book()
    a, b, c = (Replica(kube, name, book) for name in ("replica-a", "replica-b", "replica-c"))
    keys = await start_ring(kube, book, [a, b, c], 90)

    # every object reconciled, each by exactly one replica: its rendezvous owner
    for key in keys:
        assert book.by(key) == {ring.owner(key, [a.identity, b.identity, c.identity])}
    shares = [a.share(), b.share(), c.share()]
    assert sum(len(s) for s in shares) == len(keys) and set().union(*shares) == set(keys)
    assert all(shares), "every replica holds a share"

    # a graceful stop of the replica running the sharder: it marks its Lease leaving and
    # moves each of its objects to its rendezvous owner among the others itself (one label
    # write each, from its workers), then stops; another replica takes the sharder over
    sharder = "/apis/coordination.k8s.io/v1/namespaces/default/leases/operator-sharder"
    _, lease = await call(kube, "GET", sharder)
    everyone = [a, b, c]
    c = next(r for r in everyone if r.identity == lease["spec"]["holderIdentity"])
    a, b = (r for r in everyone if r is not c)
    c_objects = c.share()
    await c.stop()
    assert c.controller.stats.drains == len(c_objects)  # each handed over by c itself
    current = await owners(kube)
    assert all(current[key] == ring.owner(key, [a.identity, b.identity]) for key in c_objects)
    await eventually(lambda: settled(kube, [a, b], book), 60, interval=0.1)
    assert all(book.by(key) >= {c.identity} for key in c_objects)

    async def sharder_moved() -> bool:
        _, lease = await call(kube, "GET", sharder)
        return lease["spec"]["holderIdentity"] in (a.identity, b.identity)

    await eventually(sharder_moved, 30, interval=0.1)

    # b stops renewing its Lease (without releasing it): it stops reconciling, and once
    # its Lease expires its objects move to a without a drain
    b_objects = b.share()
    membership = b.manager.membership
    assert membership is not None

    async def no_renewal() -> bool:
        return False

    renew = membership._attempt
    membership._attempt = no_renewal  # type: ignore[method-assign]
    await eventually(lambda: not b.manager.ready(), 30, interval=0.05)
    await eventually(lambda: settled(kube, [a], book), 60, interval=0.1)
    assert b.controller.stats.drains == 0
    assert all(key in a.share() for key in b_objects)

    # renewals work again: b rejoins and takes its share back through drains from a
    membership._attempt = renew  # type: ignore[method-assign]
    await eventually(lambda: settled(kube, [a, b], book), 60, interval=0.1)

    # a new replica joins and takes its share
    d = Replica(kube, "replica-d", book)
    d.start()
    await eventually(lambda: settled(kube, [a, b, d], book), 60, interval=0.1)
    assert d.share()

    # the replica running the sharder is killed outright: another takes the sharder over
    # once its Lease expires, then takes the killed member's Lease over and moves its
    # objects directly
    _, lease = await call(kube, "GET", sharder)
    everyone = [a, b, d]
    killed = next(r for r in everyone if r.identity == lease["spec"]["holderIdentity"])
    survivors = [r for r in everyone if r is not killed]
    await killed.kill()
    await eventually(lambda: settled(kube, survivors, book), 60, interval=0.1)

    assert book.overlaps == []  # never two replicas reconciling one object at once
    assert book.deleted == []  # an object leaving a replica's share is not a deletion
    for replica in survivors:
        await replica.stop()
    assert (await owners(kube)).keys() == set(keys)


async def child_labels(kube: kr8s.asyncio.Api) -> dict[str, str | None]:
    _, listing = await call(kube, "GET", "/api/v1/namespaces/default/secrets")
    return {
        f"default/{item['metadata']['name']}": (item["metadata"].get("labels") or {}).get(LABEL)
        for item in listing["items"]
    }


async def test_children_follow_their_owner_and_probes_report_the_ring(
    kube: kr8s.asyncio.Api,
) -> None:
    book = Book()
    # a predicate filtering every update: drains are acknowledged all the same
    only_new = [lambda event: event.type != "MODIFIED"]
    a, b = (
        Replica(kube, name, book, children=True, predicates=only_new)
        for name in ("replica-a", "replica-b")
    )
    a.manager.health_port = a.manager.metrics_port = 0
    a.manager.metrics_secure = False
    a.manager.host = "127.0.0.1"
    assert not a.manager.ready()
    keys = await start_ring(kube, book, [a, b], 40)

    async def children_follow() -> bool:
        return await child_labels(kube) == await owners(kube) and len(await owners(kube)) == 40

    await eventually(children_follow, 60, interval=0.1)
    # each replica's child cache holds the children of its share only
    for replica in (a, b):
        secrets = replica.controller.sources[0].reflector
        assert secrets is not None
        assert {f"{ns}/{n}" for ns, n in secrets.store.list_keys()} == replica.share()

    c = Replica(kube, "replica-c", book, children=True, predicates=only_new)
    c.start()
    await eventually(lambda: settled(kube, [a, b, c], book), 60, interval=0.1)
    await eventually(children_follow, 60, interval=0.1)
    assert c.share() and book.overlaps == []
    assert a.controller.stats.drains + b.controller.stats.drains == len(c.share())

    status, text, _ = await raw_get(a.manager.ports["/readyz"], "/readyz")
    assert (status, text) == (200, "ok")
    _, metrics, _ = await raw_get(a.manager.ports["/metrics"], "/metrics")
    assert 'reconcile_kit_shard_member{ring="operator",shard="replica-a"} 1.0' in metrics
    labels = 'controller="configmap",ring="operator",shard="replica-a"'
    assert f"reconcile_kit_shard_objects{{{labels}}} {len(a.share())}.0" in metrics

    # a deletion is one: its owner (only) runs on_delete, after a GET saw it gone
    owner = (await owners(kube))["default/cm-0"]
    assert book.deleted == []
    await call(kube, "DELETE", "/api/v1/namespaces/default/configmaps/cm-0")
    await eventually(lambda: book.deleted == [("default/cm-0", owner)], 30, interval=0.05)
    for replica in (a, b, c):
        await replica.stop()
    assert sorted(await owners(kube)) == sorted(keys[1:])
    assert book.deleted == [("default/cm-0", owner)]


async def raw_get(port: int, path: str) -> tuple[int, str, Any]:
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}{path}") as response,
    ):
        return response.status, await response.text(), response.headers


async def test_unsharded_controllers_keep_leader_election(kube: kr8s.asyncio.Api) -> None:
    """In a sharded manager, a controller added with ``sharded=False`` runs on the leader
    only; the sharded one on every member. The sharder reports its work in metrics."""
    from reconcile_kit import LeaderElection

    book = Book()
    leaders: list[tuple[str, str]] = []
    replicas = [Replica(kube, name, book) for name in ("replica-a", "replica-b")]
    for replica in replicas:
        replica.manager.leader_election = LeaderElection(
            "operator-leader",
            identity=replica.identity,
            lease_duration=3,
            renew_deadline=2,
            retry_period=0.5,
        )

        async def on_leader(obj: Any, ctx: Context, who: str = replica.identity) -> None:
            leaders.append((obj.name, who))

        replica.manager.add(Controller(Secret), on_leader, sharded=False)
        replica.start()
    await eventually(lambda: all(r.manager.ready() for r in replicas), 60, interval=0.05)
    await call(kube, "POST", "/api/v1/namespaces/default/secrets", {"metadata": {"name": "s"}})
    await create_configmaps(kube, 20)
    await eventually(lambda: settled(kube, replicas, book), 60, interval=0.1)
    await eventually(lambda: bool(leaders), 30, interval=0.05)
    leader = [r for r in replicas if r.manager.leader_election.is_leader]  # type: ignore[union-attr]
    assert len(leader) == 1 and {who for _, who in leaders} == {leader[0].identity}
    assert all(r.share() for r in replicas)

    def sample(name: str) -> float:
        return sum(
            r.manager.metrics.registry.get_sample_value(name, {"ring": "operator"}) or 0.0
            for r in replicas
        )

    assert sample("reconcile_kit_shard_assignments_total") == 20
    assert sample("reconcile_kit_shard_assignment_latency_seconds_count") == 20
    assert sample("reconcile_kit_shard_movements_total") == 0  # all new: assigned, not moved
    for replica in replicas:
        await replica.stop()


async def test_a_graceful_stop_serves_each_object_until_its_move(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    book = Book()
    a, b = Replica(kube, "replica-a", book), Replica(kube, "replica-b", book)
    keys = await start_ring(kube, book, [a, b], 60)
    a_objects = sorted(a.share())
    assert len(a_objects) > 16  # more than two windows of moves (2 x concurrency 4)

    # every move (a PATCH) takes 1 s: a's handover of its share takes several seconds
    apiserver.faults.latency(1.0, verb="patch", resource="configmaps")
    stopping = asyncio.create_task(a.stop())
    lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases/operator-replica-a"

    async def leaving() -> bool:
        _, body = await call(kube, "GET", lease)
        return (body["metadata"].get("annotations") or {}).get("reconcile-kit.io/leaving") == "true"

    await eventually(leaving, 30, interval=0.05)
    # a change to the object a moves last, made (by an update: no delay) while the first
    # ones move, is reconciled by a at once, not after the whole share moved
    last = a_objects[-1]
    path = f"/api/v1/namespaces/default/configmaps/{last.partition('/')[2]}"
    _, body = await call(kube, "GET", path)
    body["data"] = {"changed": "yes"}
    runs_before = len(book.runs)
    await call(kube, "PUT", path, body)
    await eventually(lambda: (last, a.identity) in book.runs[runs_before:], 30, interval=0.05)
    assert (await owners(kube))[last] == a.identity  # served by a, not moved yet

    await asyncio.wait_for(stopping, 60)
    apiserver.faults.clear()
    assert a.controller.stats.drains == len(a_objects)  # every object moved by a itself
    await eventually(lambda: settled(kube, [b], book), 60, interval=0.1)
    assert book.overlaps == []
    await b.stop()
    assert set(await owners(kube)) == set(keys)


async def test_replicas_stopping_together_do_not_wait_for_each_other(
    kube: kr8s.asyncio.Api,
) -> None:
    book = Book()
    a, b = Replica(kube, "replica-a", book), Replica(kube, "replica-b", book)
    keys = await start_ring(kube, book, [a, b], 40)

    # both leave at once (a scale-down to zero): each ends its handover once it sees the
    # other leaving, instead of waiting for drain_timeout (graceful_shutdown_timeout, 10 s)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.gather(a.stop(), b.stop())
    assert loop.time() - started < 5
    assert book.overlaps == []
    current = await owners(kube)
    assert set(current) == set(keys) and set(current.values()) <= {a.identity, b.identity}


async def test_an_object_handed_over_and_back_while_the_watch_was_down_is_reconciled(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """An object handed over whose leaving event never came (the watch broke: the
    relist finds it back in the share at a later state, a MODIFIED and not an ADDED) is
    reconciled here again. It stayed "handed over" before, so no replica reconciled it:
    the sharding chaos benchmark's object stuck for 120 s after an API server restart."""
    book = Book()
    a = Replica(kube, "replica-a", book)
    [key] = await start_ring(kube, book, [a], 1)
    controller, reflector = a.controller, a.controller.reflector
    assert reflector is not None and controller.info is not None
    namespace, name = key.split("/")
    raw = reflector.store.get(namespace, name)
    assert raw is not None
    ref = controller.info.ref(raw)
    await reflector.stop()  # the controller's watch is down from here
    side = controller._shard
    assert side is not None
    await side.let_go(ref, raw, controller._context(ref, frozenset(), None), "gone-member")
    assert ref in side.moved
    # the sharder takes it back (no member "gone-member"): labelled for replica-a again
    await eventually(lambda: owner_is(kube, key, a.identity), 30, interval=0.1)
    runs = len(book.runs)
    apiserver.compact()  # the watch cannot resume where it was: the reflector relists
    reflector.start()
    await eventually(lambda: len(book.runs) > runs, 30, interval=0.1)
    assert ref not in side.moved
    await a.stop()


async def owner_is(kube: kr8s.asyncio.Api, key: str, identity: str) -> bool:
    return (await owners(kube)).get(key) == identity


async def test_a_replica_rejoining_lists_the_rings_leases_again(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Whatever cut a replica's renewals (a partition dropping packets) may have left its
    watch of the ring's Leases dead unseen: on rejoining it lists them again."""
    book = Book()
    a, b = Replica(kube, "replica-a", book), Replica(kube, "replica-b", book)
    await start_ring(kube, book, [a, b], 4)

    def ring_lists() -> int:
        return sum(
            1
            for r in apiserver.requests.filter(verb="list", resource="leases")
            if "reconcile-kit.io/ring=operator" in r.query.get("labelSelector", "")
        )

    before = ring_lists()
    membership = b.manager.membership
    assert membership is not None

    async def no_renewal() -> bool:
        return False

    renew = membership._attempt
    membership._attempt = no_renewal  # type: ignore[method-assign]
    await eventually(lambda: not b.manager.ready(), 30, interval=0.05)
    membership._attempt = renew  # type: ignore[method-assign]
    await eventually(lambda: b.manager.ready(), 30, interval=0.05)
    await eventually(lambda: ring_lists() == before + 1, 10, interval=0.05)
    await eventually(lambda: settled(kube, [a, b], book), 60, interval=0.1)
    for replica in (a, b):
        await replica.stop()
