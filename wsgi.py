"""The WSGI application, for a server started in the source checkout (``gunicorn wsgi:app``);
installed, it is ``api.wsgi:app``."""

from api.wsgi import app

__all__ = ["app"]
