"""Where the embedded API server differs from kube-apiserver: the one registry.

docs/embedded-server-differences.md is :func:`render_page`'s output (tests/test_docs.py
fails when the page differs), so the page cannot drift from this list. Each entry says
what differs, why, and which tests show it (``path::test`` names, checked to exist by the
same test file); a deliberate difference is a choice, a gap is work not done.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DIFFERENCES", "Difference", "render_page"]


@dataclass(frozen=True)
class Difference:
    """One way the embedded server differs from kube-apiserver.

    Attributes:
        title: a few words, bold on the page.
        text: what differs (Markdown).
        reason: why it is so (Markdown).
        tests: the tests showing it (``tests/...py::test_name``), on both backends where
            they are in tests/conformance; empty when none does (said on the page).
        deliberate: True for a choice, False for a known gap.
    """

    title: str
    text: str
    reason: str
    tests: tuple[str, ...] = ()
    deliberate: bool = True


_DIFF = "tests/conformance/test_differences.py"
_RBAC = "tests/conformance/test_rbac_escalation.py"

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "Controllers that run",
        "With `garbage_collection=True` (the default) it runs what kube-controller-manager "
        "would for garbage collection: the garbage collector (ownerReferences, "
        "`orphan`/`foregroundDeletion`) and the namespace controller. "
        "`garbage_collection=False` mimics envtest: nothing collects dependents and "
        "namespaces stay Terminating.",
        "A bare control plane has no kube-controller-manager; demos and tests of controllers "
        "that rely on garbage collection need one. The `backend` fixture turns it off so "
        "both backends agree.",
        (
            f"{_DIFF}::test_nothing_collects_dependents_or_finishes_namespaces",
            f"{_DIFF}::test_embedded_garbage_collection_when_enabled",
        ),
    ),
    Difference(
        "ClusterRole aggregation runs",
        "ClusterRoles with an `aggregationRule` get the rules of the ClusterRoles they "
        "select, as kube-controller-manager's clusterrole-aggregation controller writes "
        "them (server-side apply as `clusterrole-aggregation-controller`); "
        "`APIServer(cluster_role_aggregation=False)` turns it off.",
        "The same controller-manager work as garbage collection; off in the `backend` "
        "fixture, where the real control plane leaves aggregated rules empty.",
        (
            "tests/apiserver/test_cluster_role_aggregation.py::"
            "test_aggregated_rules_follow_the_selected_roles",
            f"{_RBAC}::test_aggregated_rules_are_not_filled_without_a_controller_manager",
        ),
    ),
    Difference(
        "Workload controllers do not run",
        "Pods never start (as in envtest), so Deployments never become available: the "
        "Website example's Websites stay `Progressing` on it.",
        "Running containers is a kubelet's work, out of scope for an in-process server.",
    ),
    Difference(
        "Authorization",
        "By default none (a token, if set, is the only check; a TokenReview authenticates "
        "only that token and the ServiceAccount tokens the server issued, as "
        "kube-apiserver's). "
        '`APIServer(authorization="RBAC", tls=True)` authorizes as kube-apiserver\'s RBAC '
        "authorizer does, with its 403 messages, TokenRequest tokens for ServiceAccounts, "
        "TokenReview / SelfSubjectReview / access reviews (`kubectl auth whoami`, `kubectl "
        "auth can-i`), privilege escalation prevention on writes of roles and bindings "
        "(`escalate`, `bind`, an `aggregationRule` needing cluster-admin's rules) and the "
        "OwnerReferencesPermissionEnforcement admission plugin. Tokens are opaque (not "
        "JWTs), and a new CRD's kind is known to the owner-reference check at once "
        "(kube-apiserver: at its next 30 s refresh). kubectl sends tokens only over HTTPS, "
        "hence `tls=True`.",
        "Most tests need no authorization; tests of a controller's RBAC turn it on.",
        (
            "tests/conformance/test_authorization.py::"
            "test_service_account_rbac_allows_what_is_granted_and_words_refusals",
            f"{_RBAC}::test_a_role_grants_only_what_its_writer_holds",
        ),
    ),
    Difference(
        "Webhook configurations apply at once",
        "A new admission webhook configuration is called from its create on "
        "(kube-apiserver's informer takes a moment), and a CRD whose conversion changes is "
        'served at once (kube-apiserver answers 503 "apiserver is shutting down" while it '
        "rebuilds the storage). `clientConfig.service` reaches a webhook through "
        "`APIServer(webhook_services=...)`.",
        "No informer delay to wait out in tests; a bare control plane has no kube-proxy, so a "
        "Service routes nowhere there.",
        (
            "tests/conformance/test_admission_webhooks.py::test_deny_with_message_and_code",
            "tests/conformance/test_admission_webhooks.py::test_service_reference",
        ),
    ),
    Difference(
        "Pods get a ServiceAccount",
        "Pods get `serviceAccountName: default`, as with the ServiceAccount admission plugin "
        "of a full cluster (kind, managed clusters); the bare control plane leaves it out.",
        "What controllers meet in real clusters.",
    ),
    Difference(
        "CRDs are established asynchronously",
        "A new CRD is Established after `APIServer(crd_establish_delay=0.02)` seconds: wait "
        "for its Established condition before using it, as on a cluster. kube-apiserver "
        "1.32.5 served a new CRD's resources sooner (7-9 ms after answering its create, "
        "measured on a loaded 2-core machine), so code that uses a CRD without waiting may "
        "pass on a cluster and fail here (kr8s's own `test_crd_caching` does; "
        "tests/kr8s_suite excludes it).",
        "Code that does not wait for Established is wrong on a cluster too; the delay makes "
        "it fail here first.",
        ("tests/conformance/test_crd.py::test_a_new_crd_is_established_asynchronously",),
    ),
    Difference(
        "Watches expire on compaction",
        "`APIServer.compact()` expires continue tokens and watches from before it; "
        "kube-apiserver serves watches from its watch cache, whose window does not shrink on "
        "etcd compaction (`ControlPlane.compact()` expires continue tokens only).",
        "Tests of a reflector's 410 handling need a watch to expire on demand.",
        ("tests/conformance/test_watch.py::test_watch_from_a_compacted_resource_version_gets_410",),
    ),
    Difference(
        "Forced apply to a custom resource's `/scale`",
        "A forced server-side apply to a custom resource's `/scale` that takes over "
        "`replicas` succeeds, as it does for a Deployment's `/scale`.",
        'kube-apiserver 1.32 answers 500 ("failed to convert new object ... request to '
        'convert CR to an invalid group/version: autoscaling/v1"), a bug.',
        (f"{_DIFF}::test_forced_apply_to_custom_resource_scale",),
    ),
    Difference(
        "Request log and fault injection",
        "`APIServer.requests` records every request served and `APIServer.faults` fails "
        "chosen ones (status, `Retry-After`, latency).",
        "What tests of retries and of requests sent need; a real server has neither.",
        ("tests/apiserver/test_faults.py::test_fail_next_matching_requests",),
    ),
    Difference(
        "Webhook call details",
        "Admission webhooks and CRD conversion webhooks are called as kube-apiserver calls "
        'them (see the README\'s "The embedded API server" section), except audit '
        "annotations, the `authorizer` variable and `.?` syntax in `matchConditions`, and "
        "Tables and `/scale` of a version converted by webhook (they read the stored "
        "version's fields).",
        "Not implemented yet.",
        (
            "tests/conformance/test_admission_webhooks.py::test_mutation_by_json_patch",
            "tests/conformance/test_webhook_server.py::test_conversion_between_typed_versions",
        ),
        deliberate=False,
    ),
    Difference(
        "Bookmarks every second",
        "A watch that allows bookmarks gets a BOOKMARK every `APIServer(bookmark_interval=1.0)` "
        "seconds; kube-apiserver's watch cache sends one about every minute and one 2 s "
        "before the watch's `timeoutSeconds` ends it (none when that is under 2 s away).",
        "Tests see a client's bookmark handling without waiting a minute; clients must not "
        "depend on when bookmarks come.",
        ("tests/apiserver/test_watch.py::test_bookmarks_only_when_allowed",),
    ),
    Difference(
        "Protobuf",
        "Protobuf only for request bodies of built-in kinds (responses are JSON).",
        "Not implemented yet; clients fall back to JSON.",
        ("tests/conformance/test_fidelity.py::test_protobuf_for_an_unknown_resource_is_a_404",),
        deliberate=False,
    ),
    Difference(
        "No `/openapi/v2`",
        "`/openapi/v2` answers 404; `/openapi/v3` is served with kube-apiserver's "
        "descriptions and enums.",
        "kubectl (explain, apply, validation) reads v3 and falls back to v2 only when v3 "
        "does not answer.",
        ("tests/conformance/test_explain.py::test_explain_a_builtin_field",),
        deliberate=False,
    ),
    Difference(
        "What the differential fuzzer normalises",
        "What the differential fuzzer (`tests/fuzz`, issue 28) normalises rather than "
        "compares: the go-cmp diffs after the Pod update rule's and a claim's immutability "
        "messages are given as the changed fields in go-cmp's frame (go-cmp's own text is "
        "unstable on purpose); a Job's immutable-template message (Go's `%#v` of the "
        "internal PodTemplateSpec, rendered from tools/gen_gostructs.py's struct table) "
        "shows quantities in their canonical form, where kube-apiserver keeps the text sent.",
        "go-cmp randomises its report on purpose (no two kube-apiserver processes print the "
        "same bytes); the quantity's text as sent is not kept once decoded.",
        ("tests/fuzz/test_differential.py::test_same_answers",),
        deliberate=False,
    ),
    Difference(
        "Defaults of reads after a restart",
        "An object stored without a default kube-apiserver adds when it decodes it (a "
        "PersistentVolumeClaim's `Pending` phase, a label-less Job's labels) gets a new "
        "resourceVersion at its next write even when that write changes nothing, as etcd's "
        "copy gains the default; on a server restarted on its data directory, that write of "
        "an object created before the restart is a no-op.",
        "Which objects still lack their defaults is not kept in the data directory.",
        (
            "tests/conformance/test_fuzz_findings.py::"
            "test_the_first_write_after_a_read_default_is_never_a_no_op",
        ),
        deliberate=False,
    ),
    Difference(
        "`managedFields` history",
        "No cap of ten Update entries in `managedFields` (kube-apiserver folds older ones "
        "into `ancient-changes`).",
        "Not implemented yet.",
        deliberate=False,
    ),
    Difference(
        "HorizontalPodAutoscaler in two versions",
        "HorizontalPodAutoscalers are served as `autoscaling/v1` and `autoscaling/v2` "
        "(stored as v2, converted as kube-apiserver converts), but `managedFields` are "
        "kept per version only: a write in one version leaves the entries another version's "
        "writes recorded as they were (structured-merge-diff takes the fields the write "
        "changed from them), and a v1 write does not list the status annotations "
        "(`autoscaling.alpha.kubernetes.io/current-metrics`, `.../conditions`) it did not "
        "send.",
        "Not implemented yet.",
        ("tests/conformance/test_hpa_versions.py::test_a_v1_write_is_read_in_v2",),
        deliberate=False,
    ),
    Difference(
        "CEL cost and libraries",
        "CEL rules are evaluated without kube-apiserver's cost estimate (a CRD whose rules "
        "may cost too much is accepted) and without the url/ip/quantity libraries.",
        "Not implemented yet.",
        ("tests/conformance/test_cel.py::test_validation_rules",),
        deliberate=False,
    ),
    Difference(
        "Built-in validation in part",
        "Built-in kinds are validated in part: CertificateSigningRequests for the request and "
        "usages (not signer names, usage values or conditions; no `/approval` subresource and "
        "no signer). Pods, Deployments, ReplicaSets, DaemonSets, StatefulSets, Jobs and "
        "CronJobs follow kube-apiserver's rules for containers, volumes, scheduling, resources,"
        " selectors, strategies and immutable fields, without the rules listed in the "
        "docstrings of validation/pods.py, apps.py and batch.py (volume source details, "
        "lifecycle hooks, DNS config, topology spread, OS-specific checks, pod and job failure "
        "policies...). Where kube-apiserver's message dumps a go-cmp diff (a Pod update's "
        "forbidden-fields diff) the embedded text differs after the common prefix; where it "
        "prints a Go value with `%#v` (a Job's immutable template, a strategy's "
        "`rollingUpdate`), a set pointer prints as `0x0` rather than its heap address, and a "
        "Job template's quantities as if written canonically.",
        "Not implemented yet; Go's `%#v` of internal structs shows memory addresses, and "
        "go-cmp's diff output is deliberately unstable.",
        (
            "tests/conformance/test_bootstrap.py::test_a_container_without_a_name_is_invalid",
            "tests/conformance/test_certificates.py::test_request_and_usages_are_validated",
            "tests/conformance/test_validation_pods.py::test_pod_update_refused",
            "tests/conformance/test_validation_workloads.py::test_job_template_immutable",
        ),
        deliberate=False,
    ),
    Difference(
        "Validation of Services, ConfigMaps and other kinds: what is left out",
        "Services, ConfigMaps, Secrets, Namespaces, PersistentVolumeClaims, Events, "
        "Ingresses, IngressClasses, NetworkPolicies, PodDisruptionBudgets, "
        "HorizontalPodAutoscalers, RBAC bindings, Leases, ReplicationControllers (with "
        "their defaults: selector and labels from the template), PodTemplates, "
        "PersistentVolumes (of the volume sources' own fields only hostPath, nfs, local "
        "and csi's driver and handle; no beta-to-GA label exception to the immutable node "
        "affinity), Endpoints and EndpointSlices (not the last-change-trigger-time "
        "annotation or the slices' count limits), ResourceQuotas and LimitRanges (with "
        "the LimitRange items' defaults; where Go ranges over a map of resources, causes "
        "come in name order here, in a random order on kube-apiserver), "
        "StorageClasses (not their "
        "`allowedTopologies` terms) and PriorityClasses are validated as kube-apiserver 1.32 "
        "does (same causes and "
        'messages), except: a PersistentVolumeClaim\'s "spec is immutable" message stops '
        "after its first line (kube-apiserver appends a `cmp.Diff` of the two specs); Go "
        "pointer addresses in a message (PodDisruptionBudget's \"minAvailable and "
        'maxUnavailable cannot be both set") print as `0x`; a docker config Secret that '
        "is not JSON gets Go's decoder message only for text that does not start like JSON; "
        "Services skip the dual-stack rules (IPv6 families, pairing of cluster IPs with "
        "families, `RequireDualStack`), the allocator's range and conflict errors, "
        "`loadBalancerClass` and the topology annotations; of a claim's status only the "
        "capacity is validated; an Event "
        "update does not compare its object references, source and timestamps; a claim "
        "update whose `dataSource` and `dataSourceRef` differ lists that cause twice in its "
        "message on kube-apiserver (the value prints a Go pointer, different each time), "
        "once here. A built-in body with a value of the "
        "wrong JSON type gets the decoder's 400 as on kube-apiserver, but a number in its "
        "message is written as Python writes it (`1e2` reads `100.0`), and a patch whose "
        "result does not decode gets the 422 on `patch` with the patch (not the patched "
        "object's JSON) as its value and the decoder's wording (not the strategic merge "
        "converter's); a merge or JSON patch that `fieldValidation=Strict` refuses for "
        "unknown fields gets the same 422 on `patch`, with the patched object's JSON as its "
        "value, its fields in the embedded server's order (kube-apiserver's: the Go "
        "struct's, the objects the patch touched sorted). "
        "A PersistentVolume's immutable-source message stops after its "
        "first line, as a claim's does. Nodes (not their annotations, configSource or "
        "duplicate status addresses), RuntimeClasses (not duplicate tolerations), "
        "ControllerRevisions and CSIDrivers (with their defaults) are validated too; a "
        "ControllerRevision's data is compared as a JSON value, where kube-apiserver "
        "compares raw bytes and so refuses every merge, strategic or JSON patch of one "
        "(even one that leaves the data alone: `data: field is immutable`), and its "
        "message shows the data as compact JSON.",
        "The left-out messages embed Go renderings (`cmp.Diff`, `%#v` of pointers, "
        "encoding/json errors) not worth reproducing; the Service rules need a dual-stack "
        "service network the embedded server does not model.",
        (
            "tests/conformance/test_validation_core.py::test_pvc_update",
            "tests/conformance/test_validation_other_kinds.py::test_pdb_create",
            "tests/conformance/test_wrong_types.py::test_a_patch_of_the_wrong_type_is_422_on_the_patch",
            "tests/conformance/test_differential_findings.py::"
            "test_strict_field_validation_refuses_a_patch_with_unknown_fields",
        ),
    ),
    Difference(
        "Anonymous requests",
        "A request without credentials to a server with a token gets 401 except on the "
        "version and health paths (kube-apiserver authenticates it as `system:anonymous` "
        "and answers 403 on the paths RBAC does not open to it).",
        "Not implemented yet.",
        (
            "tests/conformance/test_bootstrap.py::"
            "test_a_token_that_authenticates_no_one_is_401_on_public_paths_too",
        ),
        deliberate=False,
    ),
    Difference(
        "Bootstrap ClusterRoles",
        "Of kube-apiserver's bootstrap ClusterRoles only `cluster-admin` and "
        "`system:auth-delegator` are stored objects; what every authenticated user may do "
        "(discovery, health, self reviews) is kept in code.",
        "Not implemented yet.",
        ("tests/conformance/test_bootstrap.py::test_bootstrap_cluster_roles",),
        deliberate=False,
    ),
    Difference(
        "Kinds served without their controllers or subresources",
        "The pod subresources `log`, `exec`, `attach`, `portforward`, `proxy`, `eviction`, "
        "`binding` and `ephemeralcontainers`, `nodes/proxy`, `services/proxy` and "
        "`certificatesigningrequests/approval` are missing; ComponentStatuses list empty "
        "(kube-apiserver probes the scheduler, the controller manager and etcd); "
        "ValidatingAdmissionPolicies (and bindings) are validated and defaulted, their CEL "
        "expressions checked for syntax and undeclared names only (kube-apiserver also "
        "type-checks them and estimates their cost), their status not validated, and no "
        "policy is enforced; APIServices are validated and "
        "defaulted but not aggregated (no proxying, no availability condition); "
        "FlowSchemas and PriorityLevelConfigurations are validated and defaulted but not "
        "applied to requests (no API Priority and Fairness, no mandatory `exempt` and "
        "`catch-all` objects, so their fixed specs are not checked); ResourceQuotas and "
        "LimitRanges are validated (and LimitRanges defaulted) but not enforced: no quota "
        "accounting, no limits applied to pods.",
        "Not implemented yet: serving v1 HPAs needs the v1/v2 conversion; the others have "
        "no process (kubelet, controllers) behind them in a bare control plane.",
        (
            "tests/conformance/test_discovery_groups.py::test_resource_entries",
            "tests/conformance/test_discovery_groups.py::test_new_kinds_are_served",
        ),
        deliberate=False,
    ),
    Difference(
        "Custom resource schema errors sorted by field",
        "The causes a custom resource's OpenAPI schema finds come sorted by field path; "
        "kube-apiserver's validator ranges over each schema's properties (a Go map), so the "
        "causes of sibling properties come in a different order from one request to the "
        "next. The causes themselves are the same.",
        "A random order cannot be matched; a sorted one keeps tests repeatable.",
        (f"{_DIFF}::test_schema_errors_of_sibling_properties",),
    ),
    Difference(
        "Causes and Warning headers in Go's order",
        "A 422 lists the causes of metadata, the schema and the kind's validation in the "
        "embedded server's order, which for some kinds differs from kube-apiserver's "
        "(its validators run field by field in Go's order); Warning headers of one "
        "answer likewise. On an update, invalid metadata (a bad label) is listed once per "
        "check the embedded server runs, where kube-apiserver lists it up to four times "
        "(its generic metadata checks, then the kind's ValidateObjectMeta and "
        "ValidateObjectMetaUpdate); the message, which shows each cause once, is the same.",
        "The kind validators (validation/) are being ported rule by rule, each in Go's "
        "order; kinds not ported yet list what they check in their own order.",
        ("tests/conformance/test_error_messages.py::test_an_invalid_generate_name_is_a_cause",),
        deliberate=False,
    ),
)

_INTRO = """\
# Embedded server differences

