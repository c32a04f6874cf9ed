"""Tables of values the capture follows by identity (tracked floats, text
made from them): the values are kept alive for the whole capture, so an id
is never reused while the table lives."""


class IdentityTable:
    """``id -> entry`` for values of the exact types ``TYPES``; an entry's
    first item is the value itself (which keeps it alive)."""

    TYPES = ()

    def __init__(self):
        self._entries = {}

    def __bool__(self):
        return bool(self._entries)

    def tracks(self, value):
        return type(value) in self.TYPES and id(value) in self._entries

    def carried(self, value):
        """True if ``value`` is, or contains (tuples, lists, dicts), a value
        of this table."""
        tp = type(value)
        if tp in self.TYPES:
            return id(value) in self._entries
        if tp in (tuple, list):
            return any(self.carried(v) for v in value)
        if tp is dict:
            return any(self.carried(v) for v in value.values())
        return False
