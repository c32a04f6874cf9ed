"""The text of an :class:`~.explain.Explanation`: a one-screen summary and
the details.

The summary fits a real model on one screen: graphs with their op counts
and most frequent ops, graph breaks grouped by site (kind, the user's
``file:line``, the source line and the hint), the values the entry is
specialized on, guard counts by kind, the recompiles of a traced
function's cache, and the times.  No line is longer than :data:`WIDTH`
(long paths and values end in ``...``).  The details hold everything:
every break, every guard with its user line, the guard code, the mock and
each graph as ``print_readable`` shows it (the user's source line above
each node).
"""
import collections
import linecache
import os
import re
import textwrap

WIDTH = 100
"""The longest line of the summary."""

SHOWN_GRAPHS = 8
SHOWN_BREAK_SITES = 8
SHOWN_SPECIALIZATIONS = 10
SHOWN_RECOMPILES = 5
SHOWN_OP_KINDS = 6  # (the most common op kinds of a graph in the summary)


def clip(text, width=WIDTH):
    """``text`` on one line (its indent kept), cut to ``width`` characters
    with ``...``."""
    text = " ".join(text.splitlines())
    return text if len(text) <= width else text[:width - 3] + "..."


def short_file(filename):
    """``filename`` relative to the working directory when under it, or
    from the package down when in ``site-packages``."""
    if not filename:
        return "<unknown>"
    marker = os.sep + "site-packages" + os.sep
    if marker in filename:
        return filename.split(marker, 1)[1]
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # (another drive)
        return filename
    return filename if rel.startswith(os.pardir) else rel


_HOLDERS = r"(?:\.__dict__\['_(?:modules|parameters|buffers)'\]|\._(?:modules|parameters|buffers))"
_PATH_STEPS = [
    (re.compile(_HOLDERS + r"\['(\d+)'\]"), r"[\1]"),
    (re.compile(_HOLDERS + r"\['(\w+)'\]"), r".\1"),
    (re.compile(r"\.__dict__\['([A-Za-z_]\w*)'\]"), r".\1"),
]


def short_path(text):
    """A guard's path with module internals folded: ``m.__dict__['_modules']
    ['h']._modules['0'].eps`` reads ``m.h[0].eps``."""
    for pattern, repl in _PATH_STEPS:
        text = pattern.sub(repl, text)
    return text


def op_name(node):
    target = node.target
    if node.op == "call_function":
        return getattr(target, "__name__", str(target))
    return str(target)


def graph_op_names(gm):
    """The ops of ``gm``'s nodes (functions, methods, modules called)."""
    return [op_name(n) for n in gm.graph.nodes
            if n.op in ("call_function", "call_method", "call_module")]


def break_sites(records):
    """The breaks grouped by (file, line, kind), first seen first:
    ``[(first record, count)]``."""
    counts = collections.OrderedDict()
    for r in records:
        key = (r.filename, r.lineno, r.kind)
        if key in counts:
            counts[key][1] += 1
        else:
            counts[key] = [r, 1]
    return [tuple(v) for v in counts.values()]


def source_line(filename, lineno):
    """The user's line ``filename:lineno``, stripped ('' when unknown)."""
    if not filename or not lineno:
        return ""
    return linecache.getline(filename, lineno).strip()


# -- the summary ---------------------------------------------------------------

