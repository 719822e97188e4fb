"""JSON Merge Patch (RFC 7386), the meaning of ``modify``.

A hook never has to apply a patch: the host does. These two functions are
here because hooks often want to reason about one: ``apply`` shows what the
next hook will see, and ``diff`` turns "here is the whole object as I want
it" (PicoClaw's style) into the smallest patch, which composes better with
other hooks' rewrites.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["apply", "diff"]


def apply(target: Any, patch: Any) -> Any:
    """Return ``target`` with ``patch`` applied; neither argument is changed."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply(result.get(key), value)
    return result


def diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The smallest merge patch that turns ``before`` into ``after``.

    Removed members become ``null``. A member whose new value is ``null``
    cannot be expressed (``null`` always deletes), so it is deleted instead.
    """
    patch: dict[str, Any] = {}
    for key in before:
        if key not in after:
            patch[key] = None
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old is not _MISSING and _same(old, value):
            continue
        if isinstance(value, dict) and isinstance(old, dict):
            patch[key] = diff(old, value)
        else:
            patch[key] = copy.deepcopy(value)
    return patch


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    # 1 and 1.0 (and True and 1) are different JSON values.
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
