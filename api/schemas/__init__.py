"""Marshmallow schemas of the HTTP contract, one module per area."""
