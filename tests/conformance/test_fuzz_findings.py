"""Stored-object shapes the differential fuzzer (tests/fuzz, issue 28) found differing,
fixed in the embedded server and pinned here on both backends."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, STRATEGIC, ok, req

_SELECTOR = {"app": "web"}


def _template(**spec: Any) -> dict[str, Any]:
    containers = [{"name": "c", "image": "nginx:1.27"}]
    return {"metadata": {"labels": _SELECTOR}, "spec": {"containers": containers, **spec}}


def _workload(kind: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "w"},
        "spec": {"selector": {"matchLabels": _SELECTOR}, "template": _template(), **spec},
    }


async def test_pod_templates_keep_a_null_creation_timestamp(backend: Backend) -> None:
    """A workload's pod template metadata carries ``creationTimestamp: null`` (the zero
    metav1.Time has no omitempty), and the null is nobody's in managedFields (a create is
    an Update from the kind's zero value, which has it too)."""
    for kind, plural in (("Deployment", "deployments"), ("ReplicaSet", "replicasets")):
        path = f"/apis/apps/v1/namespaces/{backend.namespace}/{plural}"
        stored = await ok(backend, "POST", path, _workload(kind))
        assert stored["spec"]["template"]["metadata"] == {
            "creationTimestamp": None,
            "labels": _SELECTOR,
        }
        fields = stored["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:template"]
        assert fields["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}


async def test_deprecated_service_account_mirrors_service_account_name(
    backend: Backend,
) -> None:
    """``serviceAccount`` is written as ``serviceAccountName``'s alias (core/v1
    conversion), and stands in for it when only it is given."""
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    named = _workload("Deployment")
    named["spec"]["template"]["spec"]["serviceAccountName"] = "robot"
    stored = await ok(backend, "POST", path, named)
    spec = stored["spec"]["template"]["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("robot", "robot")
    alias = _workload("Deployment")
    alias["metadata"]["name"] = "w2"
    alias["spec"]["template"]["spec"]["serviceAccount"] = "old"
    stored = await ok(backend, "POST", path, alias)
    spec = stored["spec"]["template"]["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("old", "old")
    plain = await ok(backend, "POST", path, _workload("Deployment") | {"metadata": {"name": "w3"}})
    assert "serviceAccount" not in plain["spec"]["template"]["spec"]


async def test_stateful_set_service_name_is_written_when_empty(backend: Backend) -> None:
    """StatefulSetSpec.ServiceName has no omitempty: an unset one reads back ``""``, and
    is nobody's in managedFields (the zero value of the kind has it)."""
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/statefulsets"
    stored = await ok(backend, "POST", path, _workload("StatefulSet"))
    assert stored["spec"]["serviceName"] == ""
    assert "f:serviceName" not in stored["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]


async def test_empty_omitempty_fields_are_not_stored(backend: Backend) -> None:
    """Empty lists, maps and zero scalars of ``omitempty`` fields are not written back, nor
    in managedFields (Go encodes the decoded object again); pointers keep their zero."""
    ns = backend.namespace
    binding = {
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [],
    }
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"
    stored = await ok(backend, "POST", path, binding)
    assert "subjects" not in stored
    assert "f:subjects" not in stored["metadata"]["managedFields"][0]["fieldsV1"]
    account = {"metadata": {"name": "sa"}, "secrets": [], "imagePullSecrets": []}
    stored = await ok(backend, "POST", f"/api/v1/namespaces/{ns}/serviceaccounts", account)
    assert "secrets" not in stored and "imagePullSecrets" not in stored
    deployment = _workload("Deployment", replicas=0, paused=False)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container |= {"ports": [], "env": [], "workingDir": ""}
    stored = await ok(backend, "POST", f"/apis/apps/v1/namespaces/{ns}/deployments", deployment)
    assert set(stored["spec"]["template"]["spec"]["containers"][0]) == {
        "name",
        "image",
        "imagePullPolicy",
        "resources",
        "terminationMessagePath",
        "terminationMessagePolicy",
    }
    assert stored["spec"]["replicas"] == 0  # *int32: a zero pointer is kept
    assert "paused" not in stored["spec"]  # bool, omitempty


async def test_storage_keys_of_resources_with_a_special_prefix(backend: Backend) -> None:
    """A uid precondition failure names the etcd key: Ingresses live under
    ``/registry/ingress/`` (SpecialDefaultResourcePrefixes), not their plural."""
    path = f"/apis/networking.k8s.io/v1/namespaces/{backend.namespace}/ingresses"
    backend_ref = {"service": {"name": "s", "port": {"number": 80}}}
    stored = await ok(
        backend, "POST", path, {"metadata": {"name": "i"}, "spec": {"defaultBackend": backend_ref}}
    )
    stored["metadata"]["uid"] = "0000-other"
    refused = await req(backend, "PUT", f"{path}/i", stored)
    assert refused.status == 409
    assert f"Key: /registry/ingress/{backend.namespace}/i, " in refused.body["message"]


async def test_an_update_to_an_omitted_empty_list_keeps_the_generation(backend: Backend) -> None:
    """Sending an empty ``omitempty`` list where none is stored changes nothing: the
    generation stays."""
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/statefulsets"
    stored = await ok(backend, "POST", path, _workload("StatefulSet"))
    stored["spec"]["volumeClaimTemplates"] = []
    updated = await ok(backend, "PUT", f"{path}/w", stored)
    assert updated["metadata"]["generation"] == 1
    assert "volumeClaimTemplates" not in updated["spec"]


async def test_fields_go_always_encodes_are_written_at_their_zero(backend: Backend) -> None:
    """Fields without ``omitempty`` and structs (a metav1.Time among them) are written even
    when the request leaves them out: a core/v1 Event reads back its null times, empty
    reporting fields and source; none of them is in managedFields."""
    involved = {"kind": "Pod", "name": "p", "namespace": backend.namespace, "apiVersion": "v1"}
    event = {"metadata": {"name": "e"}, "involvedObject": involved, "reason": "Started"}
    stored = await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/events", event)
    zeros = {k: stored.get(k, "absent") for k in ("eventTime", "firstTimestamp", "lastTimestamp")}
    assert zeros == {"eventTime": None, "firstTimestamp": None, "lastTimestamp": None}
    assert (stored["reportingComponent"], stored["reportingInstance"]) == ("", "")
    assert stored["source"] == {}
    assert set(stored["metadata"]["managedFields"][0]["fieldsV1"]) == {
        "f:involvedObject",
        "f:reason",
    }


async def test_network_policy_ports_default_to_tcp(backend: Backend) -> None:
    """SetDefaults_NetworkPolicyPort: a port without protocol is TCP, in every rule."""
    path = f"/apis/networking.k8s.io/v1/namespaces/{backend.namespace}/networkpolicies"
    rule = {"ports": [{"port": 80}, {"protocol": "UDP", "port": 53}, {}]}
    spec = {"podSelector": {}, "ingress": [rule], "egress": [rule]}
    stored = await ok(backend, "POST", path, {"metadata": {"name": "np"}, "spec": spec})
    for direction in ("ingress", "egress"):
        protocols = [p["protocol"] for p in stored["spec"][direction][0]["ports"]]
        assert protocols == ["TCP", "UDP", "TCP"]
    assert stored["spec"]["policyTypes"] == ["Ingress", "Egress"]


async def test_hpa_behavior_gets_its_default_rules(backend: Backend) -> None:
    """SetDefaults_HorizontalPodAutoscalerBehavior: a behavior is completed with the
    default scaleUp and scaleDown rules, keeping what it sets."""
    path = f"/apis/autoscaling/v2/namespaces/{backend.namespace}/horizontalpodautoscalers"
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
    spec = {
        "scaleTargetRef": target,
        "maxReplicas": 3,
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
    }
    stored = await ok(backend, "POST", path, {"metadata": {"name": "h"}, "spec": spec})
    assert stored["spec"]["behavior"] == {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        },
    }
    plain = dict(spec)
    del plain["behavior"]
    stored = await ok(backend, "POST", path, {"metadata": {"name": "h2"}, "spec": plain})
    assert "behavior" not in stored["spec"]


def _pod(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    containers = [
        {"name": f"c{i}", "image": "nginx:1.27", "resources": r} for i, r in enumerate(resources)
    ]
    return {"metadata": {"name": name}, "spec": {"containers": containers}}


async def test_pod_requests_default_to_limits_and_qos_class(backend: Backend) -> None:
    """SetDefaults_Pod copies limits to missing requests; ComputePodQOS gives
    status.qosClass from the containers' CPU and memory."""
    path = f"/api/v1/namespaces/{backend.namespace}/pods"
    both = {"cpu": "500m", "memory": "64Mi"}
    cases = {
        "best": (_pod("best", {}), "BestEffort"),
        "guaranteed": (_pod("guaranteed", {"limits": both}), "Guaranteed"),
        "burstable": (_pod("burstable", {"requests": {"cpu": "1"}}), "Burstable"),
        "mixed": (_pod("mixed", {"limits": both}, {"limits": {"cpu": "1"}}), "Burstable"),
        "less": (
            _pod("less", {"requests": {"cpu": "100m", "memory": "1Mi"}, "limits": both}),
            "Burstable",
        ),
    }
    for name, (pod, qos) in cases.items():
        stored = await ok(backend, "POST", path, pod)
        assert stored["status"]["qosClass"] == qos, name
    stored = await ok(backend, "GET", f"{path}/guaranteed")
    assert stored["spec"]["containers"][0]["resources"] == {"limits": both, "requests": both}


async def test_annotation_keys_are_qualified_names(backend: Backend) -> None:
    """ValidateAnnotations: every key is a qualified name (case does not matter), and
    keys and values hold 256 KiB at most in all."""
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    upper = await req(
        backend, "POST", path, {"metadata": {"name": "u", "annotations": {"A.b/C": ""}}}
    )
    assert upper.status == 201
    bad = await req(
        backend, "POST", path, {"metadata": {"name": "b", "annotations": {"a/b/c": "v"}}}
    )
    assert bad.status == 422
    assert bad.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "a/b/c": a qualified name must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')",
            "field": "metadata.annotations",
        }
    ]
    big = {"metadata": {"name": "big", "annotations": {"k": "v" * (256 * 1024)}}}
    refused = await req(backend, "POST", path, big)
    assert refused.status == 422
    assert refused.body["details"]["causes"] == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: may not be more than 262144 bytes",
            "field": "metadata.annotations",
        }
    ]


