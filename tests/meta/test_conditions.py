"""reconcile_kit.meta.conditions: metav1.Condition rules, SetStatusCondition semantics, kstatus."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import kr8s
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kr8s.asyncio.objects import ConfigMap, new_class

from reconcile_kit.meta import conditions
from reconcile_kit.meta.conditions import (
    READY,
    RECONCILING,
    STALLED,
    Reasons,
    get_condition,
    is_false,
    is_true,
    is_unknown,
    mark_not_ready,
    mark_ready,
    mark_reconciling,
    mark_stalled,
    remove_condition,
    set_condition,
    summarize,
)
from reconcile_kit.patch.snapshot import build_object

from ..crds import install_crd
from ..kubehttp import call

T0 = datetime(2026, 11, 21, 5, 35, 31, tzinfo=UTC)
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


class FakeClock:
    """An injectable clock that moves only when told to."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 1) -> str:
        self.now += timedelta(seconds=seconds)
        return self.stamp

    @property
    def stamp(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """A fake clock installed as the module default (``conditions.now``)."""
    fake = FakeClock()
    monkeypatch.setattr(conditions, "now", fake)
    return fake


def widget(**status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default", "generation": 2},
    }
    if status:
        obj["status"] = status
    return obj


def types(obj: Any) -> list[str]:
    raw = obj.raw if hasattr(obj, "raw") else obj
    return [c["type"] for c in raw["status"]["conditions"]]


# --- set_condition -------------------------------------------------------------------------


def test_set_creates_status_and_the_full_condition(clock: FakeClock) -> None:
    obj = widget()
    assert set_condition(obj, "Ready", "True", "Reconciled", "all good", observed_generation=2)
    assert obj["status"] == {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "observedGeneration": 2,
                "lastTransitionTime": "2026-11-21T05:35:31Z",
                "reason": "Reconciled",
                "message": "all good",
            }
        ]
    }


def test_setting_the_same_condition_again_changes_nothing(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, READY, True, Reasons.RECONCILED)
    before = get_condition(obj, READY)
    clock.tick(60)
    assert set_condition(obj, READY, True, Reasons.RECONCILED) is False
    assert get_condition(obj, READY) == before


def test_transition_time_moves_only_when_status_changes(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, READY, "False", Reasons.PROGRESSING, "starting")
    clock.tick(10)
    assert set_condition(obj, READY, "False", Reasons.DEPENDENCY_NOT_READY, "waiting on db")
    condition = get_condition(obj, READY)
    assert condition is not None
    assert condition["lastTransitionTime"] == "2026-11-21T05:35:31Z"  # as SetStatusCondition
    assert (condition["reason"], condition["message"]) == ("DependencyNotReady", "waiting on db")
    stamp = clock.tick(10)
    assert set_condition(obj, READY, "True", Reasons.RECONCILED)
    assert get_condition(obj, READY) == {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": stamp,
        "reason": "Reconciled",
        "message": "",
    }


def test_observed_generation_is_replaced_with_the_condition(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, READY, True, Reasons.RECONCILED, observed_generation=1)
    assert set_condition(obj, READY, True, Reasons.RECONCILED, observed_generation=2)
    assert obj["status"]["conditions"][0]["observedGeneration"] == 2
    assert set_condition(obj, READY, True, Reasons.RECONCILED)  # None drops it
    assert "observedGeneration" not in obj["status"]["conditions"][0]


def test_bool_status_and_existing_order_are_kept(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, "Available", False, "Failed")
    set_condition(obj, READY, True, "Reconciled")
    set_condition(obj, "example.com/Synced", "Unknown", "Progressing")
    assert set_condition(obj, "Available", True, "Succeeded")
    assert types(obj) == ["Available", "Ready", "example.com/Synced"]
    assert is_true(obj, "Available") and is_unknown(obj, "example.com/Synced")


def test_kr8s_object_is_mutated_through_raw(clock: FakeClock) -> None:
    cm = ConfigMap({"metadata": {"name": "c", "namespace": "default"}})
    assert set_condition(cm, READY, True, Reasons.RECONCILED)
    assert cm.raw["status"]["conditions"][0]["reason"] == "Reconciled"
    assert mark_reconciling(cm, Reasons.PROGRESSING, "rolling out")
    assert types(cm) == [READY, RECONCILING]
    assert remove_condition(cm, READY) and types(cm) == [RECONCILING]


