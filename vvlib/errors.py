"""The error a bad parameter raises, wherever it is found (a chapter's cell, a model file on
disk): `python -m vvlib run` turns it into one line and exit status 2."""

import math


class ParameterError(ValueError):
    """A parameter with a wrong name, type or range; the message names the accepted values."""


def require(ok: bool, name: str, accepted: str, value):
    """A check that involves several parameters, with the same kind of message."""
    if not ok:
        raise ParameterError(f"{name}: expected {accepted}, got {value!r}")


# A rule for one value: (does it accept the value?, the accepted values in words); the configs' FIELD_RULES and a
# chapter's parameters of the same names (experiments/setups/params.py) share them, so each is written once.
def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def int_at_least(lo: int, note: str = ""):
    return (lambda v: _is_int(v) and v >= lo), f"an int >= {lo}{note}"


def number_at_least(lo: float, note: str = ""):
    return (lambda v: _is_number(v) and v >= lo), f"a number >= {lo}{note}"


def positive_number():
    return (lambda v: _is_number(v) and v > 0), "a number > 0"


def fraction(one_included: bool = True, note: str = ""):
    """A number from 0 to 1, or below 1 where one_included is False (a dropout rate of 1 drops everything)."""
    def ok(v):
        return _is_number(v) and 0 <= v and (v <= 1 if one_included else v < 1)

    return ok, f"a number from 0{note} {'to' if one_included else 'up to, not including,'} 1"


def one_of(options: tuple):
    return (lambda v: v in options), f"one of {', '.join(map(str, options))}"


def true_or_false():
    return (lambda v: isinstance(v, bool)), "True or False"


def ints_at_least(lo: int):
    return (lambda v: isinstance(v, (list, tuple)) and len(v) > 0 and all(_is_int(n) and n >= lo for n in v),
            f"a non-empty list of ints >= {lo}")


def check_fields(config, rules: dict):
    """A config's check of its own fields, each against its rule: '<field> must be <accepted>; got <value>'."""
    for name, (ok, accepted) in rules.items():
        value = getattr(config, name)
        if not ok(value):
            raise ParameterError(f"{name} must be {accepted}; got {value!r}")
