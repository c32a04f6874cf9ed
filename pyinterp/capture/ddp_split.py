"""Graphs split at DistributedDataParallel's gradient buckets (as Dynamo's
``DDPOptimizer`` does).

A graph compiled while a DDP forward runs its inner module
(``DistributedDataParallel._get_active_ddp_module()`` is set, as under
``torch.compile``) is compiled by :class:`BucketSplitBackend`:
``pyinterp.trace(DDP(model))`` (:mod:`.ddp_forward`), a traced
``model.forward`` inside ``DDP(model)``, ``DDP(pyinterp.trace(model))``.

DDP all-reduces gradients one bucket at a time, each as soon as every
gradient of the bucket is ready, so that communication overlaps the rest of
backward.  A backend that compiles a whole forward into one autograd node
(AOTAutograd: ``inductor``, ``aot_eager``) makes every gradient ready at
once, at the end of that node's backward: no overlap.  So a graph captured
inside a DDP forward is cut into parts, one per bucket, each compiled by
the user's backend: each part's backward is its own autograd node, and a
bucket's gradients are ready (its all-reduce starts) when its part's
backward ends.

Buckets are filled as DDP fills them: parameters in reverse order of use
(the order their gradients become ready), the first bucket up to DDP's
first-bucket cap, the others up to ``bucket_bytes_cap``.  The graph is
walked backwards and each node joins the current bucket; a full bucket is
closed at the next node only when one of its nodes has a user outside it
(a part must produce something), as ``DDPOptimizer`` does.  A graph whose
parameters fit one bucket is not split.

The number of parts is written on the graph, ``gm.meta["ddp_parts"]``
(cache entries and ``explain`` report it).
"""
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch import fx

PARTS_KEY = "ddp_parts"
"""``gm.meta`` key of the number of parts a captured graph was compiled as."""


def active_ddp() -> Any:
    """The DDP module whose forward is running its inner module (DDP's C++
    reducer path sets it), or None."""
    from torch.nn.parallel import DistributedDataParallel

    active = getattr(DistributedDataParallel, "_get_active_ddp_module", None)
    return active() if active is not None else None


def inside_active_ddp(backend: Callable[..., Any]) -> Callable[..., Any]:
    """``backend``, split at the active DDP module's buckets if there is one."""
    ddp = active_ddp()
    if ddp is None or isinstance(backend, BucketSplitBackend):
        return backend
    return BucketSplitBackend(backend, ddp)


def bucket_caps(ddp: Any) -> Tuple[int, int]:
    """``(bucket_bytes_cap, first_bucket_cap)`` of a DDP instance: its own
    caps (the first bucket is smaller, ``dist._DEFAULT_FIRST_BUCKET_BYTES``,
    when ``bucket_cap_mb`` was left to its default)."""
    cap = int(ddp.bucket_bytes_cap)
    config = getattr(ddp, "_bucket_config", None)
    if config is not None:
        first = int(config.first_bucket_bytes_cap)
    elif getattr(ddp, "bucket_bytes_cap_default", False):
        first = int(torch.distributed._DEFAULT_FIRST_BUCKET_BYTES)
    else:
        first = cap
    return cap, min(first, cap)


def _bucketed_parameter(value: Any) -> bool:
    """A parameter whose gradient DDP all-reduces."""
    return (isinstance(value, torch.nn.Parameter) and value.requires_grad
            and not getattr(value, "_ddp_ignored", False))


def _parameters_of(gm: fx.GraphModule, example_inputs: Optional[Sequence[Any]]
                   ) -> Dict[fx.Node, Any]:
    """The graph's nodes that stand for DDP's parameters: placeholders whose
    example input is one (without ``example_inputs``: whose
    ``example_value``, the capture's tensor, is one), and ``get_attr``
    nodes that read one."""
    found = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if example_inputs is None:
        example_inputs = [n.meta.get("example_value") for n in placeholders]
    for node, value in zip(placeholders, example_inputs):
        if _bucketed_parameter(value):
            found[node] = value
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            value = getattr(gm, node.target, None)
            if _bucketed_parameter(value):
                found[node] = value
    return found


def _has_outside_user(nodes: List[fx.Node]) -> bool:
    inside = set(nodes)
    return any(user not in inside for node in nodes for user in node.users)


