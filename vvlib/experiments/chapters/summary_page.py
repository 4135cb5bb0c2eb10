"""The summary page: the paper's claims one by one against chapters 4-11's results (trains nothing)."""

from .record import Chapter, keys

CHAPTER = Chapter("summary", "Summary: the paper's claims against our numbers",
                  keys("claims component_slope_with_ln ln_minus_std_dictionary sensitivity sources"))
