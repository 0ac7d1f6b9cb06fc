"""Typed custom resources: one pydantic model gives the typed object, its CRD and the apply
body (kube-rs ``#[derive(CustomResource)]``, kubebuilder's types + controller-gen, in
Python).

.. code-block:: python

    class WebsiteSpec(KubeModel):
        replicas: Annotated[int, Field(ge=0)] = 1
        image: str

    class Website(CustomResource, group="web.example.com", version="v1", kind="Website"):
        spec: WebsiteSpec
        status: WebsiteStatus | None = None

Fields are snake_case in Python and camelCase on the wire (``KubeModel``'s aliases); fields
a model does not declare are kept (``extra="allow"``), so reading and writing back an
object never drops what another writer set. ``to_raw()`` gives only the fields that were
read or set (pydantic's ``exclude_unset``): the body of a minimal patch or of a server-side
apply that claims exactly what the reconcile set.

A model checks its CEL ``Rule``s when it is validated (``Website(...)``,
``Website.model_validate(raw)``), with the evaluator the embedded server uses
(:mod:`reconcile_kit.meta.cel`), so a model accepts what the API servers accept; objects
read from the server (``from_raw``) are not checked again, and transition rules (naming
``oldSelf``) are left to the server. The evaluator is common-expression-language, in the
``[cel]`` extra (``pip install 'reconcile-kit[cel]'``; ``[testing]`` includes it): validating
a model that carries rules (``Rule``) without it raises
:class:`~reconcile_kit.client.extras.MissingExtraError` (a ``ModuleNotFoundError``) naming
the extra; models without rules never need it. ``await site.create(api)`` creates one,
``await Website.get(api, name, namespace)`` reads one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal, Self

import orjson
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..client.errors import describe
from ..meta.objects import metadata_of
from .changed import claim_changed_defaults
from .schema import SchemaError, openapi_schema
from .tracking import TrackedModel, mark

__all__ = [
    "Condition",
    "CustomResource",
    "CustomResourceInfo",
    "KubeModel",
    "ObjectMeta",
    "OwnerReference",
    "PrinterColumn",
    "Scale",
    "crd_document",
]


_FROM_SERVER = {"from_server": True}
"""Validation context of objects the API server served (its own checks are not redone)."""


class KubeModel(TrackedModel):
    """Base for spec and status models: camelCase JSON names (``container_port`` is
    ``containerPort``), names or aliases accepted, unknown fields kept; changes are tracked
    (:class:`~reconcile_kit.typed.tracking.TrackedModel`)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", serialize_by_alias=True
    )


class OwnerReference(KubeModel):
    """metav1.OwnerReference."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(KubeModel):
    """metav1.ObjectMeta: the fields reconcilers read and write; the rest is kept as is."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    owner_references: list[OwnerReference] | None = None


class Condition(KubeModel):
    """metav1.Condition: a kstatus condition (``type`` ``Ready``, ``status`` ``"True"``)."""

    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None
    observed_generation: int | None = None


