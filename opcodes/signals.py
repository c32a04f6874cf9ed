"""Non-jump results a handler can return to the run loop."""


class Signal:
    """A named singleton the run loop reacts to (never an ``int``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


RETURN = Signal("RETURN")
"""The frame returned; its value is in ``frame.retval``."""
YIELD = Signal("YIELD")
"""The frame yielded ``frame.retval`` and is suspended after the yield."""
GENERATOR = Signal("GENERATOR")
"""``RETURN_GENERATOR``: the frame becomes a generator/coroutine body."""


class _Null:
    """CPython's NULL stack entry (before a callable, or an unbound local)."""

    __slots__ = ()

    def __repr__(self):
        return "NULL"

    def __bool__(self):
        raise AssertionError("NULL must never be used as a value")


NULL = _Null()
