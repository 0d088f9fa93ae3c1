"""Benchmarks (issue 7): ``make bench`` / ``python -m bench [--quick]``."""
