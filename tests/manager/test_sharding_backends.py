"""Sharding on both backends (``pytest --backend both``): the label selectors, the
DELETED events of objects leaving a selection, conditional Lease takeovers and deletions
behave alike on kube-apiserver. Real time, short Leases, a small ring."""

from __future__ import annotations

from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from .test_sharding import Book, Replica, create_configmaps, owners, settled

LEASE = (2.0, 1.5, 0.25)  # lease_duration, renew_deadline, retry_period (seconds)


async def test_ring_on_both_backends(backend: Backend) -> None:
    ns, kube, book = backend.namespace, backend.api, Book()

    def replica(name: str) -> Replica:
        return Replica(kube, name, book, namespace=ns, lease=LEASE)

    a, b = replica("replica-a"), replica("replica-b")
    for r in (a, b):
        r.start()
    await eventually(lambda: a.manager.ready() and b.manager.ready(), 30, interval=0.05)
    keys = await create_configmaps(kube, 30, ns)
    await eventually(lambda: settled(kube, [a, b], book, ns), 30, interval=0.1)
    assert all(len(book.by(key)) == 1 for key in keys)

    c = replica("replica-c")  # joins: drains from a and b
    c.start()
    await eventually(lambda: settled(kube, [a, b, c], book, ns), 30, interval=0.1)
    assert c.share() and a.controller.stats.drains + b.controller.stats.drains == len(c.share())

    await b.kill()  # its Lease expires; the sharder takes it over and moves its objects
    await eventually(lambda: settled(kube, [a, c], book, ns), 30, interval=0.1)

    c_objects = c.share()
    await c.stop()  # graceful: c hands each of its objects over to a itself, then leaves
    assert c_objects and c.controller.stats.drains == len(c_objects)
    await eventually(lambda: settled(kube, [a], book, ns), 30, interval=0.1)
    assert book.overlaps == []
    await a.stop()
    assert set(await owners(kube, ns)) == set(keys)


async def test_metadata_only_reflector(backend: Backend) -> None:
    """The sharder's reflectors list and watch PartialObjectMetadata: no data crosses."""
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Reflector
    from reconcile_kit.runtime.resources import info_from_class

    ns, kube = backend.namespace, backend.api
    body = {"metadata": {"name": "listed", "namespace": ns}, "data": {"k": "v"}}
    await ConfigMap(body, api=kube).create()
    reflector = Reflector(kube, info_from_class(ConfigMap), namespace=ns, metadata_only=True)
    reflector.start()
    try:
        await eventually(reflector.has_synced, 30, interval=0.05)
        watched = {"metadata": {"name": "watched", "namespace": ns}, "data": {"k": "v"}}
        await ConfigMap(watched, api=kube).create()
        await eventually(lambda: len(reflector.store) == 2, 30, interval=0.05)
        for obj in reflector.store.list():
            assert "data" not in obj
            assert obj["kind"] == "PartialObjectMetadata"
            assert obj["metadata"]["resourceVersion"]
    finally:
        await reflector.stop()