def summary(exp):
    """The one-screen summary of ``exp`` (an Explanation)."""
    out = ["pyinterp.explain(%s): %s, %s, %s, %d guards" % (
        exp.name, _plural(exp.graph_count, "graph"),
        _plural(exp.graph_break_count, "graph break"), _plural(exp.op_count, "op"),
        len(exp.out_guards))]
    out += _graphs(exp)
    if exp.ddp_parts:
        out.append("DDP gradient buckets: each graph split into %s part(s)"
                   % ", ".join(map(str, exp.ddp_parts)))
    out += _breaks(exp)
    out += _site_lines(exp.merged_branches, [
        "Merged branches (conditions on tensor data: the graph computes both arms",
        "  and picks with torch.where or torch.cond): %d" % len(exp.merged_branches)])
    out += _site_lines(exp.assumptions, [
        "Assumptions (bools from tensor data the graph assumes and checks on every call;",
        "  where one differs, another entry or a new capture runs the call): %d"
        % len(exp.assumptions)])
    out += _specializations(exp)
    if exp.dynamic_lines:
        out.append("Dynamic shapes:")
        out += [clip("  " + line) for line in exp.dynamic_lines[:SHOWN_DYNAMIC]]
        if len(exp.dynamic_lines) > SHOWN_DYNAMIC:
            out.append("  ... %d more (dynamic_lines)" % (len(exp.dynamic_lines) - SHOWN_DYNAMIC))
    out += _guard_kinds(exp)
    out += _recompiles(exp)
    out.append("Times: " + exp.compile_times)
    out.append("Details: print(explanation.details()): every guard with its user line, the "
               "guard code,")
    out.append("  the mock, each graph with the user's source line per node.")
    return "\n".join(clip(line) if len(line) > WIDTH else line for line in out)


def _plural(n, what, many=None):
    return "%d %s" % (n, what if n == 1 else many or what + "s")


def _graphs(exp):
    if not exp.graphs:
        return ["Graphs: none (no tensor op was captured)"]
    out = ["Graphs:"]
    shown = list(zip(exp.graphs, exp.ops_per_graph))[:SHOWN_GRAPHS]
    for i, (gm, n) in enumerate(shown):
        counts = collections.Counter(graph_op_names(gm))
        ops = ", ".join("%s %d" % (name, k) for name, k in counts.most_common(SHOWN_OP_KINDS))
        if len(counts) > SHOWN_OP_KINDS:
            ops += ", %d more kinds" % (len(counts) - SHOWN_OP_KINDS)
        out.append(clip("  %d. %s: %s" % (i + 1, _plural(n, "op"), ops)))
    if len(exp.graphs) > SHOWN_GRAPHS:
        out.append("  ... %s more (details())" % _plural(len(exp.graphs) - SHOWN_GRAPHS,
                                                         "graph"))
    return out


def _breaks(exp):
    if not exp.break_reasons:
        return ["Graph breaks: none"]
    sites = break_sites(exp.break_reasons)
    out = ["Graph breaks: %d at %s" % (len(exp.break_reasons), _plural(len(sites), "site"))]
    for i, (r, count) in enumerate(sites[:SHOWN_BREAK_SITES]):
        times = " (%dx)" % count if count > 1 else ""
        out.append(clip("  %d. %s:%s%s" % (i + 1, short_file(r.filename), r.lineno, times)))
        line = source_line(r.filename, r.lineno)
        if line:
            out.append(clip("       " + line))
        for text in ("[%s] %s" % (r.kind, r.message), "hint: " + r.hint):
            out += textwrap.wrap(text, WIDTH, initial_indent="       ",
                                 subsequent_indent="         ")
    if len(sites) > SHOWN_BREAK_SITES:
        out.append("  ... %s more (details())" % _plural(len(sites) - SHOWN_BREAK_SITES,
                                                         "site"))
    return out


def _specializations(exp):
    found = exp.specializations
    if not found:
        return []
    out = ["Specializations (a call that differs recompiles): %d" % len(found)]
    out += ["  " + clip(text, WIDTH - 2) for text in found[:SHOWN_SPECIALIZATIONS]]
    if len(found) > SHOWN_SPECIALIZATIONS:
        out.append("  ... %d more (details())" % (len(found) - SHOWN_SPECIALIZATIONS))
    return out


def _site_lines(lines, heading):
    """``heading`` and the first of ``lines`` (``file:line: ...`` texts), or
    nothing when there are none."""
    if not lines:
        return []
    out = list(heading)
    out += ["  " + clip(text, WIDTH - 2) for text in lines[:SHOWN_SPECIALIZATIONS]]
    if len(lines) > SHOWN_SPECIALIZATIONS:
        out.append("  ... %d more (details())" % (len(lines) - SHOWN_SPECIALIZATIONS))
    return out


