"""Recording tensor operations into a ``torch.fx`` graph.

The tracer runs every torch op for real and then calls
:meth:`GraphRecorder.record` with the op, its real arguments and its real
result.  The recorder maps each tensor argument to the FX node that produced
it (by ``id``; every recorded tensor is pinned for the whole trace so ids are
never reused) or, for a tensor from outside the function, to a new
placeholder whose source the RefGraph knows.  Non-tensor arguments become
constants of the graph: they are Python values that the guards keep fixed.
"""
import operator
import sys

from .symbolic import SymbolicInt


_FX_LEAF_TYPES = (int, float, bool, str, complex, type(None), slice, type(Ellipsis), range)


def _is_numpy_number(value):
    """True for a NumPy scalar number or bool (``numpy.generic``)."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, (numpy.number, numpy.bool_))


_PYTHON_DTYPES = {int: "int64", float: "float64", bool: "bool", complex: "complex128"}
"""The dtype each Python scalar type stands for as a torch op's argument."""


class Unrepresentable(Exception):
    """An op argument or result the graph cannot hold; carries a break kind."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


class GraphRecorder:
    """Builds one FX graph from the ops of a traced run."""

    def __init__(self, source_of, scalar_node=None, where=None):
        import torch
        import torch.fx

        self.torch = torch
        # where(node): note in the node's meta where the user's code made it
        # (its ``stack_trace``), or None.
        self.where = where
        self.graph = torch.fx.Graph()
        self.source_of = source_of
        # The node of a Python float computed from tensor data (an output).
        self.scalar_node = scalar_node
        self.node_of = {}
        self.tensor_of = {}
        self.pinned = []
        self.inputs = []  # (source, tensor, placeholder node)
        # input_check(tensor) raises Unrepresentable where a tensor from
        # outside may not become a graph input (set by the capture).
        self.input_check = None
        self.op_count = 0
        self.submodules = {}  # name -> GraphModule (torch.cond branches)
        # An op wrote a graph input (or a view of one) in place: a graph that
        # raises may have changed it already (see note_mutation).
        self.mutated_input = False
        # (node, value, site) per bool from tensor data the graph assumes
        # (pyinterp/capture/values/assumptions.py).
        self.assumptions = []
        # The storages a ``t.data = v`` on a tensor requiring grad made ``t``
        # and ``v`` share, which the graph's copy does not
        # (pyinterp/capture/tensor_setters.py): no in-place write to them.
        self.rebound_storages = set()
        self._leaf_types = _FX_LEAF_TYPES + (
            torch.dtype, torch.device, torch.layout, torch.memory_format, torch.Size)

    # -- arguments ---------------------------------------------------------
    def node_for(self, tensor):
        """The node standing for ``tensor``: its producer or a placeholder."""
        node = self.node_of.get(id(tensor))
        if node is not None:
            return node
        source = self.source_of(tensor)
        if source is None:
            raise Unrepresentable(
                "untracked-tensor",
                "a tensor of shape %s reached a torch op without an access path"
                % (tuple(tensor.shape),))
        if self.input_check is not None:
            self.input_check(tensor)
        node = self.graph.placeholder(_placeholder_name(source, len(self.inputs)))
        node.meta["example_value"] = tensor
        self.inputs.append((source, tensor, node))
        self.bind(tensor, node)
        return node

    def bind(self, tensor, node):
        """``node`` stands for ``tensor`` from now on."""
        self.node_of[id(tensor)] = node
        self.tensor_of[id(tensor)] = tensor
        self.pinned.append(tensor)

    def erase(self, nodes):
        """Remove ``nodes`` (op nodes of this graph that no other node uses)
        and forget the tensors they stood for."""
        for n in reversed(list(self.graph.nodes)):
            if n in nodes:
                self.graph.erase_node(n)
        for key, n in list(self.node_of.items()):
            if n in nodes:
                del self.node_of[key]
                self.tensor_of.pop(key, None)

    def mark(self):
        """Where the graph stands now, for :meth:`roll_back`."""
        return len(self.graph.nodes), self.op_count

    def roll_back(self, mark):
        """Erase the ops recorded since ``mark`` and take back their count:
        nothing may reach their values any more (a failed speculation, a
        refused NumPy mirror).  Graph inputs stay."""
        n_nodes, op_count = mark
        self.erase({n for n in list(self.graph.nodes)[n_nodes:] if n.op != "placeholder"})
        self.op_count = op_count

    def map_arg(self, value):
        """``value`` with tensors replaced by nodes, checked to be storable."""
        torch = self.torch
        if isinstance(value, torch.Tensor):
            return self.node_for(value)
        tp = type(value)
        if tp is SymbolicInt:
            return value.node  # a symbolic size (dynamic shapes)
        if tp is torch.fx.Node:
            return value  # a tracked scalar's node, put in by the capture
        if tp is torch.Size and any(type(v) is SymbolicInt for v in value):
            return tuple(self.map_arg(v) for v in value)
        if tp is tuple or tp is list:
            return tp(self.map_arg(v) for v in value)
        if tp is dict:
            return {k: self.map_arg(v) for k, v in value.items()}
        if _is_numpy_number(value):
            # A NumPy scalar (``np.prod(x.shape)``, ``np.float64(0.75)``): a
            # node remaking it from its exact Python value, so the op gets
            # the same type as in eager (FX would write ``np.float64(..)``
            # into the graph's code, where no ``np`` is defined).
            return self.graph.call_function(tp, (value.item(),))
        if isinstance(value, self._leaf_types):
            if tp is slice:
                return slice(self.map_arg(value.start), self.map_arg(value.stop),
                             self.map_arg(value.step))
            return value
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return tuple(self.map_arg(v) for v in value)
        if tp is type and value in _PYTHON_DTYPES:
            # torch.tensor(0, dtype=int): torch's argument parser reads a
            # Python scalar type as the dtype it stands for
            return getattr(torch, _PYTHON_DTYPES[value])
        raise Unrepresentable("unsupported-value",
                              "a %s argument to a torch op" % tp.__qualname__)

    # -- ops ---------------------------------------------------------------
    def record(self, target, args, kwargs, result, method=False):
        """Add ``target(*args, **kwargs)`` returning ``result`` to the graph
        (with ``method``, ``target`` is the name of a Tensor method called
        on ``args[0]``)."""
        make = self.graph.call_method if method else self.graph.call_function
        node = make(target, self.map_arg(tuple(args)), self.map_arg(dict(kwargs)))
        self.op_count += 1
        if self.where is not None:
            self.where(node)
        self.bind_result(node, result)
        return node

    def record_effect(self, target, args):
        """Add a call kept for its effect (grad-mode changes, autocast)."""
        self.op_count += 1
        node = self.graph.call_function(target, self.map_arg(tuple(args)), {})
        if self.where is not None:
            self.where(node)
        return node

    def note_mutation(self, written):
        """A recorded op wrote ``written`` (a tensor, or a tuple of them) in
        place: note whether it shares storage with a graph input, as a view
        of one does.  A mock whose graph raised may run the function again
        natively only if the graph wrote no input."""
        if not self.mutated_input:
            self.mutated_input = self.writes_input(written)

    def writes_input(self, written):
        """True if ``written`` (a tensor, or a tuple of them) shares storage
        with a graph input (or has no storage to compare)."""
        torch = self.torch
        items = written if isinstance(written, (tuple, list)) else (written,)
        for t in items:
            if not isinstance(t, torch.Tensor):
                continue
            key = storage_of(t)
            if key is None or any(storage_of(i) == key for _, i, _ in self.inputs):
                return True
        return False

    def bind_result(self, node, result):
        torch = self.torch
        if isinstance(result, torch.Tensor):
            node.meta["example_value"] = result
            self.bind(result, node)
        elif isinstance(result, (tuple, list)):
            for i, item in enumerate(result):
                if isinstance(item, (torch.Tensor, tuple, list)):
                    part = self.graph.call_function(operator.getitem, (node, i))
                    part.meta.update((k, v) for k, v in node.meta.items()
                                     if k in ("stack_trace", "pyinterp_stack"))
                    self.bind_result(part, item)

    # -- the end ------------------------------------------------------------
    def finish(self, outputs, last=()):
        """Close the graph with ``outputs`` (tensors), then the nodes
        ``last``, and return a GraphModule."""
        import torch
        import torch.fx

        # No dead-code elimination: an op whose result is unused may still
        # mutate an input in place (the backend prunes what is pure).
        nodes = tuple(self.node_for(t) if isinstance(t, torch.Tensor) else self.scalar_node(t)
                      for t in outputs)
        self.graph.output(nodes + tuple(last))
        root = torch.nn.Module()
        for name, module in self.submodules.items():
            setattr(root, name, module)
        return torch.fx.GraphModule(root, self.graph)

    def is_graph_value(self, tensor):
        """True if ``tensor`` was produced by a recorded op (not an input)."""
        node = self.node_of.get(id(tensor))
        return node is not None and node.op != "placeholder"

    def write_hazard(self, written):
        """Why an op about to write ``written`` (a tensor, or a tuple or
        list of them) in place must break the graph first, or None:

        * ``"assumed"``: the graph assumes values from tensor data, and
          ``written`` is, or shares memory with, a graph input, or is a
          tensor the graph did not make (one from outside becomes an input
          as the op is recorded): a failed check reruns the call, so the
          graph must leave its inputs as they were;
        * ``"rebound"``: ``written`` is memory that a ``t.data = v`` store
          made ``t`` and ``v`` share, where the graph's ``t`` is a copy."""
        torch = self.torch
        if written is None or not (self.assumptions or self.rebound_storages):
            return None
        items = [t for t in (written if isinstance(written, (tuple, list)) else (written,))
                 if isinstance(t, torch.Tensor)]
        if self.assumptions and (any(not self.is_graph_value(t) for t in items)
                                 or self.writes_input(written)):
            return "assumed"
        if self.rebound_storages:
            with torch._C.DisableTorchFunction():
                if any(storage_of(t) in self.rebound_storages for t in items):
                    return "rebound"
        return None


