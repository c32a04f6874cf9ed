"""Tracebacks of exceptions raised on a cache hit, with the user's frames.

On a hit the guard passes and the mock runs natively: it calls the compiled
graph and replays the run's effects.  An exception raised there would show
the mock (``<pyinterp-mock-N>``) and the graph's generated ``forward``
(``<eval_with_key>.N``), not the line of the user's code that eager
execution would name.  Every FX node the capture records carries where the
user's code made it (``node.meta["pyinterp_stack"]``, see
``state._NodeSites``); :func:`user_facing_hit` finds the node of the
``forward`` line that raised and puts real stub frames of the user's code
(:mod:`pyinterp.interp.stubframes`) in place of the mock's and the graph's
frames, as if the op had raised in eager execution (the frames below it,
torch's own Python, stay).  An exception of the mock itself (replaying an
effect) keeps the mock's frame, whose lines are registered with
``linecache``: each statement names the user's ``file:line`` it replays.

Graphs compiled by a backend that does not run the FX ``forward`` (Inductor)
have no such line: their frames are kept as they are.
"""
import types

from ..codegen.function import register_source
from ..interp.stubframes import stub_frame
from ..interp.tracebacks import user_facing
from .dumping import is_graph_file

_FX_FILE_PREFIX = "<eval_with_key>"


def user_facing_hit(exc, entry):
    """Rewrite ``exc``'s traceback (raised while ``entry``'s mock ran) for
    the user; then drop pyinterp's own frames as for any exception."""
    mock = getattr(entry, "mock", None)
    mock_code = getattr(mock, "__code__", None)
    if mock_code is not None and _passes_through(exc.__traceback__, mock_code):
        _expand_graph_frames(exc, mock_code, entry)
    return user_facing(exc)


def _passes_through(tb, code):
    while tb is not None:
        if tb.tb_frame.f_code is code:
            return True
        tb = tb.tb_next
    return False


def _expand_graph_frames(exc, mock_code, entry):
    entries = []
    expanded = False
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        stack = _node_stack(frame, tb.tb_lineno)
        if stack:
            entries.extend(_stub_entries(stack))
            expanded = True
        else:
            entries.append((frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    if expanded:
        entries = [e for e in entries if e[0].f_code is not mock_code]
    else:
        trace = entry.trace
        listing = getattr(trace, "mock_listing", None)
        if listing is not None:
            name = register_source(mock_code.co_filename, listing())
            owned = getattr(trace, "lines", None)
            if owned is not None and name not in owned:
                owned.append(name)  # (dropped with the entry: sourcelines)
    result = None
    for frame, lasti, lineno in reversed(entries):
        result = types.TracebackType(result, frame, lasti, lineno)
    exc.__traceback__ = result


def _node_stack(frame, lineno):
    """The user's stack of the FX node whose line of a GraphModule's
    generated ``forward`` is running in ``frame``, or None."""
    code = frame.f_code
    if not code.co_filename.startswith(_FX_FILE_PREFIX) \
            and not is_graph_file(code.co_filename):
        return None
    gm = frame.f_locals.get("self")
    lines = getattr(gm, "_lineno_map", None)
    if not lines:
        return None
    index = lines.get(lineno - code.co_firstlineno)
    if index is None:
        return None
    for i, node in enumerate(gm.graph.nodes):
        if i == index:
            return node.meta.get("pyinterp_stack")
    return None


def _stub_entries(stack):
    for code, offset, line, globals_ in stack:
        frame, shift = stub_frame(code, globals_ if isinstance(globals_, dict) else {}, offset, {})
        yield frame, offset + shift, line if line is not None else -1
