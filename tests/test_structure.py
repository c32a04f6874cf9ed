"""The direction of arrows between our packages, read from the source with ``ast``.

Every ``import`` and ``from ... import`` in the source tree counts, at module
level and inside functions (lazy imports) alike; relative imports are
resolved.  The four top-level folders are read under their installed names:
``pyinterp/`` as ``pyinterp``, ``opcodes/`` as ``pyinterp.opcodes``,
``refgraph/`` as ``pyinterp.refgraph`` and ``codegen/`` as
``pyinterp.codegen``.

**Edges.**  ``import a.b.c`` is an edge to the module ``a.b.c``;
``from pkg import name`` is an edge to ``pkg.name`` when that is a module,
else to ``pkg`` (``name`` is then defined by ``pkg/__init__.py``).

**Package ``__init__`` modules.**  Importing ``a.b.c`` also runs the
``__init__`` of every package above it.  That run is a real dependency only
for an importer *outside* the package: an importer inside ``a.b`` can only
be running once ``a.b``'s ``__init__`` has started, so importing ``a.b.c``
from there never (re)runs it.  So an import adds an implicit edge from the
importer to each package ``__init__`` above the target that is not also
above (or equal to) the importer.  ``pyinterp/__init__.py`` is above every
module, so no module depends on it implicitly; a module depends on it only
by importing a name it defines (``from pyinterp import interpret``).
``pyinterp/__init__.py`` re-exports both programs (``interpret`` and the
lazily-importing ``trace``); that importing it and interpreting leaves torch
unloaded is checked by running it, in a subprocess.

The checks:

* the interpreter core (``pyinterp.interp``, ``pyinterp.opcodes``,
  ``pyinterp.api``, ``pyinterp.errors``) reaches neither torch nor
  ``pyinterp.capture``, directly or through other modules of ours;
* the import graph of our modules has no circle;
* ``codegen/`` imports only itself and ``refgraph/`` of ours; ``refgraph/``
  and ``opcodes/`` import only themselves.
"""
import ast
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCE_FOLDERS = {
    "pyinterp": "pyinterp",
    "opcodes": "pyinterp.opcodes",
    "refgraph": "pyinterp.refgraph",
    "codegen": "pyinterp.codegen",
}

CORE = ("pyinterp.interp", "pyinterp.opcodes", "pyinterp.api", "pyinterp.errors")


def _inside(name, package):
    """Whether module ``name`` is ``package`` or lies under it."""
    return name == package or name.startswith(package + ".")


def _find_modules():
    """{installed module name: (path, is_package)} for every source file."""
    modules = {}
    for folder, installed in SOURCE_FOLDERS.items():
        base = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            if dirpath != base and "__init__.py" not in filenames:
                dirnames[:] = []
                continue
            rel = os.path.relpath(dirpath, base)
            parts = [installed] + ([] if rel == "." else rel.split(os.sep))
            for filename in sorted(filenames):
                if not filename.endswith(".py"):
                    continue
                path = os.path.join(dirpath, filename)
                if filename == "__init__.py":
                    modules[".".join(parts)] = (path, True)
                else:
                    modules[".".join(parts + [filename[:-3]])] = (path, False)
    return modules


class Import:
    """One import statement's edge: ``importer`` imports ``target``."""

    def __init__(self, importer, target, path, line, lazy, implicit=False):
        self.importer = importer
        self.target = target
        self.path = path
        self.line = line
        self.lazy = lazy
        self.implicit = implicit

    def where(self):
        """``file:line: importer imports target (lazy, implicit)``."""
        kinds = ["lazy"] * self.lazy + ["implicit: the package's __init__"] * self.implicit
        return "%s:%d: %s imports %s%s" % (
            os.path.relpath(self.path, ROOT), self.line, self.importer,
            self.target, " (%s)" % ", ".join(kinds) if kinds else "")


def _statements(tree):
    """(import node, lazy) for every import in ``tree``; lazy means inside a
    function (class bodies run at import time, like module level)."""
    found = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, lazy))
            inner = lazy or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner)

    visit(tree, False)
    return found


BEYOND_TOP = "<relative import beyond the top-level package>"


def _resolve_from(importer, is_package, node):
    """The absolute module a ``from ... import`` names."""
    if node.level == 0:
        return node.module
    package = importer if is_package else importer.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    if not package:
        return BEYOND_TOP
    return package + "." + node.module if node.module else package


