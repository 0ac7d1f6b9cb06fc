"""PatchHelper snapshot + diff cost (median microseconds over repeated runs).

Cases: a 5.5 KB Deployment (with managedFields) unchanged, with one spec field changed,
with one status field changed; a 200 KB custom resource made of 2,600 small map entries
(unchanged, one field changed, every entry read) and one made of 40 text documents
(unchanged). Each sample builds a PatchHelper (the snapshot) and asks ``has_changes()``.

Every case runs on the object as a controller builds it from its cache (a LazyBox sharing
the cached document: the snapshot shares what was not read) and as kr8s builds it (a Box
converted up front: the snapshot is serialised and compared as bytes). Targets (issue 3),
for the controller's objects: unchanged 5.5 KB <= 25 us, one field <= 40 us, unchanged
200 KB <= 60 us.

    python benchmarks/patch.py [--repeats 7] [--number 2000]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from kr8s.asyncio.objects import Deployment, new_class

from reconcile_kit.patch.helper import PatchHelper
from reconcile_kit.patch.snapshot import build_object


def deployment() -> dict[str, Any]:
    env = [{"name": f"VAR_{i}", "value": f"value-{i}"} for i in range(20)]
    container = {
        "name": "app",
        "image": "registry.example.com/team/app:1.2.3",
        "env": env,
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {
            "limits": {"cpu": "500m", "memory": "256Mi"},
            "requests": {"cpu": "100m", "memory": "128Mi"},
        },
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log",
    }
    managed = {
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2026-11-21T05:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:spec": {
                "f:template": {
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"app"}': {
                                "f:env": {
                                    f'k:{{"name":"VAR_{i}"}}': {
                                        ".": {},
                                        "f:name": {},
                                        "f:value": {},
                                    }
                                    for i in range(20)
                                }
                            }
                        }
                    }
                }
            }
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "7f1c2d4e-0000-4000-8000-000000000001",
            "resourceVersion": "123456",
            "generation": 4,
            "creationTimestamp": "2026-11-21T05:00:00Z",
            "labels": {"app": "web", "team": "platform", "tier": "frontend"},
            "annotations": {
                "deployment.kubernetes.io/revision": "4",
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {"name": "web", "namespace": "default"},
                        "spec": {"replicas": 3, "template": {"spec": {"containers": [container]}}},
                    }
                ),
            },
            "managedFields": [managed],
        },
        "spec": {
            "replicas": 3,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "containers": [container],
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 30,
                    "dnsPolicy": "ClusterFirst",
                },
            },
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
            "observedGeneration": 4,
            "conditions": [
                {
                    "type": t,
                    "status": "True",
                    "reason": "Ok",
                    "message": "fine",
                    "lastUpdateTime": "2026-11-21T05:00:00Z",
                    "lastTransitionTime": "2026-11-21T05:00:00Z",
                }
                for t in ("Available", "Progressing")
            ],
        },
    }


def big_custom_resource() -> dict[str, Any]:
    allocations = {
        f"10.0.{i // 250}.{i % 250}": {
            "pod": f"pod-{i:05d}",
            "namespace": "apps",
            "since": "2026-11-21T05:00:00Z",
        }
        for i in range(2600)
    }
    return {
        "apiVersion": "example.com/v1",
        "kind": "IPPool",
        "metadata": {
            "name": "pool",
            "namespace": "default",
            "resourceVersion": "9",
            "uid": "u",
            "generation": 1,
        },
        "spec": {"cidr": "10.0.0.0/16", "allocations": allocations},
        "status": {"conditions": []},
    }


def text_custom_resource() -> dict[str, Any]:
    documents = {
        f"doc-{i}.yaml": f"line of configuration text number {i}\n" * 130 for i in range(40)
    }
    return {
        "apiVersion": "example.com/v1",
        "kind": "Bundle",
        "metadata": {
            "name": "bundle",
            "namespace": "default",
            "resourceVersion": "9",
            "uid": "u",
            "generation": 1,
        },
        "spec": {"documents": documents},
        "status": {},
    }


Mutate = Callable[[Any], bool]  # edits the object; returns whether that is a change


BUDGET = 2.0
"""Seconds of wall time a sample may take, untimed work included: a kr8s Box a mutation
changed is converted again before the next run (~45 ms at 200 KB), so its sample stops
early (at least 5 runs) instead of taking minutes."""


def sample(make: Callable[[], Any], mutate: Mutate | None, number: int) -> float:
    """Mean microseconds of snapshot + has_changes() over ``number`` runs (fewer when they
    exceed :data:`BUDGET`); the object is built (untimed) before each run, as a controller
    builds one per reconcile."""
    total = 0.0
    deadline = time.perf_counter() + BUDGET
    runs = 0
    while runs < number and (runs < 5 or time.perf_counter() < deadline):
        runs += 1
        obj = make()
        start = time.perf_counter()
        helper = PatchHelper(obj)
        expected = False
        if mutate is not None:
            elapsed = time.perf_counter() - start
            expected = mutate(obj)
            start = time.perf_counter() - elapsed
        changed = helper.has_changes()
        total += time.perf_counter() - start
        assert changed == expected
    return total / runs * 1e6


def builders(cls: Any, document: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """How the benchmark object is made: from a cache (shared document) or by kr8s."""
    box = cls(document)
    data = orjson.dumps(box.raw)
    return {
        "cached": lambda: build_object(cls, document, api=None),
        "kr8s Box": lambda: _restored(box, data),
    }


def _restored(obj: Any, data: bytes) -> Any:
    """The same kr8s object, its state reset (kr8s's full Box conversion only when the
    previous run changed it; not timed either way)."""
    if orjson.dumps(obj.raw) != data:
        obj.raw = orjson.loads(data)
    return obj


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    dep = builders(Deployment, deployment())
    big = builders(new_class("IPPool", "example.com/v1", namespaced=True), big_custom_resource())
    bundle = builders(
        new_class("Bundle", "example.com/v1", namespaced=True), text_custom_resource()
    )
    print(
        f"Deployment: {len(orjson.dumps(deployment()))} bytes; custom resources: "
        f"{len(orjson.dumps(big_custom_resource()))} and "
        f"{len(orjson.dumps(text_custom_resource()))} bytes"
    )

    def one_field(obj: Any) -> bool:
        obj.raw["spec"]["replicas"] = 5
        return True

    def status_only(obj: Any) -> bool:
        obj.raw["status"]["readyReplicas"] = 2
        return True

    def big_one_field(obj: Any) -> bool:
        obj.raw["spec"]["cidr"] = "10.1.0.0/16"
        return True

    def read_every_entry(obj: Any) -> bool:
        for entry in obj.raw["spec"]["allocations"].values():
            assert entry["pod"]
        return False

    cases = [
        ("5.5 KB Deployment, unchanged", dep, None, args.number, 25),
        ("5.5 KB Deployment, one field", dep, one_field, args.number, 40),
        ("5.5 KB Deployment, status only", dep, status_only, args.number, 40),
        ("200 KB CR, 2,600 map entries, unchanged", big, None, args.number // 20, 60),
        ("200 KB CR, 2,600 map entries, one field", big, big_one_field, args.number // 20, None),
        (
            "200 KB CR, 2,600 entries all read, unchanged",
            big,
            read_every_entry,
            args.number // 100,
            None,
        ),
        ("200 KB CR, 40 text documents, unchanged", bundle, None, args.number // 10, 60),
    ]
    rows = []
    print(f"{'case':46} {'object':9} {'median us':>10} {'min':>8} {'max':>8} {'target':>7}")
    for label, made, mutate, number, target in cases:
        for how, make in made.items():
            runs = [sample(make, mutate, max(number, 5)) for _ in range(args.repeats)]
            med = statistics.median(runs)
            goal = target if how == "cached" else None
            mark = "" if goal is None else ("PASS" if med <= goal else "MISS")
            print(
                f"{label:46} {how:9} {med:10.1f} {min(runs):8.1f} {max(runs):8.1f} "
                f"{goal if goal else '-':>7} {mark}"
            )
            rows.append(
                {
                    "case": label,
                    "object": how,
                    "median_us": med,
                    "min_us": min(runs),
                    "max_us": max(runs),
                    "target_us": goal,
                }
            )
    print(json.dumps({"python": platform.python_version(), "results": rows}))


if __name__ == "__main__":
    main()
