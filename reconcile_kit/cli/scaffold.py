"""``reconcile-kit init NAME``: a new operator project whose tests pass out of the box, as
``kubebuilder init`` + ``create api`` and ``operator-sdk init`` give (here one typed
resource owning a ConfigMap, which runs on the embedded API server).

Files: ``pyproject.toml`` (``reconcile-kit`` for the operator, ``reconcile-kit[testing]``
(the embedded API server) in its ``test`` extra, pytest settings), ``src/<package>/operator.py``
(the typed resource, its reconcile, controller and manager), ``tests/test_operator.py``
(the pytest plugin's ``kube`` fixture), ``Dockerfile`` (slim Python, non-root, ``reconcile-kit
run``), ``.dockerignore`` and ``README.md``.
"""

from __future__ import annotations

import keyword
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from string import Template

from ..meta.validation import dns1123_subdomain_errors

__all__ = ["ProjectNameError", "ProjectNames", "scaffold"]

_NAME = re.compile(r"^[a-z]([a-z0-9-]*[a-z0-9])?$")


class ProjectNameError(ValueError):
    """A project NAME, kind or group that does not fit (the message says why).

    Attributes:
        part: what is at fault: ``"name"``, ``"kind"`` or ``"group"``.
    """

    def __init__(self, part: str, message: str) -> None:
        super().__init__(message)
        self.part = part


class ProjectNames:
    """The names a project derives from its NAME (a DNS label: ``guestbook-operator``).

    Args:
        name: the project's name; its package is NAME with ``_`` for ``-``.
        kind: the custom resource's kind (default: NAME without a trailing ``-operator``
            in CamelCase, ``Guestbook``; ``my-operator``, where a determiner alone would be
            left, gives ``MyOperator``). Its resource is kubebuilder's English plural,
            lower-case (``Policy``: ``policies``).
        group: its API group (default: that base of NAME without ``-`` +
            ``.example.com``).

    Raises:
        ProjectNameError: (a ValueError) NAME is not a DNS label or gives a Python keyword
            or a package already taken, the kind is not CamelCase, or the group is not a
            DNS subdomain with a dot (named, ``part`` saying which).
    """

    def __init__(self, name: str, kind: str | None = None, group: str | None = None) -> None:
        problem = _name_problem(name)
        if problem:
            raise ProjectNameError("name", f"project name {name!r}{problem}")
        self.name = name
        self.package = name.replace("-", "_")
        base = _kind_base(name)
        self.kind = kind or "".join(part.capitalize() for part in base.split("-"))
        if not re.match(r"^[A-Z][A-Za-z0-9]*$", self.kind):
            raise ProjectNameError("kind", f"kind {self.kind!r}: use CamelCase, e.g. Guestbook")
        self.group = group or f"{base.replace('-', '')}.example.com"
        if "." not in self.group or dns1123_subdomain_errors(self.group):
            raise ProjectNameError(
                "group",
                f"group {self.group!r}: use a DNS subdomain with at least one dot (lower-case"
                " letters, digits, '-' and '.'), e.g. guestbook.example.com",
            )
        self.plural = _english_plural(self.kind)
        self.singular = _snake_case(self.kind)

    def substitutions(self) -> dict[str, str]:
        """The ``{placeholder: value}`` map the scaffold's templates are filled with."""
        return {
            "name": self.name,
            "package": self.package,
            "kind": self.kind,
            "group": self.group,
            "plural": self.plural,
            "singular": self.singular,
            # only where CustomResource's default (lower-case kind + "s") differs
            "plural_keyword": (
                "" if self.plural == self.kind.lower() + "s" else f', plural="{self.plural}"'
            ),
            "requirement": _requirement(),
            "testing_requirement": _requirement("testing"),
        }


def _name_problem(name: str) -> str:
    """What is wrong with the project NAME (``": use a DNS label..."``), or ""."""
    package = name.replace("-", "_")
    if not _NAME.match(name) or len(name) > 63:
        return (
            ": use a DNS label (lower-case letters, digits and '-', starting with a letter),"
            " e.g. guestbook-operator"
        )
    if keyword.iskeyword(package):
        return f" gives the Python keyword {package!r}"
    taken = _taken_by(package)
    if taken:
        return (
            f" gives the package {package!r}, a name {taken} already imports (the project's"
            f" would be shadowed), e.g. name it {name}-operator"
        )
    return ""


_DETERMINERS = frozenset(
    ["a", "an", "the", "my", "our", "your", "his", "her", "its", "their", "this", "that"]
)
"""Words that name no kind: ``my-operator`` keeps its ``-operator`` (kind ``MyOperator``)."""