def assign_buckets(gm: fx.GraphModule, example_inputs: Optional[Sequence[Any]], bucket_cap: int,
                   first_cap: int) -> List[List[fx.Node]]:
    """The graph's computing nodes in buckets, in graph order (the last
    bucket is the one DDP fills first)."""
    params = _parameters_of(gm, example_inputs)
    buckets: List[List[fx.Node]] = [[]]
    sizes = [0]
    counted = set()
    for node in reversed(gm.graph.nodes):
        if node.op in ("placeholder", "output"):
            continue
        cap = first_cap if len(buckets) == 1 else bucket_cap
        if sizes[0] >= cap and _has_outside_user(buckets[0]):
            buckets.insert(0, [])
            sizes.insert(0, 0)
        uses = [node] if node.op == "get_attr" else node.all_input_nodes
        for used in uses:
            param = params.get(used)
            if param is not None and id(param) not in counted:
                counted.add(id(param))
                sizes[0] += param.untyped_storage().nbytes()
        buckets[0].append(node)
    if len(buckets) > 1 and sizes[0] == 0:
        buckets[1].extend(buckets.pop(0))  # (a preamble without parameters: no part of its own)
    return [list(reversed(nodes)) for nodes in buckets]


def note_parts(gm: fx.GraphModule, ddp: Any) -> None:
    """Write in ``gm.meta`` how many parts ``gm`` is split into under
    ``ddp``'s bucket caps (a graph of ``explain``, not compiled; its
    placeholders still hold the capture's tensors)."""
    gm.meta[PARTS_KEY] = len(assign_buckets(gm, None, *bucket_caps(ddp)))


def parts_of(graphs: Sequence[fx.GraphModule]) -> List[int]:
    """How many parts each of ``graphs`` was split into at DDP's buckets
    (1: not split); empty for graphs captured outside a DDP module."""
    return [gm.meta[PARTS_KEY] for gm in graphs if PARTS_KEY in gm.meta]


class BucketSplitBackend:
    """A backend ``(gm, example_inputs) -> callable`` that splits the graph at
    ``ddp``'s bucket boundaries and compiles each part with ``backend``."""

    def __init__(self, backend: Callable[..., Any], ddp: Any):
        self.backend = backend
        self.caps = bucket_caps(ddp)
        self.__name__ = "ddp_split(%s)" % getattr(backend, "__name__", type(backend).__name__)

    def __call__(self, gm: fx.GraphModule, example_inputs: List[Any]) -> Callable[..., Any]:
        if not _splittable(example_inputs):
            return self.backend(gm, example_inputs)
        buckets = assign_buckets(gm, example_inputs, *self.caps)
        gm.meta[PARTS_KEY] = len(buckets)
        if len(buckets) == 1:
            return self.backend(gm, example_inputs)
        part_of = {node: index for index, nodes in enumerate(buckets) for node in nodes}
        split = torch.fx.passes.split_module.split_module(
            gm, None, lambda node: part_of[node], keep_original_order=True)
        _compile_parts(split, self.backend, example_inputs)
        return split.forward


def _splittable(example_inputs: Sequence[Any]) -> bool:
    """False for a graph with symbolic sizes (a size input, or the capture's
    fake mode in a tracing context): compiled whole, not split."""
    from torch._guards import TracingContext

    return TracingContext.try_get() is None and all(
        isinstance(t, torch.Tensor) for t in example_inputs)


def _compile_parts(split: fx.GraphModule, backend: Callable[..., Any],
                   example_inputs: Sequence[Any]) -> None:
    """Replace each part of ``split`` by its compiled form: the parts' example
    inputs come from running ``split`` on fake copies of ``example_inputs``
    (nothing real runs: a graph that updates a buffer in place updates it
    once per call, on the call)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    fakes = [fake_mode.from_tensor(t) if isinstance(t, torch.Tensor) else t
             for t in example_inputs]

    class PartCompiler(fx.Interpreter):
        def call_module(self, target, args, kwargs):
            part = self.fetch_attr(target)
            with fake_mode:
                out = part(*args, **kwargs)  # (the example outputs, before compiling)
            single = _output_as_tuple(part)
            setattr(split, target, _CompiledPart(backend(part, list(args)), single))
            return out

    with fake_mode:
        PartCompiler(split).run(*fakes)
    split.recompile()


def _output_as_tuple(part: fx.GraphModule) -> bool:
    """Make ``part`` return a tuple (AOTAutograd's backends want one); True
    if it returned a single value, which :class:`_CompiledPart` unwraps."""
    output = next(n for n in reversed(part.graph.nodes) if n.op == "output")
    if isinstance(output.args[0], (tuple, list)):
        return False
    output.args = ((output.args[0],),)
    part.recompile()
    return True


class _CompiledPart(torch.nn.Module):
    """A compiled part, as the split graph's submodule."""

    def __init__(self, compiled: Callable[..., Any], single: bool):
        super().__init__()
        self.compiled = compiled
        self.single = single

    def forward(self, *args: Any) -> Any:
        out = self.compiled(*args)
        return out[0] if self.single else out
