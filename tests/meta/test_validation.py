"""reconcile_kit.meta.validation: apimachinery's value rules at their boundaries.

Expected messages are kube-apiserver v1.32.5's, copied from its answers (the conformance
test ``test_name_and_label_messages`` checks the embedded server against the real one).
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile_kit.meta.validation import (
    DNS1123_LABEL_RE,
    QUALIFIED_NAME_RE,
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)

SUBDOMAIN_HINT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_HINT = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_HINT = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QNAME_HINT = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_HINT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
TOO_LONG_63 = "must be no more than 63 characters"
TOO_LONG_253 = "must be no more than 253 characters"


def subdomain_of(length: int) -> str:
    """A valid subdomain of ``length`` characters when ``length`` <= 253 (62-letter labels)."""
    text = (("a" * 62 + ".") * 5)[:length]
    return text[:-1] + "b" if text.endswith(".") else text


def test_subdomain_of_helper() -> None:
    for length in (1, 63, 64, 253, 254):
        assert len(subdomain_of(length)) == length


# --- DNS-1123 subdomain ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["a", "0", "example.com", "a-b.c-d", "1.2.3", subdomain_of(253)])
def test_valid_subdomains(value: str) -> None:
    assert dns1123_subdomain_errors(value) == []


@pytest.mark.parametrize(
    "value",
    ["", "-a", "a-", ".a", "a.", "a..b", "a.-b", "A", "a_b", "a/b", "a b", "abc\n", "é"],
)
def test_invalid_subdomains(value: str) -> None:
    assert dns1123_subdomain_errors(value) == [SUBDOMAIN_HINT]


def test_subdomain_length_is_checked_besides_the_pattern() -> None:
    assert dns1123_subdomain_errors(subdomain_of(254)) == [TOO_LONG_253]
    assert dns1123_subdomain_errors("A" * 254) == [TOO_LONG_253, SUBDOMAIN_HINT]


def test_lengths_count_utf8_bytes_as_go() -> None:
    # 127 characters, 254 bytes
    assert dns1123_subdomain_errors("é" * 127) == [TOO_LONG_253, SUBDOMAIN_HINT]
    assert dns1123_subdomain_errors("é" * 126) == [SUBDOMAIN_HINT]
    assert label_value_errors("é" * 32) == [TOO_LONG_63, VALUE_HINT]


# --- DNS-1123 and DNS-1035 labels -------------------------------------------------------------


@pytest.mark.parametrize("value", ["a", "0", "my-name", "123-abc", "a" * 63])
def test_valid_dns1123_labels(value: str) -> None:
    assert dns1123_label_errors(value) == []


@pytest.mark.parametrize("value", ["", "-a", "a-", "A", "a_b", "a b", "a\n"])
def test_invalid_dns1123_labels(value: str) -> None:
    assert dns1123_label_errors(value) == [LABEL_HINT]


def test_a_label_with_dots_gets_apimachinerys_dots_message() -> None:
    assert dns1123_label_errors("a.b") == ["must not contain dots"]
    assert dns1123_label_errors("a..b") == [LABEL_HINT]  # not a subdomain either


def test_dns1123_label_length() -> None:
    assert dns1123_label_errors("a" * 64) == [TOO_LONG_63]
    assert dns1123_label_errors("a." * 32) == [TOO_LONG_63, LABEL_HINT]
    assert dns1123_label_errors("a." * 31 + "ab") == [TOO_LONG_63, "must not contain dots"]


@pytest.mark.parametrize("value", ["a", "my-name", "abc-123", "a" * 63])
def test_valid_dns1035_labels(value: str) -> None:
    assert dns1035_label_errors(value) == []


@pytest.mark.parametrize("value", ["", "1abc", "-a", "a-", "A", "a.b", "a_b"])
def test_invalid_dns1035_labels(value: str) -> None:
    assert dns1035_label_errors(value) == [DNS1035_HINT]


def test_dns1035_label_length() -> None:
    assert dns1035_label_errors("a" * 64) == [TOO_LONG_63]
    assert dns1035_label_errors("1" * 64) == [TOO_LONG_63, DNS1035_HINT]


# --- qualified names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "a",
        "MyName",
        "my.name",
        "123-abc",
        "a_b",
        "example.com/MyName",
        "x/Y",
        "k" * 63,
        subdomain_of(253) + "/" + "n" * 63,
    ],
)
def test_valid_qualified_names(value: str) -> None:
    assert qualified_name_errors(value) == []


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("", ["name part must be non-empty", "name part " + QNAME_HINT]),
        ("-a", ["name part " + QNAME_HINT]),
        ("a-", ["name part " + QNAME_HINT]),
        ("_a", ["name part " + QNAME_HINT]),
        ("a b", ["name part " + QNAME_HINT]),
        ("a\n", ["name part " + QNAME_HINT]),
        ("k" * 64, ["name part " + TOO_LONG_63]),
        ("-" * 64, ["name part " + TOO_LONG_63, "name part " + QNAME_HINT]),
        ("/a", ["prefix part must be non-empty"]),
        ("a/", ["name part must be non-empty", "name part " + QNAME_HINT]),
        (
            "/",
            [
                "prefix part must be non-empty",
                "name part must be non-empty",
                "name part " + QNAME_HINT,
            ],
        ),
        ("Example.com/a", ["prefix part " + SUBDOMAIN_HINT]),
        ("example.com./a", ["prefix part " + SUBDOMAIN_HINT]),
        (subdomain_of(254) + "/a", ["prefix part " + TOO_LONG_253]),
        ("Example.com/-a", ["prefix part " + SUBDOMAIN_HINT, "name part " + QNAME_HINT]),
        (
            "a/b/c",
            [
                "a qualified name " + QNAME_HINT + " with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"
            ],
        ),
    ],
)
def test_invalid_qualified_names(value: str, errors: list[str]) -> None:
    assert qualified_name_errors(value) == errors


# --- label values -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "a", "MyValue", "my_value", "12345", "a.b-c_d", "v" * 63])
def test_valid_label_values(value: str) -> None:
    assert label_value_errors(value) == []


@pytest.mark.parametrize("value", ["-a", "a-", ".a", "a.", "_a", "a/b", "a b", "a\n"])
def test_invalid_label_values(value: str) -> None:
    assert label_value_errors(value) == [VALUE_HINT]


def test_label_value_length() -> None:
    assert label_value_errors("v" * 64) == [TOO_LONG_63]
    assert label_value_errors("-" * 64) == [TOO_LONG_63, VALUE_HINT]


# --- the rules against a character-by-character reading of them -------------------------------

LOWER_ALNUM = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits


def dns1123_label_chars_ok(value: str) -> bool:
    return (
        value != ""
        and all(c in LOWER_ALNUM + "-" for c in value)
        and value[0] in LOWER_ALNUM
        and value[-1] in LOWER_ALNUM
    )


def qualified_name_chars_ok(value: str) -> bool:
    return (
        value != ""
        and all(c in ALNUM + "-_." for c in value)
        and value[0] in ALNUM
        and value[-1] in ALNUM
    )


def is_dns1123_label(value: str) -> bool:
    return len(value) <= 63 and dns1123_label_chars_ok(value)


def is_label_value(value: str) -> bool:
    return value == "" or (len(value) <= 63 and qualified_name_chars_ok(value))


@given(st.text(alphabet="ab0-.A_\n", max_size=300))
def test_dns_rules_agree_with_their_definition(value: str) -> None:
    assert (DNS1123_LABEL_RE.fullmatch(value) is not None) is dns1123_label_chars_ok(value)
    assert (dns1123_label_errors(value) == []) is is_dns1123_label(value)
    subdomain_ok = len(value) <= 253 and all(map(is_dns1123_label, value.split(".")))
    assert (dns1123_subdomain_errors(value) == []) is subdomain_ok


@given(st.text(alphabet="aZ0-_./ \n", max_size=80))
def test_label_rules_agree_with_their_definition(value: str) -> None:
    assert (QUALIFIED_NAME_RE.fullmatch(value) is not None) is qualified_name_chars_ok(value)
    assert (label_value_errors(value) == []) is is_label_value(value)
    prefix, slash, name = value.rpartition("/")
    prefix_ok = not slash or (len(prefix) <= 253 and all(map(is_dns1123_label, prefix.split("."))))
    qualified_ok = name != "" and is_label_value(name) and "/" not in prefix and prefix_ok
    assert (qualified_name_errors(value) == []) is qualified_ok
