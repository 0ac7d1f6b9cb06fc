"""Per-kind write rules (kube-apiserver's registry strategies), applied to raw objects.

Covers server-set metadata, generation, the status subresource split, and the defaults
and initial status built-in kinds get on create. Sources: k8s.io/apiserver
pkg/registry/rest (BeforeCreate/BeforeUpdate), kubernetes pkg/registry/*/strategy.go,
apiextensions-apiserver pkg/registry/customresource/strategy.go.
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from ...meta.gostrings import go_quote
from ...meta.time import now_time
from ...meta.validation import qualified_name_errors
from . import derived, errors, hpaversions
from .gozero import fill_go_zero, go_equal
from .meta import (
    annotation_causes,
    generate_name_causes,
    label_causes,
    name_causes,
    new_uid,
    string_map_causes,
)
from .poddefaults import default_host_ports, default_requests, qos_class
from .resources import ADMISSION_GROUP, RBAC_GROUP, ResourceType
from .store import Obj
from .validation.admissionpolicies import binding_defaults, policy_defaults
from .validation.apiservices import service_reference_defaults
from .validation.flowcontrol import flow_schema_defaults, priority_level_defaults
from .validation.gorender import go_value
from .validation.volumes import SOURCE_FIELDS
from .webhookconfig import MUTATING, VALIDATING, configuration_defaults

_SERVER_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
    "selfLink",
)


GENERIC_METADATA_ONLY = frozenset({("", "events"), ("policy", "poddisruptionbudgets")})
"""Kinds whose validation (ValidateEventCreate for core/v1, ValidatePodDisruptionBudget)
never calls ValidateObjectMeta: only kube-apiserver's generic check of every object's
metadata (rest.BeforeCreate, names as path segments) applies, and on a create only once
the kind's own rules passed."""


def name_style(rt: ResourceType) -> str:
    """The rule for a kind's names, as its ValidateObjectMeta call names it (RBAC kinds:
    ValidateRBACName, a path segment, as an APIService's; kinds of
    :data:`GENERIC_METADATA_ONLY`: the generic check's path segment)."""
    if rt.group == RBAC_GROUP or (rt.group, rt.plural) in GENERIC_METADATA_ONLY:
        return "path"
    if (rt.group, rt.plural) == ("apiregistration.k8s.io", "apiservices"):
        return "path"  # then version.group (validation/apiservices.py)
    if rt.plural == "namespaces" or (rt.group, rt.plural) == ("apps", "statefulsets"):
        return "label"  # ValidateNamespaceName, ValidateStatefulSetName: DNS-1123 labels
    if rt.plural == "services" and rt.group == "":
        return "dns1035"
    return "subdomain"


def metadata_causes(rt: ResourceType, obj: Obj) -> list[dict[str, str]]:
    meta = obj["metadata"]
    causes = generate_name_causes(meta.get("generateName"), name_style(rt))
    causes += name_causes(meta["name"], name_style(rt))
    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        detail = "Invalid value: " + str(generation) + ": must be greater than or equal to 0"
        causes.append(errors.cause("FieldValueInvalid", "metadata.generation", detail))
    causes += label_causes(meta.get("labels"))
    annotation_type = string_map_causes(meta.get("annotations"), "metadata.annotations")
    causes += annotation_type or annotation_causes(meta.get("annotations"), "metadata.annotations")
    # apimachinery ValidateObjectMetaAccessor's order: owner references, then finalizers
    causes += owner_reference_causes(meta.get("ownerReferences"))
    finalizers = meta.get("finalizers")
    if finalizers is not None and not (
        isinstance(finalizers, list) and all(isinstance(f, str) for f in finalizers)
    ):
        causes.append(
            errors.cause(
                "FieldValueTypeInvalid",
                "metadata.finalizers",
                "Invalid value: must be a list of strings",
            )
        )
    elif finalizers:
        # kube-apiserver's own kinds check "standard or fully qualified"; CRDs and custom
        # resources (apiextensions-apiserver) only the generic rules
        kube_kind = rt.builtin and rt.schema is None and rt.group != "apiextensions.k8s.io"
        causes += finalizer_causes(finalizers, kube_kind)
    return causes


_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def finalizer_causes(finalizers: list[str], builtin: bool) -> list[dict[str, str]]:
    """apimachinery ValidateFinalizers (qualified names, orphan vs foregroundDeletion) and
    then, for built-in kinds, core validation's "standard or fully qualified" rule (core
    ValidateObjectMeta runs it after the whole of apimachinery's ValidateObjectMeta)."""
    causes = []
    for name in finalizers:
        for message in qualified_name_errors(name):
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    "metadata.finalizers",
                    f'Invalid value: "{name}": {message}',
                )
            )
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "metadata.finalizers",
                f"Invalid value: {_go_strings(finalizers)}: finalizer orphan and"
                " foregroundDeletion cannot be both set",
            )
        )
    for index, name in enumerate(finalizers):
        if builtin and "/" not in name and name not in _STANDARD_FINALIZERS:
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    f"metadata.finalizers[{index}]",
                    f'Invalid value: "{name}": name is neither a standard finalizer name nor'
                    " is it fully qualified",
                )
            )
    return causes


def _owner_version(api_version: str) -> str:
    """The version schema.FromAPIVersionAndKind finds in an owner's apiVersion ("" when
    ParseGroupVersion fails: more than one slash)."""
    if api_version.count("/") > 1:
        return ""
    return api_version.rpartition("/")[2]


