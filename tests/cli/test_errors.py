"""A user's mistake on the command line is one line naming what is wrong: no traceback, no
private exception class of kr8s, exit code 1 (``Error: ...``) or 2 for a usage error (every
subcommand: :data:`USAGE_ERRORS`)."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from reconcile_kit.cli.commands import main
from reconcile_kit.testing import APIServer

ROOT = Path(__file__).resolve().parents[2]
TARGET = "examples/mirror.py:manager"


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """``reconcile-kit ARGS...`` in a subprocess: its exit code and stderr lines."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        *args,
        cwd=ROOT,
        env=env if env is not None else dict(os.environ),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, err.decode().strip().splitlines()


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_one_line(result: Result, code: int, *words: str) -> None:
    """``result`` exited with ``code`` after one ``Error: ...`` line containing ``words``."""
    assert result.exit_code == code, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("Error: "), result.output
    assert all(word in line for word in words), line
    assert "Traceback" not in result.output


async def test_run_without_any_kubeconfig(tmp_path: Path) -> None:
    """No ~/.kube/config, no KUBECONFIG, not in a cluster: one line saying so (kr8s's
    ``ValueError: Unable to find valid credentials`` and 61 lines of traceback before)."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["HOME"] = str(tmp_path)
    code, lines = await run_cli("run", TARGET, env=env)
    assert code == 1, lines
    assert lines == [
        "Error: no kubeconfig found (~/.kube/config, $KUBECONFIG) and not in a cluster:"
        " pass --kubeconfig or --embedded"
    ]


async def test_run_with_kubeconfig_naming_a_missing_file(tmp_path: Path) -> None:
    """KUBECONFIG names a file that does not exist (a typo): the line names it and says so
    (the generic "no kubeconfig found (~/.kube/config, $KUBECONFIG)" before)."""
    missing = tmp_path / "no-such-kubeconfig"
    env = dict(os.environ, HOME=str(tmp_path), KUBECONFIG=str(missing))
    code, lines = await run_cli("run", TARGET, env=env)
    assert code == 1, lines
    assert lines == [
        f"Error: no kubeconfig found ($KUBECONFIG names {missing}, which does not exist) and"
        " not in a cluster: pass --kubeconfig or --embedded"
    ]


async def test_run_with_a_wrong_token_names_the_401(tmp_path: Path) -> None:
    """A kubeconfig whose token the server refuses: one line naming the 401 (kr8s's
    ``kr8s._exceptions.ServerError: Unauthorized`` after 67 lines before)."""
    async with APIServer(token="s3cret", tls=True, record_requests=False) as server:
        config = yaml.safe_load(Path(server.kubeconfig).read_text())
        config["users"][0]["user"]["token"] = "wrong"
        bad = tmp_path / "kcbad"
        bad.write_text(yaml.safe_dump(config))
        code, lines = await run_cli("run", TARGET, "--kubeconfig", str(bad))
    assert code == 1, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: GET /version"), lines
    assert "401 Unauthorized" in lines[0] and "credentials" in lines[0]
    assert "kr8s" not in lines[0]


def test_run_with_a_file_that_is_no_kubeconfig(tmp_path: Path) -> None:
    """``--kubeconfig /etc/passwd`` (TypeError: string indices must be integers before), bad
    YAML (yaml.parser.ParserError), an empty file: one line naming the file."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    result = invoke("run", TARGET, "--kubeconfig", str(passwd))
    assert_one_line(result, 1, f"kubeconfig {passwd}", "not a kubeconfig")
    broken = tmp_path / "broken"
    broken.write_text("clusters: [\n")
    result = invoke("run", TARGET, "--kubeconfig", str(broken))
    assert_one_line(result, 1, f"kubeconfig {broken}", "not valid YAML", "line 2")
    empty = tmp_path / "empty"
    empty.write_text("")
    assert_one_line(invoke("run", TARGET, "--kubeconfig", str(empty)), 1, "is empty")


def test_run_with_a_kubeconfig_without_a_current_context(tmp_path: Path) -> None:
    """A kubeconfig whose ``current-context`` is missing (kr8s: ``KeyError:
    'current-context'``): one line naming the file and the setting, as kubectl's "current-context
    is not set"."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    result = invoke("run", TARGET, "--kubeconfig", str(path))
    assert_one_line(result, 1, f"kubeconfig {path}", "no current-context is set")


HOOK_422 = """
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Manager

manager = Manager(name="hooked")


@manager.on_start
async def install(api):
    await ConfigMap({"metadata": {"name": "Bad_Name", "namespace": "default"}}, api=api).create()
