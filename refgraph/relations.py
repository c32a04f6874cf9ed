"""Size relations as guard checks (dynamic shapes).

Torch's shape environment states what an entry with symbolic sizes needs
as Python comparisons (``2 <= s0[1]``, ``r0[0] == s0[1]``,
``(s0[1] % 3) == 0``); the capture writes them over ``t<k>`` (the k-th
symbolic tensor), ``s<k>`` (its ``shape``) and ``r<k>`` (its
``stride()``).  :func:`checks` turns one such line into
:mod:`.expr` trees over the guard's resolved paths, so the code generator
emits them as bytecode like any other check.  Only comparisons, ``+ - * //
%``, unary minus, ``and``, constants and those names are understood: a
relation in any other form raises ``ValueError`` (the capture then guards
exact shapes).
"""
import ast

from .expr import BinOp, Call, Compare, GetAttr, GetItem, const

_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
            ast.GtE: ">="}
_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}


def checks(line, tensors, shapes):
    """The checks (all must hold) of relation ``line``; ``tensors[k]`` and
    ``shapes[k]`` are the expressions of ``t<k>`` and ``s<k>``."""
    tree = ast.parse(line, mode="eval").body
    return _conditions(tree, tensors, shapes)


def _conditions(node, tensors, shapes):
    if type(node) is ast.BoolOp and type(node.op) is ast.And:
        return [c for value in node.values for c in _conditions(value, tensors, shapes)]
    if type(node) is ast.Compare:
        out, left = [], _value(node.left, tensors, shapes)
        for op, right_node in zip(node.ops, node.comparators):  # (a chain: one per link)
            if type(op) not in _COMPARE:
                raise ValueError("a relation with %s" % type(op).__name__)
            right = _value(right_node, tensors, shapes)
            out.append(Compare(_COMPARE[type(op)], left, right))
            left = right
        return out
    raise ValueError("a relation that is not a comparison: %s" % ast.unparse(node))


def _value(node, tensors, shapes):
    tp = type(node)
    if tp is ast.Constant and type(node.value) is int:
        return const(node.value)
    if tp is ast.BinOp and type(node.op) in _ARITHMETIC:
        return BinOp(_ARITHMETIC[type(node.op)], _value(node.left, tensors, shapes),
                     _value(node.right, tensors, shapes))
    if tp is ast.UnaryOp and type(node.op) is ast.USub:
        return BinOp("-", const(0), _value(node.operand, tensors, shapes))
    if tp is ast.Subscript and type(node.value) is ast.Name:
        index = _value(node.slice, tensors, shapes)
        name = node.value.id
        if name[0] == "s":
            return GetItem(shapes[int(name[1:])], index)
        if name[0] == "r":
            return GetItem(Call(GetAttr(tensors[int(name[1:])], "stride")), index)
    if tp is ast.Call and type(node.func) is ast.Attribute and not node.args \
            and node.func.attr == "storage_offset" and type(node.func.value) is ast.Name:
        return Call(GetAttr(tensors[int(node.func.value.id[1:])], "storage_offset"))
    raise ValueError("a relation with %s" % ast.unparse(node))