def owner_reference_causes(refs: Any) -> list[dict[str, str]]:
    """Causes for invalid ``metadata.ownerReferences`` (apimachinery ValidateOwnerReferences)."""
    if refs is None:
        return []
    field = "metadata.ownerReferences"
    if not isinstance(refs, list) or not all(isinstance(r, dict) for r in refs):
        return [errors.cause("FieldValueTypeInvalid", field, "Invalid value: must be a list")]
    causes = []
    first_controller = ""
    for ref in refs:
        api_version = str(ref.get("apiVersion") or "")
        if not _owner_version(api_version):
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    f"{field}.apiVersion",
                    f"Invalid value: {go_quote(api_version)}: version must not be empty",
                )
            )
        for key in ("kind", "name"):
            if not ref.get(key):
                causes.append(
                    errors.cause(
                        "FieldValueInvalid",
                        f"{field}.{key}",
                        f'Invalid value: "": {key} must not be empty',
                    )
                )
        if not ref.get("uid"):
            causes.append(
                errors.cause(
                    "FieldValueInvalid", f"{field}.uid", 'Invalid value: "": uid must not be empty'
                )
            )
        if ref.get("controller") is True:
            # one cause for each controller after the first, the references printed by %#v
            controller = f"{ref.get('kind') or ''}/{ref.get('name') or ''}"
            if not first_controller:
                first_controller = controller
                continue
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {go_value(refs, '[]v1.OwnerReference')}: Only one"
                    ' reference can have Controller set to true. Found "true" in references'
                    f" for {first_controller} and {controller}",
                )
            )
    return causes


_OMITEMPTY_META = ("labels", "annotations", "finalizers", "ownerReferences")
_OMITEMPTY_TOP = {
    ("", "configmaps"): ("data", "binaryData"),
    ("", "secrets"): ("data", "stringData"),
}
_NULL_WHEN_EMPTY = {
    ("rbac.authorization.k8s.io", "roles"): ("rules",),
    ("rbac.authorization.k8s.io", "clusterroles"): ("rules",),
}
"""Lists without ``omitempty`` that protobuf storage gives back nil: ``null`` when empty."""


def omit_empty(rt: ResourceType, obj: Obj) -> None:
    """Drop empty maps and lists that Go's ``omitempty`` never serialises (in place).

    ObjectMeta's labels, annotations, finalizers and ownerReferences (for every kind, custom
    resources included: their metadata is typed), and ConfigMap/Secret data: a write of
    ``labels: {}`` stores nothing and, when nothing else changed, is a no-op. An empty or
    missing Role/ClusterRole ``rules`` is ``null``, as kube-apiserver reads it back.
    """
    meta = obj.get("metadata") or {}
    for key in _OMITEMPTY_META:
        if key in meta and not meta[key]:
            del meta[key]
    for key in _OMITEMPTY_TOP.get((rt.group, rt.plural), ()):
        if key in obj and not obj[key]:
            del obj[key]
    for key in _NULL_WHEN_EMPTY.get((rt.group, rt.plural), ()):
        if not obj.get(key):
            obj[key] = None


def prepare_create(rt: ResourceType, obj: Obj) -> None:
    """Set server-owned metadata, initial status and kind defaults on a new object."""
    meta = obj["metadata"]
    generation = meta.get("generation")
    for key in _SERVER_META:
        meta.pop(key, None)
    if rt.builtin and rt.generation in ("none", "update") and generation:
        # a kind whose create strategy leaves the generation alone stores the client's
        # (an update keeps the stored one: _keep_server_meta)
        meta["generation"] = generation
    meta["uid"] = new_uid()
    meta["creationTimestamp"] = now_time()
    if rt.generation not in ("none", "update"):
        meta["generation"] = 1
    if rt.status and rt.plural != "nodes":  # "Nodes allow *all* fields ... on create"
        obj.pop("status", None)
    kind = (rt.group, rt.plural)
    _CREATE_ONLY_DEFAULTS.get(kind, _CREATE_DEFAULTS.get(kind, _no_defaults))(obj)
    derived.CREATE_ONLY.get(kind, _no_defaults)(obj)
    fill_status_zeros(rt, obj)


def kind_defaults(rt: ResourceType, obj: Obj) -> None:
    """The kind's scheme defaults alone (what a mutating webhook sees); a Service's
    allocations (clusterIP, node ports) happen later, in storage, as in kube-apiserver."""
    if (rt.group, rt.plural) != ("", "services"):
        _CREATE_DEFAULTS.get((rt.group, rt.plural), _no_defaults)(obj)


def generation_changed(rt: ResourceType, new: Obj, old: Obj) -> bool:
    """Whether an update from ``old`` to ``new`` bumps metadata.generation."""
    if rt.generation in ("spec", "update"):
        if (rt.group, rt.plural) in _REFLECT_EQUAL:
            new_spec, old_spec = new.get("spec"), old.get("spec")
            return not go_equal(new_spec, old_spec) or _empties(new_spec) != _empties(old_spec)
        return not _same_spec(rt, new, old)
    if rt.generation == "spec+annotations":
        # Semantic.DeepEqual: an empty map equals a nil one
        annotations = (
            new["metadata"].get("annotations") or {},
            old["metadata"].get("annotations") or {},
        )
        return not _same_spec(rt, new, old) or annotations[0] != annotations[1]
    if rt.generation == "custom":
        skip = {"metadata", "status"} if rt.status else {"metadata"}
        keys = (set(new) | set(old)) - skip
        return any(new.get(k) != old.get(k) for k in keys)
    return False


