"""Loading, storing and deleting names: constants, locals, cells, globals,
namespace names and attributes."""
from types import CellType

from .callshape import push_with_null
from .registry import opcode
from .signals import NULL


def _unbound_local(name):
    return UnboundLocalError(
        "cannot access local variable '%s' where it is not associated with a value" % name)


def _unbound_free(name):
    return NameError(
        "cannot access free variable '%s' where it is not associated with a value"
        " in enclosing scope" % name, name=name)


def _not_defined(name):
    return NameError("name '%s' is not defined" % name, name=name)


@opcode("LOAD_CONST")
def load_const(vm, frame, ins):
    """``( -- value)`` Push ``co_consts[arg]``.

    RefGraph: a constant of the code object, never guarded (the guard pins
    the code object itself); `float_move`.
    """
    frame.stack.append(ins.argval)


@opcode("LOAD_FAST")
def load_fast(vm, frame, ins):
    """``( -- value)`` Push local variable ``arg``; ``UnboundLocalError`` if unbound.

    3.12+ also has ``LOAD_FAST_CHECK`` (this handler): CPython's plain
    ``LOAD_FAST`` skips the check where the compiler proved the variable
    bound, which changes nothing observable.
    RefGraph: records nothing (the arguments got their sources, ``Arg(i)`` or
    ``Kwarg(name)``, when the trace started); `int_load_fast` (a tracked
    local's entry follows the value onto the stack), `float_move`.
    """
    value = frame.fast[ins.argval]
    if value is NULL:
        raise _unbound_local(ins.varname)
    frame.stack.append(value)


opcode("LOAD_FAST_CHECK", since=(3, 12))(load_fast)


@opcode("LOAD_FAST_AND_CLEAR", since=(3, 12))
def load_fast_and_clear(vm, frame, ins):
    """``( -- value)`` 3.12+: push local ``arg`` (NULL if unbound) and unbind
    it.  An inlined comprehension (PEP 709) saves a variable it shadows this
    way and stores the value back with ``STORE_FAST`` afterwards; a NULL
    stored back leaves the variable unbound again.

    RefGraph: records nothing (locals are internal to the run);
    `int_load_fast` (a tracked local's entry moves onto the stack),
    `float_move`.
    """
    fast = frame.fast
    frame.stack.append(fast[ins.argval])
    fast[ins.argval] = NULL


@opcode("STORE_FAST")
def store_fast(vm, frame, ins):
    """``(value -- )`` Bind local variable ``arg``.

    RefGraph: records nothing (locals are internal to the run);
    `int_store_fast` (the local takes the top's tracked-int entry, or loses
    its own), `float_move`.
    """
    frame.fast[ins.argval] = frame.stack.pop()


@opcode("DELETE_FAST")
def delete_fast(vm, frame, ins):
    """``( -- )`` Unbind local variable ``arg``; ``UnboundLocalError`` if unbound.

    RefGraph: records nothing; `int_delete_fast` (the local loses its
    tracked-int entry).
    """
    if frame.fast[ins.argval] is NULL:
        raise _unbound_local(ins.varname)
    frame.fast[ins.argval] = NULL


@opcode("MAKE_CELL")
def make_cell(vm, frame, ins):
    """``( -- )`` Replace local slot ``arg`` by a new cell holding its value
    (an empty cell if unbound), at function entry.

    RefGraph: none; the cell is created by the run.
    """
    value = frame.fast[ins.argval]
    frame.fast[ins.argval] = CellType() if value is NULL else CellType(value)


@opcode("COPY_FREE_VARS")
def copy_free_vars(vm, frame, ins):
    """``( -- )`` Copy the function's closure cells into the last ``arg``
    local slots, at function entry.

    RefGraph: none; the cells are the function's closure (a cell of an
    outside function gets its source when ``LOAD_DEREF``/``STORE_DEREF`` use
    it).
    """
    n = ins.arg
    frame.fast[len(frame.fast) - n:] = frame.func.__closure__


@opcode("LOAD_CLOSURE", until=(3, 13))
def load_closure(vm, frame, ins):
    """``( -- cell)`` Push the cell object in slot ``arg`` (to build a closure).
    3.11/3.12; 3.13 uses ``LOAD_FAST``, which pushes the slot's cell just the same.

    RefGraph: records nothing; `float_move`.
    """
    frame.stack.append(frame.fast[ins.argval])


