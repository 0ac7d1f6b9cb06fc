"""Waiting until a CustomResourceDefinition can be used.

A real kube-apiserver establishes a new CRD asynchronously: ``status.conditions`` is null
at first (kr8s's ``wait("condition=Established")`` cannot read it), then Established, and
for a moment more its resources answer 404, 429 or 503 while storage initializes.
:func:`wait_until_served` waits until the CRD is Established and a LIST of its storage
version answers, as envtest's ``WaitForCRDs`` does.
"""

from __future__ import annotations

import asyncio

from kr8s.asyncio import Api

from .request import send

__all__ = ["CRD_VERSION", "is_served", "wait_until_served"]

CRD_VERSION = "apiextensions.k8s.io/v1"


async def is_served(api: Api, name: str) -> bool:
    """Whether the CRD ``name`` (``<plural>.<group>``) is Established and a LIST of its
    storage version answers 200, through ``api`` (a kr8s asyncio Api). False while it does
    not exist. An identity that may not list the resource cluster-wide (a namespaced
    operator: 403) gets the Established condition alone."""
    reply = await send(
        api, "GET", version=CRD_VERSION, url=f"customresourcedefinitions/{name}", accept=(404,)
    )
    crd = reply.json() if reply.status == 200 else {}
    conditions = (crd.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
        return False
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("storage"))
    listing = await send(
        api,
        "GET",
        version=f"{spec['group']}/{version}",
        url=spec["names"]["plural"],
        params={"limit": "1"},
        accept=(403, 404, 429, 503),
    )
    return listing.status in (200, 403)  # 403: not ours to list cluster-wide; Established


async def wait_until_served(api: Api, *names: str, timeout: float = 30.0) -> None:
    """Wait until every CRD of ``names`` is Established and served (:func:`is_served`).

    Raises:
        TimeoutError: one was not within ``timeout`` seconds (the message names it).
        APIError: the server refused a read (e.g. ForbiddenError without ``get`` on CRDs).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for name in names:
        while not await is_served(api, name):
            if loop.time() > deadline:
                raise TimeoutError(f"CRD {name} not established and served within {timeout} s")
            await asyncio.sleep(0.05)  # the API has no watch on one CRD's condition to await