The embedded API server (`reconcile_kit.testing.APIServer`) is meant to be
indistinguishable from kube-apiserver for real clients (kr8s, kubectl, the official
`kubernetes` client) on the behaviours a controller relies on: what passes against it
should pass against a real cluster. Where it differs, it says so here.
`tests/conformance/` holds the API behaviours written once and checked on both backends
(`pytest tests/conformance --backend both`).

This page is generated from one registry in code,
`reconcile_kit.testing.apiserver.differences.DIFFERENCES` (each difference, its reason and
the tests showing it); tests/test_docs.py fails when the page differs from it.
"""

_IMPLEMENTED = """\
## What it does implement

Discovery; `/openapi/v3` with kube-apiserver 1.32.5's descriptions and enums (`kubectl
explain`); the core and common built-in kinds with kube-apiserver's defaults and `kubectl
get` columns; custom resources from CRDs (OpenAPI v3 validation, CEL rules, pruning,
defaults, status and scale subresources, conversion webhooks); admission webhooks
(validating and mutating, `matchConditions`, selectors, reinvocation); GET, LIST
(selectors, `limit`/`continue`), POST, PUT, PATCH (merge, JSON patch, strategic merge on
built-in kinds), DELETE (finalizers, propagation policies) and WATCH (resume, bookmarks,
`timeoutSeconds`, selectors); errors as `Status` objects with kube-apiserver's reasons and
messages; server-side apply and `managedFields` following structured-merge-diff, checked
on both backends by `tests/conformance/test_server_side_apply.py`; RBAC authorization with
privilege escalation checks and ClusterRole aggregation; resource quantities stored as
kube-apiserver stores them (`cpu: 1000m` reads back `1`, ResourceList values rounded up to
milli units; `tests/conformance/test_quantities.py`).
"""


def _entry(difference: Difference) -> str:
    tests = (
        "; ".join(f"`{test}`" for test in difference.tests)
        if difference.tests
        else "none (not covered by a test)"
    )
    return (
        f"- **{difference.title}.** {difference.text}\n"
        f"  *Why:* {difference.reason}\n"
        f"  *Tests:* {tests}\n"
    )


def render_page() -> str:
    """docs/embedded-server-differences.md: the introduction, the deliberate differences,
    the known gaps and what the server implements, from :data:`DIFFERENCES`."""
    deliberate = [_entry(d) for d in DIFFERENCES if d.deliberate]
    gaps = [_entry(d) for d in DIFFERENCES if not d.deliberate]
    return "\n".join(
        [
            _INTRO,
            "## Deliberate differences\n",
            "".join(deliberate),
            "## Known gaps\n",
            "".join(gaps),
            _IMPLEMENTED,
        ]
    )
