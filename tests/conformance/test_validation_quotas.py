"""ResourceQuotas and LimitRanges validated as kube-apiserver 1.32.5 validates them
(pkg/apis/core/validation ValidateResourceQuota, its update and status update,
ValidateLimitRange) and LimitRange items defaulted (SetDefaults_LimitRangeItem). Each row:
an object (or a change to one) and the 422 it gets, causes and message byte for byte, or
its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok
from .test_validation_core import QUALIFIED, forb, inv, req_
from .validation_table import Cause, collection, create_refused, update_refused

NEGATIVE = "must be greater than or equal to 0"
EXISTS_ONLY = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating,"
    " ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort,"
    " ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
POD_ONLY = "may not be specified when `type` is 'Pod'"


def q(value: int, scale: int, text: str) -> str:
    """A resource.Quantity as Go's %#v prints it."""
    return (
        f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}},"
        f' d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:"{text}", Format:"DecimalSI"}}'
    )


def rq(hard: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "rq"}, "spec": {"hard": hard or {"pods": "10"}, **spec}}


def lr(*limits: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "lr"}, "spec": {"limits": list(limits)}}


def scopes(*names: str) -> str:
    return "[]core.ResourceQuotaScope{" + ", ".join(f'"{n}"' for n in names) + "}"


