"""pyproject.toml installs every package of the source tree.

setuptools installs only the packages that ``[tool.setuptools] packages``
names: a sub-package left out of that list works in a source checkout and
in an editable install, and is missing from a wheel.
"""
import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _source_packages():
    """Installed name -> folder, for every folder with an ``__init__.py``."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    found = set()
    for installed, folder in package_dir.items():
        top = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            if "__init__.py" not in filenames:
                continue
            rel = os.path.relpath(dirpath, top)
            if rel == ".":
                found.add(installed)
            else:
                found.add(installed + "." + rel.replace(os.sep, "."))
    return found


def test_every_source_package_is_installed():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    missing = _source_packages() - listed
    assert not missing, "add to [tool.setuptools] packages in pyproject.toml: %s" % sorted(missing)
    assert not listed - _source_packages(), "listed but not in the tree: %s" % sorted(
        listed - _source_packages())


def _pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def test_the_license_file_is_the_license_pyproject_names():
    project = _pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    with open(os.path.join(ROOT, "LICENSE")) as f:
        text = f.read()
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_version_is_the_same_in_pyproject_and_the_package():
    import pyinterp

    assert pyinterp.__version__ == _pyproject()["project"]["version"]


def _specifiers(requirement, name):
    """``"torch>=2.13,<2.14"`` -> [(">=", (2, 13)), ("<", (2, 14))]."""
    assert requirement.startswith(name) and requirement[len(name)] in "<>=!~", requirement
    out = []
    for clause in requirement[len(name):].split(","):
        op = clause[:2] if clause[1] in "=<>" else clause[:1]
        out.append((op, tuple(int(p) for p in clause[len(op):].split("+")[0].split("."))))
    return out


def _admits(specifiers, version):
    def pad(v):
        return v + (0,) * (3 - len(v))

    checks = {">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
              ">": lambda a, b: a > b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
    return all(checks[op](pad(version), pad(bound)) for op, bound in specifiers)


def test_the_torch_extra_is_a_range_over_the_tested_versions_and_ci_pins_one():
    from pyinterp.versions import TESTED_TORCH_VERSIONS, torch_requirement

    (requirement,) = _pyproject()["project"]["optional-dependencies"]["torch"]
    assert requirement == "torch" + torch_requirement()
    spec = _specifiers(requirement, "torch")
    for major, minor in TESTED_TORCH_VERSIONS:
        assert _admits(spec, (major, minor, 0)) and _admits(spec, (major, minor, 1))
        assert not _admits(spec, (major, minor + 1, 0)) or (major, minor + 1) in \
            TESTED_TORCH_VERSIONS
    with open(os.path.join(ROOT, ".ci", "constraints.txt")) as f:
        pins = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    (pin,) = [p for p in pins if p.startswith("torch=")]
    ((op, version),) = _specifiers(pin, "torch")
    assert op == "==" and _admits(spec, version) and version[:2] in TESTED_TORCH_VERSIONS
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        assert "-c .ci/constraints.txt" in f.read()


def test_the_wheel_ships_py_typed_and_the_license(tmp_path):
    """Build the wheel as a user's ``pip install`` would (from a copy of the
    files it is built from) and look inside."""
    import shutil
    import subprocess
    import sys
    import zipfile

    src = tmp_path / "src"
    package_dirs = set(_pyproject()["tool"]["setuptools"]["package-dir"].values())
    src.mkdir()
    for name in ["pyproject.toml", "README.md", "LICENSE"]:
        shutil.copy(os.path.join(ROOT, name), src / name)
    for folder in package_dirs:
        shutil.copytree(os.path.join(ROOT, folder), src / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path / "dist"), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = z.read(metadata).decode()
        (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert z.read(license_file).decode() == open(os.path.join(ROOT, "LICENSE")).read()
    assert "pyinterp/py.typed" in names
    assert "pyinterp/opcodes/registry.py" in names and "pyinterp/__main__.py" in names
    assert "License-Expression: MIT" in meta.splitlines()
    from pyinterp.versions import torch_requirement

    (torch_line,) = [line for line in meta.splitlines()
                     if line.startswith("Requires-Dist: torch") and 'extra == "torch"' in line]
    clauses = torch_line[len("Requires-Dist: torch"):].split(";")[0]
    assert set(clauses.split(",")) == set(torch_requirement().split(","))


def test_the_public_api_has_type_hints():
    """Every function ``pyinterp`` exports (and the public methods of the
    classes it exports, exceptions aside) annotates each parameter and its
    return; ``py.typed`` tells type checkers to read them."""
    import inspect
    import typing

    import pyinterp

    def problems(fn, where):
        hints = typing.get_type_hints(fn)
        missing = [name for name, param in inspect.signature(fn).parameters.items()
                   if name not in hints and name not in ("self", "cls")]
        missing += [] if "return" in hints else ["return"]
        return ["%s: %s" % (where, name) for name in missing]

    found, checked = [], 0
    for name in pyinterp.__all__:
        obj = getattr(pyinterp, name)
        if inspect.isfunction(obj):
            found += problems(obj, name)
            checked += 1
        elif inspect.isclass(obj) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member) and not attr.startswith("_"):
                    found += problems(member, "%s.%s" % (name, attr))
                    checked += 1
    assert checked >= 5
    assert not found, "annotate: %s" % ", ".join(found)
    assert os.path.isfile(os.path.join(ROOT, "pyinterp", "py.typed"))
