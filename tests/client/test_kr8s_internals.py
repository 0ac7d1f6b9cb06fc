"""kr8s's private names are used in one module, which checks the kr8s version first
(reconcile_kit.client.kr8s_internals, issue 30)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from reconcile_kit.client import kr8s_internals
from reconcile_kit.client.kr8s_internals import UnsupportedKr8sError, check_version

PACKAGE = Path(kr8s_internals.__file__).resolve().parent.parent
ROOT = PACKAGE.parent

PRIVATE_KR8S = re.compile(
    r"_create_session"  # Api._create_session
    r"|(?<!self)\._session\b|[\"']_session[\"']"  # Api._session (an object's own is fine)
    r"|\bkr8s\._|\bkr8s\.asyncio\._"  # kr8s's private modules
    r"|\._raw\b|\._api\b|[\"']_raw[\"']|[\"']_api[\"']"  # APIObject._raw, APIObject._api
)


@pytest.mark.parametrize("version", ["0.20.15", "0.20.16", "0.20.99", "0.20.16rc1", "0.20.15+x"])
def test_supported_versions_pass(version: str) -> None:
    check_version(version)


@pytest.mark.parametrize("version", ["0.20.14", "0.19.3", "0.21.0", "0.21.0rc1", "1.0", "dev"])
def test_other_versions_fail_naming_both(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kr8s_internals.ALLOW_ENV, raising=False)
    with pytest.raises(UnsupportedKr8sError) as caught:
        check_version(version)
    message = str(caught.value)
    assert f"kr8s {version} is installed" in message
    assert "supports kr8s >=0.20.15,<0.21" in message
    assert "pip install 'kr8s>=0.20.15,<0.21'" in message
    assert caught.value.installed == version
    assert isinstance(caught.value, RuntimeError)


def test_the_override_turns_the_error_into_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(kr8s_internals.ALLOW_ENV, "1")
    check_version("0.22.0")
    assert "kr8s 0.22.0 is not supported" in caplog.text


def test_the_installed_kr8s_is_supported() -> None:
    check_version()


def test_first_use_on_an_unsupported_kr8s_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kr8s_internals.ALLOW_ENV, raising=False)
    monkeypatch.setattr(kr8s_internals, "_checked", False)
    monkeypatch.setattr(kr8s_internals, "version", lambda name: "0.21.3")
    with pytest.raises(UnsupportedKr8sError, match=r"kr8s 0\.21\.3 is installed"):
        kr8s_internals.session(object())
    with pytest.raises(UnsupportedKr8sError):
        kr8s_internals.set_raw(object(), {})


def test_pyproject_requires_the_supported_versions() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [d for d in dependencies if d.startswith("kr8s")] == ["kr8s" + kr8s_internals.SUPPORTED]


def private_kr8s_uses(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if PRIVATE_KR8S.search(line)]


def test_the_pattern_finds_private_uses() -> None:
    assert private_kr8s_uses("x = api._session\nawait api._create_session()\n") == [
        "x = api._session",
        "await api._create_session()",
    ]
    assert private_kr8s_uses('getattr(api, "_session", None)\nfrom kr8s._objects import A')
    assert private_kr8s_uses("obj._raw = raw\nobj._api = api")
    assert not private_kr8s_uses("self._session = None\nobj.raw = raw\napi.session")


def test_no_other_module_touches_kr8s_private_names() -> None:
    found = {
        str(path.relative_to(ROOT)): uses
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "kr8s_internals.py" and (uses := private_kr8s_uses(path.read_text()))
    }
    assert found == {}
