"""Every helper that takes an object takes it in all three forms: a typed model, a kr8s
object and a dict (issue 29, point 1: ``finalizer(db, ...)`` with a typed model raised
AttributeError 'Database' object has no attribute 'raw')."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import kr8s.asyncio
import orjson
import pytest

from reconcile_kit import Context, Controller, EventRecorder, PatchHelper, finalizer
from reconcile_kit.meta import conditions as dict_conditions
from reconcile_kit.meta.finalizers import add_finalizer, has_finalizer, remove_finalizer
from reconcile_kit.meta.objects import raw_of, view_of
from reconcile_kit.meta.owners import (
    controller_of,
    is_controlled_by,
    owner_refs,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, install_crds
from reconcile_kit.typed import CustomResource, KubeModel

from ..kubehttp import call
from .models import Gadget, GadgetStatus
from .test_controller import GADGETS, gadget, install

FORMS = ("model", "kr8s", "dict")
OWNER_UID = "0a0a0a0a-0000-4000-8000-000000000001"
CLEANUP = "typed.example.com/cleanup"


def as_form(form: str, raw: dict[str, Any]) -> Any:
    raw = copy.deepcopy(raw)
    if form == "model":
        return Gadget.model_validate(raw)
    if form == "kr8s":
        return Gadget.kr8s_class()(raw)
    return raw


def stored(gadget_raw: dict[str, Any]) -> dict[str, Any]:
    raw = copy.deepcopy(gadget_raw)
    raw["metadata"].update(namespace="default", uid="0b0b0b0b-0000-4000-8000-000000000002")
    return raw


OWNER = {
    "apiVersion": "typed.example.com/v1",
    "kind": "Gadget",
    "metadata": {"name": "owner", "namespace": "default", "uid": OWNER_UID},
    "spec": {"image": "nginx"},
}


def edits() -> list[tuple[str, Callable[[Any, Any], Any]]]:
    """(name, edit(obj, owner)) of every metadata helper; each returns what the helper did."""
    return [
        ("add_finalizer", lambda o, w: add_finalizer(o, CLEANUP)),
        ("add_finalizer again", lambda o, w: add_finalizer(o, CLEANUP)),
        ("has_finalizer", lambda o, w: has_finalizer(o, CLEANUP)),
        ("set_owner_reference", lambda o, w: set_owner_reference(w, o)),
        ("set_controller_reference", lambda o, w: set_controller_reference(w, o)),
        ("controller_of", lambda o, w: controller_of(o)),
        ("is_controlled_by", lambda o, w: is_controlled_by(o, w)),
        ("owner_refs", lambda o, w: owner_refs(o)),
        (
            "set_condition",
            lambda o, w: dict_conditions.set_condition(
                o, "Ready", "True", "Reconciled", clock=lambda: FIXED
            ),
        ),
        (  # a fixed clock: the forms run in turn and may straddle a second
            "mark_stalled",
            lambda o, w: dict_conditions.mark_stalled(o, "Refused", "no", clock=lambda: FIXED),
        ),
        ("is_true", lambda o, w: dict_conditions.is_true(o, "Stalled")),
        (
            "get_condition",
            lambda o, w: (dict_conditions.get_condition(o, "Stalled") or {})["reason"],
        ),
        ("remove_condition", lambda o, w: dict_conditions.remove_condition(o, "Stalled")),
        ("remove_owner_reference", lambda o, w: remove_owner_reference(w, o)),
        ("remove_finalizer", lambda o, w: remove_finalizer(o, CLEANUP)),
        ("has_finalizer after", lambda o, w: has_finalizer(o, CLEANUP)),
    ]


FIXED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize("owner_form", FORMS)
def test_every_metadata_helper_gives_the_same_result_in_every_form(owner_form: str) -> None:
    """Each helper, run on the same object as a typed model, a kr8s object and a dict (the
    owner in ``owner_form``), answers the same and leaves the same JSON."""
    results: dict[str, list[Any]] = {}
    finals: dict[str, Any] = {}
    for form in FORMS:
        obj = as_form(form, stored(gadget("g1", 2)))
        owner = as_form(owner_form, OWNER)
        for name, edit in edits():
            results.setdefault(name, []).append(edit(obj, owner))
            # the JSON after each step is the same in every form
            results.setdefault(f"{name}: json", []).append(
                orjson.loads(orjson.dumps(dict(view_of(obj)), default=str))
            )
        finals[form] = obj
    for name, answers in results.items():
        assert answers[0] == answers[1] == answers[2], (name, answers)
    # the model was edited in place, as the kr8s object and the dict were
    assert isinstance(finals["model"], Gadget)
    assert results["add_finalizer"][0] is True and results["has_finalizer after"][0] is False


def test_raw_of_a_typed_model_names_the_object() -> None:
    model = Gadget.model_validate(stored(gadget("g1", 2)))
    with pytest.raises(TypeError, match=r"Gadget default/g1 is a typed model"):
        raw_of(model)


async def test_finalizer_with_a_typed_model_adds_cleans_up_and_removes(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """The typed reconcile of docs/controllers.md + docs/typed-resources.md:
    ``finalizer(model, ...)`` adds the finalizer, and on deletion runs cleanup and removes it."""
    await install(kube)
    cleaned: list[str] = []
    applied: list[int] = []

    async def apply(obj: Gadget) -> None:
        applied.append(obj.spec.replicas)

    async def cleanup(obj: Gadget) -> None:
        assert isinstance(obj, Gadget)
        cleaned.append(obj.metadata.name or "")

    async def reconcile(obj: Gadget, ctx: Context) -> Any:
        return await finalizer(obj, CLEANUP, apply, cleanup)

    ctrl = Controller(
        Gadget, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", GADGETS, gadget("g1", 2))

        async def has_it() -> bool:
            _, body = await call(kube, "GET", f"{GADGETS}/g1")
            return CLEANUP in (body["metadata"].get("finalizers") or [])

        assert await ctrl.wait_reconciled(has_it, 10)
        assert await ctrl.wait_reconciled(lambda: bool(applied), 10)
        assert ctrl.stats.results.get("error", 0) == 0
        await call(kube, "DELETE", f"{GADGETS}/g1")

        async def gone() -> bool:
            return (await call(kube, "GET", f"{GADGETS}/g1"))[0] == 404

        assert await ctrl.wait_reconciled(gone, 10)
        assert cleaned == ["g1"]
    finally:
        await ctrl.shutdown(5)
        await task


async def test_patch_helper_and_events_take_every_form(kube: kr8s.asyncio.Api) -> None:
    """PatchHelper and EventRecorder.event with a typed model, a kr8s object and a dict
    (the event names the object whichever form it was given in)."""
    await install(kube)
    status, created = await call(kube, "POST", GADGETS, gadget("g1", 2))
    assert status == 201, created
    read = await Gadget.kr8s_class().get("g1", namespace="default", api=kube)
    objects = {
        "model": Gadget.from_raw(copy.deepcopy(created), read),
        "kr8s": await Gadget.kr8s_class().get("g1", namespace="default", api=kube),
    }
    for i, obj in enumerate(objects.values()):
        async with PatchHelper(obj):
            add_finalizer(obj, f"typed.example.com/f{i}")
    _, body = await call(kube, "GET", f"{GADGETS}/g1")
    assert body["metadata"]["finalizers"] == ["typed.example.com/f0", "typed.example.com/f1"]

    async with EventRecorder(kube, reporting_controller="example.com/forms") as rec:
        for form, obj in {**objects, "dict": body}.items():
            rec.event(obj, "Normal", "Seen", f"as {form}")
        await asyncio.wait_for(rec.flush(), 30)
    _, events = await call(kube, "GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    seen = {e["note"]: e["regarding"] for e in events["items"]}
    assert set(seen) == {"as model", "as kr8s", "as dict"}
    for regarding in seen.values():
        assert (regarding["kind"], regarding["name"], regarding["uid"]) == (
            "Gadget",
            "g1",
            created["metadata"]["uid"],
        )


async def test_ctx_get_and_list_give_models_of_a_typed_kind(kube: kr8s.asyncio.Api) -> None:
    """``ctx.get(name, kind=Model)`` and ``ctx.list(kind=Model)`` give models bound to the
    api (PatchHelper takes them); without a model class they stay read-only dicts."""
    await install(kube)
    seen: list[Any] = []

    async def reconcile(obj: Gadget, ctx: Context) -> None:
        if seen:
            return
        got = ctx.get(obj.metadata.name or "", kind=Gadget)
        listed = ctx.list(kind=Gadget)
        seen.extend([got, listed, ctx.get(obj.metadata.name or "")])
        async with PatchHelper(got):
            add_finalizer(got, CLEANUP)

    ctrl = Controller(
        Gadget, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", GADGETS, gadget("g1", 2))
        assert await ctrl.wait_reconciled(lambda: bool(seen), 10)
    finally:
        await ctrl.shutdown(5)
        await task
    got, listed, plain = seen
    assert isinstance(got, Gadget) and got.spec.replicas == 2 and got.object is not None
    assert [type(m) for m in listed] == [Gadget]
    assert isinstance(plain, dict)
    _, body = await call(kube, "GET", f"{GADGETS}/g1")
    assert body["metadata"]["finalizers"] == [CLEANUP]


async def test_ctx_writes_take_a_typed_model_a_kr8s_object_and_a_dict(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """ctx.apply, ctx.apply_status and ctx.create_or_patch (with and without ``mutate``)
    with each form: the same objects on the server, and each form ends as the server's
    answer."""
    await install(kube)
    results: dict[str, Any] = {}

    def build(form: str, name: str, replicas: int) -> Any:
        raw = {**gadget(name, replicas), "metadata": {"name": name, "namespace": "default"}}
        if form == "model":
            return Gadget.model_validate(raw)
        if form == "kr8s":
            return Gadget.kr8s_class()(raw, api=kube)
        return raw

    async def reconcile(obj: Gadget, ctx: Context) -> None:
        if obj.metadata.name != "trigger" or results:
            return
        for form in FORMS:
            applied = build(form, f"applied-{form}", 1)
            await ctx.apply(applied)
            status = build(form, f"applied-{form}", 1)
            view = status if isinstance(status, dict) else None
            if form == "model":
                status.status = GadgetStatus(ready_replicas=1)
            elif form == "kr8s":
                status.raw["status"] = {"readyReplicas": 1}
            else:
                assert view is not None
                view["status"] = {"readyReplicas": 1}
            await ctx.apply_status(status)
            made = build(form, f"made-{form}", 2)
            first = await ctx.create_or_patch(made)

            def bump(current: Any) -> None:
                if isinstance(current, Gadget):
                    current.spec.replicas = 3
                elif isinstance(current, dict):
                    current["spec"]["replicas"] = 3
                else:
                    current.raw["spec"]["replicas"] = 3

            again = build(form, f"made-{form}", 2)
            second = await ctx.create_or_patch(again, bump)
            results[form] = (applied, status, made, first, again, second)

    ctrl = Controller(
        Gadget, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", GADGETS, gadget("trigger", 1))
        assert await ctrl.wait_reconciled(lambda: bool(results), 10)
    finally:
        await ctrl.shutdown(5)
        await task
    assert ctrl.stats.errors == 0
    for form in FORMS:
        applied, status, made, first, again, second = results[form]
        assert (first, second) == ("created", "updated"), form
        _, on_server = await call(kube, "GET", f"{GADGETS}/applied-{form}")
        assert on_server["spec"]["replicas"] == 1 and on_server["status"]["readyReplicas"] == 1
        _, made_on_server = await call(kube, "GET", f"{GADGETS}/made-{form}")
        assert made_on_server["spec"]["replicas"] == 3, form
        for written in (applied, made, again):  # each holds the server's answer
            assert view_of(written)["metadata"]["uid"], (form, written)
        assert view_of(again)["spec"]["replicas"] == 3
        assert isinstance(again, {"model": Gadget, "dict": dict}.get(form, object))


async def test_ctx_status_writes_take_a_typed_model_a_kr8s_object_and_a_dict(
    kube: kr8s.asyncio.Api,
) -> None:
    """ctx.patch_status and ctx.update_status with each form (docs/controllers.md lists them
    with the helpers that take an object; a typed reconcile's ``ctx.patch_status(model,
    ...)`` raised AttributeError 'Gadget' object has no attribute 'api'): the status is on
    the server and each form ends as the server's answer."""
    await install(kube)
    for form in FORMS:
        status, body = await call(kube, "POST", GADGETS, gadget(f"s-{form}", 1))
        assert status == 201, body
    results: dict[str, Any] = {}

    async def reconcile(obj: Gadget, ctx: Context) -> None:
        if obj.metadata.name != "trigger" or results:
            return
        for form in FORMS:
            _, raw = await call(kube, "GET", f"{GADGETS}/s-{form}")
            patched = Gadget.model_validate(raw) if form == "model" else raw
            if form == "kr8s":
                patched = Gadget.kr8s_class()(raw, api=kube)
            await ctx.patch_status(patched, {"readyReplicas": 2})
            after_patch = copy.deepcopy(dict(view_of(patched)))
            if form == "model":
                assert patched.status is not None
                patched.status.ready_replicas = 3
            else:
                view = patched if isinstance(patched, dict) else patched.raw
                view["status"]["readyReplicas"] = 3
            await ctx.update_status(patched)
            results[form] = (after_patch, patched)

    ctrl = Controller(
        Gadget, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", GADGETS, gadget("trigger", 1))
        assert await ctrl.wait_reconciled(lambda: bool(results), 10)
    finally:
        await ctrl.shutdown(5)
        await task
    assert ctrl.stats.errors == 0
    for form in FORMS:
        after_patch, written = results[form]
        assert after_patch["status"]["readyReplicas"] == 2, form
        _, on_server = await call(kube, "GET", f"{GADGETS}/s-{form}")
        assert on_server["status"]["readyReplicas"] == 3, form
        answer = dict(view_of(written))
        assert answer["status"]["readyReplicas"] == 3, form
        assert answer["metadata"]["resourceVersion"] == on_server["metadata"]["resourceVersion"]
        assert isinstance(written, {"model": Gadget, "dict": dict}.get(form, object))


async def test_ctx_writes_refuse_an_object_without_a_name_naming_it(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A model or a dict without metadata.name, given to each ctx write: a ValueError
    naming its kind, namespace and the field (docs/errors.md, point 1), nothing sent; kr8s
    said only "Resource does not have a name", or raised a BoxKeyError 'metadata'."""
    await install(kube)
    results: dict[str, str] = {}
    writes: dict[str, Callable[[Context, Any], Any]] = {
        "apply": lambda ctx, o: ctx.apply(o),
        "apply_status": lambda ctx, o: ctx.apply_status(o),
        "create_or_patch": lambda ctx, o: ctx.create_or_patch(o),
        "patch_status": lambda ctx, o: ctx.patch_status(o, {"readyReplicas": 1}),
        "update_status": lambda ctx, o: ctx.update_status(o),
    }
    nameless = {
        "model": lambda: Gadget.model_validate(
            {"metadata": {"namespace": "default"}, "spec": {"image": "nginx"}}
        ),
        "model without metadata": lambda: Gadget(spec={"image": "nginx"}),
        "dict": lambda: {**gadget("x", 1), "metadata": {"namespace": "default"}},
        "dict without metadata": lambda: {
            k: v for k, v in gadget("x", 1).items() if k != "metadata"
        },
        "dict with generateName": lambda: {**gadget("x", 1), "metadata": {"generateName": "g-"}},
    }

    async def reconcile(obj: Gadget, ctx: Context) -> None:
        if results:
            return
        for write, call_it in writes.items():
            for form, build in nameless.items():
                try:
                    await call_it(ctx, build())
                except ValueError as error:
                    results[f"{write}: {form}"] = str(error)
                else:
                    results[f"{write}: {form}"] = "no error"

    ctrl = Controller(
        Gadget, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", GADGETS, gadget("trigger", 1))
        assert await ctrl.wait_reconciled(lambda: bool(results), 10)
    finally:
        await ctrl.shutdown(5)
        await task
    assert len(results) == len(writes) * len(nameless)
    for where, message in results.items():
        form = where.split(": ")[1]
        named = "Gadget in namespace default" if form in ("model", "dict") else "Gadget"
        assert message.startswith(f"{named}: metadata.name is missing"), (where, message)
        assert ("generateName is not enough" in message) == ("generateName" in form), where
    writes_sent = [r for r in apiserver.requests if r.verb in ("create", "patch", "update")]
    assert len([r for r in writes_sent if r.resource == "gadgets"]) == 1  # the trigger's POST


async def test_patch_helper_and_finalizer_refuse_a_dict_naming_it() -> None:
    """The PatchHelper patches through the object's API client, which a dict (what
    ``ctx.get`` gives without a model class) has not: a TypeError naming the object and
    what to pass instead, where ``'dict' object has no attribute 'raw'`` came out."""
    cached = stored(gadget("g1", 2))
    with pytest.raises(TypeError, match=r"^Gadget default/g1: PatchHelper takes a kr8s obj"):
        PatchHelper(cached)

    async def never(obj: Any) -> None:
        raise AssertionError("not called")

    with pytest.raises(TypeError, match=r"^Gadget default/g1: finalizer takes a kr8s object"):
        await finalizer(cached, CLEANUP, never, never)
    assert "finalizers" not in cached["metadata"]


def test_a_default_container_changed_in_place_is_written() -> None:
    """``to_raw()`` gives the fields read or set; a default list, dict or model changed in
    place (never assigned, so pydantic does not count it as set) is set too: dropping it
    lost the reconcile's change without an error."""
    from .models import Condition, Gadget, GadgetStatus, Port

    raw = {
        "apiVersion": "typed.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"image": "nginx"},
    }
    read = Gadget.from_raw(raw)
    assert read.to_raw()["spec"] == {"image": "nginx"}  # nothing changed: nothing claimed
    read.spec.ports.append(Port(name="http", container_port=80))
    read.spec.selector["app"] = "web"
    assert read.to_raw()["spec"] == {
        "image": "nginx",
        "ports": [{"name": "http", "containerPort": 80}],  # protocol: a default, not set
        "selector": {"app": "web"},
    }
    built = Gadget.from_raw(raw)
    built.status = GadgetStatus()
    built.status.conditions.append(
        Condition(type="Ready", status="True", reason="Done", message="")
    )
    status = built.to_raw()["status"]
    assert [c["type"] for c in status["conditions"]] == ["Ready"]
    assert "readyReplicas" not in status  # an unchanged default scalar stays out


def test_condition_helpers_refuse_a_model_without_status_conditions() -> None:
    """A model declaring no ``status.conditions`` has a CRD without them (the server
    prunes what a helper would set): each helper says so, naming the object, instead of
    "succeeding" (mark_ready) or failing inside (get_condition's AttributeError)."""
    from reconcile_kit.typed import CustomResource, KubeModel
    from reconcile_kit.typed import conditions as typed_conditions

    class BareSpec(KubeModel):
        image: str

    class Bare(CustomResource, group="typed.example.com", version="v1", kind="Bare"):
        spec: BareSpec

    bare = Bare(metadata={"name": "b1", "namespace": "default"}, spec={"image": "x"})
    for helper in (typed_conditions.mark_ready, typed_conditions.get_condition):
        args = ("Ready",) if helper is typed_conditions.get_condition else ()
        with pytest.raises(TypeError, match=r"^Bare default/b1: Bare declares no status"):
            helper(bare, *args)
    assert "status" not in bare.to_raw()


class PlainSpec(KubeModel):
    image: str


class Plain(CustomResource, group="plain.example.com", version="v1", kind="Plain"):
    """A kind declaring no status: its CRD has no ``status.conditions``."""

    spec: PlainSpec


@pytest.mark.parametrize(
    ("helper", "args"),
    [
        (dict_conditions.set_condition, ("Ready", "True", "Done")),
        (dict_conditions.mark_ready, ("Done",)),
        (dict_conditions.mark_not_ready, ("Failed",)),
        (dict_conditions.mark_reconciling, ("Progressing",)),
        (dict_conditions.mark_stalled, ("Failed",)),
    ],
)
async def test_top_level_condition_writers_refuse_a_model_without_status_conditions(
    kube: kr8s.asyncio.Api,
    apiserver: APIServer,
    helper: Callable[..., bool],
    args: tuple[str, ...],
) -> None:
    """``reconcile_kit.mark_ready(model, ...)`` (the helpers said to take every form) on a
    model whose class declares no ``status.conditions`` returned True and the PatchHelper
    sent the condition, which the server pruned: lost without a word. It raises the
    TypeError ``reconcile_kit.typed.conditions`` raises, and nothing is sent; a model
    that declares them gets its condition stored."""
    await install_crds(kube, Plain, Gadget)
    plain = Plain(metadata={"name": "p1", "namespace": "default"}, spec={"image": "x"})
    await plain.create(kube)
    with pytest.raises(TypeError, match=r"^Plain default/p1: Plain declares no status"):
        async with PatchHelper(plain):
            helper(plain, *args)
    assert "status" not in plain.to_raw()
    assert not apiserver.requests.filter(verb="patch")

    declared = Gadget(metadata={"name": "g1", "namespace": "default"}, spec={"image": "x"})
    await declared.create(kube)
    async with PatchHelper(declared):
        assert helper(declared, *args)
    _, on_server = await call(kube, "GET", f"{GADGETS}/g1")
    assert on_server["status"]["conditions"], "the condition reached the server"
