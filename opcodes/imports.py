"""Import statements."""
from .registry import opcode


@opcode("IMPORT_NAME")
def import_name(vm, frame, ins):
    """``(level, fromlist -- module)`` ``__import__(name, globals, locals,
    fromlist, level)`` using the frame's ``builtins.__import__``.

    A newly imported module's body runs natively (it is executed by the
    import system, a C entry point).
    RefGraph: rule `call` calls ``__import__`` (a C function, classified as
    any native call).
    """
    stack = frame.stack
    fromlist = stack.pop()
    level = stack[-1]
    importer = frame.builtins.get("__import__")
    if importer is None:
        raise ImportError("__import__ not found")
    frame.lasti = ins.index
    stack[-1] = vm.call(importer, (ins.argval, frame.globals, frame.locals, fromlist, level))


@opcode("IMPORT_FROM")
def import_from(vm, frame, ins):
    """``(module -- module, attr)`` Push ``module.name`` for ``from module
    import name``, falling back to the submodule ``sys.modules[pkg.name]``.

    RefGraph: rule `load_attr` (through ``vm.import_from``): on an outside
    module, a read of ``Attr(path, name)``.
    """
    frame.stack.append(vm.import_from(frame.stack[-1], ins.argval))
