"""A third task in a few lines, for the tests that check a task needs no more than its class, its
registration and its record: the class of the *lowest*-priority item, read like argmax."""

from vvlib import tasks
from vvlib.task_argmax import Argmax

NAME = "argmin"


class Argmin(Argmax):
    name = NAME
    capturable = False

    def sample(self, cfg, gen, rows, n, device, mask, lengths):
        batch = super().sample(cfg, gen, rows, n, device, mask, lengths)
        ranked = batch.priority if mask is None else batch.priority.masked_fill(~mask, 2.0)
        batch.target = batch.label.gather(1, ranked.argmin(dim=1, keepdim=True)).squeeze(1)
        return batch


def record(scales: dict):
    """Its book record: no paper table (the paper does not train it), its runs at the scales given."""
    from vvlib.experiments.setups.paper_tasks import PaperTask

    return PaperTask(NAME, "argmin retrieval", "no table", {}, "no table", {}, False, "no table", {}, scales=scales)


def register_class():
    tasks.register(Argmin())
