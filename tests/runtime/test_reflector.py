"""Reflector and store against the embedded API server, asserting on its request log."""

from __future__ import annotations

import asyncio
from typing import Any

import kr8s
import orjson
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.runtime import reflector as reflector_module
from reconcile_kit.runtime.reflector import Backoff, Reflector, ReflectorEvent
from reconcile_kit.runtime.resources import info_from_class, resolve_kind
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, eventually

from ..conftest import real_time_limit
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"
INFO = info_from_class(ConfigMap)


class Events:
    """Collects reflector events; ``next()`` awaits the next one."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[ReflectorEvent] = asyncio.Queue()

    def __call__(self, event: ReflectorEvent) -> None:
        self.queue.put_nowait(event)

    async def next(self) -> tuple[str, str]:
        event = await asyncio.wait_for(self.queue.get(), 5)
        return event.type, event.obj["metadata"]["name"]


class Sleeps:
    """A sleep that records the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


async def started(reflector: Reflector) -> Events:
    events = Events()
    reflector.subscribe(events)
    reflector.start()
    await asyncio.wait_for(reflector.wait_synced(), 5)
    return events


async def watch_opened(server: APIServer, count: int) -> None:
    await eventually(
        lambda: server.requests.count(verb="watch") >= count and server.open_watches > 0,
        interval=0.001,
        what=f"watch #{count} open",
    )