def _explicit_imports(modules):
    """Every import statement of every module, as :class:`Import` edges
    (targets outside our tree are kept: torch, libraries)."""
    edges = []
    for importer, (path, is_package) in sorted(modules.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node, lazy in _statements(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve_from(importer, is_package, node)
                targets = []
                for alias in node.names:
                    sub = base + "." + alias.name
                    targets.append(sub if sub in modules else base)
            for target in dict.fromkeys(targets):
                edges.append(Import(importer, target, path, node.lineno, lazy))
    return edges


def _with_implicit(edges, modules):
    """``edges`` plus, for each edge to one of our modules, the implicit
    edges to the package ``__init__`` modules it runs (see the module
    docstring for which ones count)."""
    out = []
    for edge in edges:
        out.append(edge)
        if edge.target not in modules:
            continue
        parts = edge.target.split(".")
        for n in range(1, len(parts)):
            package = ".".join(parts[:n])
            if not _inside(edge.importer, package):
                out.append(Import(edge.importer, package, edge.path, edge.line,
                                  edge.lazy, implicit=True))
    return out


MODULES = _find_modules()
EXPLICIT = _explicit_imports(MODULES)
EDGES = _with_implicit(EXPLICIT, MODULES)


def _graph():
    """{importer: {target: first Import}} over our modules."""
    graph = {name: {} for name in MODULES}
    for edge in EDGES:
        if edge.target in MODULES and edge.target != edge.importer:
            graph[edge.importer].setdefault(edge.target, edge)
    return graph


def test_every_import_of_ours_resolves():
    """An import naming a module of ours that does not exist would hide an
    edge from the checks below."""
    bad = [e.where() for e in EXPLICIT
           if (_inside(e.target, "pyinterp") or e.target == BEYOND_TOP) and e.target not in MODULES]
    if bad:
        pytest.fail("imports of modules that do not exist:\n" + "\n".join(bad), pytrace=False)


def _torch(name):
    return _inside(name, "torch")


def test_core_reaches_neither_torch_nor_capture():
    """Breadth-first from every core module, lazy imports included; the
    failure shows the chain of imports from the core to the offence."""
    graph = _graph()
    core = [m for m in MODULES if any(_inside(m, c) for c in CORE)]
    assert "pyinterp.interp.vm" in core and "pyinterp.opcodes.registry" in core
    torch_imports = {}
    for edge in EXPLICIT:
        if _torch(edge.target):
            torch_imports.setdefault(edge.importer, edge)
    came_from = {m: None for m in core}
    queue = list(core)
    offences = []
    while queue:
        module = queue.pop(0)
        chain = []
        step = module
        while came_from[step] is not None:
            chain.append(came_from[step])
            step = came_from[step].importer
        chain.reverse()
        if _inside(module, "pyinterp.capture"):
            offences.append(("reaches the capture package", chain))
            continue
        if module in torch_imports:
            offences.append(("imports torch", chain + [torch_imports[module]]))
        for target, edge in sorted(graph[module].items()):
            if target not in came_from:
                came_from[target] = edge
                queue.append(target)
    if offences:
        pytest.fail("\n".join("the core %s:\n  %s" % (what, "\n  ".join(e.where() for e in chain))
                              for what, chain in offences), pytrace=False)


def test_interpret_leaves_torch_unloaded():
    script = textwrap.dedent("""
        import sys
        import pyinterp

        def f(n):
            return sum(i * i for i in range(n))

        assert pyinterp.interpret(f)(5) == 30
        loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
        assert not loaded, loaded
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan),
    each as one concrete circle of edges through it."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def connect(node):  # iterative, to stay clear of the recursion limit
        work = [(node, iter(sorted(graph[node])))]
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[current] = min(low[current], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[current])
                if low[current] == index[current]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == current:
                            break
                    if len(component) > 1:
                        components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    circles = []
    for component in components:
        start = min(component)
        # shortest path start -> ... -> start inside the component
        came_from = {start: None}
        queue = [start]
        end = None
        while queue and end is None:
            node = queue.pop(0)
            for child, edge in sorted(graph[node].items()):
                if child == start:
                    end = edge
                    break
                if child in component and child not in came_from:
                    came_from[child] = edge
                    queue.append(child)
        circle = [end]
        while came_from[circle[-1].importer] is not None:
            circle.append(came_from[circle[-1].importer])
        circle.reverse()
        circles.append((sorted(component), circle))
    return circles


def test_no_import_circles():
    """The failure shows, per tangle (modules that all reach each other),
    one shortest circle and then every import between its modules."""
    graph = _graph()
    message = []
    for component, circle in _cycles(graph):
        inside = [edge for module in component for target, edge in sorted(graph[module].items())
                  if target in component]
        message.append("circle among %d modules:\n  %s\n all %d imports among them:\n  %s" % (
            len(component), "\n  ".join(e.where() for e in circle),
            len(inside), "\n  ".join(e.where() for e in inside)))
    if message:
        pytest.fail("\n".join(message), pytrace=False)


@pytest.mark.parametrize("package, allowed", [
    ("pyinterp.codegen", ("pyinterp.codegen", "pyinterp.refgraph")),
    ("pyinterp.refgraph", ("pyinterp.refgraph",)),
    ("pyinterp.opcodes", ("pyinterp.opcodes",)),
])
def test_helper_package_imports(package, allowed):
    """Of our packages, each helper package imports only those allowed
    (libraries, torch included, are free)."""
    bad = [e.where() for e in EXPLICIT
           if _inside(e.importer, package) and _inside(e.target, "pyinterp")
           and not any(_inside(e.target, a) for a in allowed)]
    if bad:
        pytest.fail("%s may import only %s of ours:\n%s" % (
            package, ", ".join(allowed), "\n".join(bad)), pytrace=False)
