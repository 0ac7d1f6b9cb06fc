"""CRD conversion between the versions of a typed kind, served as ConversionReview v1
(``apiextensions.k8s.io/v1``; Kubernetes docs, "Versions in CustomResourceDefinitions").

Converters are functions from one version's model to another's, registered per pair
(``converter(WebsiteV1, WebsiteV2)``). An object is converted along the shortest chain of
registered converters, so hub-and-spoke (controller-runtime's ``Hub``/``Convertible``: each
spoke to and from the hub) and direct pairs both work. kube-apiserver allows a conversion
to change nothing in ``metadata`` but labels and annotations: the rest of the input's
metadata is kept as it came.
"""

from __future__ import annotations

import copy
import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..client.errors import describe
from ..meta.objects import metadata_of
from ..runtime.action import require_sync
from ..runtime.typed import invalid_object_error, is_model_class

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["ConversionError", "Converters", "conversion_response"]

REVIEW_API_VERSION = "apiextensions.k8s.io/v1"

log = logging.getLogger("reconcile_kit.webhooks")

# Any: a converter takes one model class and returns another (its own types, unknown here)
Converter = Callable[[Any], Any]


class ConversionError(Exception):
    """An object cannot be converted (no chain of converters, or it does not fit its model);
    the ConversionReview answers Failure with this message."""


class Converters:
    """The registered converters of all typed kinds, by (group, kind)."""

    def __init__(self) -> None:
        self._classes: dict[tuple[str, str, str], Any] = {}  # (group, kind, version) -> model
        self._edges: dict[tuple[str, str], dict[str, dict[str, Converter]]] = {}

    def add(
        self, source: type[CustomResource], target: type[CustomResource], function: Converter
    ) -> None:
        """Register ``function`` converting a ``source`` model into a ``target`` model
        (CustomResource classes of one group and kind); TypeError/ValueError otherwise
        (TypeError too for an ``async def`` ``function``: conversions are synchronous)."""
        require_sync(function, "converter", "(source model) -> target model")
        for cls in (source, target):
            if not is_model_class(cls):
                raise TypeError(f"a converter converts CustomResource classes, not {cls!r}")
        a, b = source.resource, target.resource
        if (a.group, a.kind) != (b.group, b.kind) or a.version == b.version:
            raise ValueError(
                f"a converter joins two versions of one kind, not {a.api_version} {a.kind} "
                f"and {b.api_version} {b.kind}"
            )
        for info, cls in ((a, source), (b, target)):
            self._classes[(info.group, info.kind, info.version)] = cls
        edges = self._edges.setdefault((a.group, a.kind), {})
        edges.setdefault(a.version, {})[b.version] = function

    def models(self) -> list[Any]:
        """One model class of every kind with converters."""
        seen: dict[tuple[str, str], Any] = {}
        for (group, kind, _), cls in self._classes.items():
            seen.setdefault((group, kind), cls)
        return list(seen.values())

    def convert(self, obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        """``obj`` (JSON) in ``desired_api_version``; ConversionError naming the object."""
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        if api_version == desired_api_version:
            return obj
        group, _, version = api_version.rpartition("/")
        desired_group, _, desired = desired_api_version.rpartition("/")
        meta = metadata_of(obj)
        where = describe(kind, meta.get("namespace"), meta.get("name", ""))
        if group != desired_group:
            raise ConversionError(f"{where}: cannot convert {api_version} to {desired_api_version}")
        chain = self._chain(group, kind, version, desired)
        if chain is None:
            raise ConversionError(f"{where}: no converter from {api_version} to {desired}")
        source = self._classes[(group, kind, version)]
        try:
            model = source.from_raw(copy.deepcopy(obj))
        except ValueError as err:
            problems = invalid_object_error(obj, err).problems
            raise ConversionError(
                f"{where} does not fit its model: " + "; ".join(problems)
            ) from None
        for function, target in chain:
            model = function(model)
            if type(model) is not target:
                raise ConversionError(
                    f"{where}: converter {getattr(function, '__name__', function)} returned "
                    f"{type(model).__name__}, not {target.__name__} ({target.resource.version})"
                )
        out: dict[str, Any] = model.to_raw()
        out["apiVersion"], out["kind"] = desired_api_version, kind
        out["metadata"] = _metadata(metadata_of(obj), metadata_of(out))
        return out

    def _chain(
        self, group: str, kind: str, start: str, goal: str
    ) -> list[tuple[Converter, Any]] | None:
        """The converters from ``start`` to ``goal`` with the model each must return."""
        edges = self._edges.get((group, kind), {})
        paths: dict[str, list[tuple[Converter, Any]]] = {start: []}
        queue = deque([start])
        while queue:
            version = queue.popleft()
            if version == goal:
                return paths[version]
            for following, function in edges.get(version, {}).items():
                if following not in paths:
                    target = self._classes[(group, kind, following)]
                    paths[following] = [*paths[version], (function, target)]
                    queue.append(following)
        return None


def conversion_response(review: object, converters: Converters) -> dict[str, Any]:
    """The ConversionReview answer to ``review``: every object converted, or a Failure
    naming the first that could not be. ValueError when ``review`` is not a v1
    ConversionReview."""
    if not isinstance(review, dict) or not isinstance(review.get("request"), dict):
        raise ValueError("not a ConversionReview: no request")
    if review.get("apiVersion") != REVIEW_API_VERSION:
        raise ValueError(f"ConversionReview apiVersion {review.get('apiVersion')!r}: only v1")
    request = review["request"]
    response: dict[str, Any] = {"uid": request.get("uid", "")}
    desired = str(request.get("desiredAPIVersion", ""))
    try:
        converted = [converters.convert(obj, desired) for obj in request.get("objects") or []]
    except ConversionError as error:
        response["result"] = {"status": "Failure", "message": str(error)}
        response["convertedObjects"] = []
    except Exception as error:  # a converter's own bug: a Failure, never a crash
        message = f"converter failed: {type(error).__name__}: {error}"
        log.exception("conversion to %s failed", desired)
        response["result"] = {"status": "Failure", "message": message}
        response["convertedObjects"] = []
    else:
        response["result"] = {"status": "Success"}
        response["convertedObjects"] = converted
    return {"apiVersion": REVIEW_API_VERSION, "kind": "ConversionReview", "response": response}


def _metadata(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    metadata = copy.deepcopy(before)
    for key in ("labels", "annotations"):
        if after.get(key) is not None:
            metadata[key] = after[key]
    return metadata
