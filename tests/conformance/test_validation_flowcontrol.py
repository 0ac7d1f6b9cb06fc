"""FlowSchemas and PriorityLevelConfigurations validated and defaulted as kube-apiserver
1.32.5 does (pkg/apis/flowcontrol/validation, v1 defaults). What is stored matches no
request of the tests (a user nobody is) and is never referenced, so the real server's
API Priority and Fairness is left alone. Each row: an object (or a change to one) and the
422 it gets, causes and message byte for byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok
from .test_validation_core import RFC1123_LABEL, RFC1123_SUB, forb, inv, req_, unsupported
from .validation_table import Cause, collection, create_refused, named, update_refused

NOBODY = [{"kind": "User", "user": {"name": "reconcile-kit-nobody"}}]
NOTHING = [{"verbs": ["get"], "nonResourceURLs": ["/reconcile-kit-nothing"]}]
VERBS = (
    *("create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update"),
    "watch",
)
NS = "each member of this list must be '*' or a DNS-1123 label; " + RFC1123_LABEL
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
BAD_URLS = ["", "a", "/a b", "/a//b", "/a*", "/a/*/b/*"]
EXEMPT_ONLY = "type must be 'Exempt' if and only if name is 'exempt'"


def flow_schema(*rules: dict[str, Any], **spec: Any) -> dict[str, Any]:
    body = {
        "priorityLevelConfiguration": {"name": "global-default"},
        "matchingPrecedence": 9000,
        "rules": list(rules) or [{"subjects": NOBODY, "nonResourceRules": NOTHING}],
    }
    return {"metadata": {"name": "fs"}, "spec": {**body, **spec}}


def level(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pl"}, "spec": spec}


def limited(**fields: Any) -> dict[str, Any]:
    return {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}, **fields}}


def rule(**fields: Any) -> dict[str, Any]:
    return {"subjects": NOBODY, **fields}


def queue(**queuing: Any) -> dict[str, Any]:
    return limited(limitResponse={"type": "Queue", "queuing": queuing})


CREATES = [
    pytest.param("flowschemas", flow_schema(), [], id="fs-valid"),
    pytest.param(
        "flowschemas",
        flow_schema(
            {"subjects": []},
            matchingPrecedence=1,
            distinguisherMethod={"type": "ByZone"},
            priorityLevelConfiguration={"name": "Bad_Name"},
        ),
        [
            inv(
                "spec.matchingPrecedence",
                "1",
                "only the schema named 'exempt' may have matchingPrecedence 1",
            ),
            (
                "FieldValueNotSupported",
                "spec.distinguisherMethod.type",
                'Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByZone"}:'
                ' supported values: "ByNamespace", "ByUser"',
            ),
            inv("spec.priorityLevelConfiguration.name", '"Bad_Name"', RFC1123_SUB),
            req_("spec.rules[0].subjects", "subjects must contain at least one value"),
            req_(
                "spec.rules[0]",
                "at least one of resourceRules and nonResourceRules has to be non-empty",
            ),
        ],
        id="fs-spec",
    ),
    pytest.param(
        "flowschemas",
        flow_schema(matchingPrecedence=10001, priorityLevelConfiguration={}),
        [
            inv("spec.matchingPrecedence", "10001", "must not be greater than 10000"),
            req_("spec.priorityLevelConfiguration.name", "must reference a priority level"),
        ],
        id="fs-precedence-too-high",
    ),
    pytest.param(
        "flowschemas",
        flow_schema(matchingPrecedence=-3),
        [inv("spec.matchingPrecedence", "-3", "must be a positive value")],
        id="fs-precedence-negative",
    ),
    pytest.param(
        "flowschemas",
        flow_schema(
            {
                "subjects": [
                    {"kind": "Robot"},
                    {"kind": "User"},
                    {"kind": "Group", "group": {"name": ""}, "user": {"name": "u"}},
                    {"kind": "ServiceAccount", "serviceAccount": {"name": "Bad_SA"}},
                    {
                        "kind": "ServiceAccount",
                        "serviceAccount": {"name": "*", "namespace": "Bad_NS"},
                        "group": {"name": "g"},
                        "user": {"name": "u"},
                    },
                ],
                "nonResourceRules": NOTHING,
            }
        ),
        [
            unsupported(
                "spec.rules[0].subjects[0].kind", "Robot", "Group", "ServiceAccount", "User"
            ),
            req_("spec.rules[0].subjects[1].user", "user is required when subject kind is 'User'"),
            req_("spec.rules[0].subjects[2].group.name"),
            forb(
                "spec.rules[0].subjects[2].user",
                "user is forbidden when subject kind is not 'User'",
            ),
            inv("spec.rules[0].subjects[3].serviceAccount.name", '"Bad_SA"', RFC1123_SUB),
            req_(
                "spec.rules[0].subjects[3].serviceAccount.namespace",
                "must specify namespace for service account",
            ),
            inv("spec.rules[0].subjects[4].serviceAccount.namespace", '"Bad_NS"', RFC1123_LABEL),
            forb(
                "spec.rules[0].subjects[4].user",
                "user is forbidden when subject kind is not 'User'",
            ),
            forb(
                "spec.rules[0].subjects[4].group",
                "group is forbidden when subject kind is not 'Group'",
            ),
        ],
        id="fs-subjects",
    ),
    pytest.param(
        "flowschemas",
        flow_schema(
            rule(
                resourceRules=[
                    {},
                    {
                        "verbs": ["*", "get"],
                        "apiGroups": ["*", "apps"],
                        "resources": ["*", "pods"],
                        "namespaces": ["*", "x"],
                    },
                    {
                        "verbs": ["fly", "get"],
                        "apiGroups": [""],
                        "resources": ["pods"],
                        "namespaces": ["Bad_NS"],
                    },
                    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True},
                ],
                nonResourceRules=[
                    {"verbs": ["get"]},
                    {
                        "verbs": ["get"],
                        "nonResourceURLs": ["", "a", "/a b", "/a//b", "/a*", "/a/*/b/*"],
                    },
                    {"verbs": ["get"], "nonResourceURLs": ["*", "/x"]},
                ],
            )
        ),
        [
            req_("spec.rules[0].resourceRules[0].verbs", "verbs must contain at least one value"),
            req_(
                "spec.rules[0].resourceRules[0].apiGroups",
                "resource rules must supply at least one api group",
            ),
            req_(
                "spec.rules[0].resourceRules[0].resources",
                "resource rules must supply at least one resource",
            ),
            req_(
                "spec.rules[0].resourceRules[0].namespaces",
                "resource rules that are not cluster scoped must supply at least one namespace",
            ),
            inv(
                "spec.rules[0].resourceRules[1].verbs",
                '[]string{"*", "get"}',
                "if '*' is present, must not specify other verbs",
            ),
            inv(
                "spec.rules[0].resourceRules[1].apiGroups",
                '[]string{"*", "apps"}',
                "if '*' is present, must not specify other api groups",
            ),
            inv(
                "spec.rules[0].resourceRules[1].resources",
                '[]string{"*", "pods"}',
                "if '*' is present, must not specify other resources",
            ),
            inv(
                "spec.rules[0].resourceRules[1].namespaces",
                '[]string{"*", "x"}',
                "if '*' is present, must not specify other namespaces",
            ),
            (
                "FieldValueNotSupported",
                "spec.rules[0].resourceRules[2].verbs",
                'Unsupported value: []string{"fly", "get"}: supported values: '
                + ", ".join(f'"{v}"' for v in VERBS),
            ),
            inv("spec.rules[0].resourceRules[2].namespaces[0]", '"Bad_NS"', NS),
            req_(
                "spec.rules[0].nonResourceRules[0].nonResourceURLs",
                "nonResourceURLs must contain at least one value",
            ),
            inv("spec.rules[0].nonResourceRules[1].nonResourceURLs[0]", '""', "must not be empty"),
            inv(
                "spec.rules[0].nonResourceRules[1].nonResourceURLs[1]",
                '"a"',
                "must start with slash",
            ),
            inv(
                "spec.rules[0].nonResourceRules[1].nonResourceURLs[2]",
                '"/a b"',
                "must not contain white-space",
            ),
            inv(
                "spec.rules[0].nonResourceRules[1].nonResourceURLs[3]",
                '"/a//b"',
                "must not contain double slash",
            ),
            inv(
                "spec.rules[0].nonResourceRules[1].nonResourceURLs[4]",
                '"/a*"',
                "wildcard can only do suffix matching",
            ),
            inv(
                "spec.rules[0].nonResourceRules[1].nonResourceURLs[5]",
                '"/a/*/b/*"',
                "wildcard can only do suffix matching",
            ),
            inv(
                "spec.rules[0].nonResourceRules[2].nonResourceURLs",
                '[]string{"*", "/x"}',
                "if '*' is present, must not specify other non-resource URLs",
            ),
        ],
        id="fs-rules",
    ),
    pytest.param("prioritylevelconfigurations", level(**limited()), [], id="pl-valid"),
    pytest.param(
        "prioritylevelconfigurations",
        level(
            type="Exempt",
            limited={"limitResponse": {"type": "Reject"}},
            exempt={"nominalConcurrencyShares": -1, "lendablePercent": 101},
        ),
        [
            inv("spec.type", '"Exempt"', EXEMPT_ONLY),
            forb("spec.limited", "must be nil if the type is not Limited"),
            inv("spec.exempt.nominalConcurrencyShares", "-1", "must be a non-negative integer"),
            inv("spec.exempt.lendablePercent", "101", "must be between 0 and 100, inclusive"),
        ],
        id="pl-exempt-not-named-exempt",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(type="Other"),
        [unsupported("spec.type", "Other", "Exempt", "Limited")],
        id="pl-type",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(type="Limited", exempt={}),
        [
            forb("spec.exempt", "must be nil if the type is Limited"),
            req_("spec.limited", "must not be empty when type is Limited"),
        ],
        id="pl-limited-missing",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(
            **limited(
                nominalConcurrencyShares=-1,
                lendablePercent=-5,
                borrowingLimitPercent=-1,
                limitResponse={
                    "type": "Queue",
                    "queuing": {"queues": 20000000, "handSize": 3, "queueLengthLimit": -1},
                },
            )
        ),
        [
            inv("spec.limited.nominalConcurrencyShares", "-1", "must be a non-negative integer"),
            inv("spec.limited.limitResponse.queuing.queueLengthLimit", "-1", "must be positive"),
            inv(
                "spec.limited.limitResponse.queuing.queues",
                "20000000",
                "must not be greater than 10000000",
            ),
            inv(
                "spec.limited.limitResponse.queuing.handSize",
                "3",
                "required entropy bits of deckSize 20000000 and handSize 3 should not be"
                " greater than 60",
            ),
            inv("spec.limited.lendablePercent", "-5", "must be between 0 and 100, inclusive"),
            inv(
                "spec.limited.borrowingLimitPercent",
                "-1",
                "if specified, must be a non-negative integer",
            ),
        ],
        id="pl-limited-fields",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(**queue(queues=4, handSize=5)),
        [
            inv(
                "spec.limited.limitResponse.queuing.handSize",
                "5",
                "should not be greater than queues (4)",
            )
        ],
        id="pl-hand-bigger-than-deck",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(**limited(limitResponse={"type": "Queue"})),
        [
            req_(
                "spec.limited.limitResponse.queuing",
                "must not be empty if limited.limitResponse.type is Limited",
            )
        ],
        id="pl-queue-without-queuing",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(**limited(limitResponse={"type": "Reject", "queuing": {}})),
        [
            forb(
                "spec.limited.limitResponse.queuing",
                "must be nil if limited.limitResponse.type is not Limited",
            )
        ],
        id="pl-reject-with-queuing",
    ),
    pytest.param(
        "prioritylevelconfigurations",
        level(**limited(limitResponse={"type": "Drop"})),
        [unsupported("spec.limited.limitResponse.type", "Drop", "Queue", "Reject")],
        id="pl-limit-response-type",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


CONDITIONS = {"status": {"conditions": [{"type": ""}, {"type": "A"}, {"type": "A"}]}}
CONDITION_CAUSES = [
    req_("status.conditions[0].type", "must not be empty"),
    ("FieldValueDuplicate", "status.conditions[2].type", 'Duplicate value: "A"'),
]


@pytest.mark.parametrize(
    ("plural", "body"),
    [("flowschemas", flow_schema()), ("prioritylevelconfigurations", level(**limited()))],
)
async def test_status_conditions(backend: Backend, plural: str, body: dict[str, Any]) -> None:
    await update_refused(backend, plural, body, CONDITIONS, CONDITION_CAUSES, subresource="status")


async def test_defaults(backend: Backend) -> None:
    """matchingPrecedence 1000; a limited level's shares 30, lendable 0 and queuing
    8 / 64 / 50."""
    fs = named(backend, "flowschemas", flow_schema(matchingPrecedence=None))
    created = await ok(backend, "POST", collection(backend, "flowschemas"), fs)
    assert created["spec"]["matchingPrecedence"] == 1000
    assert created["metadata"]["generation"] == 1
    pl = named(backend, "prioritylevelconfigurations", level(**queue()))
    created = await ok(backend, "POST", collection(backend, "prioritylevelconfigurations"), pl)
    spec = created["spec"]["limited"]
    assert (spec["nominalConcurrencyShares"], spec["lendablePercent"]) == (30, 0)
    queuing = spec["limitResponse"]["queuing"]
    assert queuing == {"handSize": 8, "queues": 64, "queueLengthLimit": 50}
    path = f"{collection(backend, 'prioritylevelconfigurations')}/{pl['metadata']['name']}"
    patch = {"spec": {"limited": {"lendablePercent": 10}}}
    patched = await ok(backend, "PATCH", path, patch, content_type=MERGE)
    assert patched["metadata"]["generation"] == 2
