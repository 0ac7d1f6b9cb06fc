"""A write's answer takes the state its watch event carried when a reflector decoded it
first (reconcile_kit.patch.recent), and only that object's, at that resourceVersion."""

from __future__ import annotations

from typing import Any

import kr8s
import orjson
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.patch import recent
from reconcile_kit.patch.helper import PatchHelper
from reconcile_kit.patch.recent import RECENT, RecentStates
from reconcile_kit.testing import APIServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


def state(name: str, rv: str, uid: str = "u1", **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default", "uid": uid, "resourceVersion": rv}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **extra}


def test_a_noted_state_is_taken_only_by_its_own_objects_answer() -> None:
    """take: the state the answer's resourceVersion names, when uid, kind and apiVersion
    are the answer's object's; each state is taken once; nothing is noted for long: the
    states go when no write is in flight, and at most RECENT_STATES are held."""
    states = RecentStates()
    assert not states.wanted("v1", "ConfigMap")
    writing = states.begin("v1", "ConfigMap")
    assert states.wanted("v1", "ConfigMap") and not states.wanted("v1", "Secret")
    noted = state("a", "7", data={"k": "v"})
    states.note(noted)
    answer = orjson.dumps(state("a", "7"))
    assert states.take(answer, state("a", "3", uid="u2")) is None  # another object
    states.note(noted)
    assert states.take(answer, {**state("a", "3"), "apiVersion": "v2"}) is None
    states.note(noted)
    assert states.take(answer, state("a", "3")) is noted
    assert states.take(answer, state("a", "3")) is None  # taken already
    states.note(noted)
    ambiguous = orjson.dumps(state("a", "7", data={"resourceVersion": "7"}))
    assert states.take(ambiguous, state("a", "3")) is None  # read from bytes: cannot tell
    for i in range(recent.RECENT_STATES + 5):
        states.note(state(f"n{i}", str(100 + i)))
    assert len(states._states) == recent.RECENT_STATES
    assert states.take(orjson.dumps(state("n0", "100")), state("n0", "1")) is None  # oldest
    states.end(writing)
    assert not states._states and not states.wanted("v1", "ConfigMap")


async def test_an_answer_takes_the_state_noted_for_it(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """PatchHelper adopts the noted state of its answer's resourceVersion and object
    instead of decoding the answer; another object's state (uid) is not taken."""
    status, created = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    assert status == 201
    obj = await ConfigMap.get("a", namespace="default", api=kube)
    held = RECENT.begin("v1", "ConfigMap")  # a write in flight, so the states stay
    try:
        noted = {**created, "marker": "noted"}
        noted["metadata"] = {**created["metadata"]}
        noted["metadata"]["resourceVersion"] = str(apiserver.cluster.store.rv + 1)
        RECENT.note(noted)
        async with PatchHelper(obj):
            obj.raw["data"] = {"k": "v"}
        assert obj.raw["marker"] == "noted"  # the noted state, not the decoded answer

        other = {**noted, "marker": "other"}
        other["metadata"] = {**noted["metadata"], "uid": "another-object"}
        other["metadata"]["resourceVersion"] = str(apiserver.cluster.store.rv + 1)
        RECENT.note(other)
        async with PatchHelper(obj):
            obj.raw["data"] = {"k": "w"}
        assert "marker" not in obj.raw and obj.raw["data"] == {"k": "w"}
    finally:
        RECENT.end(held)
    assert not RECENT.wanted("v1", "ConfigMap") and not RECENT._states
