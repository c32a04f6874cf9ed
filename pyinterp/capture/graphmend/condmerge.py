"""Merging a speculated branch with ``torch.cond`` instead of ``torch.where``.

``torch.where(c, a, b)`` computes both arms; so does its backward, and the
untaken arm's gradient can be NaN where eager's is finite (``sqrt`` at 0:
``0 * inf``).  When a merged tensor requires grad (and grad mode is on), the
two arms' recorded ops are moved out of the graph into two subgraphs, and
the graph calls ``torch.cond(pred, then_graph, else_graph, operands)``: one
arm runs, forward and backward, as in eager.

:func:`merge` takes the nodes each arm recorded and the values to merge.
Its rules (``torch.cond``'s own): the arms' ops are functional (speculation
already refuses in-place ops and outside writes), contain no grad-mode or
autocast nodes (a nested ``torch.cond`` moves into its arm's subgraph
with its branches), and every merged value is a
tensor of the same shape, dtype and device in both arms.  Outputs that are
an operand unchanged are cloned (a branch may not return its input).  The
result binds each merged value to the *taken* arm's real tensor, so the
first, interpreted call has eager's autograd history too.  None when the
rules do not hold: the caller then breaks the graph.  Nor may a parameter
(a leaf that requires grad) be used by one arm only: eager leaves its
``.grad`` None when the other arm runs, ``torch.cond`` would give zeros.
"""
import operator

import torch
import torch.fx

STATE_TARGETS = frozenset({  # (grad mode, autocast: not inside a subgraph)
    torch._C._set_grad_enabled, torch.amp.autocast_mode._enter_autocast,
    torch.amp.autocast_mode._exit_autocast,
})


def needs_cond(pairs):
    """True if merging ``(then, else)`` tensor pairs with ``torch.where``
    could give gradients eager would not."""
    return torch.is_grad_enabled() and any(
        isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a is not b
        and (a.requires_grad or b.requires_grad) for a, b in pairs)


def merge(rec, pick, taken_is_then, then_nodes, else_nodes, pairs):
    """Replace the arms' nodes by one ``torch.cond`` node; returns the merged
    value of each ``(then, else)`` pair (None if the rules do not hold)."""
    differing = [(a, b) for a, b in pairs if a is not b]
    for a, b in differing:
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and a.shape == b.shape and a.dtype == b.dtype and a.device == b.device):
            return None
    arms = (then_nodes, else_nodes)
    for nodes in arms:
        for n in nodes:
            if n.target in STATE_TARGETS or n.op == "get_attr" and n.target not in rec.submodules:
                return None
    outs = ([rec.node_for(a) for a, _ in differing], [rec.node_for(b) for _, b in differing])
    inside = set(then_nodes) | set(else_nodes)
    operands = []
    for nodes, arm_outs in zip(arms, outs):
        for n in nodes:
            torch.fx.node.map_arg((n.args, n.kwargs), lambda a: _operand(a, inside, operands))
        for o in arm_outs:
            _operand(o, inside, operands)
    if any(u not in inside for n in inside for u in n.users):
        return None  # (speculation lets nothing else use an arm's values)
    if _one_arm_leaf(operands, arms, outs, inside):
        return None
    graph = rec.graph
    try:  # (both built before either is kept)
        branches = [subgraph(nodes, arm_outs, operands, rec.submodules)
                    for nodes, arm_outs in zip(arms, outs)]
    except KeyError:  # an arm uses a node the other arm made (a float's, made lazily)
        return None
    names = ["%s_branch_%d" % (kind, len(rec.submodules) // 2) for kind in ("then", "else")]
    rec.submodules.update(zip(names, branches))
    rec.erase(inside)  # (the arms' own tensors go with their nodes)
    pred = rec.node_for(pick)
    node = graph.call_function(torch.ops.higher_order.cond, (
        pred, graph.get_attr(names[0]), graph.get_attr(names[1]), tuple(operands)))
    rec.op_count += 1
    merged = {}
    for i, (a, b) in enumerate(differing):
        taken = a if taken_is_then else b
        item = graph.call_function(operator.getitem, (node, i))
        item.meta["example_value"] = taken
        rec.bind(taken, item)
        merged[id(a), id(b)] = taken
    return [a if a is b else merged[id(a), id(b)] for a, b in pairs]


def _one_arm_leaf(operands, arms, outs, inside):
    """True if a leaf tensor that requires grad (a parameter) is used by one
    arm only, and by no op before the branch.  When the other arm runs,
    eager leaves its ``.grad`` None (an optimizer then skips it); through
    ``torch.cond`` it would get zeros."""
    then_nodes, else_nodes = (set(nodes) for nodes in arms)
    for p in operands:
        value = p.meta.get("example_value") if p.op == "placeholder" else None
        if not (isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf):
            continue
        if any(u not in inside for u in p.users):
            continue  # (used before the branch: eager gives it a gradient either way)
        in_then = p in outs[0] or any(u in then_nodes for u in p.users)
        in_else = p in outs[1] or any(u in else_nodes for u in p.users)
        if in_then != in_else:
            return True
    return False


def _operand(node, inside, operands):
    if node not in inside and node not in operands:
        operands.append(node)
    return node


def subgraph(nodes, outs, inputs, submodules, names=None):
    """The recorded ``nodes`` as a graph of ``inputs`` (the nodes its
    placeholders stand for, in order; None for a placeholder nothing uses),
    returning ``outs`` (a nested ``torch.cond``'s branches move along with
    it; an output that is an input, or repeats, is cloned: a branch or loop
    body may not return an alias)."""
    root = torch.nn.Module()
    sub = torch.fx.Graph()
    env = {}
    for i, node in enumerate(inputs):
        placeholder = sub.placeholder(names[i] if names else "operand_%d" % i)
        if node is not None:
            env[node] = placeholder
    given = set(env)
    for n in nodes:
        if n.op == "get_attr":
            setattr(root, n.target, submodules[n.target])
        env[n] = sub.node_copy(n, lambda a: env[a])
    results, seen = [], set()
    for o in outs:
        value = env[o]
        if o in given or o in seen:
            value = sub.call_method("clone", (value,))
        seen.add(o)
        results.append(value)
    sub.output(tuple(results))
    return torch.fx.GraphModule(root, sub)