def _cell_error(frame, index, name):
    if index >= len(frame.fast) - len(frame.code.co_freevars):
        return _unbound_free(name)
    return _unbound_local(name)


@opcode("LOAD_DEREF")
def load_deref(vm, frame, ins):
    """``( -- value)`` Push the contents of the cell in slot ``arg``.

    An empty cell raises ``NameError`` for a free variable and
    ``UnboundLocalError`` for the function's own cell variable.
    RefGraph: rule `load_deref`: for a cell of an outside function's closure
    (``Item(Attr(function, '__closure__'), i)``), a read of its
    ``cell_contents``, guarded like any read; `float_move`.
    """
    try:
        value = frame.fast[ins.argval].cell_contents
    except ValueError:
        value = NULL
    if value is NULL:
        raise _cell_error(frame, ins.argval, ins.varname)
    frame.stack.append(value)


@opcode("STORE_DEREF")
def store_deref(vm, frame, ins):
    """``(value -- )`` Store into the cell in slot ``arg``.

    RefGraph: rule `store_deref`: for a cell of an outside function's
    closure, a write of its ``cell_contents`` (a side effect the mock
    replays).
    """
    frame.fast[ins.argval].cell_contents = frame.stack.pop()


@opcode("DELETE_DEREF")
def delete_deref(vm, frame, ins):
    """``( -- )`` Empty the cell in slot ``arg``; error if already empty.

    RefGraph: rule `delete_deref`: for a cell of an outside function's
    closure, a deletion of its ``cell_contents``.
    """
    cell = frame.fast[ins.argval]
    try:
        cell.cell_contents
    except ValueError:
        cell = NULL
    if cell is NULL:
        raise _cell_error(frame, ins.argval, ins.varname)
    del cell.cell_contents


@opcode("LOAD_GLOBAL")
def load_global(vm, frame, ins):
    """``( -- [NULL], value)`` or ``( -- value[, NULL])`` Push global ``name``,
    falling back to builtins.

    The low bit of ``arg`` (``ins.push_null``) asks for a NULL too, for a call:
    pushed before the value on 3.11/3.12, after it on 3.13
    (``callshape.push_with_null``).  ``NameError`` if the name is in neither
    namespace.  A namespace that is not exactly a dict is subscripted, its
    Python ``__getitem__``/``__missing__`` interpreted (CPython's slow path).

    RefGraph: rule `load_global`: a read of
    ``Item(<module>.__dict__, name)``, guarded by the value's kind (an
    identity guard for a function, class or module); for a builtin, a guard
    that the globals lack the name and a read of
    ``Item(builtins.__dict__, name)``; `float_move`.  Rule `getitem` for a
    namespace that is not exactly a dict (capture breaks the graph before
    such a read).
    """
    name = ins.argval
    namespace = frame.globals
    if type(namespace) is dict:
        value = namespace.get(name, NULL)
    else:  # CPython's slow path: subscription (__getitem__, __missing__)
        value = _namespace_get(vm, namespace, name)
    if value is NULL:
        value = _namespace_get(vm, frame.builtins, name)
        if value is NULL:
            raise _not_defined(name)
    if ins.push_null:
        push_with_null(frame.stack, value)
    else:
        frame.stack.append(value)


@opcode("STORE_GLOBAL")
def store_global(vm, frame, ins):
    """``(value -- )`` Bind global ``name``.

    RefGraph: rule `store_global`: a write of
    ``Item(<module>.__dict__, name)``; later reads in the run see the new
    value, and the mock replays the store.
    """
    frame.globals[ins.argval] = frame.stack.pop()


@opcode("DELETE_GLOBAL")
def delete_global(vm, frame, ins):
    """``( -- )`` Delete global ``name``; ``NameError`` if it is not bound.

    RefGraph: rule `delete_global`: a deletion of
    ``Item(<module>.__dict__, name)``.
    """
    name = ins.argval
    if name not in frame.globals:
        raise _not_defined(name)
    del frame.globals[name]


def _namespace_get(vm, mapping, name):
    """``mapping[name]`` or NULL on KeyError; a mapping that is not exactly
    a dict (a class namespace from ``__prepare__``) has its Python
    ``__getitem__``/``__missing__`` interpreted."""
    if type(mapping) is dict:
        return mapping.get(name, NULL)
    try:
        return vm.getitem(mapping, name)
    except KeyError:
        return NULL


