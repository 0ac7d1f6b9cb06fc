"""`reconcile-kit rbac` / `manifests` / `run` of a MultiClusterManager target: the
management side's permissions (the aware controller's kinds, the provider's Secrets)."""

from __future__ import annotations

import yaml
from click.testing import CliRunner

from reconcile_kit.cli.commands import main
from reconcile_kit.cli.target import load_manager
from reconcile_kit.multicluster import MultiClusterManager, fleet_of

TARGET = "examples/fleet_configmap.py:fleet"


def rules_of(output: str) -> list[dict[str, object]]:
    return [
        rule
        for document in yaml.safe_load_all(output)
        if document and document["kind"] in ("ClusterRole", "Role")
        for rule in document["rules"]
    ]


def test_rbac_covers_the_aware_controller_and_the_secret_provider() -> None:
    result = CliRunner().invoke(main, ["rbac", TARGET])
    assert result.exit_code == 0, result.output
    rules = rules_of(result.output)
    assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]} in (
        rules
    )
    kinds = {resource for rule in rules for resource in rule.get("resources", [])}  # type: ignore[attr-defined]
    assert {"fleetconfigmaps", "fleetconfigmaps/status", "secrets"} <= kinds


def test_manifests_of_a_fleet_target() -> None:
    result = CliRunner().invoke(main, ["manifests", TARGET, "--image", "example/fleet:1"])
    assert result.exit_code == 0, result.output
    kinds = [d["kind"] for d in yaml.safe_load_all(result.output) if d]
    assert "Deployment" in kinds and "ClusterRole" in kinds


async def test_run_runs_the_fleet_of_a_target() -> None:
    manager = await load_manager(TARGET)
    fleet = fleet_of(manager)
    assert isinstance(fleet, MultiClusterManager) and fleet.manager is manager
