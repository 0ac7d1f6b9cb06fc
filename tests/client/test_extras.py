"""Optional dependencies: what a missing extra's error says (reconcile_kit.client.extras)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from reconcile_kit.cli.commands import main
from reconcile_kit.client import extras
from reconcile_kit.client.extras import MissingExtraError, missing_extra, require_extra


def test_missing_extra_names_the_feature_the_package_and_the_install_command() -> None:
    error = missing_extra(ModuleNotFoundError(name="jsonschema"), extra="testing", feature="X")
    assert isinstance(error, ModuleNotFoundError)
    assert error.name == "jsonschema"
    assert error.extra == "testing"
    assert str(error) == (
        "X needs the Python package 'jsonschema', which reconcile-kit installs with its "
        "[testing] extra: pip install 'reconcile-kit[testing]'"
    )


def test_every_extra_is_installed_in_the_test_environment() -> None:
    for extra in extras.EXTRAS:
        assert extras.missing_packages(extra) == []
        require_extra(extra, feature="a test")


@pytest.fixture
def testing_extra_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extras.EXTRAS, "testing", ("jsonschema", "reconcile_kit_not_installed"))


@pytest.mark.usefixtures("testing_extra_missing")
def test_require_extra_lists_what_is_missing() -> None:
    with pytest.raises(MissingExtraError, match="'reconcile_kit_not_installed'") as caught:
        require_extra("testing", feature="The embedded API server")
    assert "pip install 'reconcile-kit[testing]'" in str(caught.value)


@pytest.mark.usefixtures("testing_extra_missing")
@pytest.mark.parametrize(
    "args",
    [["demo", "--objects", "1"], ["apiserver"], ["run", "nowhere:manager", "--embedded"]],
)
def test_commands_on_the_embedded_server_name_the_extra(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "pip install 'reconcile-kit[testing]'" in result.output
    assert "Traceback" not in result.output
