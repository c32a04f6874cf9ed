"""RefGraph: access paths, outside reads and writes, and guards as data.

Graph capture (``pyinterp.trace``) records here every value a run reads from
outside the traced function, with the access path it was reached by, and
every write to outside state.  This package is filled in by the tracing work
(see the project issues); the interpreter core only documents, in each
opcode handler's docstring, the rule it will apply.
"""