CREATES = [
    pytest.param(
        "resourcequotas",
        rq({"pods": "10", "requests.cpu": "1", "count/deployments.apps": "3"}),
        [],
        id="rq-valid",
    ),
    pytest.param(
        "resourcequotas",
        rq({"cpu": "-1"}),
        [inv("spec.hard[cpu]", '"-1"', NEGATIVE)],
        id="rq-negative",
    ),
    pytest.param(
        "resourcequotas",
        rq({"foo": "1"}),
        [
            inv("spec.hard[foo]", "foo", "must be a standard resource type or fully qualified"),
            inv("spec.hard[foo]", "foo", "must be a standard resource for quota"),
        ],
        id="rq-not-standard",
    ),
    pytest.param(
        "resourcequotas",
        rq({"a b": "1"}),
        [
            inv("spec.hard[a b]", "a b", QUALIFIED),
            inv("spec.hard[a b]", "a b", "must be a standard resource for quota"),
        ],
        id="rq-not-a-name",
    ),
    # one resource a row: Go ranges over the map in a random order
    pytest.param(
        "resourcequotas",
        rq({"pods": "1500m"}),
        [inv("spec.hard[pods]", q(1500, -3, "1500m"), "must be an integer")],
        id="rq-integer-count",
    ),
    pytest.param(
        "resourcequotas",
        rq({"count/pods": "500m"}),
        [inv("spec.hard[count/pods]", q(500, -3, "500m"), "must be an integer")],
        id="rq-integer-extended",
    ),
    pytest.param(
        "resourcequotas",
        rq({"pods": "1"}, scopes=["Terminating", "NotTerminating", "Nope"]),
        [
            inv(
                "spec.scopes", scopes("Terminating", "NotTerminating", "Nope"), "unsupported scope"
            ),
            inv(
                "spec.scopes",
                scopes("Terminating", "NotTerminating", "Nope"),
                "conflicting scopes",
            ),
        ],
        id="rq-scopes",
    ),
    pytest.param(
        "resourcequotas",
        rq({"cpu": "1", "services": "1"}, scopes=["BestEffort"]),
        [inv("spec.scopes", scopes("BestEffort"), "unsupported scope applied to resource")] * 2,
        id="rq-scope-applied-to-resource",
    ),
    pytest.param(
        "resourcequotas",
        rq(scopeSelector={"matchExpressions": [{"scopeName": "Nope", "operator": "In"}]}),
        [
            inv("spec.scopeSelector.matchExpressions.scopeName", '"Nope"', "unsupported scope"),
            req_(
                "spec.scopeSelector.matchExpressions.values",
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            ),
        ],
        id="rq-selector-scope",
    ),
    pytest.param(
        "resourcequotas",
        rq(scopeSelector={"matchExpressions": [{"scopeName": "BestEffort", "operator": "In"}]}),
        [
            inv("spec.scopeSelector.matchExpressions.operator", '"In"', EXISTS_ONLY),
            req_(
                "spec.scopeSelector.matchExpressions.values",
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            ),
        ],
        id="rq-selector-exists-only",
    ),
    pytest.param(
        "resourcequotas",
        rq(
            scopeSelector={
                "matchExpressions": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
                ]
            }
        ),
        [],
        id="rq-selector-valid",
    ),
    pytest.param(
        "limitranges",
        lr(
            {
                "type": "Container",
                "max": {"cpu": "2"},
                "min": {"cpu": "100m"},
                "maxLimitRequestRatio": {"cpu": "4"},
            }
        ),
        [],
        id="lr-valid",
    ),
    pytest.param(
        "limitranges",
        lr({"type": "Node"}, {"type": "Pod", "default": {"cpu": "1"}}, {"type": "Pod"}),
        [
            inv(
                "spec.limits[0].type", '"Node"', "must be a standard limit type or fully qualified"
            ),
            forb("spec.limits[1].default", POD_ONLY),
            ("FieldValueDuplicate", "spec.limits[2].type", 'Duplicate value: "Pod"'),
        ],
        id="lr-types",
    ),
    pytest.param(
        "limitranges",
        lr({"type": "Container", "max": {"storage": "1"}}),
        [
            inv(
                "spec.limits[0].max[storage]",
                "storage",
                "must be a standard resource for containers",
            ),
            # the defaults, copied from max, are checked too
            inv(
                "spec.limits[0].default[storage]",
                "storage",
                "must be a standard resource for containers",
            ),
            inv(
                "spec.limits[0].defaultRequest[storage]",
                "storage",
                "must be a standard resource for containers",
            ),
        ],
        id="lr-container-resource",
    ),
    pytest.param(
        "limitranges",
        lr({"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}),
        [
            req_(
                "spec.limits[0].limits",
                "either minimum or maximum storage value is required, but neither was provided",
            )
        ],
        id="lr-claim-storage",
    ),
    pytest.param(
        "limitranges",
        lr({"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "2"}}),
        [
            inv("spec.limits[0].min[cpu]", q(2, 0, "2"), "min value 2 is greater than max value 1"),
            inv(
                "spec.limits[0].defaultRequest[cpu]",
                q(1, 0, "1"),
                "min value 2 is greater than default request value 1",
            ),
            inv(
                "spec.limits[0].default[cpu]",
                q(2, 0, "2"),
                "min value 2 is greater than default value 1",
            ),
        ],
        id="lr-min-above-max",
    ),
    pytest.param(
        "limitranges",
        lr({"type": "Container", "max": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}}),
        [
            inv(
                "spec.limits[0].defaultRequest[cpu]",
                q(2, 0, "2"),
                "default request value 2 is greater than max value 1",
            ),
            inv(
                "spec.limits[0].defaultRequest[cpu]",
                q(2, 0, "2"),
                "default request value 2 is greater than default limit value 1",
            ),
        ],
        id="lr-default-request-above-max",
    ),
    pytest.param(
        "limitranges",
        lr(
            {
                "type": "Container",
                "min": {"cpu": "1"},
                "max": {"cpu": "2"},
                "maxLimitRequestRatio": {"cpu": "3"},
            },
            {"type": "example.com/x", "maxLimitRequestRatio": {"cpu": "500m"}},
        ),
        [
            inv(
                "spec.limits[0].maxLimitRequestRatio[cpu]",
                q(3, 0, "3"),
                "ratio 3 is greater than max/min = 2.000000",
            ),
            inv(
                "spec.limits[1].maxLimitRequestRatio[cpu]",
                q(500, -3, "500m"),
                "ratio 500m is less than 1",
            ),
        ],
        id="lr-ratios",
    ),
    pytest.param(
        "limitranges",
        lr(
            {
                "type": "Container",
                "default": {"example.com/gpu": "2"},
                "defaultRequest": {"example.com/gpu": "1"},
            }
        ),
        [
            inv(
                "spec.limits[0].defaultRequest[example.com/gpu]",
                q(1, 0, "1"),
                "default value 2 must equal to defaultRequest value 1 in example.com/gpu",
            )
        ],
        id="lr-not-overcommitted",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


UPDATES = [
    pytest.param(
        "resourcequotas",
        rq(),
        {"spec": {"scopes": ["Terminating"]}},
        [inv("spec.scopes", scopes("Terminating"), "field is immutable")],
        id="rq-scopes-immutable",
    ),
    pytest.param(
        "resourcequotas",
        rq(scopes=["Terminating", "NotBestEffort"]),
        {"spec": {"scopes": ["NotBestEffort", "Terminating"]}},
        [],
        id="rq-scopes-reordered",
    ),
    pytest.param(
        "resourcequotas",
        rq(),
        {"spec": {"hard": {"pods": "-1"}}},
        [inv("spec.hard[pods]", '"-1"', NEGATIVE)],
        id="rq-negative",
    ),
    pytest.param(
        "limitranges",
        lr({"type": "Container"}),
        {"spec": {"limits": [{"type": "Node"}]}},
        [inv("spec.limits[0].type", '"Node"', "must be a standard limit type or fully qualified")],
        id="lr-type",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, plural: str, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, plural, body, patch, causes)


async def test_quota_status_update(backend: Backend) -> None:
    status = {"status": {"hard": {"foo": "1"}, "used": {"pods": "-2"}}}  # one key a map
    await update_refused(
        backend,
        "resourcequotas",
        rq(),
        status,
        [
            inv("status.hard[foo]", "foo", "must be a standard resource type or fully qualified"),
            inv("status.hard[foo]", "foo", "must be a standard resource for quota"),
            inv("status.used[pods]", '"-2"', NEGATIVE),
        ],
        subresource="status",
    )


async def test_limit_range_defaults(backend: Backend) -> None:
    """A Container item's default limit comes from max, its default request from the
    default limit, else from min; other types get none."""
    body = lr(
        {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}},
        {"type": "Pod", "max": {"cpu": "2"}},
    )
    created = await ok(backend, "POST", collection(backend, "limitranges"), body)
    container, pod = created["spec"]["limits"]
    assert container["default"] == {"cpu": "2"}
    assert container["defaultRequest"] == {"cpu": "2", "memory": "1Mi"}
    assert "default" not in pod and "defaultRequest" not in pod


async def test_an_empty_limits_list_is_its_writers(backend: Backend) -> None:
    """spec.limits has no omitempty: an empty list sent is recorded in managedFields."""
    created = await ok(backend, "POST", collection(backend, "limitranges"), lr())
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields == {"f:spec": {"f:limits": {}}}