_REFLECT_EQUAL = {("networking.k8s.io", "networkpolicies")}
"""Kinds whose PrepareForUpdate bumps the generation on ``!reflect.DeepEqual`` of the
specs (kubernetes pkg/registry/networking/networkpolicy/strategy.go), which tells an empty
slice or map from a nil one; the other kinds compare with Semantic.DeepEqual."""


def _empties(value: Any, path: str = "") -> set[str]:
    """The paths of the empty (non-nil) slices and maps in a decoded JSON value."""
    if isinstance(value, dict):
        if not value:
            return {path}
        return set().union(*(_empties(v, f"{path}.{k}") for k, v in value.items()))
    if isinstance(value, list):
        if not value:
            return {path}
        return set().union(*(_empties(v, f"{path}[{i}]") for i, v in enumerate(value)))
    return set()


def _same_spec(rt: ResourceType, new: Obj, old: Obj) -> bool:
    """Semantic.DeepEqual of the decoded specs: a zero field (``paused: false``) is the
    same as an absent one."""
    if go_equal(new.get("spec"), old.get("spec")):
        return True
    specs = []
    for obj in (new, old):
        decoded = {"spec": copy.deepcopy(obj.get("spec"))}
        fill_go_zero(rt.api_version, rt.kind, decoded)
        specs.append(decoded.get("spec"))
    return go_equal(specs[0], specs[1])


def _keep_server_meta(new: Obj, old: Obj) -> None:
    meta, old_meta = new["metadata"], old["metadata"]
    for key in _SERVER_META:
        meta.pop(key, None)
        if key in old_meta:
            meta[key] = old_meta[key]


def prepare_update(rt: ResourceType, new: Obj, old: Obj) -> None:
    """Main-resource update: server metadata and (with a status subresource) status kept;
    the kind's defaults applied as on create (kube-apiserver defaults every decoded
    object), so a write that leaves a defaulted field out does not change it."""
    _keep_server_meta(new, old)
    if (rt.group, rt.plural) == ("", "services"):  # a Service keeps its allocations
        _service_update(new, old)
    else:
        _CREATE_DEFAULTS.get((rt.group, rt.plural), _no_defaults)(new)
    if (rt.group, rt.plural) == ("", "namespaces"):
        # namespaceStrategy.PrepareForUpdate: spec.finalizers change through /finalize only
        spec = new.setdefault("spec", {})
        spec["finalizers"] = copy.deepcopy((old.get("spec") or {}).get("finalizers"))
        if spec["finalizers"] is None:
            del spec["finalizers"]
    if rt.status:
        new.pop("status", None)
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
    if rt.generation != "none" and generation_changed(rt, new, old):
        new["metadata"]["generation"] = old["metadata"].get("generation", 0) + 1
    hook = derived.UPDATE.get((rt.group, rt.plural))
    if hook is not None:
        hook(new, old)


def prepare_finalize_update(new: Obj, old: Obj) -> Obj:
    """``namespaces/finalize``: the spec's finalizers and the metadata as sent, the stored
    status kept (namespaceFinalizeStrategy.PrepareForUpdate)."""
    result = copy.deepcopy(new)
    _keep_server_meta(result, old)
    result.pop("status", None)
    if "status" in old:
        result["status"] = copy.deepcopy(old["status"])
    wanted = (new.get("spec") or {}).get("finalizers") or []
    result["spec"] = {**(result.get("spec") or {}), "finalizers": wanted}
    namespace_name_label(result)
    return result


def prepare_status_update(rt: ResourceType, new: Obj, old: Obj) -> Obj:
    """``/status`` update: only status (and, for built-ins, non-reset metadata) changes."""
    if "*" in rt.status_reset:
        result = copy.deepcopy(old)
        result.pop("status", None)
        if "status" in new:
            result["status"] = new["status"]
    else:
        result = new
        _keep_server_meta(result, old)
        for path in rt.status_reset:
            _copy_path(result, old, path.split("."))
        hook = derived.STATUS_UPDATE.get((rt.group, rt.plural))
        if hook is not None:
            hook(result, old)
        fill_status_zeros(rt, result)
    if (rt.group, rt.plural) == ("", "services"):
        _load_balancer_ip_mode(result)
    if (rt.group, rt.plural) == ("", "nodes"):  # scheme defaults: every decode
        _node_defaults(result)
    if (rt.group, rt.plural) == ("", "namespaces"):
        namespace_name_label(result)
    return result


# Status fields whose Go json tag has no omitempty: kube-apiserver always sends them (as 0
# when unset), and clients whose models require them (the official Python client) reject
# an object without them. Source: k8s.io/api apps/v1 types.go.
_STATUS_ZEROS: dict[tuple[str, str], dict[str, int]] = {
    ("apps", "statefulsets"): {"replicas": 0, "availableReplicas": 0},
    ("apps", "replicasets"): {"replicas": 0},
    ("apps", "daemonsets"): {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    },
}


def fill_status_zeros(rt: ResourceType, obj: Obj) -> None:
    """Give ``obj`` the always-serialised status fields of its kind (0 when missing)."""
    zeros = _STATUS_ZEROS.get((rt.group, rt.plural))
    if zeros is None or not rt.builtin:
        return
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    for key, value in zeros.items():
        if status.get(key) is None:
            status[key] = value


