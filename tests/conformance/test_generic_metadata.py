"""Kinds whose own validation never checks their metadata (issue 28, found by the
differential fuzzer): a core/v1 Event (ValidateEventCreate for v1) and a
PodDisruptionBudget. kube-apiserver 1.32.5 checks them with its generic rule only
(rest.BeforeCreate: names as path segments, so no length or character limit but ``/``,
``%``, ``.`` and ``..``), and on a create only once the kind's own rules passed.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .test_validation_core import inv
from .validation_table import create_refused

LONG = "n" * 300
BAD_LABEL = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and"
    " end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex"
    " used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def core_event(namespace: str, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
        "reason": "Started",
        "message": "hi",
        **fields,
    }


def pdb(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"a": "b"}}, **spec}}


@pytest.mark.parametrize("name", [LONG, "Upper_Case.name", "a:b"])
async def test_names_any_path_segment_takes(backend: Backend, name: str) -> None:
    await create_refused(backend, "events", core_event(backend.namespace, name), [])
    await create_refused(backend, "poddisruptionbudgets", pdb(name), [])


@pytest.mark.parametrize(
    ("name", "message"),
    [("a/b", "may not contain '/'"), ("a%b", "may not contain '%'"), ("..", "may not be '..'")],
)
async def test_names_that_are_no_path_segment(backend: Backend, name: str, message: str) -> None:
    cause = inv("metadata.name", f'"{name}"', message)
    await create_refused(backend, "events", core_event(backend.namespace, name), [cause])
    await create_refused(backend, "poddisruptionbudgets", pdb(name), [cause])


async def test_metadata_is_checked_once_the_kinds_rules_pass(backend: Backend) -> None:
    """An invalid label alone is refused; with an invalid spec, only the spec is named."""
    label = inv("metadata.labels", '"bad key!"', BAD_LABEL)
    body = pdb("p1")
    body["metadata"]["labels"] = {"bad key!": "x"}
    await create_refused(backend, "poddisruptionbudgets", body, [label])
    body["spec"]["minAvailable"] = -1
    spec = inv("spec.minAvailable", "-1", "must be greater than or equal to 0")
    await create_refused(backend, "poddisruptionbudgets", body, [spec])
    event = core_event(backend.namespace, "e1")
    event["metadata"]["labels"] = {"bad key!": "x"}
    await create_refused(backend, "events", event, [label])
    event["involvedObject"]["namespace"] = "elsewhere"
    mismatch = inv("involvedObject.namespace", '"elsewhere"', "does not match event.namespace")
    await create_refused(backend, "events", event, [mismatch])
