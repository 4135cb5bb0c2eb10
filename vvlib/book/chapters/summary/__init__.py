"""The summary page: the paper's claims one by one against chapters 4-11's results (trains nothing)."""

from ....experiments.records.declare import param, shared
from ....experiments.records.record import Chapter, keys

# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile", "named parameter set: default is the only one (this page computes nothing)"),
    param("results_dir", "_output", "folder with one subfolder per chapter holding its results.json (relative "
                                    "paths: from the repository root)"),
    param("output_dir", "_output/summary", "results.json goes here (relative paths: from the repository root)"),
)

CHAPTER = Chapter("summary", "Summary: the paper's claims against our numbers",
                  keys("claims component_slope_with_ln ln_minus_std_dictionary sensitivity sources"), params=PARAMETERS)