def test_naive_and_offset_clocks_are_written_in_utc() -> None:
    obj = widget()
    naive = datetime(2026, 1, 2, 3, 4, 5, 999999)
    set_condition(obj, "A", True, "Ok", clock=lambda: naive)
    plus2 = datetime(2026, 1, 2, 5, 4, 5, 123, tzinfo=timezone(timedelta(hours=2)))
    set_condition(obj, "B", True, "Ok", clock=lambda: plus2)
    stamps = [c["lastTransitionTime"] for c in obj["status"]["conditions"]]
    assert stamps == ["2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"]


def test_default_clock_is_real_utc_time() -> None:
    obj = widget()
    set_condition(obj, READY, True, Reasons.RECONCILED)
    stamp = obj["status"]["conditions"][0]["lastTransitionTime"]
    assert RFC3339.fullmatch(stamp)
    written = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - written) < timedelta(seconds=5)


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"type": "not ok"}, "condition type 'not ok': must be a qualified name"),
        ({"type": ""}, "condition type '': must be a qualified name"),
        ({"type": "Ready\n"}, "condition type 'Ready\\n': must be a qualified name"),
        ({"type": "Example.com/Ready"}, "must be a qualified name"),
        ({"type": "-Ready"}, "must be a qualified name"),
        ({"type": "a" * 317}, "must be at most 316 characters"),
        ({"status": "true"}, 'condition status \'true\': must be "True", "False" or'),
        ({"status": None}, "condition status None"),
        ({"reason": "not ok"}, "condition reason 'not ok': must be CamelCase"),
        ({"reason": ""}, "condition reason '': must be CamelCase"),
        ({"reason": "1Reason"}, "must be CamelCase"),
        ({"reason": "Trailing:"}, "must be CamelCase"),
        ({"reason": "R" * 1025}, "must be at most 1024 characters"),
        ({"message": "m" * 32769}, "condition message 'mmm"),
        ({"message": None}, "condition message None: must be a string"),
        ({"observed_generation": -1}, "condition observedGeneration -1: must be an integer >= 0"),
        ({"observed_generation": True}, "condition observedGeneration True"),
        ({"observed_generation": "3"}, "condition observedGeneration '3'"),
    ],
)
def test_invalid_fields_name_field_value_and_object(
    kwargs: dict[str, Any], expected: str, clock: FakeClock
) -> None:
    args: dict[str, Any] = {"type": READY, "status": "True", "reason": "Reconciled"}
    args.update(kwargs)
    obj = widget()
    with pytest.raises(ValueError) as raised:
        set_condition(obj, **args)
    assert str(raised.value).startswith("Widget default/w1: condition ")
    assert expected in str(raised.value)
    assert "status" not in obj  # nothing was changed


def test_long_values_are_shortened_in_errors() -> None:
    with pytest.raises(ValueError, match=r"must be at most 32768 characters") as raised:
        set_condition({}, READY, True, "Ok", "m" * 40000)
    assert len(str(raised.value)) < 200
    assert str(raised.value).startswith("condition message")  # an anonymous dict is not named


@pytest.mark.parametrize(
    ("type_", "reason", "message"),
    [
        ("example.com/Synced", "A", ""),
        ("a" * 316, "Reason_With,Commas:And_9", "m" * 32768),
        ("x.y-z/A.b_c-D", "R" * 1024, "ünïcödé ✓"),
    ],
)
def test_edge_values_are_accepted(type_: str, reason: str, message: str) -> None:
    obj = widget()
    assert set_condition(obj, type_, "Unknown", reason, message, observed_generation=0)
    assert get_condition(obj, type_) is not None


def test_malformed_status_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Widget default/w1: status is not a mapping"):
        set_condition(widget() | {"status": "broken"}, READY, True, "Ok")
    with pytest.raises(TypeError, match=r"status.conditions is not a list"):
        set_condition(widget(conditions={"Ready": 1}), READY, True, "Ok")