@opcode("LOAD_NAME")
def load_name(vm, frame, ins):
    """``( -- value)`` Push ``name`` from the locals mapping, else globals,
    else builtins (module and class bodies, ``exec``).

    RefGraph: a namespace that is a dict (module globals, a class body's) is
    read natively, unrecorded; another mapping (from ``__prepare__``) through
    rule `getitem`; `float_move`.
    """
    name = ins.argval
    if frame.locals is None:
        raise SystemError("no locals when loading %r" % name)
    frame.stack.append(_load_from_mapping_or_globals(vm, frame, frame.locals, name))


def _load_from_mapping_or_globals(vm, frame, mapping, name):
    value = _namespace_get(vm, mapping, name)
    if value is NULL:
        # Globals are read with PyDict_GetItem: no subclass hook runs.
        value = dict.get(frame.globals, name, NULL)
        if value is NULL:
            value = _namespace_get(vm, frame.builtins, name)
            if value is NULL:
                raise _not_defined(name)
    return value


@opcode("LOAD_FROM_DICT_OR_GLOBALS", since=(3, 12))
def load_from_dict_or_globals(vm, frame, ins):
    """``(mapping -- value)`` 3.12+: ``LOAD_NAME`` with an explicit mapping
    instead of the frame's locals (annotation scopes of PEP 695 inside a
    class body look the class namespace up this way).

    RefGraph: as ``LOAD_NAME``: a mapping that is not a dict through rule
    `getitem`, dicts natively (unrecorded).
    """
    stack = frame.stack
    stack[-1] = _load_from_mapping_or_globals(vm, frame, stack[-1], ins.argval)


@opcode("LOAD_LOCALS", since=(3, 12))
def load_locals(vm, frame, ins):
    """``( -- mapping)`` 3.12+: push the frame's locals mapping (a class body's
    namespace), for ``LOAD_FROM_DICT_OR_DEREF``/``LOAD_FROM_DICT_OR_GLOBALS``.

    RefGraph: none (the namespace being built by the run).
    """
    if frame.locals is None:
        raise SystemError("no locals found")
    frame.stack.append(frame.locals)


def load_from_mapping_or_cell(vm, frame, ins, mapping):
    """``mapping[name]`` if present, else the contents of cell slot ``arg``."""
    value = _namespace_get(vm, mapping, ins.varname)
    if value is NULL:
        try:
            value = frame.fast[ins.argval].cell_contents
        except ValueError:
            value = NULL
        if value is NULL:
            raise _cell_error(frame, ins.argval, ins.varname)
    return value


@opcode("LOAD_FROM_DICT_OR_DEREF", since=(3, 12))
def load_from_dict_or_deref(vm, frame, ins):
    """``(mapping -- value)`` 3.12+: in a class body, load free variable
    ``name`` from the class namespace if it is there, else from its cell
    (3.11's ``LOAD_CLASSDEREF`` with the mapping on the stack).

    RefGraph: the mapping as in ``LOAD_NAME`` (rule `getitem` for one that is
    not a dict), then the cell natively (unrecorded).
    """
    stack = frame.stack
    stack[-1] = load_from_mapping_or_cell(vm, frame, ins, stack[-1])


@opcode("STORE_NAME")
def store_name(vm, frame, ins):
    """``(value -- )`` Bind ``name`` in the locals mapping.

    RefGraph: rule `setitem`: a write when the namespace is an outside
    mapping (a class body's is the run's own).
    """
    if frame.locals is None:
        raise SystemError("no locals found when storing %r" % ins.argval)
    vm.setitem(frame.locals, ins.argval, frame.stack.pop())


@opcode("DELETE_NAME")
def delete_name(vm, frame, ins):
    """``( -- )`` Delete ``name`` from the locals mapping; ``NameError`` if absent.

    RefGraph: rule `delitem`: a deletion when the namespace is an outside
    mapping.
    """
    name = ins.argval
    if frame.locals is None:
        raise SystemError("no locals when deleting %r" % name)
    try:
        vm.delitem(frame.locals, name)
        return
    except KeyError:
        pass
    raise _not_defined(name)


