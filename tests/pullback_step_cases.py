"""A stand-in for pullback's own code (a rule's transformable pullback), for
tests/test_error_locations.py: the test makes pullback count this file as its own, so a
construct refused here is refused where a derivative of a derivative would meet one in a
rule's pullback."""


def scale(a, y=1.0):
    return a * y


def step(x, fn):
    return fn(2.0, y=x)  # a varied keyword of a call found at run time: PB502