def _copy_path(target: Obj, source: Obj, parts: list[str]) -> None:
    for part in parts[:-1]:
        target = target.setdefault(part, {})
        source = source.get(part) or {}
    if parts[-1] in source:
        target[parts[-1]] = copy.deepcopy(source[parts[-1]])
    else:
        target.pop(parts[-1], None)


def new_finalizers(new: Obj, old: Obj) -> list[str]:
    """Finalizers ``new`` adds that ``old`` lacks."""
    before = set(old["metadata"].get("finalizers") or [])
    return [f for f in new["metadata"].get("finalizers") or [] if f not in before]


# --- kind defaults --------------------------------------------------------------------------


def _no_defaults(obj: Obj) -> None:
    return None


def _namespace_defaults(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj["status"] = {"phase": "Active"}
    namespace_name_label(obj)


def namespace_name_label(obj: Obj) -> None:
    """SetDefaults_Namespace: the ``kubernetes.io/metadata.name`` label, on every decode of
    a Namespace (its status and finalize writes included)."""
    meta = obj["metadata"]
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    labels["kubernetes.io/metadata.name"] = meta["name"]


def _container_defaults(container: dict[str, Any]) -> None:
    image = container.get("image", "")
    latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")


def _probe_defaults(container: dict[str, Any]) -> None:
    """SetDefaults_Probe and SetDefaults_HTTPGetAction."""
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(kind)
        if not isinstance(probe, dict):
            continue
        for key, value in _PROBE_DEFAULTS:
            if not probe.get(key):
                probe[key] = value
        if isinstance(probe.get("httpGet"), dict):
            probe["httpGet"].setdefault("path", "/")
            probe["httpGet"].setdefault("scheme", "HTTP")


_PROBE_DEFAULTS = (
    ("timeoutSeconds", 1),
    ("periodSeconds", 10),
    ("successThreshold", 1),
    ("failureThreshold", 3),
)
_MODE_SOURCES = ("secret", "configMap", "downwardAPI", "projected")


def _volume_defaults(volume: dict[str, Any]) -> None:
    """SetDefaults_Volume (no source is an emptyDir), the sources' defaultMode 0644, a
    hostPath's empty type."""
    if not any(volume.get(key) is not None for key in SOURCE_FIELDS):
        volume["emptyDir"] = {}
    for key in _MODE_SOURCES:
        if isinstance(volume.get(key), dict):
            volume[key].setdefault("defaultMode", 420)
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")


def _field_ref_defaults(items: Any) -> None:
    """SetDefaults_ObjectFieldSelector: a ``fieldRef`` without ``apiVersion`` is ``v1``'s
    (``items``: env vars or downward API volume files)."""
    for item in items if isinstance(items, list) else []:
        source = item.get("valueFrom", item) if isinstance(item, dict) else None
        ref = source.get("fieldRef") if isinstance(source, dict) else None
        if isinstance(ref, dict) and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"


def _volume_source_defaults(volume: dict[str, Any]) -> None:
    """The defaults inside a volume's sources: a downward API file's field selector, a
    projected service account token's expirationSeconds (SetDefaults_
    ServiceAccountTokenProjection: an hour)."""
    if isinstance(volume.get("downwardAPI"), dict):
        _field_ref_defaults(volume["downwardAPI"].get("items"))
    projected = volume.get("projected")
    for source in (projected.get("sources") or []) if isinstance(projected, dict) else []:
        if not isinstance(source, dict):
            continue
        if isinstance(source.get("downwardAPI"), dict):
            _field_ref_defaults(source["downwardAPI"].get("items"))
        token = source.get("serviceAccountToken")
        if isinstance(token, dict) and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600


def pod_spec_defaults(spec: dict[str, Any]) -> None:
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            _volume_defaults(volume)
            _volume_source_defaults(volume)
    for container in spec.get("containers") or []:
        _container_defaults(container)
        _probe_defaults(container)
        _field_ref_defaults(container.get("env"))
    for container in spec.get("initContainers") or []:
        _container_defaults(container)
        _probe_defaults(container)
        _field_ref_defaults(container.get("env"))
    for container in spec.get("ephemeralContainers") or []:
        _container_defaults(container)
        _field_ref_defaults(container.get("env"))
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    service_account_alias(spec)


def service_account_alias(spec: dict[str, Any]) -> None:
    """The deprecated ``serviceAccount`` mirrors ``serviceAccountName`` (which it stands in
    for when that is empty), as kubernetes pkg/apis/core/v1 conversion.go
    Convert_v1_PodSpec_To_core_PodSpec and back write them."""
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]


_NOT_READY_TOLERATIONS = (
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
)


def _default_tolerations(spec: dict[str, Any]) -> None:
    """The DefaultTolerationSeconds admission plugin (on in kube-apiserver by default)."""
    tolerations = spec.get("tolerations") or []
    present = {t.get("key") for t in tolerations if isinstance(t, dict)}
    added = [dict(t) for t in _NOT_READY_TOLERATIONS if t["key"] not in present]
    if added:
        spec["tolerations"] = [*tolerations, *added]


def _pod_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec_defaults(spec)
    _default_tolerations(spec)
    spec.setdefault("serviceAccountName", "default")
    service_account_alias(spec)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    default_requests(spec)
    default_host_ports(spec)
    obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def _workload_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec_defaults(spec.setdefault("template", {}).setdefault("spec", {}))
    obj["status"] = {}


def _deployment_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    # SetDefaults_Deployment: an empty strategy (kubectl create sends "strategy": {}) is
    # RollingUpdate with 25%/25%, as is a RollingUpdate strategy without its parameters.
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    _workload_defaults(obj)


