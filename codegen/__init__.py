"""Code generation: guard and mock bytecode built with the ``bytecode`` library.

Filled in by the tracing work (see the project issues).  The interpreter
core does not generate code.
"""
