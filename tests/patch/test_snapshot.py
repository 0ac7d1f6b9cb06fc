"""LazyBox: Box behaviour, copy-on-access, and snapshots that share the cached document."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import kr8s
import orjson
from box import Box, BoxList
from hypothesis import given, settings
from hypothesis import strategies as st
from kr8s.asyncio.objects import Deployment, new_class

from reconcile_kit.patch.mergepatch import apply_merge_patch, create_merge_patch
from reconcile_kit.patch.snapshot import LazyBox, LazyBoxList, build_object, freeze

keys = st.text("abcxyz-.", min_size=1, max_size=4)
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=3)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)
documents = st.dictionaries(keys, values, max_size=5)


def document() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app.kubernetes.io/name": "web"},
        },
        "spec": {
            "replicas": 1,
            "template": {"spec": {"containers": [{"name": "a", "env": [{"name": "X"}]}]}},
        },
    }


def test_reads_behave_like_box() -> None:
    source = document()
    lazy = LazyBox.over(source)
    assert isinstance(lazy, Box) and lazy == Box(source) == source
    assert lazy.spec.replicas == 1 and lazy["spec"]["template"].spec.containers[0].name == "a"
    assert isinstance(lazy.spec.template.spec.containers, BoxList)
    assert isinstance(lazy.spec.template.spec.containers[0].env[0], Box)
    assert lazy.metadata.labels.app_kubernetes_io_name == "web"  # Box's safe attribute names
    assert lazy.get("missing") is None and lazy.get("spec").replicas == 1
    assert lazy.to_dict() == source and json.loads(json.dumps(lazy)) == source
    assert orjson.loads(orjson.dumps(lazy)) == source
    assert dict(lazy)["metadata"].name == "web" and {**lazy}["spec"].replicas == 1


def test_writes_never_reach_the_source() -> None:
    source = document()
    pristine = copy.deepcopy(source)
    lazy = LazyBox.over(source)
    lazy.spec.replicas = 3
    lazy.metadata.labels["team"] = "a"
    lazy.spec.template.spec.containers[0].env.append({"name": "Y"})
    del lazy.spec.template.spec.containers[0]["name"]
    for value in lazy.values():
        if isinstance(value, dict):
            value["touched"] = True
    for _key, value in lazy.items():
        if isinstance(value, dict):
            value.setdefault("again", 1)
    assert source == pristine
    assert lazy.spec.replicas == 3 and lazy.spec.touched and lazy.metadata.again == 1


def test_assigned_values_are_converted_like_box() -> None:
    lazy = LazyBox.over(document())
    mine = {"a": {"b": [1, {"c": 2}]}}
    lazy.spec.extra = mine
    mine["a"]["b"].append(3)  # as with Box, the tree holds a converted copy
    assert lazy.spec.extra.a.b == [1, {"c": 2}]
    assert isinstance(lazy.spec.extra.a.b[1], Box)


def test_assigned_containers_are_private_copies_wherever_they_enter() -> None:
    """Item assignment, update, append, insert and list item assignment all store a deep
    copy: changing the assigned dict afterwards, at any depth, changes nothing stored."""
    lazy = LazyBox.over(document())
    mine: dict[str, Any] = {"a": {"b": [1, {"c": 2}]}}
    lazy["x"] = mine
    lazy.update(y=mine)
    lazy.z = []
    lazy.z.append(mine)
    lazy.z.insert(0, mine)
    lazy.z[1] = mine
    lazy.z.extend([mine])
    mine["a"]["b"][1]["c"] = 99
    mine["a"]["new"] = True
    expected = {"a": {"b": [1, {"c": 2}]}}
    assert lazy.x == expected and lazy.y == expected and lazy.z == [expected] * 3
    assert all(isinstance(item, LazyBox) for item in lazy.z)
    assert isinstance(lazy.x.a.b[1], Box)


def test_update_leaves_equal_scalars_in_place() -> None:
    """kr8s's ``raw`` re-sets kind and apiVersion on every read: equal values stay, a
    different one is stored."""
    lazy = LazyBox.over(document())
    lazy.update({"kind": "Deployment", "apiVersion": "apps/v1"})
    assert lazy.kind == "Deployment"
    lazy.update({"kind": "Other"})
    assert lazy.kind == "Other" and lazy["kind"] == "Other"


def test_copies_are_independent() -> None:
    source = document()
    lazy = LazyBox.over(source)
    for clone in (copy.copy(lazy), copy.deepcopy(lazy), pickle.loads(pickle.dumps(lazy))):
        clone["spec"]["replicas"] = 9
        assert clone == {**source, "spec": {**source["spec"], "replicas": 9}}
    assert lazy.spec.replicas == 1 and source["spec"]["replicas"] == 1


def test_freeze_shares_what_was_not_read() -> None:
    source = document()
    lazy = LazyBox.over(source)
    lazy.spec.replicas = 2
    frozen = freeze(lazy)
    assert frozen["metadata"] is source["metadata"]  # never read: shared
    assert (
        frozen["spec"] is not source["spec"]
        and frozen["spec"]["template"] is (source["spec"]["template"])
    )
    assert type(frozen) is dict and frozen["spec"]["replicas"] == 2
    lazy.spec.replicas = 5
    assert frozen["spec"]["replicas"] == 2


async def test_build_object_is_a_kr8s_object(kube: kr8s.asyncio.Api) -> None:
    source = document()
    obj = build_object(Deployment, source, api=kube)
    assert isinstance(obj.raw, LazyBox)
    assert (obj.name, obj.namespace, obj.labels["app.kubernetes.io/name"]) == (
        "web",
        "default",
        "web",
    )
    assert obj.spec.replicas == 1 and obj.replicas == 1
    obj.raw["spec"]["replicas"] = 4
    assert source["spec"]["replicas"] == 1


async def test_build_object_sets_what_kr8s_init_sets(kube: kr8s.asyncio.Api) -> None:
    """build_object skips APIObject.__init__: this fails if kr8s starts setting more there."""
    built = build_object(Deployment, document(), api=kube)
    made = Deployment(document(), api=kube)
    assert set(vars(built)) == set(vars(made)) and built.raw == made.raw


def test_build_object_calls_a_custom_init() -> None:
    seen: list[str] = []
    base = new_class("Gadget", "example.com/v1", namespaced=True)

    class Gadget(base):  # type: ignore[misc, valid-type]
        def __init__(self, resource: Any, *args: Any, **kwargs: Any) -> None:
            seen.append(resource["metadata"]["name"])
            super().__init__(resource, *args, **kwargs)

    obj = build_object(Gadget, {"metadata": {"name": "g"}}, api=None)
    assert seen == ["g"] and obj.name == "g"


def _containers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        if isinstance(value, dict | list):
            found += _containers(value, (*path, key))
    return found


def _follow(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = node[key]
    return node


@settings(max_examples=300, deadline=None)
@given(source=documents, data=st.data())
def test_any_edits_match_a_plain_copy_and_leave_the_source(
    source: dict[str, Any], data: st.DataObject
) -> None:
    """Random reads, writes, deletions and appends on a LazyBox and on a plain deep copy
    give the same document; the source is never touched; snapshots taken on the way stay
    what they were, and a merge patch from one rebuilds the final state."""
    pristine = copy.deepcopy(source)
    lazy, model = LazyBox.over(source), copy.deepcopy(source)
    snapshots: list[tuple[Any, Any]] = []
    for _ in range(data.draw(st.integers(0, 10))):
        path = data.draw(st.sampled_from(_containers(model)))
        node, mirror = _follow(lazy, path), _follow(model, path)
        assert isinstance(node, LazyBox | LazyBoxList | Box | BoxList) and node == mirror
        op = data.draw(st.sampled_from(["set", "delete", "append", "snapshot"]))
        if op == "snapshot":
            snapshots.append((freeze(lazy), copy.deepcopy(model)))
        elif isinstance(mirror, dict) and op != "append":
            key = data.draw(keys)
            if op == "set":
                value = data.draw(values)
                node[key], mirror[key] = copy.deepcopy(value), copy.deepcopy(value)
            elif key in mirror:
                del node[key], mirror[key]
        elif isinstance(mirror, list):
            value = data.draw(values)
            if op == "append" or not mirror:
                node.append(copy.deepcopy(value))
                mirror.append(copy.deepcopy(value))
            elif op == "set":
                node[0], mirror[0] = copy.deepcopy(value), copy.deepcopy(value)
            else:
                del node[-1], mirror[-1]
    assert source == pristine
    assert lazy == model and lazy.to_dict() == model
    for frozen, expected in snapshots:
        assert frozen == expected
        patch, exact = create_merge_patch(frozen, lazy)
        if exact:
            assert apply_merge_patch(frozen, patch) == model
