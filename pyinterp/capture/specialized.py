"""The values a cache entry is specialized on, in a few words: its tensor
inputs (``x: float32[3, 4] on cpu``) and the Python values its guards fix
(``Tiny.scale == 0.5``).  ``explain`` lists them; the run log
(:mod:`.runrecord`) names the user's line of each.  Torch-free to import.
"""
import re

from . import explain_text
from .guardfail import describe_guard, name_parameters

# Paths into a function's own machinery, not values a user set: left out of
# the specializations (the details list every guard).
_INTERNAL = re.compile(r"__(?:defaults|kwdefaults|code|closure|globals)__|\.co_\w+|"
                       r"cell_contents")


def specializations(guards, param_names=()):
    """The tensor inputs (dtype, shape, device) and the Python values the
    guards fix, as short readable lines (:func:`brief_guard`): the inputs
    first."""
    return [text for _, text in specialized(guards, param_names)]


def specialized(guards, param_names=()):
    """``[(guard, brief text)]`` of the guards that :func:`specializations`
    lists, in its order (the run log also names each guard's user line)."""
    from ..refgraph import guards as G
    from ..refgraph.sources import Arg, Kwarg

    inputs, values = [], []
    for g in guards:
        if type(g) is G.TensorMatch and type(g.source) in (Arg, Kwarg):
            inputs.append((g, brief_guard(g, param_names)))
        elif type(g) is G.ValueEq:
            text = brief_guard(g, param_names)
            if not _INTERNAL.search(text):
                values.append((g, text))
    return inputs + values


def brief_guard(guard, param_names=()):
    """``guard`` in a few words: ``x: float32[3, 4] on cpu`` for a tensor,
    ``m.config.use_cache is True`` for a value (module internals folded,
    :func:`.explain_text.short_path`), else its readable Python."""
    from ..refgraph import guards as G

    if type(guard) is G.ShapeRelations:
        lines = [name_parameters(line, param_names) for line in guard.lines]
        return "sizes: %s%s" % (" and ".join(lines[:3]), " and ..." if len(lines) > 3 else "")
    if type(guard) not in (G.TensorMatch, G.ValueEq):
        return explain_text.short_path(describe_guard(guard, param_names))
    path = explain_text.short_path(name_parameters(guard.source.render(), param_names))
    if type(guard) is G.ValueEq:
        op = "is" if guard.value is None or type(guard.value) is bool else "=="
        return "%s %s %r" % (path, op, guard.value)
    return "%s: %s%s on %s%s" % (path, str(guard.dtype)[6:], list(guard.shape), guard.device,
                                 ", requires_grad" if guard.requires_grad else "")