def _replicas_defaults(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _workload_defaults(obj)


def _replication_controller_defaults(obj: Obj) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template's labels
    when unset, one replica; the template (a pointer) defaulted only when present."""
    spec = obj.setdefault("spec", {})
    template = spec.get("template")
    if isinstance(template, dict):
        labels = (template.get("metadata") or {}).get("labels")
        if isinstance(labels, dict) and labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            if not obj["metadata"].get("labels"):
                obj["metadata"]["labels"] = dict(labels)
        pod_spec_defaults(template.setdefault("spec", {}))
    spec.setdefault("replicas", 1)


def _limit_range_defaults(obj: Obj) -> None:
    """SetDefaults_LimitRangeItem: a Container item's default limit from its max, its
    default request from the default limit, else from its min."""
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = {**(item.get("max") or {}), **(item.get("default") or {})}
        request = {**(item.get("min") or {}), **default, **(item.get("defaultRequest") or {})}
        for key, values in (("default", default), ("defaultRequest", request)):
            if values:
                item[key] = values


def _csi_driver_defaults(obj: Obj) -> None:
    """SetDefaults_CSIDriver (SELinuxMountReadWriteOncePod on: seLinuxMount false)."""
    spec = obj.setdefault("spec", {})
    for key, value in _CSI_DRIVER_DEFAULTS:
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


_CSI_DRIVER_DEFAULTS = (
    ("attachRequired", True),
    ("podInfoOnMount", False),
    ("storageCapacity", False),
    ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
    ("requiresRepublish", False),
    ("seLinuxMount", False),
)


def _service_account_defaults(obj: Obj) -> None:
    """The strategy's cleanSecretReferences: a secret reference keeps only its name."""
    secrets = obj.get("secrets")
    if isinstance(secrets, list):
        obj["secrets"] = [
            {"name": s["name"]} if isinstance(s, dict) and s.get("name") else {} for s in secrets
        ]


def _pod_template_defaults(obj: Obj) -> None:
    pod_spec_defaults(obj.setdefault("template", {}).setdefault("spec", {}))


def _statefulset_defaults(obj: Obj) -> None:
    """apps/v1 SetDefaults_StatefulSet."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            _claim_template(claim)
    _replicas_defaults(obj)


def _claim_template(claim: Obj) -> None:
    """A volume claim template: the PersistentVolumeClaim defaults (status phase Pending,
    volumeMode Filesystem), and the apiVersion and kind Convert_apps_StatefulSetSpec_To_
    v1_StatefulSetSpec writes into every template (issue 87583: as before 1.17)."""
    claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"
    claim_spec = claim.setdefault("spec", {})
    if isinstance(claim_spec, dict):
        claim_spec.setdefault("volumeMode", "Filesystem")
    status = claim.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")


def _daemonset_defaults(obj: Obj) -> None:
    """apps/v1 SetDefaults_DaemonSet."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    _workload_defaults(obj)


class _ClusterIPs:
    """Allocates service cluster IPs from 10.0.0.0/24 (the envtest service range), never
    the range's first address, which kube-apiserver gives its own ``kubernetes`` Service."""

    network = ipaddress.ip_network("10.0.0.0/24")
    next_host = 10

    @classmethod
    def allocate(cls) -> str:
        hosts = cls.network.num_addresses - 3
        address = str(cls.network.network_address + 2 + cls.next_host % hosts)
        cls.next_host += 1
        return address


def service_scheme_defaults(spec: Obj) -> None:
    """core/v1 SetDefaults_Service: type, session affinity, each port's protocol and
    target port, the traffic policies, allocateLoadBalancerNodePorts."""
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig") or {}
        if (config.get("clientIP") or {}).get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    external = spec["type"] in ("NodePort", "LoadBalancer") or (
        spec["type"] == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if external:
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)


def _service_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    service_scheme_defaults(spec)
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    allocating = spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer")
    if spec.get("clusterIP") != "None" and allocating:
        spec.setdefault("clusterIP", _ClusterIPs.allocate())
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if spec.get("clusterIPs") and spec["type"] != "ExternalName":
        # alloc.go initIPFamilyFields: a headless Service without selector is dual-stack
        # (both families, as on kube-apiserver's dual-stack service network)
        dual = spec.get("clusterIP") == "None" and not spec.get("selector")
        spec.setdefault("ipFamilyPolicy", "RequireDualStack" if dual else "SingleStack")
        dual = spec["ipFamilyPolicy"] == "RequireDualStack" and spec.get("clusterIP") == "None"
        spec.setdefault("ipFamilies", ["IPv4", "IPv6"] if dual else ["IPv4"])
    if spec["type"] in ("NodePort", "LoadBalancer"):
        _init_node_ports(spec)
    obj["status"] = {"loadBalancer": {}}


def _init_node_ports(spec: Obj) -> None:
    """The service registry's initNodePorts: ports of one port number share one node port
    (the first one requested for that number, else a new one), so two equal ports get the
    same node port and validation names it a duplicate."""
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    by_number: dict[Any, int] = {}
    for port in ports:
        if not port.get("nodePort") and not _needs_node_port(spec):
            continue
        number = port.get("port")
        if number not in by_number:
            requested = [p.get("nodePort") for p in ports if p.get("port") == number]
            by_number[number] = next((n for n in requested if n), 0) or _NodePorts.allocate()
        if not port.get("nodePort"):
            port["nodePort"] = by_number[number]


def _service_update(new: Obj, old: Obj) -> None:
    """What the service registry does to an update before validating it: the scheme
    defaults; the cluster IPs and node ports the client left out kept from the stored
    Service (storage.go patchAllocatedValues, normalizeClusterIPs); what the new type
    needs allocated; the fields the old type had and the new one has no use for dropped
    (strategy.go dropTypeDependentFields)."""
    spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
    service_scheme_defaults(spec)
    _patch_allocated(spec, old_spec)
    _normalize_cluster_ips(spec, old_spec)
    _allocate_for_type(spec, old_spec)
    _drop_type_dependent(spec, old_spec)


def _needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != "ExternalName"


def _needs_node_port(spec: Obj) -> bool:
    kind = spec.get("type")
    return kind == "NodePort" or (
        kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False
    )


def _load_balancer_ip_mode(service: Obj) -> None:
    """SetDefaults_Service: a LoadBalancer's ingress points with an IP get ipMode VIP."""
    if (service.get("spec") or {}).get("type") != "LoadBalancer":
        return
    for point in ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        if point.get("ip") and point.get("ipMode") is None:
            point["ipMode"] = "VIP"


def _patch_allocated(spec: Obj, old_spec: Obj) -> None:
    if _needs_cluster_ip(spec) and _needs_cluster_ip(old_spec):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = old_spec["clusterIPs"]
    if _needs_node_port(spec) and _needs_node_port(old_spec):
        new_ports = {p.get("nodePort") for p in spec.get("ports") or []}
        used = {p.get("nodePort") for p in old_spec.get("ports") or []} & new_ports
        by_name = {p.get("name", ""): p.get("nodePort") for p in old_spec.get("ports") or []}
        for port in spec.get("ports") or []:
            value = by_name.get(port.get("name", ""))
            if not port.get("nodePort") and value and value not in used:
                port["nodePort"] = value


def _normalize_cluster_ips(spec: Obj, old_spec: Obj) -> None:
    ip, old_ip = spec.get("clusterIP") or "", old_spec.get("clusterIP") or ""
    old_ips = old_spec.get("clusterIPs") or []
    if old_ips and not spec.get("clusterIPs") and ip == old_ip:
        spec["clusterIPs"] = old_ips
    if ip != old_ip:
        same = (spec.get("clusterIPs") or []) == old_ips
        if old_ip and not ip and same:
            spec.pop("clusterIPs", None)
        elif ip and same:
            spec["clusterIPs"] = [ip]


def _allocate_for_type(spec: Obj, old_spec: Obj) -> None:
    if _needs_cluster_ip(spec) and not spec.get("clusterIPs"):
        if not spec.get("clusterIP"):
            spec["clusterIP"] = _ClusterIPs.allocate()
        spec["clusterIPs"] = [spec["clusterIP"]]
    if _needs_cluster_ip(spec):
        for key, default in (("ipFamilies", ["IPv4"]), ("ipFamilyPolicy", "SingleStack")):
            spec.setdefault(key, old_spec.get(key, default))
    if _needs_node_port(spec):
        for port in spec.get("ports") or []:
            if not port.get("nodePort"):
                port["nodePort"] = _NodePorts.allocate()


def _drop_type_dependent(spec: Obj, old_spec: Obj) -> None:
    if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
        same_ips = spec.get("clusterIP") == old_spec.get("clusterIP") and spec.get(
            "clusterIPs"
        ) == old_spec.get("clusterIPs")
        for keys, same in (
            (("clusterIP", "clusterIPs"), same_ips),
            (("ipFamilies",), spec.get("ipFamilies") == old_spec.get("ipFamilies")),
            (("ipFamilyPolicy",), spec.get("ipFamilyPolicy") == old_spec.get("ipFamilyPolicy")),
        ):
            for key in keys if same else ():
                spec.pop(key, None)
    ports, old_ports = spec.get("ports") or [], old_spec.get("ports") or []
    same_node_ports = [p.get("nodePort") for p in ports] == [p.get("nodePort") for p in old_ports]
    if _needs_node_port(old_spec) and not _needs_node_port(spec) and same_node_ports:
        for port in ports:
            port.pop("nodePort", None)
    old_balanced = old_spec.get("type") == "LoadBalancer"
    if old_balanced and spec.get("type") != "LoadBalancer":
        allocate = spec.get("allocateLoadBalancerNodePorts")
        if allocate is not None and allocate == old_spec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts")
        if spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
            spec.pop("healthCheckNodePort", None)
    external = spec.get("type") in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    was_external = old_spec.get("type") in ("NodePort", "LoadBalancer") or bool(
        old_spec.get("externalIPs")
    )
    same_policy = spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy")
    if was_external and not external and same_policy:
        spec.pop("externalTrafficPolicy", None)


class _NodePorts:
    """Allocates node ports from kube-apiserver's default range, 30000-32767."""

    next_port = 30000

    @classmethod
    def allocate(cls) -> int:
        port = cls.next_port
        cls.next_port = 30000 + (cls.next_port - 30000 + 1) % 2768
        return port


def _secret_defaults(obj: Obj) -> None:
    """core/v1 SetDefaults_Secret: an empty type is Opaque."""
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _job_scheme_defaults(obj: Obj) -> None:
    """batch/v1 SetDefaults_Job but for the labels."""
    spec = obj.setdefault("spec", {})
    # batch/v1 SetDefaults_Job: completions only when parallelism is unset too
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("template", {}).setdefault("spec", {})
    failure_policy = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    spec.setdefault("podReplacementPolicy", failure_policy)
    _workload_defaults(obj)


def _template_labels(obj: Obj) -> Any:
    return (obj["spec"]["template"].get("metadata") or {}).get("labels")


def _job_defaults(obj: Obj) -> None:
    """batch/v1 SetDefaults_Job: a Job without labels takes its template's."""
    _job_scheme_defaults(obj)
    labels = _template_labels(obj)
    if isinstance(labels, dict) and not obj["metadata"].get("labels"):
        obj["metadata"]["labels"] = dict(labels)


def _job_create_defaults(obj: Obj) -> None:
    """A new Job: SetDefaults_Job, then the job strategy's generated selector
    (PrepareForCreate). SetDefaults_Job made a Job without labels share its template's
    label map, which the strategy fills: they are validated with the generated labels.
    (A template without labels gets a new map: see read_defaults.)"""
    _job_scheme_defaults(obj)
    shared = isinstance(_template_labels(obj), dict) and not obj["metadata"].get("labels")
    _job_selector(obj)
    if shared:
        obj["metadata"]["labels"] = dict(_template_labels(obj))


def _job_selector(obj: Obj) -> None:
    """The job strategy's generated selector and pod labels (unless ``manualSelector``)."""
    meta, spec = obj["metadata"], obj["spec"]
    uid, name = meta.get("uid"), meta.get("name")
    if spec.get("manualSelector") or not uid:
        return
    spec["manualSelector"] = False
    # generateSelector adds the uid to a selector of the user's own (validation then
    # refuses it as not auto-generated).
    selector = spec["selector"] = spec.get("selector") or {}
    match = selector["matchLabels"] = selector.get("matchLabels") or {}
    match.setdefault("batch.kubernetes.io/controller-uid", uid)
    template_meta = spec["template"].setdefault("metadata", {})
    labels = template_meta["labels"] = template_meta.get("labels") or {}
    for key, value in (
        ("batch.kubernetes.io/controller-uid", uid),
        ("batch.kubernetes.io/job-name", name),
        ("controller-uid", uid),
        ("job-name", name),
    ):
        labels.setdefault(key, value)


def read_defaults(rt: ResourceType, obj: Obj) -> bool:
    """The defaults kube-apiserver applies when it decodes the stored object, after the
    validation of a create: a Job without labels whose template had none at decoding
    takes its template's generated labels (SetDefaults_Job, on every read); a
    PersistentVolumeClaim, whose status its PrepareForCreate cleared, reads as Pending
    (SetDefaults_PersistentVolumeClaim). True when a default was added: etcd's copy lacks
    it until the object's next write, which therefore stores new bytes (a new
    resourceVersion) even when it changes nothing else."""
    kind = (rt.group, rt.plural)
    if kind == ("", "persistentvolumeclaims"):
        status = obj.setdefault("status", {})
        if status.get("phase"):
            return False
        status["phase"] = "Pending"
        return True
    if kind != ("batch", "jobs") or obj["metadata"].get("labels"):
        return False
    labels = obj.get("spec", {}).get("template", {}).get("metadata", {}).get("labels")
    if labels:
        obj["metadata"]["labels"] = dict(labels)
    return bool(labels)


def _node_defaults(obj: Obj) -> None:
    """A Node's status as a Go Node serialises it (nodes may set their status on create;
    the not-ready taint is derived.py's, on create only)."""
    _pod_cidrs(obj.setdefault("spec", {}))
    status = obj.setdefault("status", {})
    if status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])  # SetDefaults_NodeStatus
    status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 0}})
    info = status.setdefault("nodeInfo", {})
    for key in _NODE_INFO:
        info.setdefault(key, "")