# --- reading and removing --------------------------------------------------------------------


def test_get_returns_a_copy_and_predicates_handle_missing(clock: FakeClock) -> None:
    obj = widget()
    assert get_condition(obj, READY) is None
    assert (is_true(obj, READY), is_false(obj, READY), is_unknown(obj, READY)) == (
        False,
        False,
        True,
    )
    set_condition(obj, READY, False, "Failed")
    copy = get_condition(obj, READY)
    assert copy is not None
    copy["status"] = "True"
    assert is_false(obj, READY) and not is_true(obj, READY) and not is_unknown(obj, READY)


def test_readers_skip_malformed_entries() -> None:
    obj = widget(conditions=["junk", {"type": READY, "status": "True"}])
    assert is_true(obj, READY)
    assert get_condition(widget(conditions=None), READY) is None


def test_remove_condition(clock: FakeClock) -> None:
    obj = widget()
    assert remove_condition(obj, READY) is False
    set_condition(obj, "A", True, "Ok")
    set_condition(obj, READY, True, "Ok")
    set_condition(obj, "B", True, "Ok")
    assert remove_condition(obj, READY) is True
    assert types(obj) == ["A", "B"]
    assert remove_condition(obj, READY) is False
    remove_condition(obj, "A")
    remove_condition(obj, "B")
    assert obj["status"] == {}  # the emptied list is removed


# --- kstatus marks ---------------------------------------------------------------------------


def test_mark_reconciling_and_stalled_exclude_each_other(clock: FakeClock) -> None:
    obj = widget()
    assert mark_reconciling(obj, Reasons.PROGRESSING, "working")
    assert mark_reconciling(obj, Reasons.PROGRESSING, "working") is False
    assert mark_stalled(obj, Reasons.VALIDATION_FAILED, "spec.size must be > 0")
    assert types(obj) == [STALLED]
    assert is_true(obj, STALLED)
    assert mark_reconciling(obj, Reasons.RECONCILING)
    assert types(obj) == [RECONCILING]


def test_mark_ready_clears_abnormal_conditions(clock: FakeClock) -> None:
    obj = widget()
    mark_not_ready(obj, Reasons.DEPENDENCY_NOT_READY)
    mark_stalled(obj, Reasons.ERROR, "boom")
    assert types(obj) == [READY, STALLED]  # mark_not_ready leaves kstatus conditions alone
    clock.tick()
    assert mark_ready(obj, observed_generation=2)
    assert obj["status"]["conditions"] == [
        {
            "type": READY,
            "status": "True",
            "observedGeneration": 2,
            "lastTransitionTime": clock.stamp,
            "reason": "Reconciled",
            "message": "",
        }
    ]
    assert mark_ready(obj, observed_generation=2) is False


def test_marks_validate_before_changing_anything(clock: FakeClock) -> None:
    obj = widget()
    mark_reconciling(obj, Reasons.PROGRESSING)
    with pytest.raises(ValueError, match="condition reason 'bad reason'"):
        mark_stalled(obj, "bad reason")
    assert types(obj) == [RECONCILING]


# --- summarize -------------------------------------------------------------------------------


def summary_of(obj: dict[str, Any], *from_types: str) -> tuple[str, str, str]:
    summary = summarize(obj, from_types=from_types)
    assert summary == get_condition(obj, READY)
    return summary["status"], summary["reason"], summary["message"]


def test_summary_false_takes_the_first_abnormal_condition_in_order(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, "Available", False, "MinimumReplicasUnavailable", "0/3 ready")
    mark_stalled(obj, Reasons.FAILED, "gave up")
    assert summary_of(obj, STALLED, "Available") == ("False", "Failed", "gave up")
    assert summary_of(obj, "Available", STALLED) == (
        "False",
        "MinimumReplicasUnavailable",
        "0/3 ready",
    )


def test_summary_unknown_for_unknown_or_missing_positive_conditions(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, "Available", True, "Ok")
    assert summary_of(obj, "Available", "Synced") == (
        "Unknown",
        "Progressing",
        "waiting for condition Synced",
    )
    set_condition(obj, "Synced", "Unknown", "Syncing", "pulling")
    assert summary_of(obj, "Available", "Synced") == ("Unknown", "Syncing", "pulling")
    set_condition(obj, "Available", False, "Down")
    assert summary_of(obj, "Synced", "Available") == ("False", "Down", "")  # False beats Unknown


