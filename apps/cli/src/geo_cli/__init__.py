"""geo: the command line of the geo toolkit."""

__version__ = "0.1.0"
