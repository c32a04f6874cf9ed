"""A lazy module (``nn.LazyLinear``) met before its first call: its
parameters are materialized natively, then the materialized module is
captured.

``LazyModuleMixin`` registers ``_infer_parameters`` as a forward pre-hook:
on the first call it sizes the parameters from the input, initializes them
(drawing random numbers, as ``reset_parameters`` does), removes itself and
turns the module into its ``cls_to_become`` (``LazyLinear`` becomes
``Linear``).  That is a one-time change of outside state, which assigning
``.data`` of a parameter in the graph cannot express.  As Dynamo does, the
capture runs that hook natively, once, at the point of the call (so the
random numbers are drawn where eager draws them), then goes on with the
module as it now is: its parameters are the very objects eager would have,
and later calls find the same state (guard hits; where the run read
through the module before calling it, its guards hold the lazy class and
the second call captures once more).
"""
from torch.nn.modules.lazy import LazyModuleMixin


def uninitialized(module):
    """True for a lazy module whose first call would materialize its
    parameters (its ``_infer_parameters`` pre-hook is still registered).
    Runs no Python code of an object that is not one (``type``, not a
    ``__class__`` property)."""
    return issubclass(type(module), LazyModuleMixin) \
        and "_initialize_hook" in object.__getattribute__(module, "__dict__") \
        and module.has_uninitialized_params()


def materialize(cap, module, args, kwargs):
    """Run the lazy module's initialization natively (unrecorded: no op of
    it belongs to the graph); a break in a speculative arm, whose outside
    writes must be undone."""
    if cap.speculation.depth:
        cap.break_graph("tensor-attribute-write", "a lazy module's first call in a "
                        "speculative arm materializes its parameters")
    lazy_class = type(module)
    with cap.breaks.paused():
        module._infer_parameters(module, tuple(args), dict(kwargs or {}))
    # (the module's type guard, read as it was reached, follows its new
    # class when nothing was read through it yet: the next call is a hit)
    cap.recording.refgraph.retype(module, lazy_class)
