"""The GPU queue, in one place: every store entry chapters 4-11 compute at the paper's scale and how far each
has got (plan), cut into units that each fit one command on a lent GPU (units), run in order (paper_run,
paper_queue), and what is still to run, as the pages say it (pending)."""
