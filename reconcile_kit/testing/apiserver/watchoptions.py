"""A watch request's list options: decoded, defaulted and validated as kube-apiserver 1.32
does with the WatchList feature on (its default since 1.32).

* k8s.io/apimachinery ``Convert_Slice_string_To_Pointer_bool``: a present boolean
  parameter is false only for ``0`` and ``false`` (any case), true for anything else.
* ``SetListOptionsDefaults``: a watch from ``resourceVersion`` "" or "0" that names neither
  ``sendInitialEvents`` nor ``resourceVersionMatch`` becomes ``sendInitialEvents=true``,
  ``resourceVersionMatch=NotOlderThan`` (so it is a watch-list request when it allows
  bookmarks).
* ``validateWatchOptions``: the refusals and their words (422 Invalid ``ListOptions``).

What the options mean (the watch cache's ``Cacher.Watch``): ``sendInitialEvents=true``
streams the current state as ADDED whatever the resourceVersion (never 410), then, when
bookmarks are allowed, a BOOKMARK annotated ``k8s.io/initial-events-end: "true"``;
``sendInitialEvents=false`` streams changes after the resourceVersion ("" and "0": from
now).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import errors

NOT_OLDER_THAN = "NotOlderThan"


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """What a watch asks for, after kube-apiserver's defaults."""

    resource_version: str
    send_initial_events: bool | None
    bookmarks: bool

    @property
    def initial_events(self) -> bool:
        """The stream starts with the current state as ADDED events."""
        if self.send_initial_events is None:  # resourceVersionMatch unset, rv given
            return False
        return self.send_initial_events

    @property
    def watch_list(self) -> bool:
        """The initial events end with the ``k8s.io/initial-events-end`` BOOKMARK."""
        return self.initial_events and self.bookmarks


def go_bool(value: str | None) -> bool | None:
    """A boolean query parameter as apimachinery decodes it (None: absent)."""
    if value is None:
        return None
    return not (value == "0" or value.lower() == "false")


def watch_options(query: dict[str, str]) -> WatchOptions:
    """The defaulted options of a watch; 422 for the combinations kube-apiserver refuses."""
    version = query.get("resourceVersion", "")
    send = go_bool(query.get("sendInitialEvents"))
    match = query.get("resourceVersionMatch", "")
    if send is None and not match and version in ("", "0"):
        send, match = True, NOT_OLDER_THAN
    _validate(send, match, query.get("continue", ""))
    return WatchOptions(version, send, bool(go_bool(query.get("allowWatchBookmarks"))))


def _validate(send: bool | None, match: str, continue_token: str) -> None:
    causes: errors.Causes = []
    if send is not None and match != NOT_OLDER_THAN:
        causes.append(
            _forbidden(
                "resourceVersionMatch",
                f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}",
            )
        )
    if match:
        if send is None:
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is"
                    " provided",
                )
            )
        if match != NOT_OLDER_THAN:
            causes.append(
                errors.cause(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    f'Unsupported value: "{match}": supported values: "{NOT_OLDER_THAN}"',
                )
            )
        if continue_token:
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def _forbidden(field: str, detail: str) -> dict[str, str]:
    return errors.cause("FieldValueForbidden", field, f"Forbidden: {detail}")
