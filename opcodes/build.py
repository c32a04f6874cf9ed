"""Building containers, slices and strings; unpacking."""
import sys

from .callshape import callable_at
from .registry import opcode


def pop_n(stack, n):
    """Pop the top ``n`` items, returned in stack order (deepest first)."""
    base = len(stack) - n
    items = stack[base:]
    del stack[base:]
    return items


@opcode("BUILD_TUPLE")
def build_tuple(vm, frame, ins):
    """``(item_1 ... item_n -- tuple)`` Build a tuple of the top ``arg`` items.

    RefGraph: a container created by the run; its items keep their sources
    and nodes; `float_move` (a tracked float stays tracked inside it).
    """
    frame.stack.append(tuple(pop_n(frame.stack, ins.arg)))


@opcode("BUILD_LIST")
def build_list(vm, frame, ins):
    """``(item_1 ... item_n -- list)`` Build a list of the top ``arg`` items.

    RefGraph: a container created by the run; `float_move`.
    """
    frame.stack.append(pop_n(frame.stack, ins.arg))


@opcode("BUILD_SET")
def build_set(vm, frame, ins):
    """``(item_1 ... item_n -- set)`` Build a set, adding items in order.

    RefGraph: none (a container created by the run).
    """
    frame.stack.append(set(pop_n(frame.stack, ins.arg)))


@opcode("BUILD_MAP")
def build_map(vm, frame, ins):
    """``(key_1, value_1 ... key_n, value_n -- dict)`` Build a dict of ``arg``
    pairs, inserted in order.

    RefGraph: none (a container created by the run).
    """
    items = pop_n(frame.stack, 2 * ins.arg)
    result = {}
    for i in range(0, len(items), 2):
        result[items[i]] = items[i + 1]
    frame.stack.append(result)


@opcode("BUILD_CONST_KEY_MAP")
def build_const_key_map(vm, frame, ins):
    """``(value_1 ... value_n, keys -- dict)`` Build a dict from a constant
    tuple of keys and ``arg`` values.

    RefGraph: none (a container created by the run).
    """
    stack = frame.stack
    keys = stack.pop()
    values = pop_n(stack, ins.arg)
    stack.append(dict(zip(keys, values)))


@opcode("BUILD_STRING")
def build_string(vm, frame, ins):
    """``(piece_1 ... piece_n -- str)`` Concatenate ``arg`` strings (f-strings).

    RefGraph: `text_build_string`: pieces that are text made from floats
    the graph computes make text the mock makes again (formatting them is
    ``FORMAT_VALUE``'s); `float_move`.
    """
    frame.stack.append("".join(pop_n(frame.stack, ins.arg)))


@opcode("BUILD_SLICE")
def build_slice(vm, frame, ins):
    """``(start, stop[, step] -- slice)`` Build a slice (``arg`` is 2 or 3).

    RefGraph: none (a value created by the run).
    """
    frame.stack.append(slice(*pop_n(frame.stack, ins.arg)))


@opcode("LIST_APPEND")
def list_append(vm, frame, ins):
    """``(list, [arg-1 items], value -- list, [arg-1 items])`` Append to the
    list ``arg`` entries down (list comprehensions).

    RefGraph: records nothing (the list is the run's own); `float_move`.
    """
    stack = frame.stack
    value = stack.pop()
    stack[-ins.arg].append(value)


@opcode("SET_ADD")
def set_add(vm, frame, ins):
    """``(set, [arg-1 items], value -- set, [arg-1 items])`` Add to the set
    ``arg`` entries down (set comprehensions).

    RefGraph: none (a set created by the run).
    """
    stack = frame.stack
    value = stack.pop()
    stack[-ins.arg].add(value)


@opcode("MAP_ADD")
def map_add(vm, frame, ins):
    """``(dict, [arg-1 items], key, value -- dict, [arg-1 items])`` Set
    ``dict[key] = value`` for a dict comprehension.

    RefGraph: none (a dict created by the run).
    """
    stack = frame.stack
    value = stack.pop()
    key = stack.pop()
    stack[-ins.arg][key] = value


