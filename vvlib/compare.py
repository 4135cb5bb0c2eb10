"""How two runs are compared, length by length, everywhere in the book.

A difference between two runs at one test length counts as evidence when the paired t-test
over seeds gives p < ALPHA; a p-value that is missing or undefined (None or nan: one seed,
identical differences) never counts.  Evidence.verdict turns the counts over the lengths
compared into one word, by a rule fixed in advance and printed on the summary page.
"""

import math
from dataclasses import dataclass

ALPHA = 0.05

SUPPORTED, CONTRADICTED, MIXED, UNCLEAR = ("supported", "contradicted", "mixed",
                                           "not shown (too few significant differences)")
UNTESTED = "not tested (no length to compare)"


def pair_name(pair) -> str:
    """The key of a pair of runs in results.json: ("baseline", "layernorm") -> "baseline_vs_layernorm"."""
    first, second = pair
    return f"{first}_vs_{second}"


def beyond_training(lengths, longest_training: int) -> list:
    """The test lengths a claim about length generalisation is judged at: those above the
    longest training sequence, as given (ints, or the str keys of results.json)."""
    return [n for n in lengths if int(n) > longest_training]


def is_significant(p, alpha=ALPHA) -> bool:
    """p < alpha; a missing or undefined p-value (None, nan) is not significant."""
    return p is not None and not math.isnan(p) and p < alpha


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_two(n: int) -> str:
    """16 -> '2⁴'; lengths that are not powers of two stay as they are."""
    return "2" + str(n.bit_length() - 1).translate(_SUPERSCRIPT) if n > 0 and n & (n - 1) == 0 else str(n)


def format_interval(d: dict, digits: int = 1) -> str:
    """A paired difference with its interval, stats.paired_difference's {"diff", "low", "high"}:
    '+0.6 [-1.0, +2.3]'."""
    return f"{d['diff']:+.{digits}f} [{d['low']:+.{digits}f}, {d['high']:+.{digits}f}]"


def format_p(p, alpha=ALPHA) -> str:
    """A p-value for a table: one significant digit, or as many more as it takes to show on which
    side of alpha it falls (0.048 as '0.048', not '0.05'); 'n/a' when missing or undefined."""
    if p is None or math.isnan(p):
        return "n/a"
    for digits in range(1, 16):
        text = f"{p:.{digits}g}"
        shown = float(text)
        if (shown < alpha) == (p < alpha) and (shown == alpha) == (p == alpha):
            return text
    return text


@dataclass
class Evidence:
    """How often a claimed run beat another at the lengths compared."""
    lengths: int
    ahead: int  # lengths where the claimed run is better
    ahead_significant: int
    behind: int
    behind_significant: int
    alpha: float = ALPHA

    def verdict(self) -> str:
        """Supported: significantly ahead at half the lengths or more and never significantly
        behind; contradicted: the mirror image; mixed: significant both ways; untested: no length compared."""
        if not self.lengths:
            return UNTESTED
        if self.ahead_significant and self.behind_significant:
            return MIXED
        if 2 * self.ahead_significant >= self.lengths and self.ahead_significant:
            return SUPPORTED
        if 2 * self.behind_significant >= self.lengths and self.behind_significant:
            return CONTRADICTED
        return UNCLEAR

    def text(self) -> str:
        return (f"ahead at {self.ahead} of {self.lengths} lengths ({self.ahead_significant} with p < {self.alpha}), "
                f"behind at {self.behind} ({self.behind_significant} with p < {self.alpha})")


def compare(claimed: dict, other: dict, p_values: dict, lengths, higher_is_better=True, alpha=ALPHA) -> Evidence:
    """claimed, other: {N: mean}; p_values: {N: p or None}; lengths: the N (keys of those
    dicts) to compare.  A tie counts neither way."""
    sign = 1 if higher_is_better else -1
    diff = {n: sign * (claimed[n] - other[n]) for n in lengths}
    ahead = [n for n in lengths if diff[n] > 0]
    behind = [n for n in lengths if diff[n] < 0]
    significant = {n for n in lengths if is_significant(p_values.get(n), alpha)}
    return Evidence(len(lengths), len(ahead), len(significant.intersection(ahead)),
                    len(behind), len(significant.intersection(behind)), alpha)
