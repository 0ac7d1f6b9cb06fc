"""Installing CustomResourceDefinitions in a test and waiting until they can be used.

A real kube-apiserver establishes a new CRD asynchronously (``conditions`` is null at
first, then its resources answer 404 for a moment), and kr8s's ``wait("condition=
Established")`` cannot read a null ``conditions``; :func:`install_crds` waits the way that
works on both, as envtest's ``WaitForCRDs`` does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..client.request import send

__all__ = ["install_crds"]

CRD_VERSION = "apiextensions.k8s.io/v1"


async def install_crds(api: Any, *crds: Any, timeout: float = 30.0) -> None:
    """Create each CRD (a CRD document, or a typed CustomResource class whose ``crd()`` is
    used) unless one of that name exists, then wait until every one is Established and its
    resources are served (a LIST of the storage version answers).

    Args:
        api: a kr8s asyncio Api.
        crds: CRD dicts or CustomResource classes.
        timeout: seconds to wait for all of them.

    Raises:
        APIError: the server refused a CRD (InvalidError names the field).
        TimeoutError: a CRD was not usable within ``timeout`` seconds (names it).
    """
    documents = [crd.crd() if hasattr(crd, "crd") else crd for crd in crds]
    for document in documents:
        await send(
            api,
            "POST",
            version=CRD_VERSION,
            url="customresourcedefinitions",
            body=document,
            accept=(409,),
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for document in documents:
        while not await _usable(api, document):
            if loop.time() > deadline:
                name = document["metadata"]["name"]
                raise TimeoutError(f"CRD {name} not established and served within {timeout} s")
            await asyncio.sleep(0.05)  # no watch on one CRD's condition to await here


async def _usable(api: Any, document: dict[str, Any]) -> bool:
    name = document["metadata"]["name"]
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
        accept=(404, 429, 503),
    )
    return listing.status == 200