def _not_iterable(vm, value):
    tp = type(value)
    return vm.lookup(tp, "__iter__") is vm.MISSING and vm.lookup(tp, "__getitem__") is vm.MISSING


@opcode("LIST_EXTEND")
def list_extend(vm, frame, ins):
    """``(list, [arg-1 items], iterable -- list, [arg-1 items])`` Extend the
    list ``arg`` entries down (``[*a, *b]``, star-args).

    RefGraph: rule `reads_container`: an outside iterable is read whole first
    (its length and items; an outside iterator breaks the graph); rule
    `iterate` for one that is not a list or tuple.
    """
    stack = frame.stack
    iterable = stack.pop()
    target = stack[-ins.arg]
    if type(iterable) in (list, tuple):
        target.extend(iterable)
        return
    if _not_iterable(vm, iterable):
        raise TypeError("Value after * must be an iterable, not %s" % type(iterable).__name__)
    target.extend(vm.iterate(iterable))


@opcode("SET_UPDATE")
def set_update(vm, frame, ins):
    """``(set, [arg-1 items], iterable -- set, [arg-1 items])`` Add every item
    of ``iterable`` to the set ``arg`` entries down (``{*a, *b}``).

    RefGraph: rules `reads_container` and `iterate`, as ``LIST_EXTEND``.
    """
    stack = frame.stack
    iterable = stack.pop()
    stack[-ins.arg].update(vm.iterate(iterable))


@opcode("DICT_UPDATE")
def dict_update(vm, frame, ins):
    """``(dict, [arg-1 items], mapping -- dict, [arg-1 items])`` ``dict.update``
    for ``{**a, **b}``; later keys win.

    RefGraph: rule `reads_container`: an outside mapping is read whole first
    (its keys and values); one that is not a dict goes through rules
    `load_attr` (its ``keys``), `call`, `iterate` and `getitem`.
    """
    stack = frame.stack
    mapping = stack.pop()
    target = stack[-ins.arg]
    if type(mapping) is dict:
        target.update(mapping)
        return
    try:
        keys = vm.load_attr(mapping, "keys")
    except AttributeError:
        keys = None
    if keys is None:
        raise TypeError("'%s' object is not a mapping" % type(mapping).__name__)
    for key in vm.iterate(vm.call(keys, ())):
        target[key] = vm.getitem(mapping, key)


_MERGE_KEYERROR_ESCAPES = sys.version_info < (3, 12)
"""3.11's ``format_kwargs_error`` only rewrites an unnormalized ``KeyError``."""


@opcode("DICT_MERGE")
def dict_merge(vm, frame, ins):
    """``(callable_slots, args, dict, [arg-1 items], mapping -- callable_slots,
    args, dict, [arg-1 items])`` Merge ``**mapping`` into the keyword dict
    of a call; a repeated key is a ``TypeError`` naming the callee (found
    with ``callshape.callable_at``: the slots are ``NULL, callable`` before
    3.13, ``callable, NULL`` on 3.13).  3.11 quirk: while an exception is
    being handled, the dict merge's ``KeyError(key)`` escapes unconverted
    (3.12 normalizes every exception, which ended it).

    RefGraph: as ``DICT_UPDATE``: rule `reads_container` reads an outside
    mapping whole; one that is not a dict goes through rules `load_attr`,
    `call`, `iterate` and `getitem`; a duplicate key's error message
    formats it (rule `to_str`).
    """
    stack = frame.stack
    mapping = stack.pop()
    target = stack[-ins.arg]
    func = callable_at(stack, ins.arg + 2)
    if type(mapping) is dict:
        pairs = mapping.items()
    else:
        try:
            keys = vm.load_attr(mapping, "keys")
        except AttributeError:
            keys = None
        if keys is None:
            raise TypeError("%s argument after ** must be a mapping, not %s"
                            % (vm.function_str(func), type(mapping).__name__))
        pairs = [(k, vm.getitem(mapping, k)) for k in vm.iterate(vm.call(keys, ()))]
    for key, value in pairs:
        if key in target:
            if _MERGE_KEYERROR_ESCAPES and vm.current_exception() is not None:
                # CPython's format_kwargs_error() only rewrites an unnormalized
                # KeyError, and chaining to a handled exception normalizes it.
                raise KeyError(key)
            raise TypeError("%s got multiple values for keyword argument '%s'"
                            % (vm.function_str(func), vm.to_str(key)))
        target[key] = value