def _pod_cidrs(spec: Obj) -> None:
    """The v1/internal NodeSpec conversions: podCIDR is podCIDRs' first (and wins)."""
    cidr, cidrs = spec.get("podCIDR"), list(spec.get("podCIDRs") or [])
    if cidr:
        cidrs = [cidr, *cidrs[1:]]
    if cidrs:
        spec["podCIDRs"], spec["podCIDR"] = cidrs, cidrs[0]


_NODE_INFO = (
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
)


def _ports_protocol(ports: Any) -> None:
    for port in ports or []:
        port.setdefault("protocol", "TCP")


def _endpoints_defaults(obj: Obj) -> None:
    for subset in obj.get("subsets") or []:
        _ports_protocol(subset.get("ports"))


def _endpointslice_defaults(obj: Obj) -> None:
    for endpoint in obj.get("endpoints") or []:
        endpoint.setdefault("conditions", {})
    for port in obj.get("ports") or []:
        port.setdefault("name", "")
        port.setdefault("protocol", "TCP")


def _pvc_defaults(obj: Obj) -> None:
    """StorageObjectInUseProtection's finalizer, volumeMode, no status (its phase,
    Pending, is a default of reads: :func:`read_defaults`)."""
    _protect(obj, "kubernetes.io/pvc-protection")
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    obj["status"] = {}