@dataclass(frozen=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry: ``kubectl get`` shows ``json_path``'s value.
    ``type``: integer, number, string, boolean or date."""

    name: str
    json_path: str
    type: str = "string"
    description: str | None = None
    priority: int | None = None
    format: str | None = None

    def document(self) -> dict[str, Any]:
        """This column as an ``additionalPrinterColumns`` entry of the CRD."""
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        for key, value in (
            ("description", self.description),
            ("priority", self.priority),
            ("format", self.format),
        ):
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Scale:
    """The scale subresource: JSON paths of the replicas in spec and status, and of the
    status field holding the label selector (string form) if any."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None


@dataclass(frozen=True)
class CustomResourceInfo:
    """What a CustomResource class says about its kind (from its class keywords)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    scope: Literal["Namespaced", "Cluster"]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    scale: Scale | None = None
    served: bool = True
    storage: bool | None = None
    deprecated: bool = False

    @property
    def api_version(self) -> str:
        """``group/version``."""
        return f"{self.group}/{self.version}"

    @property
    def crd_name(self) -> str:
        """The CustomResourceDefinition's name, ``plural.group``."""
        return f"{self.plural}.{self.group}"


class CustomResource(KubeModel):
    """Base of a typed custom resource; subclass it with the kind's class keywords.

    Keywords: ``group``, ``version``, ``kind`` (required); ``plural`` (default: lower-case
    kind + "s"), ``singular``, ``scope`` ("Namespaced" or "Cluster"), ``short_names``,
    ``categories``, ``printer_columns`` (PrinterColumn), ``scale`` (Scale), ``served``,
    ``storage`` (several versions of one kind: exactly one is stored), ``deprecated``.
    A ``status`` field gives the status subresource.

    Raises:
        TypeError: at class creation, when a required keyword is missing.
    """

    resource: ClassVar[CustomResourceInfo]
    __reconcile_kit_model__: ClassVar[bool] = True  # meta.objects.MODEL_MARKER
    _kr8s_classes: ClassVar[dict[type, type[APIObject]]] = {}
    _rule_schemas: ClassVar[dict[type, dict[str, Any] | None]] = {}

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    _object: APIObject | None = PrivateAttr(default=None)

    def __init_subclass__(cls, **keywords: Any) -> None:
        super().__init_subclass__()
        if not keywords:
            return  # an intermediate base class
        missing = [k for k in ("group", "version", "kind") if not keywords.get(k)]
        if missing:
            raise TypeError(f"{cls.__name__}: CustomResource needs {', '.join(missing)}")
        kind = keywords.pop("kind")
        columns = tuple(keywords.pop("printer_columns", ()))
        cls.resource = CustomResourceInfo(
            group=keywords.pop("group"),
            version=keywords.pop("version"),
            kind=kind,
            plural=keywords.pop("plural", None) or kind.lower() + "s",
            singular=keywords.pop("singular", None) or kind.lower(),
            scope=keywords.pop("scope", "Namespaced"),
            short_names=tuple(keywords.pop("short_names", ())),
            categories=tuple(keywords.pop("categories", ())),
            printer_columns=columns,
            scale=keywords.pop("scale", None),
            served=keywords.pop("served", True),
            storage=keywords.pop("storage", None),
            deprecated=keywords.pop("deprecated", False),
        )
        if keywords:
            raise TypeError(f"{cls.__name__}: unknown CustomResource keywords {sorted(keywords)}")

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:  # Any: pydantic's signature
        """pydantic's ``model_validate`` (same options).

        Raises:
            ValidationError: ``obj`` does not fit the model: pydantic's, titled with the
                object's kind, namespace and name (``1 validation error for Website
                default/demo``) as a CEL rule's message names them, its errors (field,
                message, type, input) as they were.
        """
        try:
            return super().model_validate(obj, **options)
        except ValidationError as error:
            raise _named(cls, obj, error) from None

    @model_validator(mode="after")
    def _check_rules(self, info: ValidationInfo) -> Self:
        """The model's CEL Rules on the object as the server would see it (ValueError naming
        the object and each field whose rule fails); not for objects the server served.
        MissingExtraError when the model has rules and the ``[cel]`` extra is missing."""
        if info.context and info.context.get("from_server"):
            return self
        schema = type(self)._rules_schema()
        if schema is None:
            return self
        from ..meta.cel import rule_causes

        document = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        failed = rule_causes(schema, document, transitions=False)
        if failed:
            meta = metadata_of(document)
            where = describe(type(self).resource.kind, meta.get("namespace"), meta.get("name"))
            problems = "; ".join(f"{c['field'] or '<root>'}: {c['message']}" for c in failed)
            raise ValueError(f"{where}: {problems}")
        return self

    @classmethod
    def _rules_schema(cls) -> dict[str, Any] | None:
        """The openAPIV3Schema of this class when it carries CEL rules (once per class)."""
        if cls not in CustomResource._rule_schemas:
            schema = openapi_schema(cls)
            has_rules = b"x-kubernetes-validations" in orjson.dumps(schema)
            CustomResource._rule_schemas[cls] = schema if has_rules else None
        return CustomResource._rule_schemas[cls]

    def model_post_init(self, context: Any, /) -> None:  # Any: pydantic's signature
        """Fill ``apiVersion`` and ``kind`` from the class when not given (pydantic's hook
        after validation)."""
        info = type(self).resource
        if not self.api_version:
            self.api_version = info.api_version
        if not self.kind:
            self.kind = info.kind

    @classmethod
    def from_raw(cls, raw: dict[str, Any], obj: APIObject | None = None) -> Self:
        """The typed object of a JSON dict (as the API serves it), bound to ``obj`` (the
        kr8s object it was read as, if any); pydantic's ValidationError when it does not
        fit the model."""
        typed = cls.model_validate(raw, context=_FROM_SERVER)
        typed._object = obj
        return typed

    @classmethod
    def kr8s_class(cls) -> type[APIObject]:
        """The kr8s APIObject class of this kind (made once, with kr8s's ``new_class``)."""
        found = CustomResource._kr8s_classes.get(cls)
        if found is None:
            from kr8s.asyncio.objects import new_class

            info = cls.resource
            found = new_class(
                info.kind,
                info.api_version,
                namespaced=info.scope == "Namespaced",
                plural=info.plural,
            )
            CustomResource._kr8s_classes[cls] = found
        return found

    async def create(self, api: Api, *, namespace: str | None = None) -> Self:
        """Create this object on the server (one POST of ``to_raw()``) and become the
        server's answer, bound to a kr8s object on ``api`` (so ``PatchHelper(self)`` and
        ``self.object`` work at once); returns ``self``.

        Args:
            api: a ``kr8s.asyncio.Api``.
            namespace: for a namespaced kind, where (default: ``metadata.namespace``, else
                the api's namespace).

        Raises:
            AlreadyExistsError: an object of that name exists.
            InvalidError: the server refused it (its ``causes`` name the fields).
            APIError: any other refusal.
        """
        from ..client.request import Target, send

        info = type(self).resource
        where = self._namespace(api, namespace)
        reply = await send(
            api,
            "POST",
            version=info.api_version,
            namespace=where,
            url=info.plural,
            body=self.to_raw(),
            target=Target(info.kind, where, self.metadata.name),
        )
        answer: dict[str, Any] = reply.json()
        self._object = type(self).kr8s_class()(answer, api=api)
        self.replace_with(answer)
        return self

    @classmethod
    async def get(cls, api: Api, name: str, namespace: str | None = None) -> Self:
        """The object ``name`` as the server holds it now (one GET), bound to a kr8s
        object on ``api``. ``namespace``: for a namespaced kind (default: the api's).

        Raises:
            NotFoundError: there is none.
            APIError: any other refusal.
            pydantic.ValidationError: it does not fit the model.
        """
        from ..client.request import Target, send

        info = cls.resource
        where = (namespace or api.namespace) if info.scope == "Namespaced" else None
        reply = await send(
            api,
            "GET",
            version=info.api_version,
            namespace=where,
            url=f"{info.plural}/{name}",
            target=Target(info.kind, where, name),
        )
        answer: dict[str, Any] = reply.json()
        return cls.from_raw(answer, cls.kr8s_class()(answer, api=api))

    def _namespace(self, api: Any, namespace: str | None) -> str | None:
        if type(self).resource.scope != "Namespaced":
            return None
        chosen = namespace or self.metadata.namespace or api.namespace
        if self.metadata.namespace != chosen:
            self.metadata.namespace = chosen
        return str(chosen)

    @property
    def object(self) -> APIObject | None:
        """The kr8s object this one was read as (None for one built in code), for code that
        wants kr8s's API; it holds the state of the last write through the toolkit."""
        return self._object

    def replace_with(self, raw: dict[str, Any]) -> None:
        """Become ``raw`` (the server's answer) in place, staying bound to the same kr8s
        object.

        Raises:
            ValidationError: ``raw`` does not fit the model (pydantic's).
        """
        fresh = type(self).model_validate(raw, context=_FROM_SERVER)
        mark(self)
        for name in type(self).model_fields:
            object.__setattr__(self, name, getattr(fresh, name))
        object.__setattr__(self, "__pydantic_extra__", fresh.__pydantic_extra__)
        object.__setattr__(self, "__pydantic_fields_set__", set(fresh.model_fields_set))

    def to_raw(self) -> dict[str, Any]:
        """The object as JSON: the fields read or set (a default list, dict or model changed
        in place counts as set: :mod:`.changed`), apiVersion and kind always."""
        claim_changed_defaults(self)
        raw: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        raw["apiVersion"] = self.api_version
        raw["kind"] = self.kind
        return raw

    @classmethod
    def crd(cls) -> dict[str, Any]:
        """This kind's CustomResourceDefinition (all CustomResource classes of its group
        and kind that are defined, one version each). See :func:`crd_document`."""
        return crd_document(cls)


def crd_document(*classes: type[CustomResource]) -> dict[str, Any]:
    """The apiextensions.k8s.io/v1 CRD of ``classes``: one version each, all of one group
    and kind (with one class, every defined version of its kind).

    Raises:
        SchemaError: a model no structural schema can express, or versions that disagree
            (group, kind, names, scope) or do not name exactly one storage version.
    """
    if len(classes) == 1:
        classes = tuple(_versions_of(classes[0]))
    infos = [c.resource for c in classes]
    first = infos[0]
    for info in infos[1:]:
        if (info.group, info.kind, info.plural, info.scope) != (
            first.group,
            first.kind,
            first.plural,
            first.scope,
        ):
            raise SchemaError(f"{first.kind}: versions disagree on group, kind, plural or scope")
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": first.crd_name},
        "spec": {
            "group": first.group,
            "names": _names(first),
            "scope": first.scope,
            "versions": [_version(c, _is_storage(c, infos)) for c in classes],
        },
    }


