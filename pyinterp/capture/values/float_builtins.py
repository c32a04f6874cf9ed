"""Builtins that take a Python float the graph computes without a break.

:meth:`.interpreter.CaptureInterpreter.divert_call` asks :func:`divert`
first on every call while tracked floats exist: ``max``/``min`` of two
floats (:mod:`.float_minmax`), ``round(s, n)``, ``str``/``repr``/
``ascii``/``format`` and a str's ``format`` method (derived text,
:mod:`.float_text`).  A call they do not model goes on to the checks of
:mod:`.scalars` and :mod:`.float_text`, which break where the callee would
consume the float.

Records: none of its own (see the modules it dispatches to).
"""
from . import float_minmax, float_text


def divert(cap, fn, args, kwargs):
    """The function ``(vm, fn, args, kwargs)`` that makes this call with
    the result tracked, or None when it is not one of these."""
    if fn is max or fn is min:
        return float_minmax.call if float_minmax.accepts(cap, fn, args, kwargs) else None
    if fn is round:
        return float_text.round_call if float_text.accepts_round(cap, args, kwargs) else None
    if fn is str or fn is repr or fn is ascii or fn is format:
        return float_text.text_call if float_text.accepts_text(cap, fn, args, kwargs) else None
    if float_text.accepts_str_format(cap, fn, args, kwargs):
        return float_text.str_format_call
    return None
