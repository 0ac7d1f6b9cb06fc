"""Tests for reconcile_kit.meta.selectors (label and field selectors)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile_kit.meta.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    label_selector_from_dict,
    label_selector_to_string,
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


def matches(selector: str, labels: dict[str, str] | None) -> bool:
    return LabelSelector.parse(selector).matches(labels)


# ---------------------------------------------------------------------------------------
# Label selectors: operators and matching
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app=web", {"app": "db"}, False),
        ("app=web", {}, False),
        ("app==web", {"app": "web"}, True),
        ("app==web", {"app": "db"}, False),
        ("app!=web", {"app": "db"}, True),
        ("app!=web", {"app": "web"}, False),
        ("app in (web,db)", {"app": "db"}, True),
        ("app in (web,db)", {"app": "cache"}, False),
        ("app in (web,db)", {}, False),
        ("app notin (web,db)", {"app": "cache"}, True),
        ("app notin (web,db)", {"app": "web"}, False),
        ("app", {"app": ""}, True),
        ("app", {"other": "x"}, False),
        ("!app", {"other": "x"}, True),
        ("!app", {"app": "x"}, False),
        ("gen>5", {"gen": "6"}, True),
        ("gen>5", {"gen": "5"}, False),
        ("gen<5", {"gen": "4"}, True),
        ("gen<5", {"gen": "5"}, False),
        ("app=web,tier=front", {"app": "web", "tier": "front"}, True),
        ("app=web,tier=front", {"app": "web", "tier": "back"}, False),
        ("example.com/owner=me", {"example.com/owner": "me"}, True),
    ],
)
def test_label_operators(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert matches(selector, labels) is expected


@pytest.mark.parametrize("selector", ["app!=web", "app notin (web)", "!app"])
def test_negative_operators_match_objects_lacking_the_key(selector: str) -> None:
    assert matches(selector, {"other": "web"})
    assert matches(selector, None)


@pytest.mark.parametrize(
    "selector", ["app=web", "app==web", "app in (web)", "app", "app>1", "app<1"]
)
def test_positive_operators_need_the_key(selector: str) -> None:
    assert not matches(selector, {"other": "web"})
    assert not matches(selector, None)


@pytest.mark.parametrize(
    ("selector", "value", "expected"),
    [
        ("n>9", "10", True),  # integer, not string, comparison
        ("n<10", "9", True),
        ("n>1", "+2", True),  # strconv.ParseInt accepts a sign
        ("n<1", "-2", True),
        ("n>1", "2.5", False),  # not an integer: never matches
        ("n<1", "abc", False),
        ("n<1", "", False),
        ("n>1", "1_000", False),  # no underscores in base 10
        ("n>1", "99999999999999999999", False),  # overflows int64
        ("n<0", "-9223372036854775808", True),  # int64 minimum still parses
    ],
)
def test_integer_comparisons(selector: str, value: str, expected: bool) -> None:
    assert matches(selector, {"n": value}) is expected


def test_gt_requires_an_integer_value() -> None:
    with pytest.raises(SelectorError) as err:
        LabelSelector.parse("environment>qa")
    assert str(err.value) == (
        'unable to parse requirement: values[0]: Invalid value: "qa": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )


@pytest.mark.parametrize(
    "selector",
    [
        "a in ( x , y )",
        "  a in (x,y)  ",
        "a\tin\t(x,\ny)",
        "a in(x,y)",
        "\r\na notin (z) , b",
    ],
)
def test_whitespace_around_tokens(selector: str) -> None:
    assert matches(selector, {"a": "y", "b": "1"})
    assert not matches(selector, {"a": "z", "b": "1"})


def test_spaces_around_equals() -> None:
    assert matches(" a = b , c != d ", {"a": "b"})
    assert not matches(" a = b , c != d ", {"a": "b", "c": "d"})


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_selector_matches_everything(text: str) -> None:
    selector = LabelSelector.parse(text)
    assert selector.empty()
    assert selector.matches({"a": "b"})
    assert selector.matches(None)
    assert str(selector) == ""


def test_non_empty_selector_is_not_empty() -> None:
    assert not LabelSelector.parse("a").empty()


def test_empty_values() -> None:
    assert matches("a=", {"a": ""})
    assert not matches("a=", {"a": "x"})
    assert not matches("a=", {})
    assert matches("a==,b", {"a": "", "b": "x"})
    assert matches("a!=", {"a": "x"})
    assert not matches("a!=", {"a": ""})


def test_empty_value_sets() -> None:
    # apimachinery reads "()" as the set {""}, and empty slots in a list as "".
    assert matches("a in ()", {"a": ""})
    assert not matches("a in ()", {"a": "x"})
    assert matches("a notin ()", {"a": "x"})
    assert matches("a in (,b)", {"a": ""})
    assert matches("a in (b,)", {"a": ""})
    assert matches("a in (b,,c)", {"a": ""})
    assert not matches("a in (b,c)", {"a": ""})
    # apimachinery's list parser rejects two commas right before ")" (parseIdentifiersList).
    for text in ("a in (,,)", "a in (b,,)"):
        with pytest.raises(SelectorError, match="found '\\)', expected: ',', or identifier"):
            LabelSelector.parse(text)
    assert str(LabelSelector.parse("x in (foo,,baz),y,z notin ()")) == (
        "x in (,baz,foo),y,z notin ()"
    )


def test_in_and_notin_are_identifiers_outside_operator_position() -> None:
    selector = LabelSelector.parse("in in (in,notin),notin=in")
    assert selector.matches({"in": "notin", "notin": "in"})
    assert not selector.matches({"in": "x", "notin": "in"})
    assert matches("!in", {"out": "x"})


def test_canonical_string_sorts_keys_and_values() -> None:
    selector = LabelSelector.parse("z in (c,a,b), !y, x==1, w, v!=2, u>3, t<4, a=b")
    assert str(selector) == "a=b,t<4,u>3,v!=2,w,x==1,!y,z in (a,b,c)"
    assert LabelSelector.parse(str(selector)) == selector


def test_duplicate_set_values_are_collapsed() -> None:
    assert str(LabelSelector.parse("a in (x,x,y)")) == "a in (x,y)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
        ("(a)", "found '(', expected: !, identifier, or 'end of string'"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("a===b", "unable to parse requirement: found '=', expected: identifier"),
        ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a notin", "unable to parse requirement: found '' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in (,", "unable to parse requirement: found '', expected: ',', or identifier"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        (
            "app:web",
            f'unable to parse requirement: <nil>: Invalid value: "app:web": name part {QNAME_HINT}',
        ),
        (
            "-a",
            f'unable to parse requirement: <nil>: Invalid value: "-a": name part {QNAME_HINT}',
        ),
        (
            "app=demo-{x}",
            "unable to parse requirement: values[0][app]: "
            f'Invalid value: "demo-{{x}}": {VALUE_HINT}',
        ),
        (
            "a in (ok,-bad)",
            f'unable to parse requirement: values[0][a]: Invalid value: "-bad": {VALUE_HINT}',
        ),
        (
            "n>-1",
            f'unable to parse requirement: values[0][n]: Invalid value: "-1": {VALUE_HINT}',
        ),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        LabelSelector.parse(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a/b/c=x", '"a/b/c": a qualified name must consist of'),
        ("/a=x", '"/a": prefix part must be non-empty'),
        ("a/=x", '"a/": name part must be non-empty'),
        ("Example.com/a=x", "prefix part a lowercase RFC 1123 subdomain must consist of"),
        ("k" * 64, '"' + "k" * 64 + '": name part must be no more than 63 characters'),
        ("a=" + "v" * 64, "must be no more than 63 characters"),
        ('a"b=1', 'Invalid value: "a\\"b"'),
    ],
)
def test_key_and_value_validation(text: str, fragment: str) -> None:
    with pytest.raises(SelectorError) as err:
        LabelSelector.parse(text)
    assert fragment in str(err.value)


def test_several_errors_are_aggregated() -> None:
    with pytest.raises(SelectorError) as err:
        LabelSelector.parse("a>x.")
    message = str(err.value)
    assert message.startswith("unable to parse requirement: [values[0]: Invalid value: ")
    assert "the value must be an integer, values[0][a]: Invalid value:" in message
    assert message.endswith("')]")


def test_longest_valid_key_and_value() -> None:
    key = "example.com/" + "k" * 63
    assert matches(f"{key}={'v' * 63}", {key: "v" * 63})


def test_selector_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        LabelSelector.parse("a in")


# ---------------------------------------------------------------------------------------
# Label selectors from metav1.LabelSelector dicts
# ---------------------------------------------------------------------------------------


def test_label_selector_from_dict() -> None:
    selector = label_selector_from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "owner", "operator": "Exists", "values": []},
            ],
        }
    )
    good = {"app": "web", "tier": "edge", "owner": "me"}
    assert selector.matches(good)
    assert not selector.matches({**good, "canary": "1"})
    assert not selector.matches({**good, "env": "prod"})
    assert not selector.matches({**good, "tier": "back"})
    assert not selector.matches({k: v for k, v in good.items() if k != "owner"})
    assert selector == LabelSelector.parse(
        "app=web,tier in (front,edge),env notin (prod),!canary,owner"
    )


@pytest.mark.parametrize("selector", [{}, {"matchLabels": None, "matchExpressions": None}])
def test_empty_dict_selects_everything(selector: dict[str, Any]) -> None:
    parsed = label_selector_from_dict(selector)
    assert parsed.empty()
    assert parsed.matches({"x": "y"})
    assert label_selector_to_string(selector) == ""


def test_label_selector_to_string() -> None:
    text = label_selector_to_string(
        {
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [
                {"key": "c", "operator": "NotIn", "values": ["z", "y"]},
                {"key": "a0", "operator": "Exists"},
                {"key": "d", "operator": "DoesNotExist"},
            ],
        }
    )
    assert text == "a=1,a0,b=2,c notin (y,z),!d"
    assert str(LabelSelector.parse(text)) == text


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            '"Gt" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            "values: Invalid value: []string(nil): "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
            "values: Invalid value: []string{}: "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x", "y"]}]},
            'values: Invalid value: []string{"x", "y"}: '
            "values set must be empty for exists and does not exist",
        ),
        ({"matchLabels": {"a b": "x"}}, f'key: Invalid value: "a b": name part {QNAME_HINT}'),
        ({"matchLabels": {"a": "x y"}}, f'values[0][a]: Invalid value: "x y": {VALUE_HINT}'),
        ({"matchLabels": {"a": 1}}, "matchLabels: 'a': keys and values must be strings"),
        ({"matchLabels": ["a"]}, "matchLabels: expected an object, got list"),
        ({"matchExpressions": {"key": "a"}}, "matchExpressions: expected a list"),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]},
            "matchExpressions[0].values: expected a list of strings",
        ),
    ],
)
def test_label_selector_from_dict_errors(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as err:
        label_selector_from_dict(selector)
    assert str(err.value) == message
    with pytest.raises(SelectorError):
        label_selector_to_string(selector)


# ---------------------------------------------------------------------------------------
# Field selectors
# ---------------------------------------------------------------------------------------

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "default"},
    "spec": {"nodeName": "node-a", "hostNetwork": True, "priority": 7},
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=web-0", True),
        ("metadata.name==web-0", True),
        ("metadata.name=web-1", False),
        ("metadata.name!=web-1", True),
        ("metadata.name!=web-0", False),
        ("metadata.namespace=default,status.phase=Running", True),
        ("metadata.namespace=default,status.phase!=Running", False),
        ("spec.nodeName=node-a", True),
        ("spec.hostNetwork=true", True),
        ("spec.hostNetwork=True", False),
        ("spec.priority=7", True),
        ("spec.missing=", True),  # a missing field reads as ""
        ("spec.missing!=", False),
        ("spec.missing=x", False),
        ("spec.missing!=x", True),
        ("spec.nodeName.deeper=", True),  # walking through a scalar: missing
        ("metadata=", True),  # an object is not a selectable scalar
        ("", True),
    ],
)
def test_field_selector_matching(selector: str, expected: bool) -> None:
    assert FieldSelector.parse(selector).matches(POD) is expected


def test_field_selector_escapes() -> None:
    obj = {"metadata": {"name": "a,b=c\\d"}}
    selector = FieldSelector.parse("metadata.name=a\\,b\\=c\\\\d")
    assert selector.matches(obj)
    assert not selector.matches({"metadata": {"name": "a,b=c\\\\d"}})
    assert str(selector) == "metadata.name=a\\,b\\=c\\\\d"
    assert FieldSelector.parse("metadata.name!=a\\,b\\=c\\\\d,spec.x=").fields() == {
        "metadata.name",
        "spec.x",
    }


def test_field_selector_operator_split_is_at_first_operator() -> None:
    # "==" is tried before "=", so "a==b" is not field "a" with value "=b".
    assert FieldSelector.parse("a==b").matches({"a": "b"})
    # The first position holding any operator wins: "a=!b" is field "a", value "!b".
    assert FieldSelector.parse("a=!b").matches({"a": "!b"})
    # "!=" is tried first, so "a!==b" leaves an unescaped "=" in the value.
    with pytest.raises(SelectorError, match="unescaped character in value: 61"):
        FieldSelector.parse("a!==b")


def test_field_selector_fields_and_empty() -> None:
    selector = FieldSelector.parse("status.phase=Running,metadata.name!=x,metadata.name=y")
    assert selector.fields() == frozenset({"status.phase", "metadata.name"})
    assert not selector.empty()
    assert FieldSelector.parse("").empty()
    assert FieldSelector.parse(",").empty()
    assert FieldSelector.parse("").fields() == frozenset()


def test_field_selector_keeps_whitespace() -> None:
    selector = FieldSelector.parse("metadata.name = web-0")
    assert selector.fields() == {"metadata.name "}
    assert not selector.matches({"metadata.name ": "web-0"})  # dotted path, not a key
    assert not selector.matches(POD)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"),
        ("   ", "invalid selector: '   '; can't understand '   '"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        ("a=b\\,c,d=e,f", "invalid selector: 'a=b\\,c,d=e,f'; can't understand 'f'"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
        ("a=\\n", "invalid field selector: invalid escape sequence: \\n"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        FieldSelector.parse(text)
    assert str(err.value) == message


def test_field_selector_reports_first_bad_term_in_sorted_order() -> None:
    with pytest.raises(SelectorError) as err:
        FieldSelector.parse("z,a=b,c")
    assert str(err.value) == "invalid selector: 'z,a=b,c'; can't understand 'c'"


# ---------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------

KEYS = st.sampled_from(["app", "tier", "example.com/owner", "a.b_c-d", "x"])
VALUES = st.sampled_from(["", "web", "db", "1", "42", "007", "A.b-c_9"])
LABELS = st.dictionaries(KEYS, VALUES, max_size=4)


@given(labels=LABELS, key=KEYS, value=VALUES)
def test_equality_property(labels: dict[str, str], key: str, value: str) -> None:
    expected = labels.get(key) == value
    assert LabelSelector.parse(f"{key}={value}").matches(labels) is expected
    assert LabelSelector.parse(f"{key}=={value}").matches(labels) is expected
    assert LabelSelector.parse(f"{key}!={value}").matches(labels) is not expected


# Empty slots in a value list have quirks of their own (test_empty_value_sets).
@given(labels=LABELS, key=KEYS, values=st.lists(VALUES.filter(bool), min_size=1, max_size=3))
def test_set_property(labels: dict[str, str], key: str, values: list[str]) -> None:
    inside = key in labels and labels[key] in values
    joined = ", ".join(values)
    assert LabelSelector.parse(f"{key} in ({joined})").matches(labels) is inside
    assert LabelSelector.parse(f"{key} notin ({joined})").matches(labels) is not inside
    assert LabelSelector.parse(key).matches(labels) is (key in labels)
    assert LabelSelector.parse(f"!{key}").matches(labels) is (key not in labels)


@given(labels=LABELS, key=KEYS, bound=st.integers(min_value=0, max_value=50))
def test_comparison_property(labels: dict[str, str], key: str, bound: int) -> None:
    raw = labels.get(key)
    number = int(raw) if raw is not None and raw.isdigit() else None
    greater = number is not None and number > bound
    less = number is not None and number < bound
    assert LabelSelector.parse(f"{key}>{bound}").matches(labels) is greater
    assert LabelSelector.parse(f"{key}<{bound}").matches(labels) is less


@given(
    requirements=st.lists(
        st.tuples(KEYS, st.sampled_from(["=", "!=", " in ", " notin ", "", "!"]), VALUES),
        max_size=4,
    ),
    labels=LABELS,
)
def test_canonical_string_round_trip(
    requirements: list[tuple[str, str, str]], labels: dict[str, str]
) -> None:
    parts = []
    for key, op, value in requirements:
        if op == "!":
            parts.append(f"!{key}")
        elif op.strip() in ("in", "notin"):
            parts.append(f"{key}{op}({value})")
        else:
            parts.append(f"{key}{op}{value}" if op else key)
    selector = LabelSelector.parse(",".join(parts))
    again = LabelSelector.parse(str(selector))
    assert again == selector
    assert str(again) == str(selector)
    assert again.matches(labels) is selector.matches(labels)


def escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@given(name=st.text(max_size=12), other=st.text(max_size=12))
def test_field_escape_round_trip(name: str, other: str) -> None:
    selector = FieldSelector.parse(f"metadata.name={escape_field_value(name)}")
    assert selector.matches({"metadata": {"name": name}})
    assert selector.matches({"metadata": {"name": other}}) is (other == name)
    negated = FieldSelector.parse(f"metadata.name!={escape_field_value(name)}")
    assert negated.matches({"metadata": {"name": other}}) is (other != name)
