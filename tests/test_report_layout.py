"""The report's drawings without torch (pyinterp/report/graphsvg.py,
timeline.py): a graph's layers and boxes, the timeline's dots."""
import re

from pyinterp.report import graphsvg, timeline


def node(name, op="call_function", args=(), label=None):
    return {"name": name, "op": op, "label": label or name, "args": list(args), "meta": "",
            "stack": []}


DIAMOND = [node("x", "placeholder"), node("w", "placeholder"), node("a", args=["x"]),
           node("b", args=["x"]), node("c", args=["a", "b", "w"]),
           node("output", "output", ["c", "a"])]


def test_layers_follow_the_longest_path_and_inputs_sit_above_their_reader():
    layer = graphsvg.layers(DIAMOND)
    assert layer == {"x": 0, "w": 1, "a": 1, "b": 1, "c": 2, "output": 3}


def test_boxes_of_a_layer_do_not_overlap_and_fit_the_drawing():
    boxes, width, height = graphsvg.layout(DIAMOND)
    rows = {}
    for name, (x, y, w) in boxes.items():
        rows.setdefault(y, []).append((x, x + w))
        assert 0 <= x and x + w <= width and 0 <= y and y + graphsvg.BOX_H <= height
    for spans in rows.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert len(rows) == 4


def test_the_svg_has_a_box_per_node_and_an_edge_per_argument():
    text = graphsvg.svg({"nodes": DIAMOND}, "a <diamond>", ident="d")
    assert re.findall(r'data-node="(\w+)"', text) == [n["name"] for n in DIAMOND]
    assert text.count('class="edge"') == 7
    assert 'aria-label="a &lt;diamond&gt;"' in text and 'id="d-arrow"' in text


def test_the_timeline_marks_recompiles_and_says_why():
    entries = [{"function": {"qualname": "f"}, "time": 0.1, "seconds": 0.05, "number": 1,
                "recompile": []},
               {"function": {"qualname": "f"}, "time": 0.3, "seconds": 0.02, "number": 2,
                "recompile": ["entry 1: x.shape[0]: expected 2, got 3"]}]
    text = timeline.svg(entries)
    assert text.count("<circle") == 2 and text.count('class="capture recompile"') == 1
    assert "f: capture 2 at 300 ms (20 ms), a recompile\nentry 1: x.shape[0]: expected 2, " \
           "got 3" in text