def _kind_base(name: str) -> str:
    """The part of a project NAME its default kind and group come from: NAME without a
    trailing ``-operator`` (``guestbook-operator`` -> ``guestbook``), unless only a
    determiner would be left (``my-operator`` stays ``my-operator``: kind ``MyOperator``,
    not ``My``)."""
    base = name.removesuffix("-operator") or name
    return name if base in _DETERMINERS else base


def _snake_case(kind: str) -> str:
    """``kind`` in snake_case for Python names: ``MyOperator`` -> ``my_operator``,
    ``HTTPRoute`` -> ``http_route``."""
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", kind)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words).lower()


def _english_plural(kind: str) -> str:
    """The lower-case English plural of ``kind`` as kubebuilder names a scaffolded kind's
    resource (gobuffalo/flect's regular rules): ``Policy`` -> ``policies``, ``Ingress`` ->
    ``ingresses``, ``Guestbook`` -> ``guestbooks``."""
    word = kind.lower()
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


_DEPENDENCIES = frozenset(
    ["reconcile_kit", "kr8s", "pydantic", "aiohttp", "orjson", "yaml", "click", "pytest", "tests"]
)
"""Import names the scaffolded project depends on or lays out (its ``tests`` directory)."""


def _taken_by(package: str) -> str:
    """Who imports ``package`` already: "the Python standard library", "the project's
    dependencies", or "" (free)."""
    if package in sys.stdlib_module_names:
        return "the Python standard library"
    if package in _DEPENDENCIES:
        return "the project's dependencies or layout"
    return ""


def _requirement(extra: str = "") -> str:
    """``reconcile-kit>=`` the version running ``init`` (its public part: a local label
    cannot appear in ``>=``), with ``[extra]`` when given (``reconcile-kit[testing]>=...``:
    the project's tests need the embedded API server; its runtime needs only the core). A
    development or pre-release version names itself, so pip accepts it (PEP 440: a
    specifier naming a pre-release admits pre-releases); ``>=0.1`` excluded 0.1.0.dev0 and
    the scaffold did not install."""
    name = f"reconcile-kit[{extra}]" if extra else "reconcile-kit"
    try:
        current = version("reconcile-kit")
    except PackageNotFoundError:  # pragma: no cover - running from an unpacked tree
        return name
    return f"{name}>={current.split('+', 1)[0]}"


def scaffold(directory: Path, names: ProjectNames) -> list[Path]:
    """Write the project into ``directory`` (created; must be empty or absent); returns
    the files written.

    Raises:
        FileExistsError: ``directory`` is not empty (named).
    """
    if directory.exists() and any(directory.iterdir()):
        raise FileExistsError(f"{directory} is not empty: init writes a new project")
    values = names.substitutions()
    written = []
    for relative, template in _FILES.items():
        path = directory / Template(relative).substitute(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(template).substitute(values))
        written.append(path)
    return written


_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$name"
version = "0.1.0"
description = "The $kind operator"
requires-python = ">=3.11"
dependencies = ["$requirement"]

[project.optional-dependencies]
# the embedded API server the tests run on (the operator itself needs only the core)
test = ["$testing_requirement", "pytest>=8", "pytest-asyncio>=0.24"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
pythonpath = ["src"]
testpaths = ["tests"]
"""

_OPERATOR = '''\
"""The $kind operator: a $kind owns a ConfigMap holding its greeting.

Try it with no cluster: ``reconcile-kit run $package.operator:manager --embedded``;
``reconcile-kit crd $package.operator`` prints its CRD and ``reconcile-kit manifests
$package.operator:manager --image IMAGE`` what deploys it.
"""

from __future__ import annotations

from typing import Annotated, Any

from kr8s.asyncio.objects import ConfigMap
from pydantic import Field
from reconcile_kit import (
    Context,
    Controller,
    Manager,
    PatchHelper,
    Reasons,
    generation_changed,
    set_controller_reference,
)
from reconcile_kit.typed import Condition, CustomResource, KubeModel, ListType
from reconcile_kit.typed.conditions import mark_ready

GROUP = "$group"


class ${kind}Spec(KubeModel):
    """What the user asks for."""

    greeting: Annotated[str, Field(min_length=1)] = "hello"


class ${kind}Status(KubeModel):
    """What the operator observed."""

    observed_generation: int | None = None
    conditions: Annotated[list[Condition], ListType.map("type")] = Field(default_factory=list)


class $kind(CustomResource, group=GROUP, version="v1", kind="$kind"$plural_keyword):
    """A $kind: its greeting is kept in a ConfigMap of the same name."""

    spec: ${kind}Spec
    status: ${kind}Status | None = None


def desired_configmap(obj: $kind) -> dict[str, Any]:
    """The ConfigMap a $kind wants (only the fields this operator sets)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": obj.metadata.name, "namespace": obj.metadata.namespace},
        "data": {"greeting": obj.spec.greeting},
    }


