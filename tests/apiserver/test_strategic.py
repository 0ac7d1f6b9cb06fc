"""Tests for reconcile_kit.testing.apiserver.strategic (strategic merge patch of built-in kinds)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from reconcile_kit.testing.apiserver.strategic import (
    StrategicMergeError,
    apply_strategic_merge_patch,
)

Obj = dict[str, Any]


def deployment(containers: list[Obj], **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers},
            },
            **spec,
        },
    }


def pod(containers: list[Obj]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": containers},
    }


def containers_of(obj: Obj) -> list[Obj]:
    spec = obj["spec"]["template"]["spec"] if obj["kind"] == "Deployment" else obj["spec"]
    containers: list[Obj] = spec["containers"]
    return containers


def names(items: list[Obj], key: str = "name") -> list[Any]:
    return [item[key] for item in items]


def patch_deployment(original: Obj, pod_spec_patch: Obj) -> Obj:
    patch = {"spec": {"template": {"spec": pod_spec_patch}}}
    return apply_strategic_merge_patch(original, patch, "Deployment", "apps/v1")


A = {"name": "a", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
B = {"name": "b", "image": "busybox:1", "args": ["sleep", "3600"]}
C = {"name": "c", "image": "redis:7"}


# ----------------------------------------------------------------------------- keyed lists


def test_containers_merged_by_name_keep_other_containers_and_fields() -> None:
    result = patch_deployment(
        deployment([A, B]), {"containers": [{"name": "a", "image": "nginx:2"}]}
    )

    assert containers_of(result) == [{**A, "image": "nginx:2"}, B]


def test_env_merged_by_name() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    original = pod([{"name": "app", "image": "x", "env": env}])
    patch = {"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "3"}]}]}}

    result = apply_strategic_merge_patch(original, patch, "Pod", "v1")

    assert containers_of(result)[0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "3"},
    ]


def test_container_ports_merged_by_container_port() -> None:
    patch = {"containers": [{"name": "a", "ports": [{"containerPort": 443, "name": "https"}]}]}

    result = patch_deployment(deployment([A]), patch)

    assert names(containers_of(result)[0]["ports"], "containerPort") == [443, 80]


def test_new_element_is_added() -> None:
    result = patch_deployment(deployment([A]), {"containers": [C]})

    assert sorted(names(containers_of(result))) == ["a", "c"]
    assert containers_of(result)[0] == C  # apimachinery puts unanchored new items first


def test_delete_element_with_patch_delete() -> None:
    patch = {"containers": [{"$patch": "delete", "name": "b"}]}

    result = patch_deployment(deployment([A, B, C]), patch)

    assert names(containers_of(result)) == ["a", "c"]


def test_replace_list_with_patch_replace() -> None:
    patch = {"containers": [{"$patch": "replace"}, {"name": "c", "image": "redis:8"}]}

    result = patch_deployment(deployment([A, B]), patch)

    assert containers_of(result) == [{"name": "c", "image": "redis:8"}]


def test_merging_a_list_is_not_supported_and_missing_merge_key_is_rejected() -> None:
    with pytest.raises(StrategicMergeError) as merge_directive:
        patch_deployment(deployment([A]), {"containers": [{"$patch": "merge"}]})
    with pytest.raises(StrategicMergeError) as no_key:
        patch_deployment(deployment([A]), {"containers": [{"image": "nginx:3"}]})

    assert merge_directive.value.code == 422
    assert no_key.value.code == 422
    assert "merge key" in str(no_key.value)


def test_owner_references_merged_by_uid() -> None:
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o1", "uid": "u1"}
    original = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "ownerReferences": [owner]},
    }
    second = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o2", "uid": "u2"}
    patch = {"metadata": {"ownerReferences": [{"uid": "u1", "controller": True}, second]}}

    result = apply_strategic_merge_patch(original, patch, "Secret", "v1")

    assert result["metadata"]["ownerReferences"] == [{**owner, "controller": True}, second]


def test_service_ports_merged_by_port() -> None:
    original = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": 8443}]},
    }
    patch = {"spec": {"ports": [{"port": 443, "targetPort": 9443}]}}

    result = apply_strategic_merge_patch(original, patch, "Service", "v1")

    assert result["spec"]["ports"] == [
        {"port": 80, "targetPort": 8080},
        {"port": 443, "targetPort": 9443},
    ]


def test_pod_status_conditions_merged_by_type() -> None:
    original = pod([A])
    original["status"] = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False"},
        ],
    }
    patch = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}

    result = apply_strategic_merge_patch(original, patch, "Pod", "v1")

    assert result["status"] == {
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "True"},
        ],
    }


# ----------------------------------------------------------------------- atomic lists, maps


def test_lists_not_in_the_table_are_replaced() -> None:
    tolerations = [{"key": "k1", "operator": "Exists"}]
    original = deployment([B])
    original["spec"]["template"]["spec"]["tolerations"] = tolerations
    patch = {
        "tolerations": [{"key": "k2", "operator": "Exists"}],
        "containers": [{"name": "b", "args": ["sleep", "1"]}],
    }

    result = patch_deployment(original, patch)

    pod_spec = result["spec"]["template"]["spec"]
    assert pod_spec["tolerations"] == [{"key": "k2", "operator": "Exists"}]
    assert pod_spec["containers"] == [{**B, "args": ["sleep", "1"]}]


def test_null_deletes_map_key() -> None:
    original = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"a": "1", "b": "2"}},
        "data": {"x": "1", "y": "2"},
    }
    patch = {"metadata": {"labels": {"a": None}}, "data": {"y": None, "z": "3"}, "absent": None}

    result = apply_strategic_merge_patch(original, patch, "ConfigMap", "v1")

    assert result["metadata"]["labels"] == {"b": "2"}
    assert result["data"] == {"x": "1", "z": "3"}
    assert "absent" not in result


def test_new_values_are_stored_without_nulls_or_directives() -> None:
    patch = {"nodeSelector": {"zone": "a", "gone": None}, "affinity": {"$patch": "delete"}}

    result = patch_deployment(deployment([A]), patch)

    pod_spec = result["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {"zone": "a"}
    assert "affinity" not in pod_spec


def test_patch_replace_and_delete_in_maps() -> None:
    original = deployment([A])
    original["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    patch = {
        "metadata": {"labels": {"$patch": "replace", "tier": "front"}},
        "spec": {"template": {"spec": {"nodeSelector": {"$patch": "delete"}}}},
    }

    result = apply_strategic_merge_patch(original, patch, "Deployment", "apps/v1")

    assert result["metadata"]["labels"] == {"tier": "front"}
    assert "nodeSelector" not in result["spec"]["template"]["spec"]


# ------------------------------------------------------------------------ primitive lists


def secret_with_finalizers(finalizers: list[str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "finalizers": finalizers},
    }


def test_finalizers_union() -> None:
    patch = {"metadata": {"finalizers": ["b", "c"]}}

    result = apply_strategic_merge_patch(secret_with_finalizers(["a", "b"]), patch, "Secret", "v1")

    assert result["metadata"]["finalizers"] == ["a", "b", "c"]


def test_finalizers_new_value_without_set_element_order_goes_first() -> None:
    # mergeSortedSlice: an item the live list does not know is placed before server-only items.
    patch = {"metadata": {"finalizers": ["c"]}}

    result = apply_strategic_merge_patch(secret_with_finalizers(["a", "b"]), patch, "Secret", "v1")

    assert result["metadata"]["finalizers"] == ["c", "a", "b"]


def test_delete_from_primitive_list() -> None:
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "zzz"]}}

    result = apply_strategic_merge_patch(secret_with_finalizers(["a", "b"]), patch, "Secret", "v1")

    assert result["metadata"]["finalizers"] == ["b"]


def test_delete_from_primitive_list_must_be_a_list() -> None:
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}

    with pytest.raises(StrategicMergeError) as err:
        apply_strategic_merge_patch(secret_with_finalizers(["a"]), patch, "Secret", "v1")

    assert err.value.code == 400


# ------------------------------------------------------------------------------ ordering


def test_set_element_order_reorders_keyed_list() -> None:
    patch = {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}]}

    result = patch_deployment(deployment([A, B, C]), patch)

    assert names(containers_of(result)) == ["c", "a", "b"]


def test_set_element_order_places_unmentioned_live_items_by_live_order() -> None:
    patch = {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}]}

    result = patch_deployment(deployment([A, B, C]), patch)

    assert names(containers_of(result)) == ["b", "c", "a"]


def test_set_element_order_of_primitive_list() -> None:
    patch = {"metadata": {"$setElementOrder/finalizers": ["y", "z", "x"], "finalizers": ["z"]}}

    result = apply_strategic_merge_patch(secret_with_finalizers(["x", "y"]), patch, "Secret", "v1")

    assert result["metadata"]["finalizers"] == ["y", "z", "x"]


def test_set_element_order_must_contain_patch_items_in_order() -> None:
    patch = {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
        "containers": [{"name": "b", "image": "x"}, {"name": "a", "image": "y"}],
    }

    with pytest.raises(StrategicMergeError) as err:
        patch_deployment(deployment([A, B]), patch)

    assert err.value.code == 400


# ---------------------------------------------------------------------------- retainKeys


def test_retain_keys_on_deployment_strategy() -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    original = deployment([A], strategy=strategy)
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}

    result = apply_strategic_merge_patch(original, patch, "Deployment", "apps/v1")

    assert result["spec"]["strategy"] == {"type": "Recreate"}


def test_retain_keys_rejects_patch_keys_outside_the_list() -> None:
    original = deployment([A], strategy={"type": "RollingUpdate"})
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}}

    with pytest.raises(StrategicMergeError) as err:
        apply_strategic_merge_patch(original, patch, "Deployment", "apps/v1")

    assert err.value.code == 400


# ------------------------------------------------------------------------ realistic patches


def test_kubectl_apply_three_way_patch_changing_one_image() -> None:
    applied = deployment([{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox:1"}])
    last_applied = json.dumps(applied)
    live = copy.deepcopy(applied)
    live["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": last_applied,
        "deployment.kubernetes.io/revision": "1",
    }
    live["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    live["status"] = {"replicas": 1}
    new_applied = json.dumps(
        deployment([{"name": "a", "image": "nginx:2"}, {"name": "b", "image": "busybox:1"}])
    )
    patch = {
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": new_applied}
        },
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                    "containers": [{"image": "nginx:2", "name": "a"}],
                }
            }
        },
    }

    result = apply_strategic_merge_patch(live, patch, "Deployment", "apps/v1")

    assert containers_of(result) == [
        {"name": "a", "image": "nginx:2", "imagePullPolicy": "IfNotPresent"},
        {"name": "b", "image": "busybox:1"},
    ]
    assert result["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/last-applied-configuration": new_applied,
        "deployment.kubernetes.io/revision": "1",
    }
    assert result["status"] == {"replicas": 1}


def test_kubectl_apply_three_way_patch_removing_a_container_and_an_env_var() -> None:
    env = [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]
    live = deployment([{**A, "env": env}, B])
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}],
                    "containers": [
                        {
                            "$setElementOrder/env": [{"name": "X"}],
                            "env": [{"$patch": "delete", "name": "Y"}],
                            "name": "a",
                        },
                        {"$patch": "delete", "name": "b"},
                    ],
                }
            }
        }
    }

    result = apply_strategic_merge_patch(live, patch, "Deployment", "apps/v1")

    assert containers_of(result) == [{**A, "env": [{"name": "X", "value": "1"}]}]


def test_event_recorder_count_and_last_timestamp_patch() -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.17a", "namespace": "default"},
        "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default"},
        "reason": "ScalingReplicaSet",
        "message": "Scaled up replica set web-1 to 1",
        "count": 1,
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:00:00Z",
        "type": "Normal",
    }
    patch = {
        "count": 2,
        "lastTimestamp": "2024-01-01T00:05:00Z",
        "message": "Scaled up replica set web-1 to 1",
    }

    result = apply_strategic_merge_patch(event, patch, "Event", "v1")

    assert result == {**event, "count": 2, "lastTimestamp": "2024-01-01T00:05:00Z"}


def test_unknown_kind_behaves_as_merge_patch_but_honours_directives() -> None:
    original = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "finalizers": ["a"]},
        "spec": {"items": [{"name": "x", "size": 1}], "opts": {"a": 1, "b": 2}},
    }
    patch = {
        "metadata": {"finalizers": ["b"]},
        "spec": {"items": [{"name": "y"}], "opts": {"$retainKeys": ["a"], "a": 3}},
    }

    result = apply_strategic_merge_patch(original, patch, "Widget", "example.com/v1")

    assert result["spec"] == {"items": [{"name": "y"}], "opts": {"a": 3}}
    assert sorted(result["metadata"]["finalizers"]) == ["a", "b"]


# ------------------------------------------------------------------------- errors, purity


@pytest.mark.parametrize(
    "patch",
    [
        {"metadata": {"labels": {"$patch": "frobnicate"}}},
        {"spec": {"template": {"spec": {"containers": [{"$patch": "frobnicate", "name": "a"}]}}}},
        {"spec": {"$deleteFromList/finalizers": ["x"]}},
        {"spec": {"strategy": {"$retainKeys": "type"}}},
    ],
)
def test_unknown_or_malformed_directive_is_rejected(patch: Obj) -> None:
    with pytest.raises(StrategicMergeError) as err:
        apply_strategic_merge_patch(deployment([A]), patch, "Deployment", "apps/v1")

    assert err.value.code == 400
    assert isinstance(err.value, ValueError)


def test_original_and_patch_are_not_mutated_and_not_shared() -> None:
    original = deployment([A, B], strategy={"type": "RollingUpdate", "rollingUpdate": {}})
    original["metadata"]["finalizers"] = ["f"]
    patch = {
        "metadata": {"labels": {"app": None, "new": "1"}, "finalizers": ["g"]},
        "spec": {
            "strategy": {"$retainKeys": ["type"], "type": "Recreate"},
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}, {"name": "c"}],
                    "containers": [
                        {"name": "a", "image": "nginx:9"},
                        {**C, "env": [{"name": "E"}]},
                    ],
                }
            },
        },
    }
    original_before, patch_before = copy.deepcopy(original), copy.deepcopy(patch)

    result = apply_strategic_merge_patch(original, patch, "Deployment", "apps/v1")

    assert original == original_before
    assert patch == patch_before
    assert names(containers_of(result)) == ["b", "a", "c"]
    containers_of(result)[0]["args"].append("more")
    containers_of(result)[2]["env"].append({"name": "F"})
    assert original == original_before
    assert patch == patch_before
