"""The redaction rules (issue 33): Secret values and bearer tokens never reach a log line."""

from __future__ import annotations

import io
import logging

from reconcile_kit.client.errors import error_from_status
from reconcile_kit.client.redaction import (
    REDACTED,
    RedactingFilter,
    redact,
    redact_pair,
    redact_patch,
    redact_text,
)
from reconcile_kit.manager.logs import JsonFormatter, TextFormatter

JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXBhcnQ"


def secret(**data: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "s",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"a":"x"}}',
                "team": "a",
            },
        },
        "data": dict(data),
        "stringData": {"plain": "hunter2"},
    }


def test_a_secret_keeps_its_keys_and_loses_its_values() -> None:
    doc = secret(a="c2VjcmV0")
    shown = redact(doc)
    assert shown["data"] == {"a": REDACTED} and shown["stringData"] == {"plain": REDACTED}
    annotations = shown["metadata"]["annotations"]
    assert annotations["kubectl.kubernetes.io/last-applied-configuration"] == REDACTED
    assert annotations["team"] == "a"
    assert doc["data"] == {"a": "c2VjcmV0"}  # a copy: the object itself is untouched
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "visible"}}
    assert redact(configmap) is configmap


def test_secrets_inside_lists_events_and_reviews_and_patches() -> None:
    listed = redact({"kind": "SecretList", "items": [secret(a="eA==")]})
    assert listed["items"][0]["data"] == {"a": REDACTED}
    event = redact({"type": "ADDED", "object": secret(a="eA==")})
    assert event["object"]["data"] == {"a": REDACTED}
    review = redact(
        {"kind": "AdmissionReview", "request": {"object": secret(a="eA=="), "oldObject": None}}
    )
    assert review["request"]["object"]["data"] == {"a": REDACTED}
    # a merge patch names no kind: the caller says it is a Secret's
    assert redact_patch({"data": {"a": "eA=="}}, "Secret") == {"data": {"a": REDACTED}}
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "add", "path": "/data/a", "value": "eA=="},
    ]
    assert [op["value"] for op in redact_patch(ops, "Secret")] == ["7", REDACTED]
    assert redact_patch(ops, "ConfigMap") is ops


def test_a_diff_of_a_secret_says_what_changed_without_values() -> None:
    before, after = redact_pair(secret(a="MQ==", b="Mg=="), secret(a="MQ==", b="Mw==", c="NA=="))
    assert before["data"] == {"a": REDACTED, "b": REDACTED}
    assert after["data"] == {"a": REDACTED, "b": "<redacted, changed>", "c": REDACTED}


def test_tokens_are_removed_from_text() -> None:
    text = (
        f"Authorization: Bearer abcdef123456 then {JWT} and "
        '{"spec": {"token": "opaque-token-value"}} and password=hunter22'
    )
    cleaned = redact_text(text)
    for leaked in ("abcdef123456", JWT, "opaque-token-value", "hunter22"):
        assert leaked not in cleaned
    assert cleaned.startswith("Authorization: Bearer <redacted> then <redacted>")
    ordinary = "a basic reconcile of 3 objects: token bucket full"
    assert redact_text(ordinary) == ordinary


def test_api_errors_never_carry_a_token() -> None:
    body = f'{{"kind":"Status","message":"bad token {JWT}","reason":"BadRequest","code":400}}'
    error = error_from_status(400, body, method="POST", path="/x")
    assert JWT not in str(error) and JWT not in error.server_message


def test_the_logging_filter_cleans_messages_and_tracebacks() -> None:
    for formatter in (TextFormatter(), JsonFormatter()):
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(formatter)
        handler.addFilter(RedactingFilter())
        logger = logging.getLogger("test.redaction")
        logger.addHandler(handler)
        logger.propagate = False
        try:
            logger.warning("sent %s", {"Authorization": f"Bearer {JWT}"})
            try:
                raise RuntimeError(f"token: {JWT}")
            except RuntimeError:
                logger.exception("failed")
        finally:
            logger.removeHandler(handler)
            logger.propagate = True
        output = stream.getvalue()
        assert JWT not in output
        assert "RuntimeError" in output and "Traceback" in output
