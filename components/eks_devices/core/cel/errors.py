"""The one error CEL raises here: an expression that does not compile, or fails or is not a bool when
evaluated (the scheduler fails the allocation on it, the API server refuses the object)."""

from __future__ import annotations


class CelError(ValueError):
    """A CEL expression that does not compile, or fails or is not a bool when evaluated."""
