"""A stand-in for pullback's own code (a rule's transformable pullback), for
tests/test_error_locations.py: the test makes pullback count this file as its own, so a
construct refused here is refused where a derivative of a derivative would meet one in a
rule's pullback."""


def scale(a, y=1.0):
    return a * y


class _Scaler:
    def apply(self, a, y=1.0):
        return a * y


SCALER = _Scaler()


def step(x, fn):
    # a varied keyword of a global object's method: PB502 (a call found at run time with a
    # computed keyword is a star-call now, which would differentiate)
    return fn(2.0) * SCALER.apply(2.0, y=x)
