"""A typed model's docstrings become CRD descriptions as plain text: ``kubectl explain``
shows no reST markup (issue 29, point 9: double backticks reached ``kubectl explain``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from reconcile_kit.testing import install_crds
from reconcile_kit.testing.backends import Backend
from reconcile_kit.typed import CustomResource, KubeModel
from reconcile_kit.typed.crd import plain_text

from .test_explain import kubectl_ok, published

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")


def test_plain_text_drops_inline_markup() -> None:
    assert plain_text("a ``spec.size`` of :class:`~pkg.Condition`") == "a spec.size of Condition"
    assert (
        plain_text("see `the docs <https://x.io>`_, **now**") == "see the docs (https://x.io), now"
    )
    assert plain_text("2*3*4 stays; so does a_b_c") == "2*3*4 stays; so does a_b_c"


async def test_kubectl_explain_shows_docstrings_as_plain_text(
    backend: Backend, tmp_path: Path
) -> None:
    group = f"{backend.namespace}.example.com"

    class DatabaseSpec(KubeModel):
        """What a ``Database`` runs: ``replicas`` copies of :class:`~pkg.Engine`."""

        replicas: Annotated[int, Field(description="How many, see ``spec.replicas``.")] = 1

    class Database(CustomResource, group=group, version="v1", kind="Database"):
        """A database: a ``StatefulSet`` behind a *Service*."""

        spec: DatabaseSpec

    await install_crds(backend.api, Database)
    await published(backend, tmp_path, f"apis/{group}/v1")
    kind = await kubectl_ok(backend, tmp_path, "explain", f"databases.{group}")
    spec = await kubectl_ok(backend, tmp_path, "explain", f"databases.{group}.spec")
    replicas = await kubectl_ok(backend, tmp_path, "explain", f"databases.{group}.spec.replicas")
    assert "A database: a StatefulSet behind a Service." in kind
    assert "What a Database runs: replicas copies of Engine." in spec
    assert "How many, see spec.replicas." in replicas
    for printed in (kind, spec, replicas):
        assert "``" not in printed and ":class:" not in printed
