"""docs/errors.md is true: its hierarchy is the code's, and each write helper raises the
class its one rule says for a refused request, never a PatchError (issue 29, point 2: an
operator catching PatchError around ctx.apply, as an earlier docstring said, silently
stopped reporting refused children)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import (
    APIError,
    BadRequestError,
    Context,
    Controller,
    ForbiddenError,
    InvalidError,
    PatchError,
    PatchHelper,
    finalizer,
)
from reconcile_kit.client.errors import error_tree
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, run_until

from .kubehttp import call

PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
CM = "/api/v1/namespaces/default/configmaps"
EXPECTED: dict[int, type[APIError]] = {
    400: BadRequestError,
    403: ForbiddenError,
    422: InvalidError,
}


def test_the_page_shows_the_hierarchy_of_the_code() -> None:
    text = PAGE.read_text()
    found = re.search(r"<!-- error-tree:[^\n]*-->\n(.*?)<!-- /error-tree -->", text, re.DOTALL)
    assert found, "docs/errors.md lost its error-tree block"
    assert found.group(1) == error_tree(), (
        "docs/errors.md's hierarchy differs from the code: paste "
        "reconcile_kit.client.errors.error_tree() between the markers"
    )


def _secret(ctx: Context) -> Secret:
    return Secret({"metadata": {"name": "c", "namespace": "default"}}, api=ctx.api)


async def _patch_helper(obj: Any, ctx: Context) -> None:
    async with PatchHelper(obj):
        obj.raw["data"] = {"a": "2"}


async def _finalizer(obj: Any, ctx: Context) -> None:
    async def nothing(_: Any) -> None:
        return None

    await finalizer(obj, "example.com/cleanup", nothing, nothing)


async def _apply(obj: Any, ctx: Context) -> None:
    await ctx.apply(_secret(ctx))


async def _apply_status(obj: Any, ctx: Context) -> None:
    obj.raw["status"] = {"x": "y"}
    await ctx.apply_status(obj)


async def _create_or_patch(obj: Any, ctx: Context) -> None:
    await ctx.create_or_patch(_secret(ctx))


async def _patch_status(obj: Any, ctx: Context) -> None:
    await ctx.patch_status(obj, {"x": "y"})


async def _update_status(obj: Any, ctx: Context) -> None:
    await ctx.update_status(obj)


# helper -> (its write, the fault's verb and resource, what the error names)
HELPERS: dict[str, tuple[Callable[[Any, Context], Awaitable[None]], str, str, str]] = {
    "PatchHelper": (_patch_helper, "patch", "configmaps", "ConfigMap default/c"),
    "finalizer": (_finalizer, "patch", "configmaps", "ConfigMap default/c"),
    "ctx.apply": (_apply, "patch", "secrets", "Secret default/c"),
    "ctx.apply_status": (_apply_status, "patch", "configmaps", "ConfigMap default/c"),
    "ctx.create_or_patch": (_create_or_patch, "create", "secrets", "Secret default/c"),
    "ctx.patch_status": (_patch_status, "patch", "configmaps", "ConfigMap default/c"),
    "ctx.update_status": (_update_status, "update", "configmaps", "ConfigMap default/c"),
}


@pytest.mark.parametrize("status", sorted(EXPECTED))
@pytest.mark.parametrize("helper", sorted(HELPERS))
async def test_a_refused_write_raises_the_api_error_of_its_status(
    kube: kr8s.asyncio.Api, apiserver: APIServer, helper: str, status: int
) -> None:
    write, verb, resource, names = HELPERS[helper]
    assert (await call(kube, "POST", CM, {"metadata": {"name": "c"}}))[0] == 201
    apiserver.faults.fail(status, verb=verb, resource=resource, times=1)
    raised: list[BaseException] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        if raised:
            return
        try:
            await write(obj, ctx)
        except Exception as error:
            raised.append(error)
        else:
            raised.append(AssertionError(f"{helper} raised nothing"))

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    ctrl.owns(Secret)
    assert await run_until(ctrl, reconcile, lambda: bool(raised), timeout=10)
    (error,) = raised
    assert type(error) is EXPECTED[status], repr(error)
    assert not isinstance(error, PatchError)
    assert names in str(error)
