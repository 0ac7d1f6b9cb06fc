"""Resource types served by the embedded API server: built-in kinds and CRD-defined ones.

Each :class:`ResourceType` carries the per-kind rules kube-apiserver's registry
strategies apply (generation, status subresource, create-on-update, ...). Sources:
kubernetes/kubernetes pkg/registry/*/strategy.go and apiextensions-apiserver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RBAC_GROUP = "rbac.authorization.k8s.io"
ADMISSION_GROUP = "admissionregistration.k8s.io"
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ScalePaths:
    """Where a ``/scale`` subresource reads and writes (JSON paths like ``.spec.replicas``)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = ".spec.selector"
    selector_is_struct: bool = True


@dataclass
class ResourceType:
    """One resource (``group/version/plural``) and the rules its strategy applies.

    Attributes:
        generation: ``none`` (no metadata.generation), ``spec`` (bumped when spec
            changes), ``spec+annotations`` (Deployment), ``custom`` (custom resources:
            anything outside metadata, and outside status when status is a subresource),
            ``create`` (1 on create, never bumped: PriorityClass), ``update`` (left as
            the client sent it on create, bumped when spec changes: CSIDriver).
        status_reset: fields a ``/status`` write takes from storage (``*`` = all but status).
        create_on_update: PUT to a missing object creates it (Lease, Event).
        put_requires_rv: PUT without ``metadata.resourceVersion`` is 422.
        delete_returns_object: DELETE answers with the object rather than a Status (the
            registry's ``ReturnDeletedObject``: Namespaces, Pods, Services,
            ServiceAccounts, PersistentVolume(Claim)s, ResourceQuotas, PodTemplates,
            StorageClasses, CSIDrivers, CSINodes, VolumeAttachments in 1.32).
        field_labels: a custom resource's selectable fields (beyond metadata.name and
            metadata.namespace); built-in kinds' are in :mod:`.fieldlabels`.
        schema: the CRD version's openAPIV3Schema (custom resources only).
        stored: this version is the one objects are stored at (the CRD's storage version).
        stored_with: the storage key of another group's resource whose store holds this
            one's objects (events.k8s.io Events are core's, :mod:`.eventversions`).
    """

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    status: bool = False
    scale: ScalePaths | None = None
    generation: str = "none"
    status_reset: tuple[str, ...] = ("spec",)
    create_on_update: bool = False
    put_requires_rv: bool = False
    delete_returns_object: bool = False
    field_labels: tuple[str, ...] = ()
    builtin: bool = True
    crd_name: str | None = None
    schema: dict[str, Any] | None = None
    printer_columns: list[dict[str, Any]] = field(default_factory=list)
    list_kind: str = ""
    stored: bool = True
    stored_with: str = ""

    def __post_init__(self) -> None:
        if not self.list_kind:
            self.list_kind = f"{self.kind}List"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage_key(self) -> str:
        """Key of this resource's objects in storage: the same for every served version."""
        return self.stored_with or f"{self.group}/{self.plural}"


_WORKLOAD_STATUS_RESET = ("spec", "metadata.labels")


def _workload() -> dict[str, Any]:
    return {"status": True, "generation": "spec", "status_reset": _WORKLOAD_STATUS_RESET}


AUTHENTICATION_GROUP = "authentication.k8s.io"
AUTHORIZATION_GROUP = "authorization.k8s.io"


def review_types() -> list[ResourceType]:
    """The create-only reviews (TokenReview, SelfSubjectReview, the access reviews):
    answered, never stored."""
    reviews = [
        (AUTHENTICATION_GROUP, "tokenreviews", "TokenReview", False),
        (AUTHENTICATION_GROUP, "selfsubjectreviews", "SelfSubjectReview", False),
        (AUTHORIZATION_GROUP, "localsubjectaccessreviews", "LocalSubjectAccessReview", True),
        (AUTHORIZATION_GROUP, "selfsubjectaccessreviews", "SelfSubjectAccessReview", False),
        (AUTHORIZATION_GROUP, "selfsubjectrulesreviews", "SelfSubjectRulesReview", False),
        (AUTHORIZATION_GROUP, "subjectaccessreviews", "SubjectAccessReview", False),
    ]
    return [
        ResourceType(group, "v1", plural, kind.lower(), kind, namespaced, verbs=("create",))
        for group, plural, kind, namespaced in reviews
    ]