def test_summary_true_when_all_normal(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, "Available", True, "Ok", "fine")
    set_condition(obj, RECONCILING, False, "Done")
    # Stalled is missing: an absent abnormal-true condition is normal (kstatus).
    assert summary_of(obj, STALLED, RECONCILING, "Available") == ("True", "Reconciled", "")


def test_summary_negative_true_wins_and_polarity_is_configurable(clock: FakeClock) -> None:
    obj = widget()
    mark_reconciling(obj, Reasons.PROGRESSING, "scaling")
    set_condition(obj, "Degraded", True, "PodsCrashing")
    assert summary_of(obj, RECONCILING) == ("False", "Progressing", "scaling")
    summary = summarize(obj, from_types=["Degraded"], negative_polarity={"Degraded"})
    assert (summary["status"], summary["reason"]) == ("False", "PodsCrashing")
    summary = summarize(obj, from_types=["Degraded"], type="Healthy", observed_generation=2)
    assert summary["status"] == "True" and summary["observedGeneration"] == 2
    assert is_true(obj, "Healthy")


def test_summary_falls_back_when_a_source_reason_is_invalid(clock: FakeClock) -> None:
    obj = widget(conditions=[{"type": "Available", "status": "False", "reason": "", "x": 1}])
    assert summary_of(obj, "Available") == ("False", "Failed", "")
    obj = widget(conditions=[{"type": "Synced", "status": "Maybe", "reason": "no good"}])
    assert summary_of(obj, "Synced") == ("Unknown", "Progressing", "")


def test_summary_argument_errors() -> None:
    with pytest.raises(TypeError, match="not a string"):
        summarize(widget(), from_types="Available")
    with pytest.raises(ValueError, match="at least one"):
        summarize(widget(), from_types=[])
    with pytest.raises(ValueError, match="must not contain the summary type 'Ready'"):
        summarize(widget(), from_types=["Available", READY])


def test_summary_keeps_transition_time_while_status_holds(clock: FakeClock) -> None:
    obj = widget()
    set_condition(obj, "Available", False, "Down", "db unreachable")
    summarize(obj, from_types=["Available"])
    clock.tick(30)
    set_condition(obj, "Available", False, "Down", "db still unreachable")
    summary = summarize(obj, from_types=["Available"])
    assert summary["lastTransitionTime"] == "2026-11-21T05:35:31Z"
    assert summary["message"] == "db still unreachable"


# --- properties ------------------------------------------------------------------------------

TYPES = st.one_of(
    st.sampled_from([READY, RECONCILING, STALLED, "Available", "example.com/Synced"]),
    st.from_regex(r"\A[a-z]{1,8}(\.[a-z]{1,5})?/[A-Z][A-Za-z0-9_.-]{0,10}[a-z]\Z"),
)
REASONS = st.from_regex(r"\A[A-Za-z]([A-Za-z0-9_,:]{0,20}[A-Za-z0-9_])?\Z")
STATUSES = st.sampled_from(["True", "False", "Unknown", True, False])
MESSAGES = st.text(max_size=40)
GENERATIONS = st.none() | st.integers(min_value=0, max_value=2**63 - 1)


def _normal(status: str | bool) -> str:
    if isinstance(status, bool):
        return "True" if status else "False"
    return status


@settings(max_examples=200, deadline=None)
@given(t=TYPES, status=STATUSES, reason=REASONS, message=MESSAGES, generation=GENERATIONS)
def test_property_setting_twice_is_idempotent(
    t: str, status: str | bool, reason: str, message: str, generation: int | None
) -> None:
    clock = FakeClock()
    obj = widget()
    assert set_condition(
        obj, t, status, reason, message, observed_generation=generation, clock=clock
    )
    first = get_condition(obj, t)
    clock.tick(3600)
    again = set_condition(
        obj, t, status, reason, message, observed_generation=generation, clock=clock
    )
    assert again is False
    assert get_condition(obj, t) == first
    assert first is not None and first["status"] == _normal(status)
    assert RFC3339.fullmatch(first["lastTransitionTime"])


