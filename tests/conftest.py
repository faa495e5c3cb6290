"""Shared pytest configuration.

Hypothesis profiles: the default one keeps the suite fast; choose the thorough one with
``pytest --hypothesis-profile=long``.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fast",
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("fast")
