"""Shard labels: children of a sharded owner carry its shard labels."""

from __future__ import annotations

from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import set_controller_reference
from reconcile_kit.meta.shards import copy_shard_labels, drain_label, shard_label, shard_of


def owner() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "namespace": "default",
            "uid": "u-1",
            "labels": {
                shard_label("ring"): "replica-a",
                drain_label("ring"): "true",
                "app": "demo",
            },
        },
    }


def test_labels() -> None:
    assert shard_label("ops") == "shard.reconcile-kit.io/ops"
    assert drain_label("ops") == "drain.shard.reconcile-kit.io/ops"
    assert shard_of(owner(), "ring") == "replica-a"
    assert shard_of(owner(), "other") is None


def test_set_controller_reference_copies_shard_labels_to_dicts_and_kr8s_objects() -> None:
    child = {"metadata": {"name": "a", "namespace": "default", "labels": {"x": "1"}}}
    set_controller_reference(owner(), child)
    assert child["metadata"]["labels"] == {"x": "1", shard_label("ring"): "replica-a"}

    secret = Secret({"metadata": {"name": "a", "namespace": "default"}})
    set_controller_reference(ConfigMap(owner()), secret)
    assert secret.raw["metadata"]["labels"] == {shard_label("ring"): "replica-a"}


def test_an_unsharded_owner_leaves_the_child_alone() -> None:
    plain = owner()
    plain["metadata"]["labels"] = {"app": "demo"}
    child: dict = {"metadata": {"name": "a", "namespace": "default"}}
    copy_shard_labels(plain, child)
    assert "labels" not in child["metadata"]