async def test_network_policy_generation_sees_an_empty_list(backend: Backend) -> None:
    """The NetworkPolicy strategy compares specs with reflect.DeepEqual: a PUT adding an
    empty ``ingress`` list (stored as nothing) still bumps the generation, where a
    StatefulSet's (Semantic.DeepEqual) does not."""
    path = f"/apis/networking.k8s.io/v1/namespaces/{backend.namespace}/networkpolicies"
    stored = await ok(
        backend, "POST", path, {"metadata": {"name": "np"}, "spec": {"podSelector": {}}}
    )
    stored["spec"]["ingress"] = []
    updated = await ok(backend, "PUT", f"{path}/np", stored)
    assert updated["metadata"]["generation"] == 2
    assert "ingress" not in updated["spec"]
    same = await ok(backend, "PUT", f"{path}/np", updated)
    assert same["metadata"]["generation"] == 2


def _owned(stored: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = stored["metadata"]["managedFields"][0]["fieldsV1"]
    return fields


async def test_what_strategies_and_admission_set_is_nobodys(backend: Backend) -> None:
    """kube-apiserver's field manager records a create as the request defaulted by the
    scheme, before the strategy and the admission plugins: a Pod's priority,
    preemptionPolicy and default tolerations, a Service's allocations, a Namespace's
    finalizer, a claim's protection finalizer and a Job's generated selector and labels
    are in the object but in nobody's managedFields."""
    ns = backend.namespace
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    stored = await ok(backend, "POST", f"/api/v1/namespaces/{ns}/pods", pod)
    assert stored["spec"]["priority"] == 0 and len(stored["spec"]["tolerations"]) == 2
    owned = _owned(stored)["f:spec"]
    assert not {"f:priority", "f:preemptionPolicy", "f:tolerations"} & set(owned)
    assert "f:enableServiceLinks" in owned  # a scheme default is the request's
    service = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], "type": "NodePort"}}
    stored = await ok(backend, "POST", f"/api/v1/namespaces/{ns}/services", service)
    assert stored["spec"]["clusterIP"] and stored["spec"]["ports"][0]["nodePort"]
    owned = _owned(stored)["f:spec"]
    assert not {"f:clusterIP", "f:clusterIPs", "f:ipFamilies", "f:ipFamilyPolicy"} & set(owned)
    assert "f:nodePort" not in owned["f:ports"]['k:{"port":80,"protocol":"TCP"}']
    claim = {
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    stored = await ok(backend, "POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim)
    assert stored["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert "f:metadata" not in _owned(stored)
    job = {
        "metadata": {"name": "j"},
        "spec": {"template": _template(restartPolicy="Never")},
    }
    stored = await ok(backend, "POST", f"/apis/batch/v1/namespaces/{ns}/jobs", job)
    assert "batch.kubernetes.io/controller-uid" in stored["spec"]["selector"]["matchLabels"]
    owned = _owned(stored)
    assert "f:selector" not in owned["f:spec"]
    template_labels = owned["f:spec"]["f:template"]["f:metadata"]["f:labels"]
    assert set(template_labels) == {".", "f:app"}


async def test_namespace_finalizers_are_the_strategys(backend: Backend) -> None:
    """A Namespace's ``spec.finalizers`` is set on create after the field manager (nobody's)
    and kept by an update that drops it (only ``/finalize`` changes it)."""
    name = f"{backend.namespace}-f"
    stored = await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    try:
        assert stored["spec"]["finalizers"] == ["kubernetes"]
        assert "f:spec" not in _owned(stored)
        stored["spec"] = {"finalizers": []}
        updated = await ok(backend, "PUT", f"/api/v1/namespaces/{name}", stored)
        assert updated["spec"]["finalizers"] == ["kubernetes"]
    finally:
        await req(backend, "DELETE", f"/api/v1/namespaces/{name}")


async def test_job_completions_default_only_without_parallelism(backend: Backend) -> None:
    """batch/v1 SetDefaults_Job sets completions to 1 only when parallelism is unset too."""
    path = f"/apis/batch/v1/namespaces/{backend.namespace}/jobs"
    job = {"metadata": {"name": "j"}, "spec": {"parallelism": 2, "template": _template()}}
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    stored = await ok(backend, "POST", path, job)
    assert "completions" not in stored["spec"] and stored["spec"]["parallelism"] == 2
    assert "f:completions" not in _owned(stored)["f:spec"]
    job = {"metadata": {"name": "k"}, "spec": {"template": _template(restartPolicy="Never")}}
    stored = await ok(backend, "POST", path, job)
    assert (stored["spec"]["completions"], stored["spec"]["parallelism"]) == (1, 1)


async def test_empty_rules_are_the_requests(backend: Backend) -> None:
    """A Role created with ``rules: []`` reads back ``rules: null`` (protobuf storage), yet
    its creator owns ``rules`` (the field manager saw the decoded empty slice)."""
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{backend.namespace}/roles"
    stored = await ok(backend, "POST", path, {"metadata": {"name": "r"}, "rules": []})
    assert stored["rules"] is None
    assert _owned(stored) == {"f:rules": {}}


async def test_rbac_rule_and_subject_causes(backend: Backend) -> None:
    """ValidatePolicyRule shows the non-resource URLs as Go's ``[]string{...}`` and refuses
    rules mixing resources and URLs; a ServiceAccount subject's name is a DNS subdomain."""
    group = "/apis/rbac.authorization.k8s.io/v1"
    rule = {"verbs": ["get"], "resources": ["pods"], "nonResourceURLs": ["/x"]}
    reply = await req(
        backend, "POST", f"{group}/clusterroles", {"metadata": {"name": "fz-r"}, "rules": [rule]}
    )
    assert reply.status == 422, reply.body
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "rules[0].nonResourceURLs",
            "message": 'Invalid value: []string{"/x"}: rules cannot apply to both regular '
            "resources and non-resource URLs",
        }
    ]
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}
    subject = {"kind": "ServiceAccount", "name": "Bad_Name", "namespace": "default"}
    binding = {"metadata": {"name": "b"}, "roleRef": ref, "subjects": [subject]}
    path = f"{group}/namespaces/{backend.namespace}/rolebindings"
    reply = await req(backend, "POST", path, binding)
    assert reply.status == 422, reply.body
    [cause] = reply.body["details"]["causes"]
    assert cause["field"] == "subjects[0].name"
    assert cause["message"].startswith('Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')


