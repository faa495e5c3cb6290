"""Shared by the tests of structured direction stacks (band_stack, diagonal_stack): count
how often a stack was made dense, and fail the test if a stacked pullback fell back to one
pullback per row."""

from __future__ import annotations

from pullback import batched


def count_dense(monkeypatch, stack_class, record) -> list:
    """Patch ``stack_class.dense`` to append ``record(stack)`` to the returned list."""
    calls: list = []
    dense = stack_class.dense

    def counted(self):
        calls.append(record(self))
        return dense(self)

    def refuse(back, dys):
        raise AssertionError("the stacked pullback fell back to rows")

    monkeypatch.setattr(stack_class, "dense", counted)
    monkeypatch.setattr(batched, "_stack_rows", refuse)
    return calls
