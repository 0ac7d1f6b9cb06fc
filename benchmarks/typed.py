"""What a typed reconcile costs over an untyped one (median microseconds per reconcile).

Per sample, as a controller does it for an unchanged ~5.5 KB custom resource held in its
cache: build the object handed to the reconcile, then PatchHelper's snapshot and
``has_changes()``. Untyped: the kr8s object over the cached dict (a LazyBox). Typed, as
``Controller(Model)`` does it: that object plus the model from the controller's
``ModelCache`` (``typed.reuse``), then the PatchHelper on the model and the cache's
``release``. Three typed cases:

- reused: the state was reconciled twice before and those reconciles left the model as
  read (a requeue, a resync, a child's event): the same model, no validation, no
  serialization;
- first: the first reconcile of a new cached state: validation, then ``to_raw()`` twice
  for the PatchHelper's snapshot and diff (what every typed reconcile cost before reuse);
- second: the second reconcile of a state: validation and tracking (the walk that makes
  the model's changes visible), then one ``to_raw()`` for the snapshot (the diff sees it
  is clean). Measured as first + second minus first.

Target (issue 16): typed adds at most 50 us per reconcile of an unchanged object (reused).

    python benchmarks/typed.py [--repeats 7] [--number 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Annotated, Any

import orjson
from kr8s.asyncio.objects import new_class
from pydantic import Field

from reconcile_kit.patch.helper import PatchHelper
from reconcile_kit.patch.snapshot import build_object
from reconcile_kit.typed import Condition, CustomResource, KubeModel, ListType
from reconcile_kit.typed.reuse import ModelCache

TARGET_US = 50.0


class Env(KubeModel):
    name: str
    value: str = ""


class Port(KubeModel):
    name: str
    container_port: Annotated[int, Field(ge=1, le=65535)]
    protocol: str = "TCP"


class Component(KubeModel):
    name: str
    image: str
    replicas: Annotated[int, Field(ge=0)] = 1
    env: Annotated[list[Env], ListType.map("name")] = Field(default_factory=list)
    ports: Annotated[list[Port], ListType.map("name")] = Field(default_factory=list)


class AppSpec(KubeModel):
    components: Annotated[list[Component], ListType.map("name")] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)


class AppStatus(KubeModel):
    observed_generation: int | None = None
    conditions: Annotated[list[Condition], ListType.map("type")] = Field(default_factory=list)


class App(CustomResource, group="bench.example.com", version="v1", kind="App"):
    spec: AppSpec
    status: AppStatus | None = None


def document() -> dict[str, Any]:
    components = [
        {
            "name": f"c{i}",
            "image": f"registry.example.com/team/c{i}:1.2.3",
            "replicas": 2,
            "env": [{"name": f"VAR_{j}", "value": f"value-{j}"} for j in range(12)],
            "ports": [{"name": "http", "containerPort": 8080 + i, "protocol": "TCP"}],
        }
        for i in range(9)
    ]
    return {
        "apiVersion": "bench.example.com/v1",
        "kind": "App",
        "metadata": {
            "name": "app",
            "namespace": "default",
            "uid": "6f1c2f8e-0000-4000-8000-000000000001",
            "resourceVersion": "12345",
            "generation": 3,
            "creationTimestamp": "2026-11-21T05:00:00Z",
            "labels": {"team": "web", "tier": "frontend"},
        },
        "spec": {"components": components, "labels": {"a": "b"}},
        "status": {
            "observedGeneration": 3,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Reconciled",
                    "message": "all components ready",
                    "lastTransitionTime": "2026-11-21T05:00:00Z",
                    "observedGeneration": 3,
                }
            ],
        },
    }


def median_us(sample: Callable[[], Any], repeats: int, number: int) -> float:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            sample()
        runs.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    raw = document()
    size = len(orjson.dumps(raw))
    cls = new_class("App", "bench.example.com/v1", namespaced=True, plural="apps")

    def untyped() -> None:
        obj = build_object(cls, raw, None)
        assert not PatchHelper(obj).has_changes()

    def typed(cache: ModelCache[App], reconciles: int) -> Callable[[], None]:
        def sample() -> None:
            if reconciles:
                cache.forget("app")  # a new state
            for _ in range(max(reconciles, 1)):
                obj = build_object(cls, raw, None)
                model = cache.get("app", raw, obj)
                assert not PatchHelper(model).has_changes()
                cache.release("app", model)

        return sample

    plain = median_us(untyped, args.repeats, args.number)
    first = median_us(typed(ModelCache(App), 1), args.repeats, args.number)
    cases = {
        "reused": median_us(typed(ModelCache(App), 0), args.repeats, args.number),
        "first": first,
        "second": median_us(typed(ModelCache(App), 2), args.repeats, args.number) - first,
    }
    print(f"object: {size} bytes of JSON; medians of {args.repeats} runs x {args.number}")
    print(f"untyped          reconcile object + snapshot + has_changes: {plain:8.1f} us")
    for name, value in cases.items():
        print(
            f"typed, {name:9s} reconcile object + snapshot + has_changes: {value:8.1f} us"
            f"  (adds {value - plain:.1f} us)"
        )
    added = cases["reused"] - plain
    verdict = "PASS" if added <= TARGET_US else "MISS"
    print(
        f"typed adds {added:.1f} us per reconcile of an unchanged object "
        f"(target <= {TARGET_US:.0f} us): {verdict}"
    )


if __name__ == "__main__":
    main()
