"""reconcile_kit.meta.finalizers: local finalizer edits, name rules, and deletion on the server."""

from __future__ import annotations

import warnings
from typing import Any

import kr8s
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.meta.finalizers import (
    FinalizerNameWarning,
    add_finalizer,
    has_finalizer,
    remove_finalizer,
    validate_finalizer_name,
)

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


def cm(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", **meta}}


def test_add_keeps_order_and_refuses_duplicates() -> None:
    obj: dict[str, Any] = {}
    assert add_finalizer(obj, "example.com/a")
    assert add_finalizer(obj, "example.com/b")
    assert add_finalizer(obj, "example.com/a") is False
    assert obj == {"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}
    assert has_finalizer(obj, "example.com/b") and not has_finalizer(obj, "example.com/c")


def test_remove_keeps_order_and_deletes_the_emptied_key() -> None:
    obj = cm(finalizers=["x.io/a", "x.io/b", "x.io/c"])
    assert remove_finalizer(obj, "x.io/b")
    assert obj["metadata"]["finalizers"] == ["x.io/a", "x.io/c"]
    assert remove_finalizer(obj, "x.io/b") is False
    remove_finalizer(obj, "x.io/a")
    remove_finalizer(obj, "x.io/c")
    assert obj == cm()
    assert remove_finalizer(obj, "x.io/a") is False
    assert remove_finalizer({}, "x.io/a") is False and not has_finalizer({}, "x.io/a")


def test_remove_takes_any_name_even_invalid_or_duplicated() -> None:
    obj = cm(finalizers=["Bad Name", "x.io/a", "Bad Name"])
    assert remove_finalizer(obj, "Bad Name")
    assert obj["metadata"]["finalizers"] == ["x.io/a"]


def test_kr8s_object_is_mutated_through_raw() -> None:
    obj = ConfigMap({"metadata": {"name": "c", "namespace": "default"}})
    assert add_finalizer(obj, "example.com/cleanup")
    assert obj.raw["metadata"]["finalizers"] == ["example.com/cleanup"]
    assert has_finalizer(obj, "example.com/cleanup")
    assert remove_finalizer(obj, "example.com/cleanup")
    assert "finalizers" not in obj.raw["metadata"]


@pytest.mark.parametrize(
    "name",
    [
        "example.com/cleanup",
        "kubernetes",
        "orphan",
        "foregroundDeletion",
        "a",
        "x/Y",
        "sub.example.com/My_Name.v2-1",
        "p" * 253 + "/" + "n" * 63,
    ],
)
def test_valid_names(name: str) -> None:
    validate_finalizer_name(name)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "name part must be non-empty"),
        ("example.com/", "name part must be non-empty"),
        ("/cleanup", "prefix part must be non-empty"),
        ("a/b/c", "with an optional DNS subdomain prefix and one '/'"),
        ("Example.com/cleanup", "prefix part must be a lowercase RFC 1123 subdomain"),
        ("example..com/cleanup", "prefix part must be a lowercase RFC 1123 subdomain"),
        ("p" * 254 + "/x", "prefix part must be no more than 253 characters"),
        ("example.com/-cleanup", "name part must consist of alphanumeric characters"),
        ("example.com/clean up", "name part must consist of alphanumeric characters"),
        ("cleanup\n", "name part must consist of alphanumeric characters"),
        ("n" * 64, "name part must be no more than 63 characters"),
    ],
)
def test_invalid_names_raise_and_change_nothing(name: str, problem: str) -> None:
    obj = cm(namespace="default")
    with pytest.raises(ValueError) as raised:
        add_finalizer(obj, name)
    assert str(raised.value).startswith(f"ConfigMap default/c: finalizer {name!r}: ")
    assert problem in str(raised.value)
    assert obj == cm(namespace="default")


def test_validation_messages_and_types() -> None:
    with pytest.raises(ValueError, match=r"^finalizer 'a b': name part"):
        validate_finalizer_name("a b")
    with pytest.raises(TypeError, match="must be a string, not int"):
        add_finalizer({}, 7)  # type: ignore[arg-type]


def test_unqualified_names_warn_like_the_api_server() -> None:
    obj = cm()
    with pytest.warns(FinalizerNameWarning, match="'cleanup': prefer a domain-qualified"):
        assert add_finalizer(obj, "cleanup")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert add_finalizer(obj, "cleanup") is False  # already there: nothing added, no warning
        add_finalizer(obj, "example.com/cleanup")
        add_finalizer(obj, "kubernetes")
        add_finalizer(obj, "orphan")


NAMES = st.from_regex(
    r"\A([a-z0-9]{1,6}\.)?[a-z]{1,6}/[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?\Z"
)


@settings(deadline=None)
@given(start=st.lists(NAMES, unique=True, max_size=5), extra=st.lists(NAMES, max_size=8))
def test_property_add_then_remove_restores_the_list(start: list[str], extra: list[str]) -> None:
    obj = cm(finalizers=list(start)) if start else cm()
    for name in extra:
        expected = name not in obj["metadata"].get("finalizers", [])
        assert add_finalizer(obj, name) == expected
    merged = obj["metadata"].get("finalizers", [])
    assert len(merged) == len(set(merged)) and merged[: len(start)] == start
    for name in extra:
        if name not in start:
            remove_finalizer(obj, name)
    assert obj == (cm(finalizers=start) if start else cm())


# --- over the wire ---------------------------------------------------------------------------


async def test_finalizer_holds_deletion_until_removed(kube: kr8s.asyncio.Api) -> None:
    obj = await ConfigMap({"metadata": {"name": "held"}}, api=kube)
    await obj.create()
    assert add_finalizer(obj, "example.com/cleanup")
    await obj.patch({"metadata": {"finalizers": list(obj.raw["metadata"]["finalizers"])}})
    assert obj.raw["metadata"]["finalizers"] == ["example.com/cleanup"]

    await obj.delete()
    await obj.refresh()
    assert obj.raw["metadata"]["deletionTimestamp"]
    assert has_finalizer(obj, "example.com/cleanup")

    # the server, not add_finalizer, refuses new finalizers on an object being deleted
    assert add_finalizer(obj, "example.com/late")
    status, body = await call(
        kube,
        "PATCH",
        f"{CM}/held",
        {"metadata": {"finalizers": list(obj.raw["metadata"]["finalizers"])}},
        MERGE,
    )
    assert status == 422 and "no new finalizers can be added" in body["message"]
    remove_finalizer(obj, "example.com/late")

    assert remove_finalizer(obj, "example.com/cleanup")
    assert "finalizers" not in obj.raw["metadata"]
    status, _ = await call(kube, "PATCH", f"{CM}/held", {"metadata": {"finalizers": None}}, MERGE)
    assert status == 200
    status, _ = await call(kube, "GET", f"{CM}/held")
    assert status == 404  # removing the last finalizer completed the deletion