async def test_paginated_list_then_watch(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    for i in range(7):
        await call(
            kube,
            "POST",
            CM,
            {"metadata": {"name": f"cm{i}", "managedFields": [], "labels": {"i": str(i)}}},
        )
    reflector = Reflector(kube, INFO, namespace="default", page_size=3)
    events = await started(reflector)
    lists = apiserver.requests.filter(verb="list")
    assert [r.query.get("limit") for r in lists] == ["3", "3", "3"]
    assert [bool(r.query.get("continue")) for r in lists] == [False, True, True]
    assert len(reflector.store) == 7
    synced_rv = reflector.last_sync_resource_version()
    assert synced_rv == str(apiserver.cluster.store.rv)
    assert "managedFields" not in reflector.store.get("default", "cm0")["metadata"]
    assert reflector.store.get("default", "cm0")["kind"] == "ConfigMap"
    assert [await events.next() for _ in range(7)] == [("ADDED", f"cm{i}") for i in range(7)]
    await watch_opened(apiserver, 1)
    await call(kube, "PATCH", f"{CM}/cm1", {"data": {"k": "v"}}, MERGE)
    await call(kube, "DELETE", f"{CM}/cm2")
    await call(kube, "POST", CM, {"metadata": {"name": "new"}})
    assert [await events.next() for _ in range(3)] == [
        ("MODIFIED", "cm1"),
        ("DELETED", "cm2"),
        ("ADDED", "new"),
    ]
    assert reflector.store.get("default", "cm1")["data"] == {"k": "v"}
    watch = apiserver.requests.filter(verb="watch")[0]
    assert watch.query["allowWatchBookmarks"] == "true" and watch.query["timeoutSeconds"]
    assert watch.query["resourceVersion"] == synced_rv
    await reflector.stop()


async def test_pages_of_large_objects_ask_for_fewer(
    kube: kr8s.asyncio.Api, apiserver: APIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first page asks for FIRST_PAGE objects, the next ones for as many as the first
    # page's average size fits in PAGE_BYTES (the decoded page is the LIST's peak)
    monkeypatch.setattr(reflector_module, "FIRST_PAGE", 2)
    monkeypatch.setattr(reflector_module, "PAGE_BYTES", 250_000)
    for i in range(12):
        await call(
            kube, "POST", CM, {"metadata": {"name": f"cm{i:02}"}, "data": {"k": "x" * 50_000}}
        )
    reflector = Reflector(kube, INFO, namespace="default")
    await started(reflector)
    lists = apiserver.requests.filter(verb="list")
    assert [r.query.get("limit") for r in lists] == ["2", "4", "4", "4"]
    assert sorted(name for _, name in reflector.store.list_keys()) == [
        f"cm{i:02}" for i in range(12)
    ]
    await reflector.stop()


async def test_closed_stream_resumes_without_relist(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    reflector = Reflector(kube, INFO, namespace="default")
    events = await started(reflector)
    await watch_opened(apiserver, 1)
    _, created = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    assert await events.next() == ("ADDED", "a")
    apiserver.close_watches()
    await watch_opened(apiserver, 2)
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    assert await events.next() == ("MODIFIED", "a")
    assert apiserver.requests.count(verb="list") == 1
    second = apiserver.requests.filter(verb="watch")[1]
    assert second.query["resourceVersion"] == created["metadata"]["resourceVersion"]
    await reflector.stop()


async def test_bookmarks_advance_the_resource_version() -> None:
    async with APIServer(bookmark_interval=0.02) as server:
        api = await server.api()
        reflector = Reflector(api, INFO, namespace="default")
        await started(reflector)
        await watch_opened(server, 1)
        await call(
            api,
            "POST",
            "/api/v1/namespaces/kube-system/configmaps",
            {"metadata": {"name": "elsewhere"}},
        )
        target = str(server.cluster.store.rv)
        await eventually(lambda: reflector.last_sync_resource_version() == target)
        server.close_watches()
        await watch_opened(server, 2)
        assert server.requests.filter(verb="watch")[1].query["resourceVersion"] == target
        await reflector.stop()


async def test_expired_resource_version_relists_and_sees_deletions(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    for name in ("a", "b"):
        await call(kube, "POST", CM, {"metadata": {"name": name}})
    reflector = Reflector(kube, INFO, namespace="default")
    events = await started(reflector)
    assert {await events.next(), await events.next()} == {("ADDED", "a"), ("ADDED", "b")}
    await watch_opened(apiserver, 1)
    apiserver.faults.latency(0.3, verb="watch", times=1)
    apiserver.close_watches()
    # the delayed watch has arrived
    await eventually(lambda: apiserver.requests.count(verb="watch") >= 2, interval=0.001)
    await call(kube, "DELETE", f"{CM}/a")
    await call(kube, "PATCH", f"{CM}/b", {"data": {"k": "v"}}, MERGE)
    apiserver.compact()
    assert [await events.next(), await events.next()] == [("MODIFIED", "b"), ("DELETED", "a")]
    assert apiserver.requests.count(verb="list") == 2  # relisted once
    assert reflector.store.list_keys() == [("default", "b")]
    await reflector.stop()


async def test_errors_back_off_and_honour_retry_after(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    sleeps = Sleeps()
    apiserver.faults.fail(500, verb="list", times=2)
    apiserver.faults.fail(429, verb="list", times=1, retry_after=7)
    reflector = Reflector(
        kube, INFO, namespace="default", sleep=sleeps, backoff=Backoff(rng=lambda: 0.0)
    )
    await started(reflector)
    # answered failures do not compound, the first is retried quickly; Retry-After
    assert sleeps.delays == [0.1, 0.8, 7.0]
    assert apiserver.requests.count(verb="list") == 4
    await reflector.stop()


async def test_failures_the_server_answers_do_not_compound(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A server that answers (500, 409, 410) is up: each retry backs off from the start
    instead of after the failures before it (after an API server restart and two injected
    faults the cache was 12 s behind)."""
    sleeps = Sleeps()

    async def sleep(delay: float) -> None:
        await sleeps(delay)
        if len(sleeps.delays) == 2:  # after the second failed watch: the relist fails too
            apiserver.faults.fail(500, verb="list", times=1)

    reflector = Reflector(
        kube, INFO, namespace="default", sleep=sleep, backoff=Backoff(rng=lambda: 0.0)
    )
    apiserver.faults.fail(500, verb="watch", times=2)
    apiserver.faults.fail(410, verb="watch", times=1)
    await started(reflector)
    await eventually(lambda: apiserver.requests.count(verb="list") == 3, 10, interval=0.01)
    # answered: never 1.6 or 3.2; the first after a success (a LIST stored) is quick
    assert sleeps.delays == [0.1, 0.8, 0.1]
    await reflector.stop()


async def test_error_handlers_see_each_failure_and_cannot_stop_the_reflector(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """``on_error`` (client-go's WatchErrorHandler) gets every failed LIST and WATCH before
    the backoff; a handler that raises is logged and the reflector goes on."""
    seen: list[int | None] = []

    def broken(error: Exception) -> None:
        raise RuntimeError("a broken handler")

    reflector = Reflector(
        kube, INFO, namespace="default", sleep=Sleeps(), backoff=Backoff(rng=lambda: 0.0)
    )
    reflector.on_error += [broken, lambda error: seen.append(getattr(error, "status", None))]
    apiserver.faults.fail(500, verb="list", times=1)
    apiserver.faults.fail(503, verb="watch", times=1)
    apiserver.faults.fail(410, verb="watch", times=1)
    await started(reflector)
    # answered failures in order (a connection the server drops may add unanswered ones)
    await eventually(lambda: [s for s in seen if s] == [500, 503, 410], 10, interval=0.01)
    await call(kube, "POST", CM, {"metadata": {"name": "after"}})
    await eventually(lambda: reflector.store.get("default", "after") is not None, 10)
    await reflector.stop()


def test_backoff_sequence_and_reset() -> None:
    backoff = Backoff(rng=lambda: 0.5)
    delays = [backoff.next() for _ in range(8)]
    assert delays == pytest.approx([1.2, 2.4, 4.8, 5.0, 5.0, 5.0, 5.0, 5.0])  # capped at 5 s
    backoff.reset()
    assert backoff.next() == pytest.approx(1.2)
    assert Backoff(rng=lambda: 0.0).next() == 0.8


def test_answered_errors_retry_quickly_once_then_from_the_initial_delay() -> None:
    """An error the server answered is a transient fault until it repeats: the first since
    a success is retried after ``quick``, the next ones after ``initial`` (never growing),
    and a success makes the next one quick again."""
    backoff = Backoff(rng=lambda: 0.5)
    backoff.next()
    backoff.next()  # grown to 3.2 by errors the server did not answer
    assert [backoff.answered() for _ in range(3)] == pytest.approx([0.15, 1.2, 1.2])
    assert backoff.next() == pytest.approx(1.2)  # from the initial delay again
    backoff.reset()
    assert backoff.answered() == pytest.approx(0.15)
    assert Backoff(initial=0.05, rng=lambda: 0.0).answered() == 0.05  # quick <= initial


async def test_indexers(kube: kr8s.asyncio.Api) -> None:
    _, owner = await call(kube, "POST", CM, {"metadata": {"name": "owner"}})
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    await call(
        kube,
        "POST",
        CM,
        {"metadata": {"name": "child", "ownerReferences": [ref], "labels": {"team": "x"}}},
    )
    await call(
        kube, "POST", "/api/v1/namespaces/kube-system/configmaps", {"metadata": {"name": "sys"}}
    )
    reflector = Reflector(
        kube, INFO, indexers={"team": lambda o: [o["metadata"].get("labels", {}).get("team", "")]}
    )
    await started(reflector)
    names = [
        o["metadata"]["name"] for o in reflector.store.by_index("owner", owner["metadata"]["uid"])
    ]
    assert names == ["child"]
    assert [o["metadata"]["name"] for o in reflector.store.list("kube-system")] == ["sys"]
    assert [o["metadata"]["name"] for o in reflector.store.by_index("team", "x")] == ["child"]
    with pytest.raises(KeyError):
        reflector.store.by_index("nope", "x")
    await reflector.stop()


async def test_handler_errors_do_not_stop_the_reflector(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    reflector = Reflector(kube, INFO, namespace="default")
    events = await started(reflector)

    def broken(event: ReflectorEvent) -> None:
        raise RuntimeError("mapper bug")

    reflector.subscribe(broken)
    await watch_opened(apiserver, 1)
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    await call(kube, "POST", CM, {"metadata": {"name": "b"}})
    assert [await events.next(), await events.next()] == [("ADDED", "a"), ("ADDED", "b")]
    assert "ConfigMap default/a: event handler failed" in caplog.text
    await reflector.stop()


async def test_pool_shares_one_reflector(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    pool = ReflectorPool()
    info = await resolve_kind(kube, "ConfigMap")
    first = pool.acquire(kube, info, namespace="default")
    second = pool.acquire(kube, info, namespace="default")
    other = pool.acquire(kube, info, namespace="kube-system")
    assert first is second and first is not other and len(pool) == 2
    await asyncio.wait_for(first.wait_synced(), 5)
    await asyncio.wait_for(other.wait_synced(), 5)
    assert apiserver.requests.count(verb="list") == 2
    await pool.release(first)
    assert len(pool) == 2
    await pool.release(second)
    await pool.release(other)
    assert len(pool) == 0


async def test_resolve_kind(kube: kr8s.asyncio.Api) -> None:
    deploy = await resolve_kind(kube, "Deployment")
    assert (deploy.api_version, deploy.plural, deploy.namespaced, deploy.ref_kind) == (
        "apps/v1",
        "deployments",
        True,
        "Deployment.apps",
    )
    assert (await resolve_kind(kube, "namespaces")).namespaced is False
    with pytest.raises(ValueError, match="'Nope' is not served"):
        await resolve_kind(kube, "Nope")


async def test_a_watch_events_state_is_kept_for_its_read_and_a_lists_is_not(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Reflector.keep_decoded from a handler (as a controller's, for what it queues): a
    watch event's state is read back as that very object, once; the initial LIST's are
    not kept (their memory stays compact: RSS growth 1.124x -> 1.092x the JSON at 10,000
    Widgets)."""
    for name in ("a", "b"):
        await call(kube, "POST", CM, {"metadata": {"name": name}})
    reflector = Reflector(kube, INFO, namespace="default", compact=True)
    events = Events()

    def keep(event: ReflectorEvent) -> None:
        meta = event.obj["metadata"]
        reflector.keep_decoded(meta["namespace"], meta["name"], event.obj)
        events(event)

    reflector.subscribe(keep)
    reflector.start()
    await asyncio.wait_for(reflector.wait_synced(), 5)
    listed = [await asyncio.wait_for(events.queue.get(), 5) for _ in range(2)]
    for event in listed:
        assert reflector.read("default", event.obj["metadata"]["name"]).obj is not event.obj
    await call(kube, "PATCH", f"{CM}/a", {"metadata": {"labels": {"x": "1"}}}, MERGE)
    changed = await asyncio.wait_for(events.queue.get(), 5)
    assert (changed.type, changed.obj["metadata"]["labels"]) == ("MODIFIED", {"x": "1"})
    assert reflector.read("default", "a").obj is changed.obj
    again = reflector.read("default", "a").obj
    assert again == changed.obj and again is not changed.obj
    await reflector.stop()


@pytest.mark.parametrize("compact", [True, False])
async def test_compact_and_plain_stores_behave_alike(
    kube: kr8s.asyncio.Api, apiserver: APIServer, compact: bool
) -> None:
    for name in ("same", "changed", "gone"):
        await call(kube, "POST", CM, {"metadata": {"name": name, "labels": {"team": "a"}}})
    team = {"team": lambda o: [o["metadata"].get("labels", {}).get("team", "")]}
    reflector = Reflector(kube, INFO, namespace="default", indexers=team, compact=compact)
    assert reflector.store.compact is compact
    events = await started(reflector)
    assert sorted([await events.next() for _ in range(3)]) == [
        ("ADDED", "changed"),
        ("ADDED", "gone"),
        ("ADDED", "same"),
    ]
    await watch_opened(apiserver, 1)
    apiserver.faults.latency(0.3, verb="watch", times=1)
    apiserver.close_watches()
    await eventually(lambda: apiserver.requests.count(verb="watch") >= 2, interval=0.001)
    await call(kube, "PATCH", f"{CM}/changed", {"metadata": {"labels": {"team": "b"}}}, MERGE)
    await call(kube, "DELETE", f"{CM}/gone")
    apiserver.compact()
    first = await asyncio.wait_for(events.queue.get(), 5)
    assert (first.type, first.obj["metadata"]["name"]) == ("MODIFIED", "changed")
    assert first.old is not None and first.old["metadata"]["labels"] == {"team": "a"}
    assert await events.next() == ("DELETED", "gone")
    assert events.queue.empty()  # the unchanged object was not dispatched again
    assert reflector.store.list_keys() == [("default", "changed"), ("default", "same")]
    assert [o["metadata"]["name"] for o in reflector.store.by_index("team", "a")] == ["same"]
    assert reflector.store.keys_by_index("team", "b") == [("default", "changed")]
    read = reflector.store.get("default", "same")
    assert read is not None
    read["metadata"]["labels"]["team"] = "mutated"
    again = reflector.store.get("default", "same")
    assert again is not None
    # a compact store hands out a new dict on every read; a plain one shares its own
    assert (again["metadata"]["labels"]["team"] == "a") is compact
    await reflector.stop()


def test_a_noted_decoded_state_is_the_next_events_old_state() -> None:
    """StoreWriter.note_decoded: the next change of the key takes the noted object as its
    old state (no decode); a note of a state no longer stored is ignored; notes go with
    the change they were for, and are bounded."""
    from reconcile_kit.runtime.storewriter import DECODED_HINTS, StoreWriter

    def cm(name: str, rv: str) -> dict[str, object]:
        return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}

    writer = StoreWriter(compact=True)
    writer.put(cm("a", "1"))
    read = writer.store.entry("ns", "a")
    writer.note_decoded(("ns", "a"), read.token, read.obj)
    assert writer.put(cm("a", "2")) is read.obj  # the echo of the write: no decode
    assert writer.put(cm("a", "3")) == cm("a", "2")  # the note went with that change

    stale = writer.store.entry("ns", "a")
    writer.put(cm("a", "4"))  # the store moved on before the note
    writer.note_decoded(("ns", "a"), stale.token, stale.obj)
    old = writer.put(cm("a", "5"))
    assert old == cm("a", "4") and old is not stale.obj

    for i in range(DECODED_HINTS + 10):
        writer.put(cm(f"n{i}", "1"))
        entry = writer.store.entry("ns", f"n{i}")
        writer.note_decoded(("ns", f"n{i}"), entry.token, entry.obj)
    assert len(writer._decoded) == DECODED_HINTS
    for i in range(DECODED_HINTS + 10):
        writer.remove(cm(f"n{i}", "1"))
    assert not writer._decoded and len(writer) == 1


def test_a_kept_decoded_state_is_read_once_while_it_is_the_one_stored() -> None:
    """StoreWriter.keep_decoded: the next read of the key returns the kept object itself
    (no decode), once; a state replaced since is not returned (a fresh decode instead) and
    serves as the next change's old state; at most KEPT_BYTES of stored JSON are kept."""
    from reconcile_kit.runtime.storewriter import KEPT_BYTES, StoreWriter

    def cm(name: str, rv: str, data: str = "") -> dict[str, object]:
        meta = {"name": name, "namespace": "ns", "resourceVersion": rv}
        return {"metadata": meta, "data": {"d": data}}

    writer = StoreWriter(compact=True)
    first = cm("a", "1")
    writer.put(first)
    writer.keep_decoded(("ns", "a"), first)
    obj, token = writer.read(("ns", "a"))
    assert obj is first and token is writer.items[("ns", "a")]
    again, _ = writer.read(("ns", "a"))
    assert again == first and again is not first  # read once

    second = cm("a", "2")
    writer.put(second)
    writer.keep_decoded(("ns", "a"), second)
    assert writer.put(cm("a", "3")) is second  # the next change's old state, no decode
    obj, _ = writer.read(("ns", "a"))
    assert obj == cm("a", "3")

    big = "x" * 10_000
    kept = []
    for i in range(KEPT_BYTES // 10_000 + 20):
        state = cm(f"n{i}", "1", big)
        writer.put(state)
        writer.keep_decoded(("ns", f"n{i}"), state)
        kept.append(state)
    assert 0 < writer._kept_bytes <= KEPT_BYTES
    held = [i for i, state in enumerate(kept) if writer.read(("ns", f"n{i}"))[0] is state]
    assert held == list(range(len(held))) and len(held) < len(kept)  # the first ones
    assert writer._kept_bytes == 0 and not writer._kept


def test_a_resource_version_is_read_from_bytes_only_when_it_is_the_one_such_field() -> None:
    """resource_version_in: metadata's resourceVersion when it is the only string field of
    that name; None (decode instead) when a label, annotation or other field has the name,
    or there is none; the name inside a string value is not a field."""
    from reconcile_kit.meta.objects import resource_version_in

    def line(obj: dict[str, Any]) -> bytes:
        return orjson.dumps({"type": "MODIFIED", "object": obj})

    meta = {"name": "a", "resourceVersion": "42"}
    assert resource_version_in(line({"metadata": meta})) == "42"
    quoted = {**meta, "annotations": {"x": '{"resourceVersion":"7"}'}}
    assert resource_version_in(line({"metadata": quoted})) == "42"
    annotated = {"annotations": {"resourceVersion": "7"}, **meta}
    assert resource_version_in(line({"metadata": annotated})) is None
    assert resource_version_in(line({"metadata": meta, "spec": {"resourceVersion": "7"}})) is None
    assert resource_version_in(line({"metadata": {"name": "a"}})) is None
    assert resource_version_in(b'{"resourceVersion":"4') is None  # cut short


async def test_an_expected_state_is_its_events_object_unless_its_line_is_ambiguous(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Reflector.expect: the watch event carrying an expected state's resourceVersion is
    stored and dispatched as that state without decoding its line; a line where the
    resourceVersion cannot be told from the bytes (an annotation of that name) is decoded
    (the expected state is not taken), and a relist forgets what was expected."""
    await call(kube, "POST", CM, {"metadata": {"name": "plain"}})
    await call(kube, "POST", CM, {"metadata": {"name": "tricky"}})
    reflector = Reflector(kube, INFO, namespace="default")
    events = Events()
    reflector.subscribe(events)
    reflector.start()
    await asyncio.wait_for(reflector.wait_synced(), 5)
    assert sorted([await events.next(), await events.next()]) == [
        ("ADDED", "plain"),
        ("ADDED", "tricky"),
    ]
    await watch_opened(apiserver, 1)

    # the server's next resourceVersion, expected with a state the server never sent
    sentinel = {"metadata": {"name": "plain", "namespace": "default"}, "marker": "expected"}
    sentinel["metadata"]["resourceVersion"] = str(apiserver.cluster.store.rv + 1)
    reflector.expect(sentinel)
    await call(kube, "PATCH", f"{CM}/plain", {"data": {"k": "v"}}, MERGE)
    event = await asyncio.wait_for(events.queue.get(), 5)
    assert event.type == "MODIFIED" and event.obj is sentinel
    assert reflector.store.get("default", "plain") == sentinel
    assert not reflector._expected

    other = {"metadata": {"name": "tricky", "namespace": "default"}, "marker": "expected"}
    other["metadata"]["resourceVersion"] = str(apiserver.cluster.store.rv + 1)
    reflector.expect(other)
    patch = {"metadata": {"annotations": {"resourceVersion": "1"}}}
    await call(kube, "PATCH", f"{CM}/tricky", patch, MERGE)
    event = await asyncio.wait_for(events.queue.get(), 5)
    assert event.obj is not other and "marker" not in event.obj
    assert event.obj["metadata"]["annotations"] == {"resourceVersion": "1"}
    assert reflector._expected  # not taken: the line was decoded

    await reflector._list()
    assert not reflector._expected
    await reflector.stop()


async def test_watch_events_split_across_chunks_arrive_whole(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Events of 200 KB (many TLS records and reads each) and small ones in between reach
    the store whole and in order (the watch splits its chunks into lines itself)."""
    await call(kube, "POST", CM, {"metadata": {"name": "big"}})
    reflector = Reflector(kube, INFO, namespace="default")
    events = await started(reflector)
    assert await events.next() == ("ADDED", "big")
    await watch_opened(apiserver, 1)
    for step in range(3):
        await call(kube, "PATCH", f"{CM}/big", {"data": {"k": str(step) * 200_000}}, MERGE)
        await call(kube, "POST", CM, {"metadata": {"name": f"small{step}"}})
    seen = [await events.next() for _ in range(6)]
    assert seen == [
        (kind, name)
        for step in range(3)
        for kind, name in (
            ("MODIFIED", "big"),
            ("ADDED", f"small{step}"),
        )
    ]
    assert reflector.store.get("default", "big")["data"] == {"k": "2" * 200_000}
    await reflector.stop()


def test_watch_lines_are_split_wherever_the_chunks_end() -> None:
    """Reflector._on_lines: every complete line once, blank lines skipped, the rest kept
    for the next chunk, whatever the chunk boundaries."""
    lines = [b'{"a":1}', b"", b'{"b":"' + b"x" * 5000 + b'"}', b"  ", b'{"c":3}']
    stream = b"\n".join(lines) + b"\n" + b'{"d":'
    for size in (1, 2, 7, 64, 4096, len(stream)):
        reflector = Reflector.__new__(Reflector)
        got: list[bytes] = []
        reflector._on_line = got.append  # type: ignore[method-assign]
        pending = b""
        for at in range(0, len(stream), size):
            chunk = stream[at : at + size]
            pending = reflector._on_lines(pending + chunk if pending else chunk)
        assert got == [lines[0], lines[2], lines[4]], size
        assert pending == b'{"d":'


async def test_relist_ends_the_watch_and_returns_once_a_new_list_is_stored(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """``relist()`` while watching: the watch ends, a LIST runs, ``relist`` returns once it
    is stored, then the watch resumes from the new LIST. While stopped (a kept store
    missing a deletion), ``relist`` returns only after the run's LIST dropped the object."""
    for name in ("a", "b"):
        await call(kube, "POST", CM, {"metadata": {"name": name}})
    reflector = Reflector(kube, INFO, namespace="default")
    await started(reflector)
    await watch_opened(apiserver, 1)
    await asyncio.wait_for(reflector.relist(), 5)
    assert apiserver.requests.count(verb="list") == 2 and reflector.lists == 2
    listed_at = reflector.last_sync_resource_version()
    await watch_opened(apiserver, 2)
    listed, watch = (
        apiserver.requests.filter(verb="list")[1],
        apiserver.requests.filter(verb="watch")[1],
    )
    assert apiserver.requests.index(watch) > apiserver.requests.index(listed)
    assert watch.query["resourceVersion"] == listed_at
    await reflector.stop()
    await call(kube, "DELETE", f"{CM}/a")  # not seen: nothing watches
    assert len(reflector.store) == 2
    reflector.start()
    await asyncio.wait_for(reflector.relist(), 5)
    assert reflector.store.list_keys() == [("default", "b")]
    assert apiserver.requests.count(verb="list") == 3
    await reflector.stop()


async def test_relist_waits_through_failed_lists(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A LIST that ``relist()`` asked for and that fails is tried again (after the backoff)
    until one is stored; the reflector does not go back to watching in between (a sharded
    controller waited for its share's relist for a minute after an injected 500)."""
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    sleeps = Sleeps()
    reflector = Reflector(
        kube, INFO, namespace="default", sleep=sleeps, backoff=Backoff(rng=lambda: 0.0)
    )
    await started(reflector)
    await watch_opened(apiserver, 1)
    apiserver.faults.fail(500, verb="list", times=2)
    await asyncio.wait_for(reflector.relist(), 5)
    assert apiserver.requests.count(verb="list") == 4 and sleeps.delays == [0.1, 0.8]
    assert apiserver.requests.count(verb="watch") == 1  # no watch between the tries
    assert "ConfigMap: list failed" in caplog.text
    await reflector.stop()


async def test_relist_ends_a_backoff(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    """``relist()`` while the reflector backs off after a failed watch (the API server was
    down a while: the delay grows to 30 s) lists at once instead of after the delay."""
    backing_off = asyncio.Event()

    async def sleep(delay: float) -> None:
        backing_off.set()
        await asyncio.Event().wait()  # a delay that would outlast the test

    reflector = Reflector(kube, INFO, namespace="default", sleep=sleep)
    apiserver.faults.fail(500, verb="watch", times=1)
    await started(reflector)
    await asyncio.wait_for(backing_off.wait(), 5)
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    await asyncio.wait_for(reflector.relist(), 5)
    assert reflector.store.list_keys() == [("default", "a")]
    await watch_opened(apiserver, 2)  # and then it watches again
    await reflector.stop()


async def test_a_watch_that_delivers_nothing_is_opened_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A watch silent for WATCH_IDLE_TIMEOUT (no event, no bookmark: a stalled connection)
    is opened again from its last resourceVersion, without a LIST (the timeout shortened
    to 0.5 s here)."""
    monkeypatch.setattr(reflector_module, "WATCH_IDLE_TIMEOUT", 0.5)
    async with APIServer(bookmark_interval=10_000.0) as server:  # never, within the test
        api = await server.api()
        reflector = Reflector(api, INFO, namespace="default")
        events = await started(reflector)
        await watch_opened(server, 1)
        _, created = await call(api, "POST", CM, {"metadata": {"name": "a"}})
        assert await events.next() == ("ADDED", "a")
        await watch_opened(server, 2)
        assert reflector.idle_rewatches >= 1
        assert server.requests.count(verb="list") == 1
        second = server.requests.filter(verb="watch")[1]
        assert second.query["resourceVersion"] == created["metadata"]["resourceVersion"]
        await call(api, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
        assert await events.next() == ("MODIFIED", "a")
        await reflector.stop()


@pytest.mark.looptime
async def test_an_idle_watch_is_reopened_every_idle_timeout_on_a_fast_forwarded_clock(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """Forty idle windows of fake time: a watch opened again after each. A timer runs up to
    the clock's resolution early; a watchdog judging the idle time by the clock then found
    it a hair short, armed again for the remainder, and spun at one fake instant forever
    (seen in CI as a test running past faulthandler's 120 s)."""
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    reflector = Reflector(kube, INFO, namespace="default")
    with real_time_limit(30) as limit:
        events = await started(reflector)
        assert await events.next() == ("ADDED", "a")
        for i in range(40):  # heard at odd instants: float error in an idle time is likely
            await asyncio.sleep(0.001 * (i % 7) + 0.000_003 * i)
            await call(kube, "PATCH", f"{CM}/a", {"data": {"i": str(i)}}, MERGE)
            assert await events.next() == ("MODIFIED", "a")
            await asyncio.sleep(reflector_module.WATCH_IDLE_TIMEOUT + 1)
        assert reflector.idle_rewatches == 40
        await reflector.stop()
    assert not limit.expired
    assert apiserver.requests.count(verb="list") == 1


async def test_a_watch_hearing_bookmarks_is_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reflector_module, "WATCH_IDLE_TIMEOUT", 0.5)
    async with APIServer(bookmark_interval=0.1) as server:
        api = await server.api()
        reflector = Reflector(api, INFO, namespace="default")
        await started(reflector)
        await watch_opened(server, 1)
        await asyncio.sleep(1.5)
        assert reflector.idle_rewatches == 0
        assert server.requests.count(verb="watch") == 1
        await reflector.stop()


async def test_a_kind_not_served_is_named_with_its_crd_in_the_warning(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A controller of a typed kind whose CRD was never installed logged only ``404: 404
    page not found`` at each retry (kube-apiserver's plain-text answer); the warning names
    the resource, its group version and the CRD to install, and the LIST goes on until
    the CRD is there."""
    from reconcile_kit.testing import install_crds
    from reconcile_kit.typed import CustomResource, KubeModel

    class GizmoSpec(KubeModel):
        size: int = 1

    class Gizmo(CustomResource, group="missing.example.com", version="v1", kind="Gizmo"):
        spec: GizmoSpec

    sleeps = Sleeps()
    reflector = Reflector(kube, await resolve_kind(kube, Gizmo), namespace="default", sleep=sleeps)
    reflector.start()
    await eventually(lambda: len(sleeps.delays) >= 1, 5, what="a LIST refused")
    assert (
        "Gizmo.missing.example.com: list failed (Gizmo.missing.example.com in namespace "
        "default: GET /apis/missing.example.com/v1/namespaces/default/gizmos: 404: 404 page "
        "not found; gizmos of missing.example.com/v1 is not served: is the "
        "CustomResourceDefinition of Gizmo installed?); retrying in" in caplog.text
    )
    await install_crds(kube, Gizmo)
    await asyncio.wait_for(reflector.wait_synced(), 10)
    await reflector.stop()
