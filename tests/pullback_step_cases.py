"""A stand-in for pullback's own code (a rule's transformable pullback), for
tests/test_error_locations.py: the test makes pullback count this file as its own, so a
construct refused here is refused where a derivative of a derivative would meet one in a
rule's pullback."""


def scale(a, y=2.0):
    # a write into an argument (PB101), found only when the call through `fn` runs: the
    # function is a parameter of `step`, so its body is checked when the step is built
    a[0] = y
    return a * y


def step(x, fn):
    return fn(x * 1.0)
