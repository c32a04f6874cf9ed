"""The table ``pyinterp.steps(...).format()`` and ``python -m pyinterp steps`` print.

One row per step: source line, offset, instruction (indented two spaces per
call depth), the value stack after it (top at the right) and what it
recorded (``read``/``write``/``fx`` under capture, ``raised`` when the
instruction raised; one more row per further record).  A header row names
the function whenever the steps enter or return to one.
"""
import os

DEFAULT_LIMIT = 200
"""How many steps a table shows before ``... N more steps``."""

_STACK_WIDTH = 34
_INSTRUCTION_WIDTH = 34

_COLORS = {"head": "1;34", "line": "2", "op": "1", "arg": "36", "read": "33",
           "write": "35", "fx": "32", "raised": "1;31", "more": "2"}


def format_steps(steps, color=False, function=None, lines=None, limit=DEFAULT_LIMIT):
    """Render ``steps`` (a sequence of ``Step``) as a table; see
    :meth:`pyinterp.stepping.Steps.format` for the filters."""
    paint = _painter(color)
    shown = [(i, s) for i, s in enumerate(steps) if _wanted(s, function, lines)]
    hidden = 0
    if limit is not None and len(shown) > limit:
        hidden = len(shown) - limit
        shown = shown[:limit]
    out = [paint("head", "%5s %6s  %-*s %-*s %s" % ("line", "offset", _INSTRUCTION_WIDTH,
                                                    "instruction", _STACK_WIDTH,
                                                    "stack after", "records"))]
    where = None
    for index, step in shown:
        indent = "  " * step.depth
        if (step.code, step.depth, index) != where:
            out.append(paint("head", "%13s%s%s  (%s)" % ("", indent, step.code,
                                                         _path(step.filename))))
        text = (indent + step.opname + (" " + step.argrepr if step.argrepr else ""))
        # (never cut: a longer instruction, deep in calls, pushes its row's
        # stack column right rather than lose its jump target)
        text = text.ljust(_INSTRUCTION_WIDTH)
        opname_at = len(indent)
        instruction = (text[:opname_at] + paint("op", text[opname_at:opname_at + len(step.opname)])
                       + paint("arg", text[opname_at + len(step.opname):]))
        records = list(step.records)
        if step.raised:
            records.append("raised " + step.raised)
        first = records[0] if records else ""
        out.append(("%s %6d  %s %-*s %s" % (
            paint("line", "%5s" % (step.line if step.line is not None else "")), step.offset,
            instruction, _STACK_WIDTH, _stack(step.stack_after), _record(paint, first))
        ).rstrip())
        where = (step.code, step.depth, index + 1)
        for record in records[1:]:
            out.append("%*s%s" % (5 + 1 + 6 + 2 + _INSTRUCTION_WIDTH + 1 + _STACK_WIDTH + 1, "",
                                  _record(paint, record)))
    if hidden:
        out.append(paint("more", "... %d more steps" % hidden))
    if not shown:
        out.append(paint("more", "(no steps match)"))
    return "\n".join(out)


def parse_lines(text):
    """``"A-B"`` (or ``"A"``) as a ``(first, last)`` line range."""
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def _wanted(step, function, lines):
    if function is not None and function not in (step.code, step.code.rpartition(".")[2]):
        return False
    if lines is not None and (step.line is None or not lines[0] <= step.line <= lines[1]):
        return False
    return True


def _path(filename):
    """A file under the current directory by its relative path."""
    here = os.getcwd() + os.sep
    return filename[len(here):] if filename.startswith(here) else filename


def _stack(values):
    text = "[%s]" % ", ".join(values or ())
    return text if len(text) <= _STACK_WIDTH else "..." + text[-(_STACK_WIDTH - 3):]


def _record(paint, record):
    kind = record.partition(" ")[0]
    return paint(kind, record) if kind in _COLORS else record


def _painter(color):
    if not color:
        return lambda kind, text: text
    return lambda kind, text: "\x1b[%sm%s\x1b[0m" % (_COLORS[kind], text) if text else text
