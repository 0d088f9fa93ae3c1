"""Benchmarks (docs/scaling.md): ``make bench`` / ``python -m bench [--quick]``."""
