"""Structural pattern matching (``match``/``case``)."""
import sys

from .registry import opcode

_NOT_A_CLASS = "called match pattern must be a %s" % (
    "type" if sys.version_info < (3, 12) else "class")  # CPython's wording changed in 3.12

_TPFLAGS_SEQUENCE = 1 << 5
_TPFLAGS_MAPPING = 1 << 6
_TPFLAGS_MATCH_SELF = 1 << 22


@opcode("MATCH_MAPPING")
def match_mapping(vm, frame, ins):
    """``(subject -- subject, bool)`` Is the subject's type a mapping
    (``Py_TPFLAGS_MAPPING``: dict, ``collections.abc.Mapping``...)?

    RefGraph: none; the test reads the subject's type, which a read from
    outside already guards.
    """
    frame.stack.append(bool(type(frame.stack[-1]).__flags__ & _TPFLAGS_MAPPING))


@opcode("MATCH_SEQUENCE")
def match_sequence(vm, frame, ins):
    """``(subject -- subject, bool)`` Is the subject's type a sequence for
    matching (``Py_TPFLAGS_SEQUENCE``: list, tuple, ``Sequence``; not str)?

    RefGraph: none; the test reads the subject's type, which a read from
    outside already guards.
    """
    frame.stack.append(bool(type(frame.stack[-1]).__flags__ & _TPFLAGS_SEQUENCE))


@opcode("MATCH_KEYS")
def match_keys(vm, frame, ins):
    """``(subject, keys -- subject, keys, values_or_None)`` Mapping pattern:
    look up every key with ``subject.get(key, <dummy>)``; push the tuple of
    values, or None if a key is missing.  A repeated key is a ``ValueError``.

    RefGraph: rules `load_attr` (the subject's ``get``) and `call` (on an
    outside dict, each ``get`` is a key guard and a read of
    ``Item(path, key)``); a duplicate key's error message formats it
    (rule `to_repr`).
    """
    stack = frame.stack
    keys = stack[-1]
    subject = stack[-2]
    if not keys:
        stack.append(())
        return
    get = vm.load_attr(subject, "get")
    dummy = object()
    seen = set()
    values = []
    for key in keys:
        if key in seen:
            raise ValueError("mapping pattern checks duplicate key (%s)" % vm.to_repr(key))
        seen.add(key)
        value = vm.call(get, (key, dummy))
        if value is dummy:
            stack.append(None)
            return
        values.append(value)
    stack.append(tuple(values))


def _match_class_attr(vm, subject, cls, name, seen):
    if name in seen:
        raise TypeError("%s() got multiple sub-patterns for attribute %s"
                        % (cls.__name__, vm.to_repr(name)))
    seen.add(name)
    try:
        return vm.load_attr(subject, name)
    except AttributeError:
        return _NO_MATCH


_NO_MATCH = object()


def _match_class(vm, subject, cls, nargs, names):
    if not isinstance(cls, type):
        raise TypeError(_NOT_A_CLASS)
    if not vm.isinstance(subject, cls):
        return None
    seen = set()
    attrs = []
    if nargs:
        match_self = False
        try:
            match_args = vm.load_attr(cls, "__match_args__")
        except AttributeError:
            match_args = ()
            match_self = bool(cls.__flags__ & _TPFLAGS_MATCH_SELF)
        if type(match_args) is not tuple:
            raise TypeError("%s.__match_args__ must be a tuple (got %s)"
                            % (cls.__name__, type(match_args).__name__))
        allowed = 1 if match_self else len(match_args)
        if allowed < nargs:
            raise TypeError("%s() accepts %d positional sub-pattern%s (%d given)"
                            % (cls.__name__, allowed, "" if allowed == 1 else "s", nargs))
        if match_self:
            attrs.append(subject)
        else:
            for name in match_args[:nargs]:
                if type(name) is not str:
                    raise TypeError("__match_args__ elements must be strings (got %s)"
                                    % type(name).__name__)
                attr = _match_class_attr(vm, subject, cls, name, seen)
                if attr is _NO_MATCH:
                    return None
                attrs.append(attr)
    for name in names:
        attr = _match_class_attr(vm, subject, cls, name, seen)
        if attr is _NO_MATCH:
            return None
        attrs.append(attr)
    return tuple(attrs)


@opcode("MATCH_CLASS")
def match_class(vm, frame, ins):
    """``(subject, cls, names -- attrs_or_None)`` Class pattern with ``arg``
    positional sub-patterns (mapped through ``cls.__match_args__``) and
    keyword ``names``: an ``isinstance`` check, then the attributes as a
    tuple, or None if the check fails or an attribute is missing.

    RefGraph: rule `load_attr` reads ``__match_args__`` and the subject's
    attributes (``Attr(path, name)`` on an outside subject); the
    ``isinstance`` test reads the subject's type, which a read from outside
    already guards; an error message formats a name (rule `to_repr`).
    """
    stack = frame.stack
    names = stack.pop()
    cls = stack.pop()
    stack[-1] = _match_class(vm, stack[-1], cls, ins.arg, names)
