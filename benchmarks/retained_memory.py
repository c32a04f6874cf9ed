#!/usr/bin/env python3
"""Memory a compiled callable keeps after its first call: pyinterp.trace
against torch.compile, on the real models (GPT-2, BERT, Llama small configs).

For each model and each mode (``no_grad``: inference; ``grad``: parameters
that require grad, so outputs carry autograd graphs), in one process, three
callables are built on a fresh model each: eager (the model itself, the
reference: it keeps nothing), ``pyinterp.trace(model)`` and
``torch.compile(model)``, both with ``--backend`` (Inductor by default).
Each one is called once on fresh inputs (the first call: capture and
compile), then the inputs and the output are dropped, and the script counts
what stays alive.

What is counted (honestly, and what is not):

* **retained**: the bytes of tensor storage alive after the call that were
  not alive before it (the model's own parameters and everything created
  earlier are excluded).  Live tensors are found with ``gc.get_objects()``;
  for each one with an autograd graph, the graph is walked and the tensors
  its nodes saved for backward (``_saved_*``) are counted too (they are
  held from C++, invisible to ``gc``).  Storages are counted once (views
  share one).  FakeTensors and meta tensors have no data and are not
  counted.  What C++ holds outside any Python-visible tensor (Inductor's
  compiled kernels' constants, if any) is not seen: on the CPU there is no
  allocator statistic to ask.
* **after del**: the same count once the compiled callable itself is
  deleted (what the process still holds for good: global caches).
* **lines**: the generated sources ``linecache`` gained (names in angle
  brackets, such as torch.fx's ``<eval_with_key>.N`` or pyinterp's
  ``<pyinterp-mock>``), after the call and after the delete.  Real files
  that tracebacks or FX's ``stack_trace`` read are Python's ordinary cache
  and are not counted, nor are attrs' per-class methods (made once, when a
  module is first imported).
* For scale: the model's parameter bytes and the output's bytes.

A one-time warm-up compiles a small function with both compilers first
(Inductor allocates a few tensors of its own on first use, for good).

Usage::

    python3 benchmarks/retained_memory.py                 # all three models, both modes
    python3 benchmarks/retained_memory.py --quick         # no_grad mode only
    python3 benchmarks/retained_memory.py --models hf_gpt2 --backend eager
"""
import argparse
import gc
import linecache
import sys
import warnings

import _harness as H  # noqa: E402  (puts the repository root on sys.path)
import torch  # noqa: E402

import models as M  # noqa: E402

DEFAULT_MODELS = ("hf_gpt2", "hf_bert", "hf_llama")


# ---------------------------------------------------------------------------
# Counting live tensor storage
# ---------------------------------------------------------------------------

def _has_data(t):
    from torch._subclasses.fake_tensor import FakeTensor

    return not isinstance(t, FakeTensor) and t.device.type != "meta"


def _saved_tensors(roots):
    """Tensors saved for backward by the autograd graphs of ``roots``."""
    seen, found, stack = set(), [], [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for name in dir(node):
            if not name.startswith("_saved_"):
                continue
            try:
                value = getattr(node, name)
            except Exception:  # noqa: BLE001 - freed by a backward, or not a tensor
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            found += [v for v in values if isinstance(v, torch.Tensor)]
        stack += [fn for fn, _ in getattr(node, "next_functions", ())]
    return found


def live_storages():
    """``{storage key: nbytes}`` of every tensor with data that is alive."""
    gc.collect()
    with warnings.catch_warnings():  # isinstance on torch's deprecated aliases warns
        warnings.simplefilter("ignore")
        tensors = [o for o in gc.get_objects() if isinstance(o, torch.Tensor)]
    tensors = [t for t in tensors if _has_data(t)]
    out = {}
    for t in tensors + [s for s in _saved_tensors(tensors) if _has_data(s)]:
        try:
            storage = t.untyped_storage()
        except Exception:  # noqa: BLE001 - sparse and other storage-less layouts
            continue
        out[(storage.data_ptr(), t.device.type, storage.nbytes())] = storage.nbytes()
    return out


def new_bytes(before):
    now = live_storages()
    keys = [k for k in now if k not in before]
    return sum(now[k] for k in keys), len(keys)


# ---------------------------------------------------------------------------
# One measurement
# ---------------------------------------------------------------------------

def generated_sources():
    """The ``linecache`` keys of generated source: names in angle brackets,
    less attrs' per-class methods (made once per class at import)."""
    return {key for key in list(linecache.cache)
            if key.startswith("<") and not key.startswith("<attrs generated")}


def measure(spec, make, mode, seed=1):
    """Retained bytes after the first call of ``make(model)``, and after
    deleting that callable."""
    model = spec.build()
    if mode == "no_grad":
        model.requires_grad_(False)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    before = live_storages()
    lines = generated_sources()
    compiled = make(model)

    def first_call():
        args, kwargs = spec.example(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = compiled(*args, **kwargs)
        return sum(t.numel() * t.element_size() for t in M.flatten_tensors(out))

    out_bytes = first_call()
    retained, count = new_bytes(before)
    new_lines = len(generated_sources() - lines)
    del compiled
    after_del, _ = new_bytes(before)
    return {"retained": retained, "tensors": count, "after_del": after_del,
            "params": params, "output": out_bytes, "lines": new_lines,
            "lines_after_del": len(generated_sources() - lines)}


SYSTEMS = {
    "eager": lambda model, backend: model,
    "pyinterp": lambda model, backend: H.pyinterp_trace(model, backend),
    "torch.compile": lambda model, backend: H.dynamo_compile(model, backend),
}


def kib(n):
    return "%.1f KiB" % (n / 1024.0) if n >= 1024 else "%d B" % n


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    p.add_argument("--backend", default="inductor")
    p.add_argument("--quick", action="store_true", help="the no_grad mode only")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    _, why = H.load_pyinterp()
    if why:
        print("pyinterp unavailable: %s" % why)
        return 1
    H.warm_up_compilers(args.backend)
    modes = ("no_grad",) if args.quick else ("no_grad", "grad")
    print("Retained after the first call (backend=%s, torch %s); tensor storage bytes "
          "alive that were not before the call." % (args.backend, torch.__version__))
    print()
    print("| model | mode | params | output | system | retained | tensors | after del "
          "| lines | lines after del |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        spec = M.get_model(name)
        for mode in modes:
            for system, make in SYSTEMS.items():
                if system == "torch.compile":
                    H.dynamo_reset()
                try:
                    r = measure(spec, lambda m: make(m, args.backend), mode)
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    print("| %s | %s | | | %s | error: %s | | | | |" % (
                        name, mode, system, H.one_line(exc, 80)))
                    continue
                print("| %s | %s | %s | %s | %s | %s | %d | %s | %d | %d |" % (
                    name, mode, kib(r["params"]), kib(r["output"]), system,
                    kib(r["retained"]), r["tensors"], kib(r["after_del"]), r["lines"],
                    r["lines_after_del"]))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
