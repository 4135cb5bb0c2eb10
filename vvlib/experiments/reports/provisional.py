"""One rule for every verdict the book prints: a verdict that rests on fewer training steps than the
paper trained that task for is provisional, and says what share of the paper's steps it had.

Too few steps can reverse a verdict (chapter 4: +LN's effect on argmax retrieval changes sign
along the paper's 100,000 steps), so a verdict at 4,000 of them measures that scale; it does not
settle the paper's claim.  Seeds are not part of the rule: fewer seeds widen the intervals, which
the verdict's own test already accounts for.  The intro's claims table, the summary and the
chapters' verdict tables all go through `qualified`.
"""

from ..setups.paper import STEPS


def at_paper_steps(task: str, steps: int) -> bool:
    """Whether a run of `task` trained for at least the paper's steps (a task the paper does not train has none to
    fall short of)."""
    return steps >= STEPS.get(task, 0)


def share_text(task: str, steps: int) -> str:
    """'4%' (1,000 of 100,000 steps: '1%'; 60 of 10,000: '0.6%')."""
    share = 100 * steps / STEPS[task]
    return f"{share:.0f}%" if share >= 1 else f"{share:.1g}%"


def note(task: str, steps: int) -> str:
    """'' at the paper's steps or more, else "provisional: 4% of the paper's steps"."""
    return "" if at_paper_steps(task, steps) else f"provisional: {share_text(task, steps)} of the paper's steps"


def qualified(verdict: str, task: str, steps: int) -> str:
    """The verdict as printed: unchanged at the paper's steps or more, else with its share of them,
    e.g. "contradicted (provisional: 4% of the paper's steps)"."""
    said = note(task, steps)
    if not said:
        return verdict
    if verdict.endswith(")"):  # 'not shown (too few ...)': one parenthesis, not two
        return f"{verdict[:-1]}; {said})"
    return f"{verdict} ({said})"