def more_builtin_types() -> list[ResourceType]:
    """The other kinds kube-apiserver 1.32 serves, stored and served with the generic
    rules (their kinds' strategies: pkg/registry/*)."""
    return [
        ResourceType("", "v1", "limitranges", "limitrange", "LimitRange", True, ("limits",)),
        ResourceType(
            "",
            "v1",
            "podtemplates",
            "podtemplate",
            "PodTemplate",
            True,
            generation="custom",
            delete_returns_object=True,
        ),
        ResourceType(
            "",
            "v1",
            "replicationcontrollers",
            "replicationcontroller",
            "ReplicationController",
            True,
            ("rc",),
            ("all",),
            scale=ScalePaths(selector_is_struct=False),
            **_workload(),
        ),
        ResourceType(
            "",
            "v1",
            "resourcequotas",
            "resourcequota",
            "ResourceQuota",
            True,
            ("quota",),
            status=True,
            delete_returns_object=True,
        ),
        ResourceType("", "v1", "bindings", "binding", "Binding", True, verbs=("create",)),
        ResourceType(
            "",
            "v1",
            "componentstatuses",
            "componentstatus",
            "ComponentStatus",
            False,
            ("cs",),
            verbs=("get", "list"),
        ),
        ResourceType(
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            "apiservice",
            "APIService",
            False,
            categories=("api-extensions",),
            status=True,
        ),
        ResourceType(
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "flowschemas",
            "flowschema",
            "FlowSchema",
            False,
            status=True,
            generation="spec",
        ),
        ResourceType(
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "prioritylevelconfigurations",
            "prioritylevelconfiguration",
            "PriorityLevelConfiguration",
            False,
            status=True,
            generation="spec",
        ),
        ResourceType("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", False),
        ResourceType(
            "storage.k8s.io",
            "v1",
            "csidrivers",
            "csidriver",
            "CSIDriver",
            False,
            generation="update",
            delete_returns_object=True,
        ),
        ResourceType(
            "storage.k8s.io",
            "v1",
            "csinodes",
            "csinode",
            "CSINode",
            False,
            delete_returns_object=True,
        ),
        ResourceType(
            "storage.k8s.io",
            "v1",
            "volumeattachments",
            "volumeattachment",
            "VolumeAttachment",
            False,
            status=True,
            delete_returns_object=True,
        ),
        ResourceType(
            ADMISSION_GROUP,
            "v1",
            "validatingadmissionpolicies",
            "validatingadmissionpolicy",
            "ValidatingAdmissionPolicy",
            False,
            categories=("api-extensions",),
            status=True,
            generation="spec",
        ),
        ResourceType(
            ADMISSION_GROUP,
            "v1",
            "validatingadmissionpolicybindings",
            "validatingadmissionpolicybinding",
            "ValidatingAdmissionPolicyBinding",
            False,
            categories=("api-extensions",),
            generation="spec",
        ),
    ]


