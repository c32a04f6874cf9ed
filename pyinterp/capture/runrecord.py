"""What the run log (:mod:`.runlog`) says about one capture: an ``entry``
record, a JSON-able dict.

* ``function``: the traced function's ``qualname``, ``file``, ``first``
  line and source ``lines`` (a module's ``forward``'s; a resume function's
  are its user function's);
* ``time`` (seconds since pyinterp's import, when the miss began),
  ``seconds`` (the capture's length), ``cache_size`` (the callable's
  entries after it), ``native`` (the entry runs the function natively);
* ``recompile``: why each earlier entry missed (:func:`.guardfail.reason`,
  as the ``recompiles`` log says it), empty on a first call;
* ``graphs``: each graph's ``nodes``: ``name``, ``op`` (placeholder,
  call_function, ..., output), ``label`` (the op's name), ``args`` (the
  names of the nodes it reads), ``meta`` (dtype and shape) and ``stack``
  (the user's ``[file, line]`` frames that made it, outermost first,
  torch's own left out);
* ``sources``: the other user functions those stacks run in (as
  ``function``);
* ``breaks``: ``kind``, ``message``, ``file``, ``line``, ``source`` (the
  line's text) and ``hint``;
* ``specializations``: ``text`` (:func:`.specialized.specialized`),
  ``file``, ``line``;
* ``guards``: every guard as Python (:func:`.guardfail.guard_text`) with
  its ``file``, ``line`` and ``source``;
* ``raised``: the capture's exception (``Type: message``), when it raised
  (a ``fullgraph`` break's is also in ``breaks``).
"""
import inspect
import linecache
import os


def entry_record(name, code, time, seconds, entry, count, reasons, error=None):
    """The record of a capture of the function ``name`` (its code object
    ``code``, or None) that began ``time`` seconds after pyinterp's import
    and took ``seconds``; ``entry`` is the new cache entry (None when the
    capture raised ``error``)."""
    record = {"event": "entry", "pid": os.getpid(), "time": round(time, 6),
              "seconds": round(seconds, 6), "function": _function(name, code),
              "cache_size": count, "recompile": list(reasons), "native": False,
              "graphs": [], "sources": [], "breaks": [], "specializations": [], "guards": []}
    if entry is None:
        record["raised"] = "%s: %s" % (type(error).__name__, error) if error else "?"
        if getattr(error, "kind", None) is not None:
            record["breaks"] = [_break(error)]
        return record
    trace = entry.trace
    record["native"] = bool(entry.native)
    sources = {}
    record["graphs"] = [{"nodes": [_node(n, sources) for n in gm.graph.nodes]}
                        for gm in trace.graphs]
    if code is not None:
        sources.pop((code.co_filename, code.co_firstlineno), None)
    record["sources"] = [_function(c.co_qualname, c) for c in sources.values()]
    record["breaks"] = [_break(b) for b in trace.breaks]
    record["specializations"] = [_sited(g, {"text": text})
                                 for g, text in _specialized(trace)]
    record["guards"] = [_sited(g, {"text": _guard_text(g, trace.param_names)})
                        for g in trace.guards]
    return record


def _specialized(trace):
    from .specialized import specialized

    return specialized(trace.guards, trace.param_names)


def _guard_text(guard, names):
    from .guardfail import guard_text

    return guard_text(guard, names)


def _function(name, code):
    if code is None:
        return {"qualname": name, "file": None, "first": None, "lines": []}
    first = code.co_firstlineno
    lines = linecache.getlines(code.co_filename)
    block = inspect.getblock(lines[first - 1:]) if 0 < first <= len(lines) else []
    return {"qualname": name, "file": code.co_filename, "first": first,
            "lines": [line.rstrip("\n") for line in block]}


def _node(node, sources):
    from .explain_text import op_name
    from .torchfiles import is_torch_file

    stack = []
    for code, _, line, _ in node.meta.get("pyinterp_stack") or ():
        if not is_torch_file(code.co_filename):
            stack.append([code.co_filename, line])
            sources.setdefault((code.co_filename, code.co_firstlineno), code)
    return {"name": node.name, "op": node.op,
            "label": node.name if node.op in ("placeholder", "output") else op_name(node),
            "args": [a.name for a in node.all_input_nodes], "meta": _meta(node),
            "stack": stack}


def _meta(node):
    meta = node.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "shape"):
        return ""
    return "%s%s" % (str(meta.dtype).replace("torch.", ""), list(meta.shape))


def _break(record):
    from .explain_text import source_line

    return {"kind": record.kind, "message": record.message, "file": record.filename,
            "line": record.lineno, "source": source_line(record.filename, record.lineno),
            "hint": record.hint}


def _sited(guard, out):
    from .explain_text import source_line

    site = guard.site or (None, None)
    out.update(file=site[0], line=site[1], source=source_line(*site))
    return out
