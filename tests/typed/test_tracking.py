"""Mutation tracking of typed objects: every way a reconcile can change a model marks it,
nothing else does, and a tracked model serializes as an untracked one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, Field

from reconcile_kit.typed import Condition, CustomResource, KubeModel, conditions
from reconcile_kit.typed.reuse import ModelCache
from reconcile_kit.typed.tracking import track, tracker_of, untrack

from .models import Gadget, GadgetStatus, Port


def raw() -> dict[str, Any]:
    return {
        "apiVersion": "typed.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "default", "labels": {"a": "b"}},
        "spec": {
            "image": "nginx",
            "replicas": 2,
            "ports": [{"name": "http", "containerPort": 80}],
            "tags": ["x"],
            "selector": {"app": "g"},
            "extra": {"nested": {"list": [1, 2]}},
            "unknownField": {"kept": [{"deep": True}]},
        },
        "status": {
            "readyReplicas": 2,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Done",
                    "lastTransitionTime": "2026-11-24T10:00:00Z",
                }
            ],
        },
    }


def tracked() -> Gadget:
    model = Gadget.from_raw(raw())
    assert track(model) is not None
    return model


def test_tracking_keeps_the_json_and_starts_clean() -> None:
    model = tracked()
    assert model.to_raw() == Gadget.from_raw(raw()).to_raw()
    tracker = tracker_of(model)
    assert tracker is not None and not tracker.dirty


MUTATIONS: dict[str, Callable[[Gadget], Any]] = {
    "assign a field": lambda m: setattr(m.spec, "replicas", 3),
    "assign a model": lambda m: setattr(m, "status", GadgetStatus()),
    "assign an equal list": lambda m: setattr(m.spec, "tags", ["x"]),
    "assign an unset field its default": lambda m: setattr(m.spec, "min_size", 0),
    "assign an unknown field": lambda m: setattr(m.spec, "newField", 1),
    "delete a field": lambda m: delattr(m.spec, "image"),
    "append to a list": lambda m: m.spec.tags.append("y"),
    "extend a list": lambda m: m.spec.tags.extend(["y"]),
    "+= a list": lambda m: m.spec.tags.__iadd__(["y"]),
    "insert into a list": lambda m: m.spec.ports.insert(0, Port(name="a", container_port=1)),
    "pop a list": lambda m: m.spec.ports.pop(),
    "remove from a list": lambda m: m.spec.tags.remove("x"),
    "clear a list": lambda m: m.spec.tags.clear(),
    "sort a list": lambda m: m.spec.tags.sort(),
    "reverse a list": lambda m: m.spec.tags.reverse(),
    "set a list item": lambda m: m.spec.tags.__setitem__(0, "z"),
    "delete a list item": lambda m: m.spec.tags.__delitem__(0),
    "set a map entry": lambda m: m.spec.selector.__setitem__("app", "h"),
    "delete a map entry": lambda m: m.spec.selector.__delitem__("app"),
    "update a map": lambda m: m.spec.selector.update(x="y"),
    "|= a map": lambda m: m.spec.selector.__ior__({"x": "y"}),
    "setdefault a new key": lambda m: m.spec.selector.setdefault("x", "y"),
    "pop a map": lambda m: m.spec.selector.pop("app"),
    "popitem a map": lambda m: m.spec.selector.popitem(),
    "clear a map": lambda m: m.spec.selector.clear(),
    "label": lambda m: m.metadata.labels.__setitem__("c", "d"),  # type: ignore[union-attr]
    "nested model in a list": lambda m: setattr(m.spec.ports[0], "container_port", 81),
    "condition": lambda m: setattr(m.status.conditions[0], "status", "False"),  # type: ignore[union-attr]
    "Any field, nested": lambda m: m.spec.extra["nested"]["list"].append(3),
    "unknown field, nested": lambda m: m.spec.model_extra["unknownField"]["kept"][0].clear(),  # type: ignore[index]
    "model_extra": lambda m: m.spec.model_extra.__setitem__("other", 1),  # type: ignore[union-attr]
    "replace_with": lambda m: m.replace_with(raw()),
}


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_every_mutation_marks_the_model(mutate: Callable[[Gadget], Any]) -> None:
    model = tracked()
    mutate(model)
    tracker = tracker_of(model)
    assert tracker is not None and tracker.dirty


READS: dict[str, Callable[[Gadget], Any]] = {
    "read fields": lambda m: (m.spec.replicas, m.spec.tags[0], m.metadata.labels),
    "dump": lambda m: (m.to_raw(), m.model_dump(), m.model_dump_json()),
    "assign an equal scalar": lambda m: setattr(m.spec, "replicas", 2),
    "setdefault an existing key": lambda m: m.spec.selector.setdefault("app", "x"),
    "private attribute": lambda m: setattr(m, "_object", object()),
    "shallow copy assigned": lambda m: setattr(m.model_copy(), "kind", "Other"),
    "deep copy mutated": lambda m: m.model_copy(deep=True).spec.tags.append("y"),
    "iterate and compare": lambda m: (list(m.spec.ports), m.spec.selector == {"app": "g"}),
}


@pytest.mark.parametrize("read", READS.values(), ids=READS.keys())
def test_reading_leaves_the_model_clean(read: Callable[[Gadget], Any]) -> None:
    model = tracked()
    read(model)
    tracker = tracker_of(model)
    assert tracker is not None and not tracker.dirty


def test_values_no_tracker_can_watch_leave_the_model_untracked() -> None:
    class Plain(BaseModel):
        x: int = 0

    class Spec(KubeModel):
        plain: Plain = Field(default_factory=Plain)
        names: set[str] = Field(default_factory=set)

    class Odd(CustomResource, group="odd.example.com", version="v1", kind="Odd"):
        spec: Spec

    model = Odd.model_validate({"spec": {"names": ["a"]}})
    assert track(model) is None
    assert tracker_of(model) is None and tracker_of(model.spec) is None
    model.spec.plain.x = 1  # still an ordinary model


def test_untrack_retires_the_tracker() -> None:
    model = tracked()
    tracker = tracker_of(model)
    assert tracker is not None
    untrack(tracker)
    assert tracker.dirty and tracker_of(model) is None


def versioned(version: str) -> dict[str, Any]:
    state = raw()
    state["metadata"]["resourceVersion"] = version
    return state


def test_model_cache_reuses_a_clean_model_of_the_same_state_only() -> None:
    cache: ModelCache[Gadget] = ModelCache(Gadget, size=2)
    state = versioned("1")
    once = cache.get("k", state, None)  # a state's first reconcile: not tracked
    assert tracker_of(once) is None
    cache.release("k", once)
    second = cache.get("k", state, None)  # its second one: tracked from now on
    assert second is not once and tracker_of(second) is not None
    cache.release("k", second)
    assert cache.get("k", state, "obj") is second and second.object == "obj"
    second.spec.tags.append("y")  # the reconcile changes it and fails to write
    cache.release("k", second)
    third = cache.get("k", state, None)
    assert third is not second and third.spec.tags == ["x"]
    cache.release("k", third)
    assert cache.get("k", state, None) is third
    assert cache.get("k", versioned("2"), None) is not third  # a new cached state
    assert tracker_of(third) is None  # no longer tracked
    assert (cache.validations, cache.reuses) == (4, 2)


def test_model_cache_keeps_the_most_recent_keys() -> None:
    cache: ModelCache[Gadget] = ModelCache(Gadget, size=2)
    states = {key: versioned("1") for key in "abc"}
    for key, state in states.items():
        cache.get(key, state, None)
    assert len(cache) == 2
    tracked = cache.get("c", states["c"], None)
    assert tracker_of(tracked) is not None
    assert cache.get("c", states["c"], None) is tracked
    assert tracker_of(cache.get("a", states["a"], None)) is None  # "a" was dropped: new
    without_version = raw()
    assert cache.get("v", without_version, None) is not cache.get("v", without_version, None)
    with pytest.raises(ValueError, match="size must be >= 0"):
        ModelCache(Gadget, size=-1)


def test_condition_model_is_tracked() -> None:
    status = GadgetStatus(conditions=[Condition(type="Ready", status="True")])
    model = Gadget(spec={"image": "x"}, status=status)  # type: ignore[arg-type]
    assert track(model) is not None
    model.status.conditions[0].reason = "Changed"  # type: ignore[union-attr]
    assert tracker_of(model).dirty  # type: ignore[union-attr]


def test_condition_helpers_leave_a_model_clean_when_nothing_changes() -> None:
    model = tracked()
    model.status.conditions[0].message = "all good"  # type: ignore[union-attr]
    model = Gadget.from_raw(model.to_raw())
    tracker = track(model)
    assert tracker is not None
    assert conditions.is_true(model, "Ready")
    assert not conditions.mark_ready(model, "Done", "all good")
    assert not tracker.dirty
    assert conditions.mark_ready(model, "Changed", "all good")
    assert tracker.dirty
    assert model.status.conditions[0].reason == "Changed"  # type: ignore[union-attr]