def storage_of(tensor):
    """The address of ``tensor``'s storage (shared by its views), or None
    when it has none to compare (then any write counts as one to an input)."""
    try:
        ptr = tensor.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - sparse, meta, subclasses without storage
        return None
    return ptr or None


def _placeholder_name(source, index):
    text = source.render()
    name = "".join(c if c.isalnum() else "_" for c in text).strip("_")
    while "__" in name:
        name = name.replace("__", "_")
    name = name.replace("dict_", "").replace("_parameters_", "_").replace("_modules_", "_")
    name = name[-40:].strip("_") or "input"
    return "%s%s_%d" % ("in_" if name[0].isdigit() else "", name, index)



def keep_metadata_only(gm):
    """Replace each node's ``example_value`` (a real tensor of the traced
    run) by its metadata, ``node.meta["tensor_meta"]`` (a ``TensorMetadata``
    as ``ShapeProp`` writes it: shape, dtype, strides, ``requires_grad``),
    in ``gm`` and the graphs it calls.  Done once the graph is compiled: a
    cache entry then holds no tensor of the call that made it."""
    import torch
    import torch.fx
    from torch.fx.passes.shape_prop import _extract_tensor_metadata

    for module in gm.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            value = node.meta.pop("example_value", None)
            if isinstance(value, torch.Tensor) and "tensor_meta" not in node.meta:
                node.meta["tensor_meta"] = _extract_tensor_metadata(
                    value, include_contiguity=False)