def _versions_of(cls: type[CustomResource]) -> list[type[CustomResource]]:
    info = cls.resource
    found = [
        c
        for c in _subclasses(CustomResource)
        if "resource" in c.__dict__
        and (c.resource.group, c.resource.kind) == (info.group, info.kind)
    ]
    by_version = {c.resource.version: c for c in found}  # a module loaded twice: the latest
    by_version[info.version] = cls
    return list(by_version.values())


def _subclasses(cls: type[CustomResource]) -> list[type[CustomResource]]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def _is_storage(cls: type[CustomResource], infos: list[CustomResourceInfo]) -> bool:
    if len(infos) == 1:
        return True
    stored = [i for i in infos if i.storage]
    if len(stored) != 1:
        raise SchemaError(f"{infos[0].kind}: exactly one version needs storage=True")
    return cls.resource.storage is True


def _names(info: CustomResourceInfo) -> dict[str, Any]:
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": f"{info.kind}List",
        "plural": info.plural,
        "singular": info.singular,
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    if info.categories:
        names["categories"] = list(info.categories)
    return names


def _version(cls: type[CustomResource], storage: bool) -> dict[str, Any]:
    info = cls.resource
    version: dict[str, Any] = {
        "name": info.version,
        "served": info.served,
        "storage": storage,
        "schema": {"openAPIV3Schema": openapi_schema(cls)},
    }
    if info.deprecated:
        version["deprecated"] = True
    subresources: dict[str, Any] = {}
    if "status" in cls.model_fields:
        subresources["status"] = {}
    if info.scale is not None:
        scale = {
            "specReplicasPath": info.scale.spec_replicas_path,
            "statusReplicasPath": info.scale.status_replicas_path,
        }
        if info.scale.label_selector_path:
            scale["labelSelectorPath"] = info.scale.label_selector_path
        subresources["scale"] = scale
    if subresources:
        version["subresources"] = subresources
    if info.printer_columns:
        version["additionalPrinterColumns"] = [c.document() for c in info.printer_columns]
    return version


def _named(cls: type[CustomResource], data: object, error: ValidationError) -> ValidationError:
    """pydantic's ``error`` about ``data`` (a JSON dict or a model),
    titled ``Kind namespace/name`` instead of the class's name; ``error`` itself when that
    tells nothing more or its errors cannot be raised again (a custom error type)."""
    info = getattr(cls, "resource", None)
    meta: Any = (
        data.get("metadata") if isinstance(data, Mapping) else getattr(data, "metadata", None)
    )
    if isinstance(meta, ObjectMeta):
        meta = {"namespace": meta.namespace, "name": meta.name}
    if not isinstance(meta, Mapping):
        meta = {}
    title = describe(info.kind if info else cls.__name__, meta.get("namespace"), meta.get("name"))
    if title == error.title:
        return error
    try:
        return ValidationError.from_exception_data(title, error.errors())  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        return error
