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