"""


async def test_run_prints_an_api_error_of_an_on_start_hook_as_one_line(tmp_path: Path) -> None:
    """An on_start hook refused with a 422 through kr8s's own ``create()``: the manager
    raises the toolkit's InvalidError (not ``kr8s._exceptions.ServerError``) and ``run``
    prints it as one line, exit code 1 (73 lines of traceback before)."""
    target = tmp_path / "hook422.py"
    target.write_text(HOOK_422)
    code, lines = await run_cli("run", str(target), "--embedded")
    assert code == 1, lines
    assert lines[-1].startswith("Error: POST /api/v1/namespaces/default/configmaps: 422 Invalid")
    assert "metadata.name" in lines[-1]
    assert not any("Traceback" in line or "kr8s._exceptions" in line for line in lines), lines


def test_run_with_a_metrics_cert_dir_without_the_files(tmp_path: Path) -> None:
    """``--metrics-cert-dir`` of an empty directory: one line naming the option and the
    metrics (not "webhook") serving certificate, before connecting to any server."""
    empty = tmp_path / "certs"
    empty.mkdir()
    result = invoke("run", TARGET, "--metrics-port", "18600", "--metrics-cert-dir", str(empty))
    assert_one_line(
        result,
        1,
        f"--metrics-cert-dir {empty}: metrics serving certificate: no file {empty}/tls.crt",
    )
    (empty / "tls.crt").write_text("not a certificate\n")
    (empty / "tls.key").write_text("not a key\n")
    result = invoke("run", TARGET, "--metrics-port", "18600", "--metrics-cert-dir", str(empty))
    assert_one_line(result, 1, f"--metrics-cert-dir {empty}: ", "not a PEM certificate")


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", TARGET, "--health-port", "99999"], "--health-port"),
        (["run", TARGET, "--metrics-port", "-5"], "--metrics-port"),
        (["run", TARGET, "--webhook-port", "65536"], "--webhook-port"),
        (["apiserver", "--port", "70000"], "--port"),
    ],
)
def test_a_port_out_of_range_is_a_usage_error(args: list[str], option: str) -> None:
    """A port beyond 0-65535: a usage error naming the option (OverflowError before)."""
    result = invoke(*args)
    assert_one_line(result, 2, f"Invalid value for '{option}'", "0<=x<=65535")


async def test_run_names_the_port_option_in_use(busy_port: int) -> None:
    """``run --health-port`` of a port in use: ``Error: --health-port PORT: address
    already in use`` (an OSError Errno 98 traceback before)."""
    code, lines = await run_cli("run", TARGET, "--embedded", "--health-port", str(busy_port))
    assert code == 1, lines
    assert lines[-1] == f"Error: --health-port {busy_port}: address already in use", lines
    assert not any("Traceback" in line for line in lines), lines


def test_apiserver_names_the_port_in_use_and_a_host_it_cannot_resolve(busy_port: int) -> None:
    result = invoke("apiserver", "--port", str(busy_port))
    assert_one_line(result, 1, f"--port {busy_port}: address already in use")
    result = invoke("apiserver", "--host", "notahost.invalid")
    assert_one_line(result, 1, "--host notahost.invalid: cannot resolve it")


def test_an_unknown_log_level_is_a_usage_error_listing_the_levels() -> None:
    result = invoke("run", TARGET, "--log-level", "LOUD")
    assert_one_line(result, 2, "'--log-level'", "'LOUD'", "debug", "critical")


USAGE_ERRORS: list[tuple[list[str], list[str]]] = [
    (["run", TARGET, "--embedded", "--kubeconfig", __file__], ["exclude each other"]),
    (
        ["run", TARGET, "--leader-election-namespace", "ops"],
        ["--leader-election-namespace needs --leader-elect or --shard"],
    ),
    (["rbac", TARGET, "--namespace", "Bad_NS"], ["'--namespace'", "'Bad_NS'", "label"]),
    (
        ["rbac", TARGET, "--service-account", "Bad Name"],
        ["'--service-account'", "'Bad Name'", "subdomain"],
    ),
    (["rbac", TARGET, "--service-account-namespace", "a.b"], ["'a.b'", "dots"]),
    (["run", TARGET, "--namespace", "NS"], ["'--namespace'", "'NS'"]),
    (["manifests", TARGET, "--image", ""], ["'--image'", "must not be empty"]),
    (["manifests", TARGET, "--image", "op:1", "--namespace", "x_y"], ["'x_y'"]),
    (["demo", "--timeout", "-1"], ["'--timeout'", "x>0"]),
    (["rbac", TARGET, "--name", "ops/x"], ["'--name'", "'ops/x'", "may not contain '/'"]),
    (["rbac", TARGET, "--shard", "--shard-ring", "R_1"], ["'--shard-ring'", "label"]),
    (["run", TARGET, "--shard", "--shard-ring", "r.1"], ["'--shard-ring'", "'r.1'"]),
    (["init", "Guestbook"], ["'NAME'", "DNS label"]),
    (["init", "foo-operator", "--kind", "foo"], ["'--kind'", "CamelCase"]),
    (["init", "foo-operator", "--group", "nodot"], ["'--group'", "at least one dot"]),
    (["init", "foo-operator", "--directory", str(ROOT)], ["'--directory'", "not empty"]),
    (["rbac", TARGET, "--shard-ring", "ring"], ["--shard-ring needs --shard"]),
    (["crd"], ["Missing argument 'TARGET'"]),
    (["apiserver", "--fail", "500"], ["'--fail'", "STATUS:FRACTION"]),
]
"""A usage error of every subcommand (README: exit code 2 for a usage error, as click's)."""


@pytest.mark.parametrize(("args", "words"), USAGE_ERRORS)
def test_options_that_are_wrong_are_usage_errors(args: list[str], words: list[str]) -> None:
    """Options accepted though wrong, or silently ignored, before: usage errors naming the
    option and the rule."""
    assert_one_line(invoke(*args), 2, *words)


def test_every_subcommand_has_its_usage_errors_checked() -> None:
    """README: "exit code 2 for a usage error": held by every subcommand (``init``'s bad
    NAME, kind and group exited 1 before)."""
    assert {args[0] for args, _ in USAGE_ERRORS} == set(main.commands)


def test_init_refuses_a_group_that_is_no_dns_subdomain_with_a_dot(tmp_path: Path) -> None:
    for group in ("NOT A GROUP", "nodot"):
        result = invoke(
            "init", "foo-operator", "--directory", str(tmp_path / "p"), "--group", group
        )
        assert_one_line(result, 2, "'--group'", f"group {group!r}", "at least one dot")
    assert not (tmp_path / "p").exists()
