"""Graph outputs keep the memory layout they had in eager.

Inductor chooses the layout of some buffers itself: a ``torch.cat`` of
transposed inputs can come out with the inputs' strides where eager gives
a contiguous tensor (seen with Hugging Face's KV cache: eager keys with
strides ``(192, 96, 16, 1)``, Inductor's ``(192, 16, 32, 1)``;
``torch.compile`` gives the same).  pyinterp's capture call runs eagerly
and its later calls run the compiled graph, so a tensor that flows from one
call into the next would have one layout after the capture and another
after a hit, and the next call's guard (which checks strides) would miss
once more than under ``torch.compile``, whose first call is compiled too.

:func:`keep_eager_layout` asks for eager's layout explicitly: each output
whose eager value is a contiguous tensor of its own (not a view, sharing
memory with no input and no other output) goes through
``aten.clone(memory_format=torch.contiguous_format)``.  Inductor then
writes that buffer contiguously (the clone fuses into the kernel that
makes it when nothing else needs the other layout).  Values are
unchanged, and the outputs have eager's strides, as the capture call's did.
"""
import torch


def keep_eager_layout(gm):
    """Make ``gm``'s fresh contiguous outputs contiguous under any compiler
    (in place; returns how many outputs it wrapped)."""
    graph = gm.graph
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    flat = []
    torch.fx.node.map_arg(output.args, flat.append)
    storages = _storage_counts(graph, flat)
    wrapped = {}

    def wrap(node):
        if node in wrapped:
            return wrapped[node]
        value = node.meta.get("example_value")
        if node.op in ("call_function", "call_method") and _fresh_contiguous(value, storages):
            with graph.inserting_before(output):
                clone = graph.call_function(torch.ops.aten.clone.default, (node,),
                                            {"memory_format": torch.contiguous_format})
            clone.meta.update(node.meta)
            wrapped[node] = clone
            return clone
        return node

    output.args = torch.fx.node.map_arg(output.args, wrap)
    if wrapped:
        gm.recompile()
    return len(wrapped)


def _fresh_contiguous(value, storages):
    return (type(value) is torch.Tensor and value._base is None and value.numel() > 1
            and value.is_contiguous() and not value.is_contiguous(memory_format=torch.channels_last)
            and storages.get(_storage_key(value), 0) == 1)


def _storage_counts(graph, outputs):
    """How many distinct inputs and outputs use each storage."""
    counts = {}
    values = {id(n.meta.get("example_value")): n.meta.get("example_value")
              for n in list(outputs) + [n for n in graph.nodes if n.op == "placeholder"]}
    for value in values.values():
        if isinstance(value, torch.Tensor):
            key = _storage_key(value)
            counts[key] = counts.get(key, 0) + 1
    return counts


def _storage_key(tensor):
    try:
        return tensor.untyped_storage().data_ptr(), tensor.device
    except (RuntimeError, NotImplementedError):  # (a tensor without storage)
        return id(tensor), tensor.device
