"""Property tests of the RFC 7386 diff, pure and through PatchHelper over the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonpatch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kr8s.asyncio.objects import new_class

from reconcile_kit.patch.helper import PatchHelper
from reconcile_kit.patch.mergepatch import apply_merge_patch, create_merge_patch
from reconcile_kit.testing import APIServer

from ..crds import install_crd
from ..kubehttp import call

KEYS = st.sampled_from(["a", "b", "c", "d"])


def documents(nulls: bool) -> st.SearchStrategy[dict[str, Any]]:
    scalars = st.integers(-3, 3) | st.text(max_size=3) | st.booleans()
    if nulls:
        scalars = scalars | st.none()
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
        max_leaves=12,
    )
    return st.dictionaries(KEYS, values, max_size=4)


@settings(max_examples=500)
@given(documents(nulls=True), documents(nulls=True))
def test_patch_is_exact_exactly_when_merge_patch_can_express_it(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    patch, exact = create_merge_patch(a, b)
    assert exact == (apply_merge_patch(a, patch) == b)
    if not exact:  # what the PatchHelper sends instead
        assert jsonpatch.make_patch(a, b).apply(a) == b
    assert (patch == {}) == (a == b)


@settings(max_examples=500)
@given(documents(nulls=False), documents(nulls=False))
def test_without_nulls_the_patch_always_gives_b(a: dict[str, Any], b: dict[str, Any]) -> None:
    patch, exact = create_merge_patch(a, b)
    assert exact and apply_merge_patch(a, patch) == b


def test_patch_helper_turns_any_spec_into_any_other_over_the_wire() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "blobs.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "blobs", "kind": "Blob"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    blob = new_class("Blob", "example.com/v1", namespaced=True)
    loop = asyncio.new_event_loop()
    server = APIServer()
    try:
        loop.run_until_complete(server.start())
        api = loop.run_until_complete(server.api())
        loop.run_until_complete(install_crd(api, crd))
        counter = iter(range(10_000))

        @settings(
            max_examples=40,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(documents(nulls=False), documents(nulls=False))
        def check(a: dict[str, Any], b: dict[str, Any]) -> None:
            name = f"b{next(counter)}"
            loop.run_until_complete(_round_trip(api, blob, name, a, b))

        check()
    finally:
        loop.run_until_complete(server.stop())
        loop.close()


async def _round_trip(api: Any, blob: Any, name: str, a: dict[str, Any], b: dict[str, Any]) -> None:
    obj = await blob(
        {
            "apiVersion": "example.com/v1",
            "kind": "Blob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": a,
        },
        api=api,
    )
    await obj.create()
    async with PatchHelper(obj):
        obj.raw["spec"] = b
    _, stored = await call(api, "GET", f"/apis/example.com/v1/namespaces/default/blobs/{name}")
    assert stored.get("spec", {}) == b
