"""The error a bad parameter raises, wherever it is found (a chapter's cell, a model file on
disk): `python -m vvlib run` turns it into one line and exit status 2."""


class ParameterError(ValueError):
    """A parameter with a wrong name, type or range; the message names the accepted values."""


def require(ok: bool, name: str, accepted: str, value):
    """A check that involves several parameters, with the same kind of message."""
    if not ok:
        raise ParameterError(f"{name}: expected {accepted}, got {value!r}")