def builtin_types() -> list[ResourceType]:
    """The built-in kinds (no workload controllers run: like envtest, pods never start)."""
    return [
        ResourceType(
            "",
            "v1",
            "namespaces",
            "namespace",
            "Namespace",
            False,
            ("ns",),
            verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
            status=True,
            delete_returns_object=True,
        ),
        ResourceType("", "v1", "configmaps", "configmap", "ConfigMap", True, ("cm",)),
        ResourceType("", "v1", "secrets", "secret", "Secret", True),
        ResourceType(
            "",
            "v1",
            "pods",
            "pod",
            "Pod",
            True,
            ("po",),
            ("all",),
            status=True,
            delete_returns_object=True,
        ),
        ResourceType(
            "",
            "v1",
            "services",
            "service",
            "Service",
            True,
            ("svc",),
            ("all",),
            verbs=(
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ),
            status=True,
            delete_returns_object=True,
        ),
        ResourceType(
            "",
            "v1",
            "serviceaccounts",
            "serviceaccount",
            "ServiceAccount",
            True,
            ("sa",),
            delete_returns_object=True,
        ),
        ResourceType(
            "",
            "v1",
            "events",
            "event",
            "Event",
            True,
            ("ev",),
            create_on_update=True,
        ),
        ResourceType(  # stored as core/v1 Events (eventversions.py converts)
            "events.k8s.io",
            "v1",
            "events",
            "event",
            "Event",
            True,
            ("ev",),
            create_on_update=True,
            stored=False,
            stored_with="/events",
        ),
        ResourceType(
            "apps",
            "v1",
            "deployments",
            "deployment",
            "Deployment",
            True,
            ("deploy",),
            ("all",),
            scale=ScalePaths(),
            status=True,
            generation="spec+annotations",
            status_reset=_WORKLOAD_STATUS_RESET,
        ),
        ResourceType(
            "apps",
            "v1",
            "statefulsets",
            "statefulset",
            "StatefulSet",
            True,
            ("sts",),
            ("all",),
            scale=ScalePaths(),
            **_workload(),
        ),
        ResourceType(
            "apps",
            "v1",
            "replicasets",
            "replicaset",
            "ReplicaSet",
            True,
            ("rs",),
            ("all",),
            scale=ScalePaths(),
            **_workload(),
        ),
        ResourceType(
            "apps",
            "v1",
            "daemonsets",
            "daemonset",
            "DaemonSet",
            True,
            ("ds",),
            ("all",),
            **_workload(),
        ),
        ResourceType(
            "batch",
            "v1",
            "jobs",
            "job",
            "Job",
            True,
            (),
            ("all",),
            **_workload(),
        ),
        ResourceType(
            "coordination.k8s.io",
            "v1",
            "leases",
            "lease",
            "Lease",
            True,
            create_on_update=True,
            put_requires_rv=True,
        ),
        *review_types(),
        ResourceType(RBAC_GROUP, "v1", "roles", "role", "Role", True),
        ResourceType(RBAC_GROUP, "v1", "rolebindings", "rolebinding", "RoleBinding", True),
        ResourceType(RBAC_GROUP, "v1", "clusterroles", "clusterrole", "ClusterRole", False),
        ResourceType(
            RBAC_GROUP,
            "v1",
            "clusterrolebindings",
            "clusterrolebinding",
            "ClusterRoleBinding",
            False,
        ),
        ResourceType("", "v1", "nodes", "node", "Node", False, ("no",), status=True),
        ResourceType("", "v1", "endpoints", "endpoints", "Endpoints", True, ("ep",)),
        ResourceType(
            "",
            "v1",
            "persistentvolumeclaims",
            "persistentvolumeclaim",
            "PersistentVolumeClaim",
            True,
            ("pvc",),
            status=True,
            delete_returns_object=True,
        ),
        ResourceType(
            "",
            "v1",
            "persistentvolumes",
            "persistentvolume",
            "PersistentVolume",
            False,
            ("pv",),
            status=True,
            delete_returns_object=True,
        ),
        ResourceType(
            "apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", True
        ),
        ResourceType(
            "batch",
            "v1",
            "cronjobs",
            "cronjob",
            "CronJob",
            True,
            ("cj",),
            ("all",),
            status=True,
            generation="spec",
        ),
        ResourceType(
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            "horizontalpodautoscaler",
            "HorizontalPodAutoscaler",
            True,
            ("hpa",),
            ("all",),
            status=True,
        ),
        ResourceType(  # served too, stored as v2 (hpaversions.py converts)
            "autoscaling",
            "v1",
            "horizontalpodautoscalers",
            "horizontalpodautoscaler",
            "HorizontalPodAutoscaler",
            True,
            ("hpa",),
            ("all",),
            status=True,
            stored=False,
        ),
        ResourceType(
            "networking.k8s.io",
            "v1",
            "ingresses",
            "ingress",
            "Ingress",
            True,
            ("ing",),
            status=True,
            generation="spec",
        ),
        ResourceType(
            "networking.k8s.io",
            "v1",
            "ingressclasses",
            "ingressclass",
            "IngressClass",
            False,
            generation="spec",
        ),
        ResourceType(
            "networking.k8s.io",
            "v1",
            "networkpolicies",
            "networkpolicy",
            "NetworkPolicy",
            True,
            ("netpol",),
            generation="spec",
        ),
        ResourceType(
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            "endpointslice",
            "EndpointSlice",
            True,
            generation="custom",
        ),
        ResourceType(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "poddisruptionbudget",
            "PodDisruptionBudget",
            True,
            ("pdb",),
            status=True,
            generation="spec",
        ),
        ResourceType(
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "storageclass",
            "StorageClass",
            False,
            ("sc",),
            delete_returns_object=True,
        ),
        ResourceType(
            "storage.k8s.io",
            "v1",
            "csistoragecapacities",
            "csistoragecapacity",
            "CSIStorageCapacity",
            True,
        ),
        ResourceType(
            "certificates.k8s.io",
            "v1",
            "certificatesigningrequests",
            "certificatesigningrequest",
            "CertificateSigningRequest",
            False,
            ("csr",),
            status=True,
        ),
        ResourceType(
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            "priorityclass",
            "PriorityClass",
            False,
            ("pc",),
            generation="create",
        ),
        ResourceType(
            ADMISSION_GROUP,
            "v1",
            "validatingwebhookconfigurations",
            "validatingwebhookconfiguration",
            "ValidatingWebhookConfiguration",
            False,
            categories=("api-extensions",),
            generation="custom",
        ),
        ResourceType(
            ADMISSION_GROUP,
            "v1",
            "mutatingwebhookconfigurations",
            "mutatingwebhookconfiguration",
            "MutatingWebhookConfiguration",
            False,
            categories=("api-extensions",),
            generation="custom",
        ),
        ResourceType(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "customresourcedefinition",
            "CustomResourceDefinition",
            False,
            ("crd", "crds"),
            ("api-extensions",),
            status=True,
            generation="spec",
            put_requires_rv=True,
            status_reset=("spec", "metadata"),
        ),
        *more_builtin_types(),
    ]