_KIND_NAMES = {"Contains": "key in", "Identity": "identity", "ValueEq": "value",
               "TypeIs": "type", "ClassLookups": "class lookups",
               "NoModuleHooks": "no module hooks", "TensorMatch": "tensor",
               "TensorKind": "symbolic tensor", "ShapeRelations": "size relations",
               "SameObject": "same object", "LenIs": "length", "KeysAre": "keys",
               "StateIs": "torch state", "HasAttr": "hasattr", "Distinct": "distinct"}


def _guard_kinds(exp):
    kinds = collections.Counter(type(g).__name__ for g in exp.out_guards).most_common()
    items = ["%d %s" % (n, _KIND_NAMES.get(k, k)) for k, n in kinds]
    return packed("Guards: %d" % len(exp.out_guards), items)


def packed(head, items):
    """``head (item, item, ...)`` over as many lines as it takes, never
    breaking an item."""
    lines, line = [], head + " ("
    for i, item in enumerate(items):
        item += ")" if i == len(items) - 1 else ","
        if len(line) + len(item) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = "  "
        line += item + " "
    lines.append(line.rstrip() if items else head)
    return lines


SHOWN_DYNAMIC = 8


def _recompiles(exp):
    entries = exp.cache_entries
    if entries is None:
        return []
    capture = sum(t.times["capture"] for t in entries)
    compile_ = sum(t.times["compile"] for t in entries)
    out = ["Cache of the traced function: %s (%s), capture %.3f s, backend compile %.3f s"
           % (_plural(len(entries), "entry", "entries"),
              _plural(max(len(entries) - 1, 0), "recompile"), capture, compile_)]
    for number, trace in enumerate(entries, 1):
        if trace.dynamic is not None:
            from .guardfail import name_parameters

            lines = trace.dynamic.lines()
            out.append("  entry %d, dynamic shapes:" % number)
            out += [clip("    " + name_parameters(line, trace.param_names))
                    for line in lines[:SHOWN_DYNAMIC]]
            if len(lines) > SHOWN_DYNAMIC:
                out.append("    ... %d more (cache_entries()[%d].dynamic_lines)"
                           % (len(lines) - SHOWN_DYNAMIC, number - 1))
    reasons = exp.recompile_reasons
    if reasons:
        out.append("  guards that failed (on misses, and on calls another entry served):")
    for text, count in reasons[:SHOWN_RECOMPILES]:
        out.append(clip("  %dx %s" % (count, text)))
    if len(reasons) > SHOWN_RECOMPILES:
        out.append("  ... %d more (details())" % (len(reasons) - SHOWN_RECOMPILES))
    return out


# -- the details ---------------------------------------------------------------

def details(exp):
    """Everything: every break, guard, the guard code, the mock, each graph."""
    out = ["Graph count: %d" % exp.graph_count,
           "Graph break count: %d" % exp.graph_break_count,
           "Ops per graph: %s" % exp.ops_per_graph]
    if exp.break_reasons:
        out.append("Break reasons:")
        out += ["  %d. %s" % (i + 1, str(r).replace("\n", "\n     "))
                for i, r in enumerate(exp.break_reasons)]
    for title, lines in (("Merged branches", exp.merged_branches),
                         ("Assumptions", exp.assumptions)):
        out += ["%s (%d):" % (title, len(lines))] + ["  " + text for text in lines] \
            if lines else []
    if exp.specializations:
        out.append("Specializations (%d):" % len(exp.specializations))
        out += ["  " + s for s in exp.specializations]
    if exp.recompile_reasons:
        out.append("Recompile reasons (guards that failed in the cache):")
        out += ["  %dx %s" % (count, text) for text, count in exp.recompile_reasons]
    out.append("Guards (%d):" % len(exp.guards))
    out += ["  " + g for g in exp.guards]
    out.append("Guard code:")
    out += ["  " + line for line in exp.guard_code.splitlines()]
    if exp.mock:
        out.append("Mock:")
        out += ["  " + line for line in exp.mock.splitlines()]
    for i, gm in enumerate(exp.graphs):
        out.append("Graph %d:" % i)
        text = gm.print_readable(print_output=False)
        out += ["  " + line for line in text.strip().splitlines()]
    out.append("Times: " + exp.compile_times)
    return "\n".join(out)