@settings(max_examples=200, deadline=None)
@given(
    t=TYPES,
    steps=st.lists(st.tuples(STATUSES, REASONS, MESSAGES), min_size=1, max_size=12),
)
def test_property_transition_time_is_the_last_status_change(
    t: str, steps: list[tuple[str | bool, str, str]]
) -> None:
    """Against a model: lastTransitionTime is when the status last differed from before."""
    clock = FakeClock()
    obj = widget()
    previous: str | None = None
    last: tuple[str, str] | None = None
    expected_stamp = ""
    for status, reason, message in steps:
        stamp = clock.tick(7)
        changed = set_condition(obj, t, status, reason, message, clock=clock)
        value = _normal(status)
        if value != previous:
            expected_stamp = stamp
        condition = get_condition(obj, t)
        assert condition is not None
        assert condition["lastTransitionTime"] == expected_stamp
        assert (condition["status"], condition["reason"], condition["message"]) == (
            value,
            reason,
            message,
        )
        assert changed == (value != previous or (reason, message) != last)
        previous, last = value, (reason, message)
    assert types(obj) == [t]


# --- over the wire ---------------------------------------------------------------------------

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = "/apis/example.com/v1/namespaces/default/gadgets"

# metav1.Condition as controller-gen writes it into CRDs (the markers of apimachinery's
# types.go), so the server checks our output with Kubernetes' own rules.
CONDITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
    "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {
            "type": "string",
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
    },
}


def gadget_crd() -> dict[str, Any]:
    status = {
        "type": "object",
        "properties": {
            "observedGeneration": {"type": "integer"},
            "conditions": {"type": "array", "items": CONDITION_SCHEMA},
        },
    }
    spec = {"type": "object", "properties": {"size": {"type": "integer"}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec, "status": status},
                        }
                    },
                }
            ],
        },
    }


Gadget = new_class("Gadget", "example.com/v1", namespaced=True)


async def new_gadget(kube: kr8s.asyncio.Api) -> Any:
    await install_crd(kube, gadget_crd())
    gadget = await Gadget({"metadata": {"name": "g1"}, "spec": {"size": 1}}, api=kube)
    await gadget.create()
    return gadget


async def test_conditions_round_trip_through_the_status_subresource(
    kube: kr8s.asyncio.Api, clock: FakeClock
) -> None:
    gadget = await new_gadget(kube)
    generation = gadget.raw["metadata"]["generation"]
    mark_reconciling(gadget, Reasons.PROGRESSING, "creating", observed_generation=generation)
    set_condition(gadget, "example.com/Synced", True, "Synced:Ok", "m" * 32768)
    summarize(gadget, from_types=[RECONCILING, "example.com/Synced"])
    sent = [dict(c) for c in gadget.raw["status"]["conditions"]]
    await gadget.patch({"status": {"conditions": sent}}, subresource="status")
    assert [dict(c) for c in gadget.raw["status"]["conditions"]] == sent

    clock.tick(5)
    mark_ready(gadget, observed_generation=generation)
    await gadget.patch(
        {"status": {"conditions": list(gadget.raw["status"]["conditions"])}},
        subresource="status",
    )
    await gadget.refresh()
    assert types(gadget) == ["example.com/Synced", READY]
    ready = get_condition(gadget, READY)
    assert ready is not None and ready["lastTransitionTime"] == clock.stamp
    assert is_true(gadget, READY) and is_unknown(gadget, RECONCILING)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reason", "not ok"),
        ("reason", ""),
        ("reason", "Trailing:"),
        ("reason", "R" * 1025),
        ("type", "not ok"),
        ("type", "Example.com/Ready"),
        ("type", "a" * 317),
        ("status", "true"),
        ("message", "m" * 32769),
        ("observedGeneration", -1),
    ],
)
async def test_what_we_refuse_the_api_server_refuses_too(
    kube: kr8s.asyncio.Api, field: str, value: Any
) -> None:
    await new_gadget(kube)
    condition: dict[str, Any] = {
        "type": READY,
        "status": "True",
        "lastTransitionTime": "2026-11-21T05:35:31Z",
        "reason": "Reconciled",
        "message": "",
        field: value,
    }
    status, body = await call(
        kube,
        "PATCH",
        f"{GADGETS}/g1/status",
        {"status": {"conditions": [condition]}},
        "application/merge-patch+json",
    )
    assert (status, body["reason"]) == (422, "Invalid"), body
    assert f"status.conditions[0].{field}" in body["message"]
    args: dict[str, Any] = {"type": READY, "status": "True", "reason": "Reconciled", "message": ""}
    args[{"observedGeneration": "observed_generation"}.get(field, field)] = value
    with pytest.raises(ValueError, match=f"condition {field} "):
        set_condition(widget(), **args)


