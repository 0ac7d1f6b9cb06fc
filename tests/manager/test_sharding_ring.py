"""Rendezvous hashing: stable, balanced enough, and minimal movement."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reconcile_kit.manager.sharding import ring

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)
keys = st.lists(names.map(lambda n: f"default/{n}"), min_size=1, max_size=60, unique=True)
members = st.lists(names, min_size=1, max_size=8, unique=True)


def test_no_members_no_owner() -> None:
    assert ring.owner("default/a", []) is None
    assert ring.assign(["default/a"], []) == {"default/a": None}


def test_weights_are_fixed_values() -> None:
    # the same in every process (no hash seed): replicas must agree
    assert ring.weight("a", "default/x") == ring.weight("a", "default/x")
    assert ring.weight("a", "default/x") != ring.weight("b", "default/x")


@given(keys, members)
def test_order_and_duplicates_do_not_matter(keys: list[str], members: list[str]) -> None:
    forward = ring.assign(keys, members)
    assert ring.assign(keys, list(reversed(members)) + members) == forward
    assert all(owner in members for owner in forward.values())


@given(keys, members, names)
def test_a_joining_member_takes_keys_only_for_itself(
    keys: list[str], members: list[str], new: str
) -> None:
    if new in members:
        return
    before = ring.assign(keys, members)
    after = ring.assign(keys, [*members, new])
    for key in keys:
        assert after[key] in (before[key], new)


@given(keys, members)
def test_a_leaving_member_moves_only_its_own_keys(keys: list[str], members: list[str]) -> None:
    gone = members[0]
    before = ring.assign(keys, members)
    after = ring.assign(keys, members[1:])
    for key in keys:
        if before[key] != gone:
            assert after[key] == before[key]
        else:
            assert after[key] != gone


def test_spread_over_three_members() -> None:
    owners = ring.assign([f"default/cm-{i}" for i in range(3000)], ["a", "b", "c"])
    counts = {m: sum(1 for o in owners.values() if o == m) for m in "abc"}
    assert all(800 <= count <= 1200 for count in counts.values()), counts


def test_object_keys_are_namespace_slash_name() -> None:
    # the sharder and a member handing its objects over hash the same string
    assert ring.object_key("default", "cm-1") == "default/cm-1"
    assert ring.object_key(None, "node-1") == ring.object_key("", "node-1") == "/node-1"
