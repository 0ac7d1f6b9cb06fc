"""CustomResourceDefinitions generated from CustomResource classes (controller-gen's
``crd`` generator, kube-rs's ``CustomResourceExt::crd``, from pydantic models).

The CRD document of a class is :func:`crd_document` (``CustomResource.crd()``, defined
beside the class in :mod:`.resource`), its openAPIV3Schema :func:`openapi_schema` (in
:mod:`.schema`, which the class's own CEL rule check uses too); this module finds the
classes of a module (``reconcile-kit crd``) and keeps those names importable from here."""

from __future__ import annotations

import inspect
from types import ModuleType

from .resource import CustomResource, crd_document
from .schema import openapi_schema, plain_text

__all__ = ["crd_document", "custom_resources", "openapi_schema", "plain_text"]


def custom_resources(module: ModuleType, attr: str = "") -> list[type[CustomResource]]:
    """The CustomResource classes of ``module``: the one named ``attr``, or (no attr)
    every kind defined there.

    Raises:
        ValueError: there is none.
    """
    if attr:
        found = getattr(module, attr, None)
        if not (inspect.isclass(found) and issubclass(found, CustomResource)):
            raise ValueError(f"{module.__name__}:{attr} is not a CustomResource class")
        return [found]
    classes = [
        c
        for c in vars(module).values()
        if inspect.isclass(c)
        and issubclass(c, CustomResource)
        and "resource" in c.__dict__
        and c.__module__ == module.__name__
    ]
    if not classes:
        raise ValueError(f"{module.__name__} defines no CustomResource class")
    return classes