@opcode("LIST_TO_TUPLE", until=(3, 12))
def list_to_tuple(vm, frame, ins):
    """``(list -- tuple)`` 3.11: convert the list built for star-args into a
    tuple (3.12+: ``CALL_INTRINSIC_1 INTRINSIC_LIST_TO_TUPLE``).

    RefGraph: none.
    """
    frame.stack[-1] = tuple(frame.stack[-1])


_CONVERSIONS = {1: "to_str", 2: "to_repr", 3: "to_ascii"}


def convert(vm, value, conversion):
    """An f-string field's ``!s``/``!r``/``!a`` conversion (1, 2, 3; 0: none)."""
    if conversion:
        return getattr(vm, _CONVERSIONS[conversion])(value)
    return value


def format_field(vm, value, spec):
    """``format(value, spec)`` for an f-string field; a str with no spec is kept."""
    if type(value) is str and not spec:
        return value
    return vm.format(value, spec)


@opcode("FORMAT_VALUE", until=(3, 13))
def format_value(vm, frame, ins):
    """``(value[, spec] -- str)`` 3.11/3.12: format one f-string field:
    convert with ``str``/``repr``/``ascii`` (``arg & 3``), then
    ``format(value, spec)`` (spec on the stack if ``arg & 4``).  3.13 splits
    it into ``CONVERT_VALUE``, ``FORMAT_SIMPLE`` and ``FORMAT_WITH_SPEC``.

    ``__str__``/``__repr__``/``__format__`` written in Python are interpreted.
    RefGraph: rule `format` (and the conversion's, ``vm.to_str``...): C
    code that formats a container reads it through and through (its items
    guarded); formatting a tensor reads its data, which breaks the graph
    (rule `torch_function`); `float_move`: a float the graph computes is
    formatted into text the mock makes again (the rules above,
    ``pyinterp/capture/values/float_text.py``).
    """
    stack = frame.stack
    spec = stack.pop() if ins.arg & 4 else ""
    value = convert(vm, stack.pop(), ins.arg & 3)
    stack.append(format_field(vm, value, spec))


@opcode("UNPACK_SEQUENCE")
def unpack_sequence(vm, frame, ins):
    """``(seq -- item_n ... item_1)`` Unpack exactly ``arg`` items, pushed so
    that the first item is on top.

    RefGraph: rule `reads_container`: an outside sequence is read whole first
    (a length guard and ``Item(path, i)`` for each item); rule `unpack` for
    one that is not a list or tuple of ``arg`` items; `float_reads_top` (the
    items may be tracked floats).
    """
    stack = frame.stack
    seq = stack.pop()
    n = ins.arg
    if type(seq) in (tuple, list) and len(seq) == n:
        stack.extend(reversed(seq))
        return
    stack.extend(reversed(vm.unpack(seq, n, -1)))


@opcode("UNPACK_EX")
def unpack_ex(vm, frame, ins):
    """``(seq -- after_m ... list, ... before_1)`` Starred unpacking: ``arg &
    0xFF`` items before the star, ``arg >> 8`` after; the star gets a list.

    RefGraph: as ``UNPACK_SEQUENCE``: rules `reads_container` and `unpack`
    read an outside sequence whole (its exact length, not a minimum).
    """
    stack = frame.stack
    seq = stack.pop()
    stack.extend(reversed(vm.unpack(seq, ins.arg & 0xFF, ins.arg >> 8)))
