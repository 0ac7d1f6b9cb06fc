"""ValidatingAdmissionPolicies and their bindings validated and defaulted as
kube-apiserver 1.32.5 does (pkg/apis/admissionregistration/validation, v1 defaults). No
stored binding names a stored policy, so nothing is enforced on the real server. Each row:
an object and the 422 it gets, causes and message byte for byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok
from .test_validation_core import forb, inv, req_, unsupported
from .validation_table import Cause, collection, create_refused, named

RULE = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CREATE"],
    "resources": ["configmaps"],
}
ONE_ITEM = "validations or auditAnnotations must contain at least one item"
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with"
    " an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or"
    " 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
NO_SUCH_POLICY = "reconcile-kit-no-such-policy"


def policy(**spec: Any) -> dict[str, Any]:
    base = {"matchConstraints": {"resourceRules": [RULE]}, "validations": [{"expression": "true"}]}
    return {"metadata": {"name": "vap"}, "spec": {**base, **spec}}


def binding(**spec: Any) -> dict[str, Any]:
    base = {"policyName": NO_SUCH_POLICY, "validationActions": ["Deny"]}
    return {"metadata": {"name": "vapb"}, "spec": {**base, **spec}}


def undeclared(name: str, expression: str, column: int) -> str:
    return (
        f"compilation failed: ERROR: <input>:1:{column + 1}: undeclared reference to"
        f" '{name}' (in container '')\n | {expression}\n | {'.' * column}^"
    )


CREATES = [
    pytest.param("validatingadmissionpolicies", policy(), [], id="policy-valid"),
    pytest.param(
        "validatingadmissionpolicies",
        {"metadata": {"name": "vap"}, "spec": {}},
        [
            req_("spec.matchConstraints"),
            req_("spec.validations", ONE_ITEM),
            req_("spec.auditAnnotations", ONE_ITEM),
        ],
        id="policy-empty",
    ),
    pytest.param(
        "validatingadmissionpolicies",
        policy(
            failurePolicy="Sometimes",
            paramKind={"apiVersion": "a/b/c", "kind": "Bad Kind"},
            matchConstraints={"matchPolicy": "Fuzzy", "resourceRules": []},
        ),
        [
            unsupported("spec.failurePolicy", "Sometimes", "Fail", "Ignore"),
            inv("spec.paramKind.apiVersion", '"a/b/c"', "unexpected GroupVersion string: a/b/c"),
            inv(
                "spec.paramKind.kind",
                '"Bad Kind"',
                "may have mixed case, but should otherwise match: " + DNS1035,
            ),
            unsupported("spec.matchConstraints.matchPolicy", "Fuzzy", "Equivalent", "Exact"),
            req_("spec.matchConstraints.resourceRules"),
        ],
        id="policy-structure",
    ),
    pytest.param(
        "validatingadmissionpolicies",
        policy(
            paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
            validations=[
                {"expression": "params.data.size() > 0 && foo.bar"},
                {"expression": "  "},
                {"expression": "true", "messageExpression": " ", "message": "a\nb"},
                {"expression": "true", "reason": "Teapot"},
            ],
            variables=[{"name": "1x", "expression": ""}, {"name": "in", "expression": "object"}],
        ),
        [
            inv("spec.variables[0].name", '"1x"', "name is not a valid CEL identifier"),
            req_("spec.variables[0].expression", "expression is not specified"),
            inv("spec.variables[1].name", '"in"', "name is not a valid CEL identifier"),
            inv(
                "spec.validations[0].expression",
                '"params.data.size() > 0 && foo.bar"',
                undeclared("foo", "params.data.size() > 0 && foo.bar", 26),
            ),
            req_("spec.validations[1].expression", "expression is not specified"),
            inv("spec.validations[2].messageExpression", '" "', "must be non-empty if specified"),
            inv("spec.validations[2].message", '"a\\nb"', "message must not contain line breaks"),
            unsupported(
                "spec.validations[3].reason",
                "Teapot",
                "Forbidden",
                "Invalid",
                "RequestEntityTooLarge",
            ),
        ],
        id="policy-expressions",
    ),
    pytest.param(
        "validatingadmissionpolicies",
        policy(
            validations=[],
            auditAnnotations=[
                {"key": "k", "valueExpression": "'v'"},
                {"key": "k", "valueExpression": ""},
            ],
            matchConditions=[{"name": "c", "expression": "params.x"}],
        ),
        [
            inv(
                "spec.matchConditions[0].expression",
                '"params.x"',
                undeclared("params", "params.x", 0),
            ),
            req_("spec.auditAnnotations[1].valueExpression", "valueExpression is not specified"),
            ("FieldValueDuplicate", "spec.auditAnnotations[1].key", 'Duplicate value: "k"'),
        ],
        id="policy-audit-annotations",
    ),
    pytest.param("validatingadmissionpolicybindings", binding(), [], id="binding-valid"),
    pytest.param(
        "validatingadmissionpolicybindings",
        binding(policyName="", validationActions=[], paramRef={}),
        [
            req_("spec.policyName"),
            req_("spec.paramRef", "one of name or selector must be specified"),
            req_("spec.paramRef.parameterNotFoundAction"),
            req_("spec.validationActions", "at least one validation action is required"),
        ],
        id="binding-empty",
    ),
    pytest.param(
        "validatingadmissionpolicybindings",
        binding(
            policyName="Bad_Policy",
            paramRef={"name": "a/b", "selector": {}, "parameterNotFoundAction": "Maybe"},
            matchResources={
                "matchPolicy": "Fuzzy",
                "resourceRules": [{**RULE, "resourceNames": ["a%b", "x", "x"]}],
            },
            validationActions=["Deny", "Warn", "Deny", "Nope"],
        ),
        [
            inv(
                "spec.policyName",
                '"Bad_Policy"',
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
                " characters, '-' or '.', and must start and end with an alphanumeric character"
                " (e.g. 'example.com', regex used for validation is"
                " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            inv("spec.paramRef.name", '"a/b"', "may not contain '/'"),
            forb("spec.paramRef.name", "name and selector are mutually exclusive"),
            forb("spec.paramRef.selector", "name and selector are mutually exclusive"),
            unsupported("spec.paramRef.parameterNotFoundAction", "Maybe", "Deny", "Allow"),
            unsupported("spec.matchResources.matchPolicy", "Fuzzy", "Equivalent", "Exact"),
            inv(
                "spec.matchResources.resourceRules[0].resourceNames[0]",
                '"a%b"',
                "may not contain '%'",
            ),
            (
                "FieldValueDuplicate",
                "spec.matchResources.resourceRules[0].resourceNames[2]",
                'Duplicate value: "x"',
            ),
            ("FieldValueDuplicate", "spec.validationActions[2]", 'Duplicate value: "Deny"'),
            unsupported("spec.validationActions[3]", "Nope", "Audit", "Deny", "Warn"),
            inv(
                "spec.validationActions",
                '[]admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Nope"}',
                "must not contain both Deny and Warn (repeating the same validation failure"
                " information in the API response and headers serves no purpose)",
            ),
        ],
        id="binding-fields",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


async def test_defaults(backend: Backend) -> None:
    """failurePolicy Fail; match resources Equivalent with empty selectors; rules' scope *."""
    body = named(backend, "validatingadmissionpolicies", policy())
    created = await ok(backend, "POST", collection(backend, "validatingadmissionpolicies"), body)
    spec = created["spec"]
    assert spec["failurePolicy"] == "Fail"
    match = spec["matchConstraints"]
    assert (match["matchPolicy"], match["namespaceSelector"], match["objectSelector"]) == (
        "Equivalent",
        {},
        {},
    )
    assert match["resourceRules"][0]["scope"] == "*"
    body = named(
        backend,
        "validatingadmissionpolicybindings",
        binding(matchResources={"resourceRules": [RULE]}),
    )
    path = collection(backend, "validatingadmissionpolicybindings")
    created = await ok(backend, "POST", path, body)
    match = created["spec"]["matchResources"]
    assert (match["matchPolicy"], match["resourceRules"][0]["scope"]) == ("Equivalent", "*")
