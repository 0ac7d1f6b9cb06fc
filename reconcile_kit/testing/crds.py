"""Installing CustomResourceDefinitions in a test and waiting until they can be used
(:func:`reconcile_kit.client.crds.wait_until_served`: Established, then served, as
envtest's ``WaitForCRDs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from kr8s.asyncio import Api

from ..client.crds import CRD_VERSION, wait_until_served
from ..client.request import Target, send
from ..meta.objects import is_model, is_model_class

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
        TypeError: an argument is neither a mapping nor a CustomResource class (or one of
            its models), e.g. a kr8s class such as ConfigMap; checked before anything is sent.
        APIError: the server refused a CRD (it names the CustomResourceDefinition;
            InvalidError names the field).
        TimeoutError: a CRD was not usable within ``timeout`` seconds (names it).
    """
    documents = [_document(crd) for crd in crds]
    for document in documents:
        await send(
            api,
            "POST",
            version=CRD_VERSION,
            url="customresourcedefinitions",
            body=document,
            target=Target("CustomResourceDefinition", None, _name(document)),
            accept=(409,),
        )
    names = [document["metadata"]["name"] for document in documents]
    await wait_until_served(api, *names, timeout=timeout)


def _document(crd: object) -> Mapping[str, Any]:
    """The CRD document ``crd`` stands for: itself, or a CustomResource class's ``crd()``."""
    if isinstance(crd, Mapping):
        return crd
    model_class = type(crd) if is_model(crd) else crd  # a model stands for its class
    if is_model_class(model_class):
        document: Mapping[str, Any] = cast("type[CustomResource]", model_class).crd()
        return document
    what = f"the class {crd.__qualname__}" if isinstance(crd, type) else repr(crd)[:80]
    raise TypeError(
        f"install_crds: {what} is neither a CRD document (a mapping) nor a typed "
        "CustomResource class (reconcile_kit.typed.CustomResource); built-in kinds such as "
        "ConfigMap need no CRD"
    )


def _name(document: Mapping[str, Any]) -> str | None:
    """``metadata.name`` of a CRD document, when it has one."""
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) else None