async def test_an_empty_secret_type_is_opaque(backend: Backend) -> None:
    """core/v1 SetDefaults_Secret: ``type: ""`` is defaulted to Opaque (and is the writer's)."""
    path = f"/api/v1/namespaces/{backend.namespace}/secrets"
    stored = await ok(backend, "POST", path, {"metadata": {"name": "s"}, "type": ""})
    assert stored["type"] == "Opaque"
    assert _owned(stored) == {"f:type": {}}


async def test_dropped_lease_fields_are_the_writers(backend: Backend) -> None:
    """The lease strategy drops ``strategy`` and ``preferredHolder`` (CoordinatedLeaderElection
    is off) after the field manager saw them: they stay in the writer's managedFields."""
    path = f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases"
    body = {"metadata": {"name": "l"}, "spec": {"strategy": "Bogus", "preferredHolder": "x"}}
    stored = await ok(backend, "POST", path, body)
    assert "strategy" not in stored.get("spec", {})
    assert _owned(stored) == {"f:spec": {"f:preferredHolder": {}, "f:strategy": {}}}


async def test_a_zero_field_sent_again_keeps_the_generation(backend: Backend) -> None:
    """The Deployment strategy compares specs with Semantic.DeepEqual on the decoded
    structs: a PUT adding ``paused: false`` (Go's zero value) is no spec change."""
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    stored = await ok(backend, "POST", path, _workload("Deployment"))
    stored["spec"]["paused"] = False
    updated = await ok(backend, "PUT", f"{path}/w", stored)
    assert updated["metadata"]["generation"] == 1
    assert "paused" not in updated["spec"]