READY_OK = {
    "type": READY,
    "status": "True",
    "lastTransitionTime": "2026-11-21T05:35:31Z",
    "reason": Reasons.RECONCILED,
    "message": "ok",
}


def test_an_unchanged_condition_leaves_the_cached_document_shared(clock: FakeClock) -> None:
    """Setting a condition to what it is reads the object as it is: the cache's document
    stays shared (nothing is copied or wrapped), and the answer is False."""
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"},
        "status": {"conditions": [dict(READY_OK)]},
    }
    cm = build_object(ConfigMap, document, None)
    assert not set_condition(cm, READY, True, Reasons.RECONCILED, "ok")
    assert dict.get(cm.raw, "status") is document["status"]
    assert set_condition(cm, READY, False, Reasons.FAILED, "broken")
    assert document["status"]["conditions"] == [READY_OK]  # the cache's: as read
    assert cm.raw["status"]["conditions"][0]["status"] == "False"


def test_a_first_condition_on_a_cached_object_leaves_the_document_alone(clock: FakeClock) -> None:
    document = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    cm = build_object(ConfigMap, document, None)
    assert set_condition(cm, READY, True, Reasons.RECONCILED)
    assert "status" not in document
    assert [c["type"] for c in cm.raw["status"]["conditions"]] == [READY]
    assert cm.raw.status.conditions[0].reason == Reasons.RECONCILED  # a Box, as kr8s reads


def test_a_kr8s_object_without_kind_is_stamped_as_kr8s_does() -> None:
    """raw_of reads a kr8s object's state as its ``raw`` property does: ``kind`` and
    ``apiVersion`` from its class."""
    cm = build_object(ConfigMap, {"metadata": {"name": "c"}}, None)
    assert set_condition(cm, READY, True, Reasons.RECONCILED)
    assert (cm.raw["kind"], cm.raw["apiVersion"]) == ("ConfigMap", "v1")


async def test_a_reason_from_reasons_is_stored_as_a_plain_string(kube: kr8s.asyncio.Api) -> None:
    """``mark_ready(obj)`` (default reason ``Reasons.RECONCILED``) left the enum member in
    the object's JSON: kr8s's ``to_yaml()`` wrote ``reason: !!python/object/apply:
    reconcile_kit.meta.conditions.Reasons``, which no YAML loader but an unsafe one reads."""
    import yaml

    from reconcile_kit import PatchHelper

    widgets = new_class("Deployment", "apps/v1", namespaced=True)
    labels = {"app": "w"}
    spec = {"containers": [{"name": "c", "image": "nginx"}]}
    deployment = widgets(
        {
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": spec},
            },
        },
        api=kube,
    )
    await deployment.create()
    async with PatchHelper(deployment):
        mark_ready(deployment)
        set_condition(deployment, "Available", True, Reasons.PROGRESSING)
        for condition in deployment.raw["status"]["conditions"]:
            assert type(condition["reason"]) is str and type(condition["type"]) is str
        dumped = yaml.safe_load(deployment.to_yaml())
        reasons = [c["reason"] for c in dumped["status"]["conditions"]]
        assert reasons == ["Reconciled", "Progressing"]
    again = await widgets.get("w", namespace="default", api=kube)
    assert is_true(again, "Ready") and get_condition(again, "Ready")["reason"] == "Reconciled"  # type: ignore[index]
