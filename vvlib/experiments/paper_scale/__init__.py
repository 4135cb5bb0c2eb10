"""The paper's scale, planned: every store entry chapters 4-11 compute and how far each has got
(plan), cut into units that each fit one command on a lent GPU (units)."""