def _pv_defaults(obj: Obj) -> None:
    _protect(obj, "kubernetes.io/pv-protection")
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    if isinstance(spec.get("hostPath"), dict):
        spec["hostPath"].setdefault("type", "")
    obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_time()}


def _protect(obj: Obj, finalizer: str) -> None:
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)


def _cronjob_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job = spec.setdefault("jobTemplate", {})
    job.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    template = job.setdefault("spec", {}).setdefault("template", {})
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    pod_spec_defaults(template.setdefault("spec", {}))
    obj["status"] = {}


def _hpa_defaults(obj: Obj) -> None:
    """autoscaling/v2 SetDefaults_HorizontalPodAutoscaler: one replica at least, 80% CPU;
    autoscaling/v1's: one replica at least (its CPU default comes with the conversion)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("minReplicas", 1)
    if obj.get("apiVersion") == hpaversions.V1:
        obj["status"] = {"currentReplicas": 0, "desiredReplicas": 0}
        return
    if not spec.get("metrics"):
        target = {"type": "Utilization", "averageUtilization": 80}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = hpaversions.scaling_rules(behavior.get("scaleUp"), up=True)
        behavior["scaleDown"] = hpaversions.scaling_rules(behavior.get("scaleDown"), up=False)
    obj["status"] = {"desiredReplicas": 0, "currentMetrics": None}


def _ingress_defaults(obj: Obj) -> None:
    obj["status"] = {"loadBalancer": {}}


def _network_policy_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress", *(["Egress"] if spec.get("egress") else [])]
    for direction in ("ingress", "egress"):  # SetDefaults_NetworkPolicyPort
        for rule in spec.get(direction) or []:
            for port in rule.get("ports") or []:
                port.setdefault("protocol", "TCP")


def _pdb_defaults(obj: Obj) -> None:
    obj["status"] = {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }


def _storage_class_defaults(obj: Obj) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _ingress_class_defaults(obj: Obj) -> None:
    """networking/v1 SetDefaults_IngressClass: parameters' scope is Cluster."""
    params = (obj.get("spec") or {}).get("parameters")
    if isinstance(params, dict) and params.get("scope") is None:
        params["scope"] = "Cluster"


