"""One FX graph drawn as a layered DAG in SVG (no graphviz).

Each node of the run log's graph record (:mod:`pyinterp.capture.runrecord`)
is a box: its op's name over its dtype and shape; placeholders (the
graph's inputs) and the output have their own colours, ops
:data:`OP_FILL`.  An edge goes from each node an op reads to the op.

The layout: an op's layer is one below the lowest of its inputs (the
longest path from the inputs), an input sits just above its first reader,
the output at the bottom; within a layer nodes are ordered by the mean
position of their inputs (one sweep down), then each layer is centred.
"""
import html

OP_FILL = "#f4a340"
"""The fill of an op's box (the browser test looks for its pixels)."""
INPUT_FILL = "#cfe2f3"
OUTPUT_FILL = "#c9e8c9"

CHAR_W = 7.0  # px a character of the 12px monospace label takes
BOX_H = 38
GAP_X = 18
GAP_Y = 46
MARGIN = 12
LOC_SEPARATOR = "\n"
"""Between the ``file:line`` places of a ``data-loc`` attribute."""


def layers(nodes):
    """``{name: layer}`` for the graph's nodes (see the module's text)."""
    layer = {}
    readers = {}
    for node in nodes:
        args = [a for a in node["args"] if a in layer]
        layer[node["name"]] = 1 + max((layer[a] for a in args), default=-1)
        for a in args:
            readers.setdefault(a, []).append(node["name"])
    for node in nodes:
        name = node["name"]
        if node["op"] == "placeholder" and readers.get(name):
            layer[name] = max(min(layer[r] for r in readers[name]) - 1, 0)
    last = max(layer.values(), default=0)
    for node in nodes:
        if node["op"] == "output":
            layer[node["name"]] = max(last, 1 + max((layer[a] for a in node["args"]
                                                     if a in layer), default=-1))
    return layer


def layout(nodes):
    """``({name: (x, y, width)}, width, height)``: each box's top-left
    corner and width, and the drawing's size."""
    layer = layers(nodes)
    rows = {}
    for node in nodes:
        rows.setdefault(layer[node["name"]], []).append(node)
    place, widths = {}, {}
    for node in nodes:
        widths[node["name"]] = max(70.0, CHAR_W * max(len(node["label"]),
                                                      len(node.get("meta", ""))) + 16)
    row_widths = {}
    for depth in sorted(rows):
        row = rows[depth]
        if depth:
            order = {n["name"]: i for i, n in enumerate(row)}
            row.sort(key=lambda n: _mean([place[a][0] for a in n["args"] if a in place],
                                         default=order[n["name"]] * 1e-3))
        x = 0.0
        for node in row:
            place[node["name"]] = (x, MARGIN + depth * (BOX_H + GAP_Y))
            x += widths[node["name"]] + GAP_X
        row_widths[depth] = x - GAP_X
    width = max(row_widths.values(), default=0.0) + 2 * MARGIN
    boxes = {}
    for depth, row in rows.items():
        shift = MARGIN + (width - 2 * MARGIN - row_widths[depth]) / 2
        for node in row:
            x, y = place[node["name"]]
            boxes[node["name"]] = (x + shift, y, widths[node["name"]])
    height = MARGIN * 2 + (max(rows, default=0) + 1) * (BOX_H + GAP_Y) - GAP_Y
    return boxes, width, height


def _mean(values, default):
    return sum(values) / len(values) if values else default


def svg(graph, title="", ident="g"):
    """The graph record ``graph`` (``{"nodes": [...]}``) as an ``<svg>``
    element; each node's ``<g>`` has ``data-node`` (its name) and
    ``data-loc`` (its user lines, ``file:line``, one a line);
    ``ident`` makes the drawing's own ids unique on the page."""
    nodes = graph["nodes"]
    boxes, width, height = layout(nodes)
    out = ['<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" role="img" aria-label="%s">'
           % (width, height, width, height, html.escape(title)),
           '<defs><marker id="%s-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
           'fill="#666"/></marker></defs>' % html.escape(ident)]
    for node in nodes:
        x2, y2, w2 = boxes[node["name"]]
        for arg in node["args"]:
            if arg not in boxes:
                continue
            x1, y1, w1 = boxes[arg]
            ax, ay, bx, by = x1 + w1 / 2, y1 + BOX_H, x2 + w2 / 2, y2
            mid = (ay + by) / 2
            # (an edge over more than one layer bows to the side, past the boxes between)
            bow = w1 / 2 + 40 if by - ay > GAP_Y + 1 else 0
            out.append('<path class="edge" d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" '
                       'marker-end="url(#%s-arrow)"/>'
                       % (ax, ay, ax + bow, mid, bx + bow, mid, bx, by - 1, html.escape(ident)))
    for node in nodes:
        out.append(_box(node, *boxes[node["name"]]))
    out.append("</svg>")
    return "\n".join(out)


def _box(node, x, y, w):
    fill = INPUT_FILL if node["op"] == "placeholder" else \
        OUTPUT_FILL if node["op"] == "output" else OP_FILL
    locs = LOC_SEPARATOR.join("%s:%s" % (f, line) for f, line in node.get("stack", ()))
    tip = "%s (%s)%s%s" % (node["name"], node["op"], " " + node["meta"] if node.get("meta")
                           else "", "\n" + locs if locs else "")
    cx = x + w / 2
    parts = ['<g class="node %s" data-node="%s" data-loc="%s"><title>%s</title>'
             % (html.escape(node["op"]), html.escape(node["name"]), html.escape(locs),
                html.escape(tip)),
             '<rect x="%.1f" y="%.1f" width="%.1f" height="%d" rx="6" fill="%s"/>'
             % (x, y, w, BOX_H, fill),
             '<text x="%.1f" y="%.1f" class="label">%s</text>'
             % (cx, y + 16, html.escape(node["label"]))]
    if node.get("meta"):
        parts.append('<text x="%.1f" y="%.1f" class="meta">%s</text>'
                     % (cx, y + 31, html.escape(node["meta"])))
    parts.append("</g>")
    return "".join(parts)