async def test_rbac_defaults_and_aggregation_rule(backend: Backend) -> None:
    """rbac/v1 defaults an empty roleRef.apiGroup and a User subject's apiGroup; an
    aggregationRule needs at least one clusterRoleSelector."""
    group = "/apis/rbac.authorization.k8s.io/v1"
    ref = {"apiGroup": "", "kind": "ClusterRole", "name": "r"}
    binding = {
        "metadata": {"name": "b"},
        "roleRef": ref,
        "subjects": [{"kind": "User", "name": "u"}],
    }
    path = f"{group}/namespaces/{backend.namespace}/rolebindings"
    stored = await ok(backend, "POST", path, binding)
    assert stored["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert stored["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    reply = await req(backend, "POST", path, {"metadata": {"name": "c"}})
    assert reply.status == 422, reply.body
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["roleRef.kind", "roleRef.name"]
    role = {"metadata": {"name": f"{backend.namespace}-agg"}, "aggregationRule": {}}
    reply = await req(backend, "POST", f"{group}/clusterroles", role)
    assert reply.status == 422, reply.body
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "field": "aggregationRule.clusterRoleSelectors",
            "message": "Required value: at least one clusterRoleSelector required if "
            "aggregationRule is non-nil",
        }
    ]


async def test_namespace_finalizers_sent_in_an_update_are_the_writers(backend: Backend) -> None:
    """An update sending other ``spec.finalizers`` keeps the old ones (the strategy) yet
    its writer owns the field (the field manager saw the request)."""
    name = f"{backend.namespace}-g"
    stored = await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    try:
        stored["spec"] = {"finalizers": ["kubernetes", "example.com/x"]}
        updated = await ok(backend, "PUT", f"/api/v1/namespaces/{name}", stored)
        assert updated["spec"]["finalizers"] == ["kubernetes"]
        assert _owned(updated)["f:spec"] == {"f:finalizers": {}}
    finally:
        await req(backend, "DELETE", f"/api/v1/namespaces/{name}")


