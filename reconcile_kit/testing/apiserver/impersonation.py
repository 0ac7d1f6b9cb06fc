"""User impersonation: the ``Impersonate-User``, ``-Group``, ``-Uid`` and ``-Extra-<key>``
headers (kubectl ``--as``, ``--as-group``, ``--as-uid``), as k8s.io/apiserver
endpoints/filters/impersonation.go (1.32) applies them after authentication: the
requester must be allowed to ``impersonate`` each thing it asks to act as, and the request
then runs as the impersonated user.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from multidict import CIMultiDictProxy

from ...meta.validation import dns1123_label_errors, dns1123_subdomain_errors
from .authn import AUTHENTICATED, User
from .rbac import Attributes, forbidden

__all__ = ["NoUserImpersonated", "impersonate"]

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA = "impersonate-extra-"
AUTHENTICATION = "authentication.k8s.io"
ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
_SA_PREFIX = "system:serviceaccount:"

Decide = Callable[[Attributes], tuple[bool, str]]


class NoUserImpersonated(Exception):
    """Groups, extras or a uid asked for without a user: Go's plain-text 500."""

    def __init__(self, asks: Sequence[Ask]) -> None:
        super().__init__(
            f"requested [{' '.join(a.go_value() for a in asks)}] without impersonating a user"
        )


@dataclass(frozen=True)
class Ask:
    """One impersonation request (Go builds a core/v1 ObjectReference)."""

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go_value(self) -> str:
        """``%v`` of the ObjectReference (Kind, Namespace, Name, UID, APIVersion,
        ResourceVersion, FieldPath)."""
        fields = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(fields) + "}"


def _service_account(username: str) -> tuple[str, str] | None:
    """serviceaccount.SplitUsername: (namespace, name) of a valid ServiceAccount user."""
    if not username.startswith(_SA_PREFIX):
        return None
    parts = username[len(_SA_PREFIX) :].split(":")
    if len(parts) != 2 or dns1123_label_errors(parts[0]) or dns1123_subdomain_errors(parts[1]):
        return None
    return parts[0], parts[1]


def asks(headers: CIMultiDictProxy[str]) -> list[Ask]:
    """buildImpersonationRequests: the user, each group, each extra value, the uid."""
    found: list[Ask] = []
    user = headers.get(USER, "")
    if user:
        account = _service_account(user)
        found.append(
            Ask("ServiceAccount", account[1], account[0]) if account else Ask("User", user)
        )
    found += [Ask("Group", group) for group in headers.getall(GROUP, [])]
    for header, value in headers.items():
        if header.lower().startswith(EXTRA):
            key = unquote(header.lower()[len(EXTRA) :])
            found.append(Ask("UserExtra", value, "", f"{AUTHENTICATION}/v1", key))
    uid = headers.get(UID, "")
    if uid:
        found.append(Ask("UID", uid, "", f"{AUTHENTICATION}/v1"))
    if found and not user:
        raise NoUserImpersonated(found)
    return found


def _attributes(requester: User, ask: Ask) -> Attributes:
    """What the requester must be allowed: ``impersonate`` the thing asked for."""
    resource, subresource, group = {
        "ServiceAccount": ("serviceaccounts", "", ""),
        "User": ("users", "", ""),
        "Group": ("groups", "", ""),
        "UserExtra": ("userextras", ask.field_path, AUTHENTICATION),
        "UID": ("uids", "", AUTHENTICATION),
    }[ask.kind]
    return Attributes(
        requester, "impersonate", True, group, resource, subresource, ask.namespace, ask.name
    )


def impersonate(requester: User, headers: CIMultiDictProxy[str], decide: Decide | None) -> User:
    """The user a request acts as: ``requester`` itself without impersonation headers,
    else the impersonated user (403 when ``decide`` refuses one of the asks; None: every
    ask allowed, as AlwaysAllow)."""
    found = asks(headers)
    if not found:
        return requester
    for ask in found:
        attributes = _attributes(requester, ask)
        allowed, reason = decide(attributes) if decide else (True, "")
        if not allowed:
            raise forbidden(attributes, reason)
    return _impersonated(found, GROUP in headers)


def _impersonated(found: list[Ask], groups_given: bool) -> User:
    name, uid, groups = "", "", []
    extra: dict[str, list[str]] = {}
    for ask in found:
        if ask.kind == "ServiceAccount":
            name = f"{_SA_PREFIX}{ask.namespace}:{ask.name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{ask.namespace}"]
        elif ask.kind == "User":
            name = ask.name
        elif ask.kind == "Group":
            groups.append(ask.name)
        elif ask.kind == "UserExtra":
            extra.setdefault(ask.field_path, []).append(ask.name)
        else:
            uid = ask.name
    groups += _implied_group(name, groups)
    extras = tuple((key, tuple(values)) for key, values in sorted(extra.items()))
    return User(name, tuple(groups), uid, extras)


def _implied_group(name: str, groups: list[str]) -> list[str]:
    """system:authenticated (system:unauthenticated for system:anonymous) unless present."""
    if name == ANONYMOUS:
        return [] if UNAUTHENTICATED in groups else [UNAUTHENTICATED]
    return [] if AUTHENTICATED in groups or UNAUTHENTICATED in groups else [AUTHENTICATED]