def _priority_class_defaults(obj: Obj) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _lease_defaults(obj: Obj) -> None:
    """The lease strategy drops the CoordinatedLeaderElection fields (gate off in 1.32)."""
    spec = obj.setdefault("spec", {})
    spec.pop("strategy", None)
    spec.pop("preferredHolder", None)


def _validating_defaults(obj: Obj) -> None:
    configuration_defaults(obj, mutating=False)


def _mutating_defaults(obj: Obj) -> None:
    configuration_defaults(obj, mutating=True)


def _binding_defaults(obj: Obj) -> None:
    """rbac/v1 SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding (an empty
    roleRef.apiGroup) and SetDefaults_Subject (a User's or Group's empty apiGroup)."""
    if obj.get("roleRef") is None:  # a struct: decoded as its zero value
        obj["roleRef"] = {}
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC_GROUP
    for subject in obj.get("subjects") or []:
        kind = subject.get("kind") if isinstance(subject, dict) else None
        if kind in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = RBAC_GROUP


_CREATE_ONLY_DEFAULTS = {("batch", "jobs"): _job_create_defaults}
"""Kinds whose strategy's PrepareForCreate adds to the defaults (in place of
``_CREATE_DEFAULTS``' on a create)."""

_CREATE_DEFAULTS = {
    (RBAC_GROUP, "rolebindings"): _binding_defaults,
    (RBAC_GROUP, "clusterrolebindings"): _binding_defaults,
    ("", "namespaces"): _namespace_defaults,
    ("", "pods"): _pod_defaults,
    ("", "services"): _service_defaults,
    ("", "replicationcontrollers"): _replication_controller_defaults,
    ("", "podtemplates"): _pod_template_defaults,
    ("", "limitranges"): _limit_range_defaults,
    ("", "serviceaccounts"): _service_account_defaults,
    ("storage.k8s.io", "csidrivers"): _csi_driver_defaults,
    ("apiregistration.k8s.io", "apiservices"): service_reference_defaults,
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): flow_schema_defaults,
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): priority_level_defaults,
    ("", "secrets"): _secret_defaults,
    ("apps", "deployments"): _deployment_defaults,
    ("apps", "statefulsets"): _statefulset_defaults,
    ("apps", "replicasets"): _replicas_defaults,
    ("apps", "daemonsets"): _daemonset_defaults,
    ("batch", "jobs"): _job_defaults,
    ("coordination.k8s.io", "leases"): _lease_defaults,
    ("", "nodes"): _node_defaults,
    ("", "endpoints"): _endpoints_defaults,
    ("", "persistentvolumeclaims"): _pvc_defaults,
    ("", "persistentvolumes"): _pv_defaults,
    ("batch", "cronjobs"): _cronjob_defaults,
    ("autoscaling", "horizontalpodautoscalers"): _hpa_defaults,
    ("networking.k8s.io", "ingresses"): _ingress_defaults,
    ("networking.k8s.io", "ingressclasses"): _ingress_class_defaults,
    ("networking.k8s.io", "networkpolicies"): _network_policy_defaults,
    ("discovery.k8s.io", "endpointslices"): _endpointslice_defaults,
    ("policy", "poddisruptionbudgets"): _pdb_defaults,
    ("storage.k8s.io", "storageclasses"): _storage_class_defaults,
    ("scheduling.k8s.io", "priorityclasses"): _priority_class_defaults,
    (ADMISSION_GROUP, VALIDATING): _validating_defaults,
    (ADMISSION_GROUP, MUTATING): _mutating_defaults,
    (ADMISSION_GROUP, "validatingadmissionpolicies"): policy_defaults,
    (ADMISSION_GROUP, "validatingadmissionpolicybindings"): binding_defaults,
}
