"""The vendor extensions of kube-apiserver 1.32.5's ``/openapi/v3`` component schemas that
the Go struct fields (:mod:`.kubetypes`) do not tell.

* ``x-kubernetes-group-version-kind`` of the meta kinds: kube-openapi lists every
  group/version whose scheme registers the kind. ``Status`` is registered once (core v1);
  ``DeleteOptions`` and ``WatchEvent`` by ``metav1.AddToGroupVersion`` in every group
  version kube-apiserver's scheme installs, served or not (pkg/api/legacyscheme and the
  apiextensions/aggregator schemes).
  A CRD's document (apiextensions-apiserver's builder) takes ``DeleteOptions`` from
  client-go's scheme, which lacks the admission, apiextensions, apiregistration and
  imagepolicy groups.
* ``x-kubernetes-unions`` of the ``+union`` types (pkg/generated/openapi
  zz_generated.openapi.go).
"""

from __future__ import annotations

from typing import Any

Doc = dict[str, Any]
META = "io.k8s.apimachinery.pkg.apis.meta.v1."

SCHEME_GROUP_VERSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("v1",)),
    ("admission.k8s.io", ("v1", "v1beta1")),
    ("admissionregistration.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("apiextensions.k8s.io", ("v1", "v1beta1")),
    ("apiregistration.k8s.io", ("v1", "v1beta1")),
    ("apps", ("v1", "v1beta1", "v1beta2")),
    ("authentication.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("authorization.k8s.io", ("v1", "v1beta1")),
    ("autoscaling", ("v1", "v2", "v2beta1", "v2beta2")),
    ("batch", ("v1", "v1beta1")),
    ("certificates.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("coordination.k8s.io", ("v1", "v1alpha2", "v1beta1")),
    ("discovery.k8s.io", ("v1", "v1beta1")),
    ("events.k8s.io", ("v1", "v1beta1")),
    ("extensions", ("v1beta1",)),
    ("flowcontrol.apiserver.k8s.io", ("v1", "v1beta1", "v1beta2", "v1beta3")),
    ("imagepolicy.k8s.io", ("v1alpha1",)),
    ("internal.apiserver.k8s.io", ("v1alpha1",)),
    ("networking.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("node.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("policy", ("v1", "v1beta1")),
    ("rbac.authorization.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("resource.k8s.io", ("v1alpha3", "v1beta1")),
    ("scheduling.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("storage.k8s.io", ("v1", "v1alpha1", "v1beta1")),
    ("storagemigration.k8s.io", ("v1alpha1",)),
)
"""Every group/version kube-apiserver 1.32.5's scheme installs, sorted as kube-openapi
lists them."""


_NOT_IN_CLIENT_SCHEME = (
    "admission.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "imagepolicy.k8s.io",
)


def _registered_everywhere(kind: str, client_scheme: bool = False) -> list[Doc]:
    return [
        {"group": group, "kind": kind, "version": version}
        for group, versions in SCHEME_GROUP_VERSIONS
        if not (client_scheme and group in _NOT_IN_CLIENT_SCHEME)
        for version in versions
    ]


META_KIND_GVKS: dict[str, list[Doc]] = {
    META + "Status": [{"group": "", "kind": "Status", "version": "v1"}],
    META + "DeleteOptions": _registered_everywhere("DeleteOptions"),
    META + "WatchEvent": _registered_everywhere("WatchEvent"),
    META + "APIResourceList": [{"group": "", "kind": "APIResourceList", "version": "v1"}],
}
CRD_DELETE_OPTIONS_GVKS = _registered_everywhere("DeleteOptions", client_scheme=True)
"""``DeleteOptions``'s kinds in a CRD's document."""


def _union(discriminator: str, fields: dict[str, str]) -> list[Doc]:
    return [{"discriminator": discriminator, "fields-to-discriminateBy": fields}]


_SUBJECT_KINDS = {"group": "Group", "serviceAccount": "ServiceAccount", "user": "User"}
UNIONS: dict[str, list[Doc]] = {
    "io.k8s.api.core.v1.AppArmorProfile": _union("type", {"localhostProfile": "LocalhostProfile"}),
    "io.k8s.api.core.v1.SeccompProfile": _union("type", {"localhostProfile": "LocalhostProfile"}),
    "io.k8s.api.flowcontrol.v1.LimitResponse": _union("type", {"queuing": "Queuing"}),
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec": _union(
        "type", {"exempt": "Exempt", "limited": "Limited"}
    ),
    "io.k8s.api.flowcontrol.v1.Subject": _union("kind", _SUBJECT_KINDS),
}


def extensions(name: str) -> Doc:
    """The extensions the component schema ``name`` carries beyond its fields' (empty for
    most)."""
    found: Doc = {}
    if name in META_KIND_GVKS:
        found["x-kubernetes-group-version-kind"] = META_KIND_GVKS[name]
    if name in UNIONS:
        found["x-kubernetes-unions"] = UNIONS[name]
    return found
