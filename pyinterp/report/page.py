"""The report as one self-contained HTML page (inline CSS, SVG and
JavaScript; nothing loaded from elsewhere).

Sections: a summary of the run; the user's source, each line coloured by
its status (:mod:`.linestatus`: captured, broken with the break's kind and
hint under it, specialized) with a legend; the captures and recompiles
over time (:mod:`.timeline`) and listed with their reasons; each graph
drawn (:mod:`.graphsvg`); the guards of each entry, grouped under the
user's line that made them.  Hovering a source
line outlines the graph nodes it made, and hovering a node its lines.
Every piece of user text is escaped.

The page records its own JavaScript errors (and ``console.error`` calls)
in the ``data-errors`` attribute of ``<html>`` and sets ``data-ready="1"``
on ``<body>`` when its script has run: the browser test reads both.
"""
import html

from ..capture.explain_text import short_file, short_path
from . import graphsvg, linestatus, timeline

LEGEND = (("captured", "an op of a graph came from this line"),
          ("broken", "a graph break happened here (kind and hint below the line)"),
          ("specialized", "a guard fixes a value or an input's shape read here"))

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 40px; color: #222; }
h1 { font-size: 22px; margin: 18px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px;
  border-bottom: 1px solid #ccc; } h3 { font-size: 15px; margin: 16px 0 6px; }
nav a { margin-right: 14px; } .muted { color: #666; } code, pre, .code { font-family:
  ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
table.source { border-collapse: collapse; margin: 6px 0 14px; min-width: 60%; }
table.source td { padding: 0 8px; vertical-align: top; white-space: pre; }
td.no { color: #888; text-align: right; user-select: none; border-left: 5px solid transparent; }
tr.captured td { background: #dcf2dc; } tr.broken td { background: #f7cfcf; }
tr.specialized td.no { border-left-color: #e0a800; }
tr.line.lit td { outline: 2px solid #333; }
td.marks span { font-size: 11px; padding: 0 5px; border-radius: 3px; margin-right: 3px; }
span.m-captured { background: #9fd89f; } span.m-broken { background: #ee9a9a; }
span.m-specialized { background: #ffe08a; }
tr.note td { white-space: normal; font-size: 12.5px; background: #fbeaea; padding: 2px 8px 6px; }
.legend span.sw { display: inline-block; width: 14px; height: 14px; vertical-align: middle;
  margin: 0 4px 0 14px; border: 1px solid #999; }
.scroll { overflow-x: auto; border: 1px solid #ddd; border-radius: 4px; padding: 4px;
  max-height: 900px; }
svg text { font-family: ui-monospace, Menlo, Consolas, monospace; }
svg.graph text.label { font-size: 12px; text-anchor: middle; }
svg.graph text.meta { font-size: 10px; fill: #444; text-anchor: middle; }
svg.graph rect { stroke: #555; stroke-width: 1; } svg.graph path.edge { stroke: #666;
  fill: none; stroke-width: 1.2; } svg.graph g.lit rect { stroke: #000; stroke-width: 3; }
svg.timeline line.row { stroke: #e4e4e4; } svg.timeline line.axis { stroke: #888; }
svg.timeline text.rowname { font-size: 12px; text-anchor: end; }
svg.timeline text.tick, svg.timeline text.dotlabel { font-size: 10px; text-anchor: middle;
  fill: #555; }
table.list { border-collapse: collapse; } table.list td, table.list th { border-bottom:
  1px solid #eee; padding: 3px 8px; text-align: left; vertical-align: top; }
details { margin: 4px 0; } details.function > summary { font-size: 15px; margin-top: 10px; }
details ul { margin: 2px 0 8px; } .site { margin-top: 6px; }
"""

ERROR_COLLECTOR = """
(function () {
  var errors = [];
  function record(text) {
    errors.push(String(text));
    document.documentElement.setAttribute("data-errors", errors.join(" | "));
  }
  window.addEventListener("error", function (e) {
    record(e.message || ((e.target && e.target.tagName) + " failed to load"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { record(e.reason); });
  var original = console.error;
  console.error = function () {
    record(Array.prototype.join.call(arguments, " "));
    return original.apply(console, arguments);
  };
})();
"""

LINKING = """
(function () {
  var SEP = "\\n", places = {};
  function each(el, f) {
    (el.getAttribute("data-loc") || "").split(SEP).forEach(function (p) { if (p) f(p); });
  }
  document.querySelectorAll("[data-loc]").forEach(function (el) {
    each(el, function (p) { (places[p] = places[p] || []).push(el); });
  });
  function light(el, on) {
    each(el, function (p) {
      places[p].forEach(function (other) { other.classList.toggle("lit", on); });
    });
  }
  document.querySelectorAll("tr.line, g.node").forEach(function (el) {
    el.addEventListener("mouseenter", function () { light(el, true); });
    el.addEventListener("mouseleave", function () { light(el, false); });
  });
  document.body.setAttribute("data-ready", "1");
})();
"""


def e(text):
    """``text`` escaped for HTML text and attribute values."""
    return html.escape(str(text), quote=True)


def render(log, title="pyinterp report"):
    """The page of a :class:`~.readlog.RunLog`."""
    infos = linestatus.line_infos(log.entries)
    body = [_summary(log, title), _source_section(log, infos), _recompile_section(log),
            _graph_section(log), _guard_section(log)]
    return ('<!DOCTYPE html>\n<html lang="en" data-errors="">\n<head>\n<meta charset="utf-8">\n'
            '<title>%s</title>\n<link rel="icon" href="data:,">\n<script>%s</script>\n'
            '<style>%s</style>\n</head>\n<body>\n%s\n<script>%s</script>\n</body>\n</html>\n'
            % (e(title), ERROR_COLLECTOR, CSS, "\n".join(body), LINKING))


def _summary(log, title):
    graphs = sum(len(x.get("graphs", ())) for x in log.entries)
    breaks = sum(len(x.get("breaks", ())) for x in log.entries)
    counts = [(len(log.entries), "capture"),
              (len({x["function"]["qualname"] for x in log.entries}), "function"),
              (len(log.recompiles()), "recompile"), (graphs, "graph"), (breaks, "graph break")]
    out = ["<h1>%s</h1>" % e(title), '<p class="summary">%s.</p>' % ", ".join(
        "%d %s%s" % (n, what, "" if n == 1 else "s") for n, what in counts)]
    for run in log.runs:
        out.append('<p class="muted">process %s: <code>%s</code>, Python %s</p>'
                   % (e(run.get("pid")), e(" ".join(run.get("argv", ()))),
                      e(run.get("python", "?"))))
    if log.skipped:
        out.append('<p class="muted">%d unreadable log lines left out.</p>' % log.skipped)
    out.append('<nav><a href="#source">Source</a><a href="#recompiles">Recompiles</a>'
               '<a href="#graphs">Graphs</a><a href="#guards">Guards</a></nav>')
    return "\n".join(out)


def _source_section(log, infos):
    out = ['<h2 id="source">Source</h2>', '<p class="legend">' + "".join(
        '<span class="sw %s-sw"></span><b>%s</b>: %s' % (name, name, e(text))
        for name, text in LEGEND) + "</p>",
        "<style>.captured-sw{background:#dcf2dc}.broken-sw{background:#f7cfcf}"
        ".specialized-sw{background:#ffe08a}</style>"]
    traced = []
    for entry in log.entries:
        key = (entry["function"].get("file"), entry["function"].get("first"))
        if key in log.sources and key not in traced:
            traced.append(key)
    others = sorted(k for k in log.sources if k not in traced)
    if others:
        out.append('<p class="muted">The traced functions first, then (closed) the other '
                   'functions their ops came from.</p>')
    for key in traced + others:
        out.append(_source(log.sources[key], infos, key in traced))
    if not log.sources:
        out.append("<p>No source recorded.</p>")
    return "\n".join(out)


def _source(function, infos, opened):
    """One function's lines in a ``<details>`` block (``opened`` or not)."""
    path = function["file"]
    counts = {name: 0 for name in linestatus.STATUSES}
    for number in range(function["first"], function["first"] + len(function["lines"])):
        for status in infos[(path, number)].statuses() if (path, number) in infos else ():
            counts[status] += 1
    out = ['<details class="function"%s><summary><b>%s</b> <span class="muted">%s:%s: %s'
           '</span></summary>' % (" open" if opened else "", e(function["qualname"]),
                                  e(short_file(path)), e(function["first"]),
                                  ", ".join("%d %s" % (n, k) for k, n in counts.items())),
           '<table class="source">']
    for number, text in enumerate(function["lines"], function["first"]):
        info = infos.get((path, number))
        statuses = info.statuses() if info else []
        marks = "".join('<span class="m-%s">%s</span>' % (s, s) for s in statuses)
        out.append('<tr class="line %s" data-loc="%s" title="%s"><td class="no">%d</td>'
                   '<td class="code">%s</td><td class="marks">%s</td></tr>'
                   % (" ".join(statuses), e("%s:%d" % (path, number)),
                      e(info.summary() if info else ""), number, e(text), marks))
        for brk in info.breaks if info else ():
            out.append('<tr class="note"><td></td><td colspan="2"><b>graph break [%s]</b>: '
                       '%s<br><i>hint</i>: %s</td></tr>'
                       % (e(brk["kind"]), e(brk["message"]), e(brk.get("hint") or "")))
    out.append("</table></details>")
    return "\n".join(out)


def _entry_name(entry):
    return "%s, capture %d" % (entry["function"]["qualname"], entry["number"])


def _graph_section(log):
    out = ['<h2 id="graphs">Graphs</h2>']
    for k, entry in enumerate(log.entries):
        graphs = entry.get("graphs", ())
        for g, graph in enumerate(graphs):
            ops = sum(1 for n in graph["nodes"] if n["op"] not in ("placeholder", "output"))
            name = "%s: graph %d of %d, %d ops" % (_entry_name(entry), g + 1, len(graphs), ops)
            out.append('<div class="graphbox" id="graph-%d-%d"><h3>%s</h3><div class="scroll">'
                       '%s</div></div>' % (k, g, e(name),
                                           graphsvg.svg(graph, name, "g%d-%d" % (k, g))))
        if not graphs:
            out.append('<p class="muted">%s: no graph%s.</p>' % (
                e(_entry_name(entry)), " (runs natively)" if entry.get("native") else ""))
    return "\n".join(out)


def _recompile_section(log):
    out = ['<h2 id="recompiles">Recompiles</h2>',
           '<p class="muted">Each capture, when it began (seconds since pyinterp was '
           'imported); <span style="color:%s">&#9679;</span> a first capture, '
           '<span style="color:%s">&#9679;</span> a recompile (hover a dot for why).</p>'
           % (timeline.FIRST_FILL, timeline.RECOMPILE_FILL)]
    if log.entries:
        out.append('<div class="scroll">%s</div>' % timeline.svg(log.entries))
    out.append('<table class="list recompiles"><tr><th>capture</th><th>began</th>'
               '<th>took</th><th>entries</th><th>why the earlier entries missed</th></tr>')
    for entry in log.entries:
        reasons = entry.get("recompile") or []
        why = "<ul>%s</ul>" % "".join("<li><code>%s</code></li>" % e(r) for r in reasons) \
            if reasons else '<span class="muted">first call</span>'
        if entry.get("raised"):
            why += "<div>capture raised <code>%s</code></div>" % e(entry["raised"])
        out.append("<tr><td>%s</td><td>%.3f s</td><td>%.1f ms</td><td>%s</td><td>%s</td></tr>"
                   % (e(_entry_name(entry)), entry["time"], entry.get("seconds", 0.0) * 1e3,
                      e(entry.get("cache_size", "")), why))
    out.append("</table>")
    return "\n".join(out)


def _guard_section(log):
    out = ['<h2 id="guards">Guards</h2>']
    for k, entry in enumerate(log.entries):
        guards = entry.get("guards", ())
        sites = {}
        for guard in guards:
            sites.setdefault((guard.get("file"), guard.get("line"), guard.get("source")),
                             []).append(guard["text"])
        out.append('<details id="guards-%d"%s><summary>%s: %d guards</summary>'
                   % (k, " open" if k == 0 else "", e(_entry_name(entry)), len(guards)))
        for (path, line, source), texts in sites.items():
            where = "%s:%s: %s" % (short_file(path), line, source) if path else \
                "(no user line: the call itself)"
            out.append('<div class="site code">%s</div><ul>%s</ul>' % (e(where), "".join(
                "<li><code>%s</code></li>" % e(short_path(text)) for text in texts)))
        out.append("</details>")
    return "\n".join(out)
