"""Property tests of the store's history: snapshots and replays agree with what happened."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from reconcile_kit.testing.apiserver.store import ADDED, DELETED, Store

NAMES = st.sampled_from(["a", "b", "c", "d"])
OPS = st.lists(
    st.tuples(st.sampled_from(["put", "delete", "noop"]), NAMES, st.integers(0, 3)), max_size=40
)


def _apply(store: Store, op: str, name: str, value: int) -> None:
    current = store.get("k", "ns", name)
    if op == "delete":
        if current is not None:
            store.delete("k", "ns", name)
        return
    obj = {"metadata": {"name": name, "namespace": "ns"}, "data": {"v": str(value)}}
    if current is None:
        store.create("k", obj)
    elif op == "noop":
        store.update("k", copy.deepcopy(current))
    else:
        store.update("k", obj)


@settings(max_examples=200, deadline=None)
@given(OPS, st.integers(1, 50))
def test_state_at_and_events_after_match_history(
    ops: list[tuple[str, str, int]], history: int
) -> None:
    store = Store(history_size=history)
    snapshots = {0: {}}
    for op, name, value in ops:
        before = store.rv
        existed = store.get("k", "ns", name) is not None
        _apply(store, op, name, value)
        if op == "noop" and existed:
            assert store.rv == before  # an unchanged write bumps nothing
        snapshots[store.rv] = {k: v for k, v in store.state_at("k", store.rv).items()}
    current = store.state_at("k", store.rv)
    for rv, snapshot in snapshots.items():
        if store.too_old(rv):
            continue
        assert store.state_at("k", rv) == snapshot
        replayed = dict(snapshot)
        for event in store.events_after(rv):
            ident = ("ns", event.obj["metadata"]["name"])
            if event.type == DELETED:
                del replayed[ident]
            else:
                assert (event.type == ADDED) == (ident not in replayed)
                replayed[ident] = event.obj
        assert replayed == current
    rvs = [e.rv for e in store.events_after(0)]
    assert rvs == sorted(set(rvs))
