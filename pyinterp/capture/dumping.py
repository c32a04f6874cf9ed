"""Generated code as real files, for debuggers and tracebacks (as depyf
does for Dynamo).

With ``PYINTERP_DUMP_DIR=dir`` in the environment, or after
``pyinterp.dump_to(dir)`` (also a context manager), every cache entry a
miss makes is written to ``dir`` as Python files, and the entry's code
objects are pointed at them (``co_filename``; the line numbers are already
those of the text):

* ``NAME.entryN.guard.py`` and ``NAME.entryN.mock.py``: the guard and the
  mock, their listings (one statement a line, as ``explain`` shows them);
* ``NAME.entryN.graphK.py``: the FX graph's generated ``forward``
  (``GraphModule.code``; the function the ``"eager"`` backend runs, so
  its frames show these lines; a compiling backend runs its own code);
* ``NAME.entryN.resume_at_lineL.py``: a resume function of a split entry:
  the user's function, at its own line numbers (the rest of its file is
  left out), entered after line ``L``.

``NAME`` is the traced function's qualified name, ``N`` counts its entries
written to ``dir`` by this process (a later run writes over them).  A debugger stops in them (``b file:line`` in pdb),
``sys.settrace`` sees their lines, and tracebacks print them.  With the
switch off (the default) nothing is written and nothing changes.
"""
import inspect
import itertools
import linecache
import os
import re
import types
import warnings

from .. import config

_serials = {}  # (directory, NAME) -> its counter of entries
_graph_files = set()  # the files of dumped graphs (see hit_tracebacks)


class dump_to(config.DirectorySetting):
    """``pyinterp.dump_to(dir)``: write each new cache entry's generated
    code to ``dir`` from now on (``None``: stop).  As a context manager,
    the previous setting comes back when the block ends."""

    name = "dump_dir"


def is_graph_file(filename):
    """Whether ``filename`` is a dumped graph's (its ``forward`` runs there)."""
    return filename in _graph_files


def write_entry(fn, trace):
    """Write the new entry's code (``trace``: its :class:`TraceResult`) to
    the dump directory and point the code objects at the files; returns
    ``{kind: path}`` (empty when the switch is off).  A file that cannot be
    written is a warning, never a failed call (nor a different result: the
    code objects change their file name only)."""
    directory = config.dump_dir
    if not directory:
        return {}
    try:
        return _write_entry(directory, fn, trace)
    except Exception as e:  # noqa: BLE001 - the call goes on: dumping is for reading
        warnings.warn("pyinterp: cannot dump generated code to %s (%s: %s)"
                      % (directory, type(e).__name__, e), RuntimeWarning, stacklevel=3)
        return {}


def _write_entry(directory, fn, trace):
    os.makedirs(directory, exist_ok=True)
    name = _name_of(fn)
    counter = _serials.setdefault((directory, name), itertools.count(1))
    stem = os.path.join(directory, "%s.entry%d." % (name, next(counter)))
    files = {}
    moved = {}  # old code object -> its retargeted copy
    for k, gm in enumerate(trace.graphs):
        path = _write_graph(gm, stem + "graph%d.py" % k, moved)
        if path:
            files["graph%d" % k] = path
    for kind in ("guard", "mock"):
        function = getattr(trace, kind)
        listing = getattr(trace, kind + "_listing")
        if isinstance(function, types.FunctionType) and listing is not None \
                and _fits(function.__code__, listing()):
            files[kind] = _write(stem + kind + ".py", listing())
            _retarget(function, files[kind], moved)
    mock = trace.mock
    if isinstance(mock, types.FunctionType):
        if getattr(mock, "graph_code", None) in moved:
            mock.graph_code = moved[mock.graph_code]  # (graph_raised compares codes)
        for resume in _resumes_of(mock):
            path = _write_resume(resume, stem, directory, moved)
            if path:
                files[os.path.basename(path)[len(os.path.basename(stem)):-3]] = path
    trace.dump_files = files
    return files


def _name_of(fn):
    name = getattr(fn, "__qualname__", None)
    if not isinstance(name, str):
        name = type(fn).__qualname__
    name = re.sub(r"<resume at line (\d+)>", r"resume_at_line\1", name)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "fn"


def _write(path, text):
    if not text.endswith("\n"):
        text += "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    linecache.checkcache(path)  # (a file written before under this name)
    return path


def _fits(code, text):
    """Whether ``text`` has every line ``code`` reports, each with text (a
    listing that is not the code's is never written in its place)."""
    lines = text.split("\n")
    return all(line is None or 0 < line <= len(lines) and lines[line - 1].strip()
               for _, _, line in code.co_lines())


def _retarget(function, path, moved):
    """``function`` (and the code nested in it) now runs from ``path``."""
    old = function.__code__
    new = moved[old] = _with_filename(old, path)
    function.__code__ = new


def _with_filename(code, path):
    consts = tuple(_with_filename(c, path) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def _write_graph(gm, path, moved):
    """The graph's ``forward`` source, its function pointed at it (the
    lines of ``GraphModule.code`` are those of its compiled ``forward``)."""
    forward = type(gm).__dict__.get("forward")
    text = getattr(gm, "code", None)
    if not isinstance(forward, types.FunctionType) or not isinstance(text, str) \
            or not _fits(forward.__code__, text):
        return None
    _write(path, text)
    _retarget(forward, path, moved)
    _graph_files.add(path)
    return path


def _resumes_of(mock):
    """The resume functions a split entry's mock calls (the traced wrappers
    in its globals that ``partial.resume`` marked with the code they resume)."""
    for value in mock.__globals__.values():
        if getattr(type(value), "_pyinterp_constant", False):  # (pyinterp's own: Traced)
            own = getattr(value, "__dict__", {})
            function = own.get("__wrapped__")
            if isinstance(own.get("resumes"), types.CodeType) \
                    and isinstance(function, types.FunctionType):
                yield function


def _write_resume(function, stem, directory, moved):
    """The resume function's file: its lines are the user's function's, at
    their own line numbers (the rest of the user's file is left blank), and
    a note on the lines above or below it."""
    code = function.__code__
    if os.path.dirname(code.co_filename) == directory:
        return None  # (dumped with an earlier entry: the resume functions are cached)
    lines = linecache.getlines(code.co_filename)
    first = code.co_firstlineno
    if not lines or first > len(lines):
        return None  # (no source: nothing to show)
    block = inspect.getblock(lines[first - 1:])
    last = first - 1 + len(block)
    entered = re.search(r"<resume at line (\d+)>", code.co_qualname)
    note = ["# pyinterp: resume function %s" % code.co_qualname,
            "# %s, lines %d-%d, entered after line %s; its arguments are the"
            % (code.co_filename, first, last, entered.group(1) if entered else "?"),
            "# stack after that line's call (%s), then the live locals."
            % ", ".join(n for n in code.co_varnames[:code.co_argcount]
                        if n.startswith("__stack"))]
    body = [""] * (first - 1) + [line.rstrip("\n") for line in block]
    if len(note) < first:
        body[:len(note)] = note
    else:
        body += [""] + note
    path = stem + "resume_at_line%s.py" % (entered.group(1) if entered else first)
    _write(path, "\n".join(body))
    _retarget(function, path, moved)
    return path
