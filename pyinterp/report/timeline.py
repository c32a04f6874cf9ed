"""The captures over time in SVG: one row per traced function, a dot per
capture at the time it began (seconds since pyinterp's import), numbered
as the function's captures; a recompile (a miss after earlier entries) is
:data:`RECOMPILE_FILL`, a first capture :data:`FIRST_FILL`.  Each dot's
``<title>`` says when, how long, and why the earlier entries missed.
"""
import html

FIRST_FILL = "#4a7fc1"
RECOMPILE_FILL = "#d9534f"
LEFT = 280  # px for the functions' names
ROW_H = 34
PLOT_W = 700
TOP = 14
AXIS_H = 30


def row_name(entry, several_processes):
    """The row of ``entry``: its function (and process, when the log holds
    several)."""
    name = entry["function"]["qualname"]
    return "%s [pid %s]" % (name, entry.get("pid")) if several_processes else name


def svg(entries):
    """The timeline of the log's entry records (time order)."""
    several = len({e.get("pid") for e in entries}) > 1
    rows = []
    for entry in entries:
        name = row_name(entry, several)
        if name not in rows:
            rows.append(name)
    end = max([e["time"] + e.get("seconds", 0.0) for e in entries] + [1e-3])
    width, height = LEFT + PLOT_W + 20, TOP + len(rows) * ROW_H + AXIS_H

    def x_of(t):
        return LEFT + PLOT_W * t / end

    out = ['<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" role="img" aria-label="captures over time">'
           % (width, height, width, height)]
    for i, name in enumerate(rows):
        y = TOP + i * ROW_H + ROW_H / 2
        out.append('<line class="row" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>'
                   % (LEFT, y, LEFT + PLOT_W, y))
        out.append('<text class="rowname" x="%d" y="%.1f">%s</text>'
                   % (LEFT - 8, y + 4, html.escape(_clip(name, 36))))
    axis_y = TOP + len(rows) * ROW_H + 4
    out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>'
               % (LEFT, axis_y, LEFT + PLOT_W, axis_y))
    for k in range(6):
        t = end * k / 5
        out.append('<text class="tick" x="%.1f" y="%d">%s</text>'
                   % (x_of(t), axis_y + 16, _seconds(t)))
    for entry in entries:
        y = TOP + rows.index(row_name(entry, several)) * ROW_H + ROW_H / 2
        recompile = bool(entry.get("recompile"))
        out.append('<g class="capture%s"><title>%s</title>'
                   '<circle cx="%.1f" cy="%.1f" r="7" fill="%s"/>'
                   '<text class="dotlabel" x="%.1f" y="%.1f">%d</text></g>'
                   % (" recompile" if recompile else "", html.escape(describe(entry)),
                      x_of(entry["time"]), y, RECOMPILE_FILL if recompile else FIRST_FILL,
                      x_of(entry["time"]), y - 10, entry["number"]))
    out.append("</svg>")
    return "\n".join(out)


def describe(entry):
    """``Tiny: capture 2 at 0.112 s (7.4 ms), a recompile`` and the reasons,
    one a line."""
    head = "%s: capture %d at %s (%s)%s" % (
        entry["function"]["qualname"], entry["number"], _seconds(entry["time"]),
        _seconds(entry.get("seconds", 0.0)),
        ", a recompile" if entry.get("recompile") else ", first capture")
    if entry.get("raised"):
        head += ", raised " + entry["raised"]
    return "\n".join([head] + list(entry.get("recompile", ())))


def _seconds(t):
    return "%.0f ms" % (t * 1e3) if t < 1 else "%.2f s" % t


def _clip(text, n):
    return text if len(text) <= n else text[:n - 3] + "..."
