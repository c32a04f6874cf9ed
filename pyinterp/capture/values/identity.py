"""Tables of values the capture follows by identity (tracked floats, text
made from them; NumPy arrays, :mod:`.arrays`): the values are kept alive for
the whole capture, so an id is never reused while the table lives.  Also
the rule they share for stores (:func:`stored_where_unseen`)."""


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

    def _held(self, value):
        """True if ``value`` is one of the table's values, False if it is of
        the table's kind but not one, None for a value of any other kind
        (containers are looked into by :meth:`carried`)."""
        if type(value) in self.TYPES:
            return id(value) in self._entries
        return None

    def carried(self, value):
        """True if ``value`` is, or contains (tuples, lists, dicts, at any
        depth), a value of this table.  A container met twice (a list that
        holds itself) is looked into once."""
        held = self._held(value)
        if held is not None:
            return held
        tp = type(value)
        if tp is not tuple and tp is not list and tp is not dict:
            return False
        seen = set()
        todo = [value]
        while todo:
            value = todo.pop()
            held = self._held(value)
            if held:
                return True
            tp = type(value)
            if held is None and (tp is tuple or tp is list or tp is dict) \
                    and id(value) not in seen:
                seen.add(id(value))
                todo.extend(value.values() if tp is dict else value)
        return False


STORES = frozenset({"STORE_ATTR", "STORE_SUBSCR"})


def stored_where_unseen(cap, table, name, stack):
    """A value of ``table`` (tracked floats, or NumPy arrays) stored into an
    object where ``table.carried`` would not find it again: an attribute
    of one of the run's own objects, or an item of a container other than
    a list or dict (a later native call could read it unchecked).  Outside
    objects are fine: the store is replayed by the mock, and native calls
    on them break anyway."""
    value, owner = (stack[-2], stack[-1]) if name == "STORE_ATTR" else (stack[-3], stack[-2])
    if not table.carried(value) or cap.recording.refgraph.is_outside(owner):
        return False
    return name == "STORE_ATTR" or type(owner) not in (list, dict)
