"""Installing CustomResourceDefinitions in a test and waiting until they can be used
(:func:`reconcile_kit.client.crds.wait_until_served`: Established, then served, as
envtest's ``WaitForCRDs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kr8s.asyncio import Api

from ..client.crds import CRD_VERSION, wait_until_served
from ..client.request import send

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["install_crds"]


async def install_crds(
    api: Api, *crds: Mapping[str, Any] | type[CustomResource], timeout: float = 30.0
) -> None:
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
    documents = [crd if isinstance(crd, Mapping) else crd.crd() for crd in crds]
    for document in documents:
        await send(
            api,
            "POST",
            version=CRD_VERSION,
            url="customresourcedefinitions",
            body=document,
            accept=(409,),
        )
    names = [document["metadata"]["name"] for document in documents]
    await wait_until_served(api, *names, timeout=timeout)
