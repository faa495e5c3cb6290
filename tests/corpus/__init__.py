"""Realistic functions written the way people write them (issue 10's corpus): optimization
test functions as methods with evaluation counters, model code with helper functions and
parameter lists, layer and loss objects, and small idioms (comprehensions, lambdas,
``functools.partial``, callable objects). Every entry is differentiated as written."""
