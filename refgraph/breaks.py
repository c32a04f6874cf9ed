"""The registry of graph-break kinds, and the record of one break.

A *break* is a point where a traced run met something it cannot put in a
graph.  Every kind has a stable name, a one-line explanation and a hint
for the user.  :class:`BreakRecord` is what ``explain`` lists and what
``GraphBreakError`` carries.
"""
import attrs


@attrs.frozen
class BreakKind:
    """A stable kind of graph break."""

    name: str
    explanation: str
    hint: str


KINDS = {}


def kind(name, explanation, hint):
    """Register a break kind (names are unique)."""
    if name in KINDS:
        raise ValueError("break kind %r registered twice" % name)
    KINDS[name] = BreakKind(name, explanation, hint)
    return KINDS[name]


@attrs.frozen
class BreakRecord:
    """One break: its kind, a message, the user's file and line, a hint."""

    kind: str
    message: str
    filename: str = None
    lineno: int = None

    @property
    def hint(self):
        return KINDS[self.kind].hint

    def __str__(self):
        where = "%s:%s" % (self.filename, self.lineno) if self.filename else "<unknown>"
        return "%s: %s [%s]\n    hint: %s" % (where, self.message, self.kind, self.hint)


kind("data-dependent-value",
     "a Python value computed from tensor data (.item(), .tolist(), bool(t), int(t)) "
     "decides what the program does next",
     "keep the value in tensor form (torch.where instead of if, multiply by the 0-d "
     "tensor instead of calling .item())")
kind("data-dependent-shape",
     "an op whose output size depends on tensor data (nonzero, masked_select, "
     "boolean-mask indexing, unique)",
     "use a fixed-size formulation (torch.where with a mask) if you can")
kind("tensor-to-python",
     "a tensor leaves torch for another library (.numpy(), __array__, data_ptr)",
     "do the computation with torch ops")
kind("numpy-call",
     "a NumPy array or scalar made from graph data (t.numpy()) meets something the "
     "capture cannot mirror with torch._numpy: an in-place write, a call other than a "
     "pure NumPy function, a mirror whose result differs from NumPy's",
     "use NumPy's pure functions and operators without out= (or torch ops), and go "
     "back with torch.from_numpy")
kind("backward",
     ".backward() or autograd.grad inside the traced function writes .grad outside the graph",
     "trace the forward computation only and call backward() on its result")
kind("impure-call",
     "a call whose result changes from call to call (random, time, I/O)",
     "pass the value in as an argument, or use torch's own RNG")
kind("opaque-native-call",
     "a C function pyinterp cannot see into received an object from outside the "
     "function, so its reads and writes cannot be guarded or replayed",
     "move the call out of the traced function, or report the function so a rule "
     "can be added for it")
kind("native-callback",
     "Python code ran natively, called back by C code or by torch's own code (a hook, "
     "a function given to a torch function, a custom autograd.Function's forward), so "
     "its reads and writes could not be guarded or replayed; the call runs natively "
     "on every call",
     "call the Python code directly, or keep the call outside the traced function")
kind("untracked-tensor",
     "a tensor reached the graph by a path pyinterp did not see",
     "pass the tensor as an argument or keep it as a module attribute")
kind("unsupported-value",
     "a value the graph or the mock cannot represent (an argument to a torch op, a "
     "return value, or a side effect's operand)",
     "return tensors, Python scalars, containers and plain objects")
kind("tensor-attribute-write",
     "an attribute of a tensor (.data, .grad, requires_grad) is assigned inside "
     "the traced function",
     "do it outside the traced function")
kind("text-of-tensor",
     "a tensor is formatted into a string (f-string, str(), repr()) inside the "
     "traced function",
     "print the tensor itself (print(t) is replayed) or format it outside")
kind("unsupported-global-state",
     "global torch state (autocast, default dtype...) changes inside the function in "
     "a way the graph cannot record",
     "set the state outside the traced function")
kind("compiler-disable",
     "the function is marked torch.compiler.disable (or torch._dynamo.disable): it runs "
     "natively on every call, outside any graph, as under torch.compile",
     "remove the decorator to have the function captured")
