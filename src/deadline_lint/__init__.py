"""deadline-lint: crossing a call boundary never creates more request time."""

__version__ = "0.1.2"
