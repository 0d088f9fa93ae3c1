"""The pages' blueprint, in a module of its own so that every page module can add to it."""

from __future__ import annotations

from flask import Blueprint

web = Blueprint(
    "web",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)