async def test_names_over_a_kinds_own_limit(backend: Backend) -> None:
    """A StatefulSet's name is a DNS-1123 label (63 characters); a CronJob's is a subdomain
    of at most 52 characters on a create (a Job's 63 less the controller's suffix)."""
    long = "n" * 64
    statefulset = _workload("StatefulSet", serviceName="s")
    statefulset["metadata"]["name"] = long
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/statefulsets"
    reply = await req(backend, "POST", path, statefulset)
    assert reply.status == 422
    assert [c["message"] for c in reply.body["details"]["causes"]] == [
        f'Invalid value: "{long}": must be no more than 63 characters'
    ]
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "n" * 53},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": _template(restartPolicy="OnFailure")}},
        },
    }
    reply = await req(
        backend, "POST", f"/apis/batch/v1/namespaces/{backend.namespace}/cronjobs", cronjob
    )
    assert reply.status == 422
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "metadata.name",
            "message": f'Invalid value: "{"n" * 53}": must be no more than 52 characters',
        }
    ]


async def test_an_aggregation_selector_that_does_not_convert(backend: Backend) -> None:
    """An invalid matchLabels key: the selector's own cause, then "invalid label selector."
    for the nil selector LabelSelectorAsSelector gave."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"{backend.namespace}-agg"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"bad key!": "v"}}]},
    }
    reply = await req(backend, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    assert reply.status == 422
    causes = reply.body["details"]["causes"]
    assert [c["field"] for c in causes] == [
        "aggregationRule.clusterRoleSelectors[0].matchLabels",
        "aggregationRule.clusterRoleSelectors[0]",
    ]
    assert causes[1]["message"] == 'Invalid value: "null": invalid label selector.'


async def test_an_indexed_jobs_last_pod_name_must_be_a_dns_label(backend: Backend) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "n" * 62},
        "spec": {
            "completionMode": "Indexed",
            "completions": 10,
            "template": _template(restartPolicy="Never"),
        },
    }
    job["spec"]["template"]["metadata"] = {}
    reply = await req(backend, "POST", f"/apis/batch/v1/namespaces/{backend.namespace}/jobs", job)
    assert reply.status == 422
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "metadata.name",
            "message": f'Invalid value: "{"n" * 62}": will not able to create pod with invalid'
            f" DNS label: {'n' * 62}-9",
        }
    ]


async def test_daemon_and_replica_set_updates_check_the_spec_twice(backend: Backend) -> None:
    """Their strategies run the create validation, then the update one, which runs the spec
    rules again: a template no longer matching the selector is named twice."""
    for kind, plural in (("DaemonSet", "daemonsets"), ("ReplicaSet", "replicasets")):
        path = f"/apis/apps/v1/namespaces/{backend.namespace}/{plural}"
        stored = await ok(backend, "POST", path, _workload(kind))
        stored["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
        reply = await req(backend, "PUT", f"{path}/w", stored)
        assert reply.status == 422
        causes = reply.body["details"]["causes"]
        assert [c["field"] for c in causes] == ["spec.template.metadata.labels"] * 2


async def test_an_empty_map_sent_to_an_immutable_object(backend: Backend) -> None:
    """reflect.DeepEqual tells the empty map sent from the nil map of an object without
    it: refused for a Secret's ``data`` and a ConfigMap's ``binaryData``; a ConfigMap's
    ``data: {}`` is accepted (as measured on kube-apiserver 1.32.5)."""
    why = "Forbidden: field is immutable when `immutable` is set"
    for plural, kind, field, refused in (
        ("secrets", "Secret", "data", True),
        ("configmaps", "ConfigMap", "binaryData", True),
        ("configmaps", "ConfigMap", "data", False),
    ):
        path = f"/api/v1/namespaces/{backend.namespace}/{plural}"
        body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": field.lower()}}
        await ok(backend, "POST", path, {**body, "immutable": True})
        reply = await req(
            backend, "PUT", f"{path}/{field.lower()}", {**body, "immutable": True, field: {}}
        )
        if not refused:
            assert reply.status == 200, reply.body
            continue
        assert reply.status == 422, reply.body
        assert reply.body["details"]["causes"] == [
            {"reason": "FieldValueForbidden", "field": field, "message": why}
        ]


async def test_stateful_set_claim_templates_as_apps_v1_serves_them(backend: Backend) -> None:
    """A StatefulSet's volumeClaimTemplates carry the type meta apps/v1 conversion writes
    (whatever was sent), SetDefaults_PersistentVolumeClaim's Pending phase and
    SetDefaults_PersistentVolumeClaimSpec's Filesystem volumeMode; set values are kept."""
    sent = [
        {"metadata": {"name": "d"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
        {
            "apiVersion": "bogus/v9",
            "kind": "Thing",
            "metadata": {"name": "e"},
            "spec": {"volumeMode": "Block"},
            "status": {"phase": "Bound"},
        },
    ]
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/statefulsets"
    stored = await ok(backend, "POST", path, _workload("StatefulSet", volumeClaimTemplates=sent))
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim"}
    assert stored["spec"]["volumeClaimTemplates"] == [
        {
            **claim,
            "metadata": {"creationTimestamp": None, "name": "d"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {}, "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"},
        },
        {
            **claim,
            "metadata": {"creationTimestamp": None, "name": "e"},
            "spec": {"resources": {}, "volumeMode": "Block"},
            "status": {"phase": "Bound"},
        },
    ]
    stored["spec"]["replicas"] = 2
    updated = await ok(backend, "PUT", f"{path}/w", stored)
    assert updated["spec"]["volumeClaimTemplates"] == stored["spec"]["volumeClaimTemplates"]
    assert updated["metadata"]["generation"] == 2


async def test_deployment_generation_sees_empty_annotations_as_none(backend: Backend) -> None:
    """The deployment strategy bumps the generation on a change of the spec or of the
    annotations, compared with Semantic.DeepEqual: ``annotations: {}`` is no annotation."""
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    stored = await ok(backend, "POST", path, _workload("Deployment"))
    stored["metadata"]["annotations"] = {}
    updated = await ok(backend, "PUT", f"{path}/w", stored)
    assert updated["metadata"]["generation"] == 1
    updated["metadata"]["annotations"] = {"a": "b"}
    assert (await ok(backend, "PUT", f"{path}/w", updated))["metadata"]["generation"] == 2


def _one_container_pod(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27", **container}]},
    }


async def test_container_resource_names(backend: Backend) -> None:
    """validateContainerResourceName (the value printed through ResourceName.String, so
    unquoted): a name without a domain must be standard and a container's; one with a
    domain outside kubernetes.io an extended resource name."""
    path = f"/api/v1/namespaces/{backend.namespace}/pods"
    reply = await req(
        backend, "POST", path, _one_container_pod(resources={"limits": {"bogus": "1"}})
    )
    assert reply.status == 422
    field = "spec.containers[0].resources"
    assert [(c["field"], c["message"]) for c in reply.body["details"]["causes"]] == [
        (f"{field}.limits[bogus]", f"Invalid value: bogus: {detail}")
        for detail in (
            "must be a standard resource type or fully qualified",
            "must be a standard resource for containers",
        )
    ] + [
        (f"{field}.requests[bogus]", f"Invalid value: bogus: {detail}")
        for detail in (
            "must be a standard resource type or fully qualified",
            "must be a standard resource for containers",
        )
    ]
    reply = await req(
        backend, "POST", path, _one_container_pod(resources={"limits": {"pods": "1"}})
    )
    assert [c["message"] for c in reply.body["details"]["causes"]][:1] == [
        "Invalid value: pods: must be a standard resource for containers"
    ]
    extended = _one_container_pod(resources={"limits": {"example.com/gpu": "1"}})
    assert (await req(backend, "POST", path, extended)).status == 201


async def test_a_negative_pod_grace_period_is_one(backend: Backend) -> None:
    """Convert_v1_Pod_To_core_Pod (a Pod's only, not a template's)."""
    pod = _one_container_pod()
    pod["spec"]["terminationGracePeriodSeconds"] = -5
    stored = await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/pods", pod)
    assert stored["spec"]["terminationGracePeriodSeconds"] == 1


async def test_equal_node_port_service_ports_share_one_node_port(backend: Backend) -> None:
    """initNodePorts gives ports of one number one node port, which validation then names
    a duplicate (before the duplicate port itself)."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "np"},
        "spec": {
            "type": "NodePort",
            "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}],
        },
    }
    path = f"/api/v1/namespaces/{backend.namespace}/services"
    reply = await req(backend, "POST", path, service)
    assert reply.status == 422
    causes = reply.body["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.ports[1].nodePort", "spec.ports[1]"]
    assert causes[0]["message"].startswith("Duplicate value: 3")


async def test_volume_claim_templates_get_claim_defaults_and_type(backend: Backend) -> None:
    """Each template is written with apiVersion v1 and kind PersistentVolumeClaim
    (Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec) and the claim's defaults."""
    statefulset = _workload("StatefulSet", serviceName="s")
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    claim["spec"]["resources"] = {"requests": {"storage": "1Gi"}}
    statefulset["spec"]["volumeClaimTemplates"] = [claim]
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/statefulsets"
    stored = await ok(backend, "POST", path, statefulset)
    template = stored["spec"]["volumeClaimTemplates"][0]
    assert (template["apiVersion"], template["kind"]) == ("v1", "PersistentVolumeClaim")
    assert template["spec"]["volumeMode"] == "Filesystem"
    assert template["status"] == {"phase": "Pending"}


def _claim(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Mi"}},
            **spec,
        },
    }


async def test_a_claim_takes_a_storage_class_once(backend: Backend) -> None:
    """validateStorageClassUpgradeFromNil: a claim without a class may get one; a class
    once set is part of the immutable spec, refused with go-cmp's diff after the message
    (go-cmp's text itself is unstable on purpose: only its frame is compared)."""
    path = f"/api/v1/namespaces/{backend.namespace}/persistentvolumeclaims"
    stored = await ok(backend, "POST", path, _claim())
    stored["spec"]["storageClassName"] = "fast"
    updated = await ok(backend, "PUT", f"{path}/c", stored)
    updated["spec"]["storageClassName"] = "slow"
    reply = await req(backend, "PUT", f"{path}/c", updated)
    assert reply.status == 422
    (cause,) = reply.body["details"]["causes"]
    first, *diff = cause["message"].split("\n")
    assert first == (
        "Forbidden: spec is immutable after creation except resources.requests and"
        " volumeAttributesClassName for bound claims"
    )
    assert diff[0].replace("\u00a0", " ") == "  core.PersistentVolumeClaimSpec{"
    assert diff[-2:][0].replace("\u00a0", " ") == "  }"


async def test_a_service_updates_managed_fields_are_the_requests(backend: Backend) -> None:
    """The field manager records an update's request before the registry drops what the
    new type has no use for and allocates (or keeps) addresses and node ports."""
    path = f"/api/v1/namespaces/{backend.namespace}/services"
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
    }
    stored = await ok(backend, "POST", path, service)
    stored["spec"]["type"] = "ClusterIP"
    del stored["spec"]["ports"][0]["nodePort"]
    updated = await ok(backend, "PUT", f"{path}/lb", stored)
    spec = updated["spec"]
    assert "allocateLoadBalancerNodePorts" not in spec and "externalTrafficPolicy" not in spec
    owned = updated["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert "f:allocateLoadBalancerNodePorts" in owned and "f:externalTrafficPolicy" in owned
    port = owned["f:ports"]['k:{"port":80,"protocol":"TCP"}']
    assert "f:nodePort" not in port


async def test_the_first_write_after_a_read_default_is_never_a_no_op(backend: Backend) -> None:
    """A PersistentVolumeClaim's status phase (cleared by its PrepareForCreate) and a
    label-less Job's labels (its template's, generated after the request was decoded) are
    defaults kube-apiserver adds when it decodes the stored object: etcd's copy lacks them
    until the next write, so the first PUT of the object as read gets a new
    resourceVersion, and the same PUT again does not."""
    ns = backend.namespace
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Mi"}}},
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": _template(restartPolicy="Never") | {"metadata": {}}},
    }
    for collection, obj in (
        (f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim),
        (f"/apis/batch/v1/namespaces/{ns}/jobs", job),
    ):
        created = await ok(backend, "POST", collection, obj)
        url = f"{collection}/{obj['metadata']['name']}"
        first = await ok(backend, "PUT", url, created)
        assert first["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
        again = await ok(backend, "PUT", url, first)
        assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert created["metadata"]["labels"]["job-name"] == "j"  # the Job's read default


async def test_an_update_that_sets_another_uid(backend: Backend) -> None:
    """A patch's uid (a PUT's is a precondition, 409): the "field is immutable" cause
    comes from BeforeUpdate and again from the strategy's ValidateObjectMetaUpdate, which
    a PodDisruptionBudget's and an Event's strategy do not call (once); a Job's strategy
    checks its generated labels and selector against the new uid in between
    (ValidateHasLabel: the label's path, the labels map)."""
    ns = backend.namespace
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": _template(restartPolicy="Never")},
    }
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": _SELECTOR}},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
    }
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    fields = {}
    for collection, obj in (
        (f"/apis/batch/v1/namespaces/{ns}/jobs", job),
        (f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", budget),
        (f"/api/v1/namespaces/{ns}/events", event),
        (f"/api/v1/namespaces/{ns}/configmaps", configmap),
    ):
        created = await ok(backend, "POST", collection, obj)
        uid = created["metadata"]["uid"]
        url = f"{collection}/{obj['metadata']['name']}"
        other = {"metadata": {"uid": "0000-other"}}  # a PUT's uid is a precondition: 409
        status, body = await req(backend, "PATCH", url, other, content_type=MERGE)
        assert status == 422, body
        causes = body["details"]["causes"]
        fields[obj["kind"]] = [c["field"] for c in causes]
        if obj["kind"] == "Job":
            labels = ", ".join(
                f'"{k}":"{v}"'
                for k, v in sorted(created["spec"]["template"]["metadata"]["labels"].items())
            )
            assert causes[1]["message"] == (
                f"Invalid value: map[string]string{{{labels}}}: must be '0000-other'"
            )
            assert (
                uid in causes[3]["message"]
                and "`selector` not auto-generated" in (causes[3]["message"])
            )
    uid_field = "metadata.uid"
    assert fields == {
        "Job": [
            uid_field,
            "spec.template.metadata.labels[controller-uid]",
            "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]",
            "spec.selector",
            uid_field,
        ],
        "PodDisruptionBudget": [uid_field],
        "Event": [uid_field],
        "ConfigMap": [uid_field, uid_field],
    }


async def test_a_budgets_selector_is_replaced_by_a_strategic_merge_patch(
    backend: Backend,
) -> None:
    """policy/v1 PodDisruptionBudgetSpec.selector is ``patchStrategy: replace``: a strategic
    merge patch's selector replaces the stored one as it is, and a ``null`` label in it
    decodes as ``""`` (a ``map[string]string`` value) instead of removing the label."""
    path = f"/apis/policy/v1/namespaces/{backend.namespace}/poddisruptionbudgets"
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web", "tier": "x"}}},
    }
    await ok(backend, "POST", path, budget)
    patch = {"spec": {"selector": {"matchLabels": {"app": None, "team": "shop"}}}}
    patched = await ok(backend, "PATCH", f"{path}/b", patch, content_type=STRATEGIC)
    assert patched["spec"]["selector"] == {"matchLabels": {"app": "", "team": "shop"}}
    merged = await ok(backend, "PATCH", f"{path}/b", patch, content_type=MERGE)
    assert merged["spec"]["selector"] == {"matchLabels": {"team": "shop"}}