@opcode("LOAD_ATTR")
def load_attr(vm, frame, ins):
    """``(owner -- value)`` Push ``owner.name``; with the method bit (3.12+,
    ``ins.method``) it is 3.11's ``LOAD_METHOD``: ``(owner -- method, owner)``
    or, when no plain method applies, the attribute with a NULL
    (``(owner -- NULL, value)`` on 3.12, ``(owner -- value, NULL)`` on 3.13).

    Follows the data model: a Python ``__getattribute__``, property getter,
    descriptor ``__get__`` or ``__getattr__`` is interpreted.
    RefGraph: rule `load_attr`: on an outside ``owner``, a read of
    ``Attr(path, name)`` for an attribute found without running Python code
    (the result gets that path; an interpreted getter's own reads are
    recorded instead), or of its entry in the registry dict for an
    ``nn.Module``'s parameter, buffer or submodule, or a guard that the
    attribute is missing; with the method bit, rule `plain_method`: a read of
    ``Attr(Attr(path, name), '__func__')``; `float_reads_top` (the owner may
    not be a tracked float).
    """
    stack = frame.stack
    frame.lasti = ins.index  # for a frame proxy's f_lineno read by this load
    if ins.method:
        load_method(vm, stack, ins.argval)
    else:
        stack[-1] = vm.load_attr(stack[-1], ins.argval)


def load_method(vm, stack, name):
    """Replace the object on top by ``method, object`` when ``name`` is a plain
    function of its type that nothing shadows (so no bound method is
    created), else by the attribute and a NULL."""
    obj = stack[-1]
    func = vm.plain_method(obj, name)
    if func is not None:
        stack[-1] = func
        stack.append(obj)
    else:
        stack.pop()
        push_with_null(stack, vm.load_attr(obj, name))


@opcode("LOAD_SUPER_ATTR", since=(3, 12))
def load_super_attr(vm, frame, ins):
    """``(global_super, class, self -- value)`` or, with the method bit
    (``ins.method``), ``(global_super, class, self -- NULL, value)`` (3.12) /
    ``(... -- value, NULL)`` (3.13): ``super().name`` or ``super(class,
    self).name`` compiled without a call.

    As CPython's generic path: call ``global_super`` with ``(class, self)``
    if ``arg & 2`` (the two-argument form) or with no arguments (the
    zero-argument form; the ``super`` lookaside then reads this frame's
    first argument and ``__class__`` cell, exactly what ``super()`` does),
    then load the attribute from the ``super`` object.  A ``super``
    rebound by the program is called like any callable.
    RefGraph: rule `call` for ``super(...)``, then rule `load_attr` on the
    ``super`` object; `float_reads_top` (top 3).
    """
    stack = frame.stack
    self_ = stack.pop()
    cls = stack.pop()
    global_super = stack.pop()
    frame.lasti = ins.index
    proxy = vm.call(global_super, (cls, self_) if ins.arg & 2 else ())
    value = vm.load_attr(proxy, ins.argval)
    if ins.method:
        push_with_null(stack, value)
    else:
        stack.append(value)


@opcode("STORE_ATTR")
def store_attr(vm, frame, ins):
    """``(value, owner -- )`` ``owner.name = value``.

    A Python ``__setattr__``/``__set__``/property setter is interpreted.
    RefGraph: rule `store_attr`: on an outside object, a write of
    ``Attr(path, name)`` (later reads in the run see the new value; the mock
    replays the write); on an outside tensor, a break; `float_reads_top` (the
    stored value may be a tracked float, the owner may not).
    """
    stack = frame.stack
    owner = stack.pop()
    vm.store_attr(owner, ins.argval, stack.pop())


@opcode("DELETE_ATTR")
def delete_attr(vm, frame, ins):
    """``(owner -- )`` ``del owner.name``.

    RefGraph: rule `delete_attr`: on an outside object, a deletion of
    ``Attr(path, name)``.
    """
    vm.delete_attr(frame.stack.pop(), ins.argval)


@opcode("SETUP_ANNOTATIONS")
def setup_annotations(vm, frame, ins):
    """``( -- )`` Create ``__annotations__ = {}`` in the locals mapping if
    missing (module and class bodies with annotations).

    RefGraph: rule `getitem` for a namespace that is not a dict, and rule
    `setitem` for the store (a write when the namespace is an outside
    mapping).
    """
    ns = frame.locals
    if ns is None:
        raise SystemError("no locals found when setting up annotations")
    if _namespace_get(vm, ns, "__annotations__") is NULL:
        vm.setitem(ns, "__annotations__", {})