async def reconcile(obj: $kind, ctx: Context) -> None:
    """Apply the ConfigMap (server-side apply), then report Ready."""
    async with PatchHelper(obj, observed_generation=True):
        child = ConfigMap(desired_configmap(obj), api=ctx.api)
        set_controller_reference(obj.object, child)
        await ctx.apply(child)
        generation = obj.metadata.generation
        mark_ready(obj, Reasons.RECONCILED, "ConfigMap applied", observed_generation=generation)


def controller(namespace: str | None = None, api: Any = None) -> Controller:
    """${kind}s (spec changes) and the ConfigMaps they own; ``api``: a kr8s Api (None: the
    manager's, or kr8s's default)."""
    return Controller(
        $kind,
        api=api,
        namespace=namespace,
        name="$name",
        predicates=[generation_changed],
    ).owns(ConfigMap)


def manager() -> Manager:
    """What ``reconcile-kit run $package.operator:manager`` runs."""
    operator = Manager(name="$name")
    operator.add(controller(), reconcile)
    return operator
'''

_TEST = '''\
"""The operator against an API server: reconcile-kit's pytest plugin gives the ``backend``
fixture (a fresh namespace and a kr8s Api on it), on the embedded API server by default,
on a real kube-apiserver with ``pytest --backend real`` and on both with ``--backend both``
(the real one is built once by reconcile-kit's ``scripts/build-control-plane``)."""

from __future__ import annotations

from kr8s.asyncio.objects import ConfigMap
from reconcile_kit.testing import install_crds, run_until
from reconcile_kit.testing.backends import Backend

from $package.operator import $kind, controller, reconcile


async def test_a_${singular}_configmap_holds_its_greeting(backend: Backend) -> None:
    api, namespace = backend.api, backend.namespace
    await install_crds(api, $kind)
    obj = $kind.kr8s_class()(
        {"metadata": {"name": "demo", "namespace": namespace}, "spec": {"greeting": "hi"}},
        api=api,
    )
    await obj.create()

    async def ready() -> bool:
        await obj.refresh()
        conditions = (obj.raw.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    ctrl = controller(namespace=namespace, api=api)
    assert await run_until(ctrl, reconcile, ready, timeout=30)
    configmap = await ConfigMap.get("demo", namespace=namespace, api=api)
    assert configmap.raw["data"] == {"greeting": "hi"}
    assert configmap.raw["metadata"]["ownerReferences"][0]["kind"] == "$kind"
'''

_DOCKERFILE = """\
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . && useradd --uid 65532 --no-create-home operator
USER 65532
ENTRYPOINT ["reconcile-kit", "run", "$package.operator:manager"]
# /metrics: HTTPS on 8443, each scrape authenticated and authorized by the API server
# (--metrics-secure=false for plain HTTP); /healthz and /readyz: plain HTTP on 8081
CMD ["--health-port", "8081", "--metrics-port", "8443", "--log-format", "json"]
"""

_DOCKERIGNORE = """\
.venv
**/__pycache__
.pytest_cache
"""

_README = """\
# $name

A Kubernetes operator built with [reconcile-kit](https://pypi.org/project/reconcile-kit/):
a `$kind` (`$group/v1`) owns a ConfigMap holding its greeting.

```sh
python -m venv .venv && .venv/bin/pip install -e '.[test]'   # a reconcile-kit wheel of
#   your own (not on an index): add --find-links <its directory>
.venv/bin/pytest                                   # runs against an embedded API server
.venv/bin/pytest --backend both                    # and against a real kube-apiserver
.venv/bin/reconcile-kit crd $package.operator         # the CRD, generated from the model
.venv/bin/reconcile-kit run $package.operator:manager --embedded   # try it, no cluster:
#   it installs the CRD in a fresh embedded API server and prints its kubeconfig, for
#   KUBECONFIG=<that path> kubectl apply -f <a $kind> (another terminal)
docker build -t $name:0.1.0 .
.venv/bin/reconcile-kit manifests $package.operator:manager --image $name:0.1.0 | kubectl apply -f -
```

Metrics are served over HTTPS on port 8443 and only to a bearer token allowed to `get`
`/metrics`: bind your Prometheus's ServiceAccount to the ClusterRole
`$name-metrics-reader` the manifests create (the operator checks each scrape with a
TokenReview and a SubjectAccessReview, through its `system:auth-delegator` binding).
`--metrics-secure=false` serves plain HTTP instead. Probes stay plain HTTP on 8081.
"""

_FILES = {
    "pyproject.toml": _PYPROJECT,
    "src/$package/__init__.py": '"""The $kind operator."""\n',
    "src/$package/operator.py": _OPERATOR,
    "tests/test_operator.py": _TEST,
    "Dockerfile": _DOCKERFILE,
    ".dockerignore": _DOCKERIGNORE,
    "README.md": _README,
}
