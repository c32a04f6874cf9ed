"""The data model as CPython's C code implements it: special-method lookup,
operators, attributes, containers and text, with every Python-level
special method interpreted."""
