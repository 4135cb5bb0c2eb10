"""From a chapter's parameters to what it computes: the paper's numbers and tasks (paper,
paper_tasks), the parameters' checks (params), each variant's configs and runs (variants), and
the work some chapters add (probes, sensitivity), tables computed without training (computed)."""
