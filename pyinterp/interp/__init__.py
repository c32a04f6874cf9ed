"""The interpreter core: runs any Python 3.11-3.13 function opcode by opcode.

Torch-free: nothing here imports torch or :mod:`pyinterp.capture`
(``tests/test_structure.py`` checks it).  Capture extends the core through
the interpreter's hooks: the call ladder's (``calls.py``), the data-model
entry points, and the instruction copies a frame runs (``vm.py``).
"""
