"""Chapters 4 and 5's sections on the two devices: the CPU's longer training beside the GPU's paper scale, the
CPU's test set scored again, the CPU on the counter stream, and the same seeds on a GPU.  A mixin of
AccuracyPage: each section reads what the page has computed (P, long, paper_scale, earlier, counter)."""

from IPython.display import Markdown, display

from .. import compare
from ..experiments.reports import devices, plots, same_seeds
from ..experiments.setups import variants
from ..experiments.storage import runs
from ..task_base import EVAL_BLOCK
from .page import show_figure, show_runs

PAIR = variants.PAIR  # the devices are compared without adaptive temperature
LABELS = variants.LABELS


class DeviceSections:
    """The device sections of an AccuracyPage."""

    def devices(self):
        """The CPU's longer training against the GPU's paper scale, where both ran the same steps, each
        device from a generator per seed (the earlier GPU runs where the counter stream's are shown above):
        Welch's test at every length beyond training, and each seed's accuracy at 2^10 and 2^14."""
        P = self.P
        if not (self.long and self.paper_scale and P.long_steps == self.paper_scale["P"].steps):
            return
        # the CPU's longer training draws from a generator per seed: so do the earlier GPU runs, where kept
        gpu = self.earlier or self.paper_scale
        P_paper, paper_accuracy = gpu["P"], gpu["accuracy"]
        shown = [n for n in (1024, 16384) if n in P.eval_lengths and n in P_paper.eval_lengths]  # the paper's 2^10, 2^14
        runs = {f"CPU ({P.long_seeds} seeds)": (P.eval_lengths, {v: self.long["accuracy"][v] for v in PAIR}),
                f"GPU ({P_paper.n_seeds} seeds)": (P_paper.eval_lengths, {v: paper_accuracy[v] for v in PAIR})}
        beyond = [n for n in compare.beyond_training(P.eval_lengths, P.max_len) if n in P_paper.eval_lengths]
        display(devices.device_table(devices.device_frame(runs, beyond), *runs, LABELS))
        plots.device_distributions(devices.device_frame(runs, shown), LABELS,
                                   title=f"{self.name} at {P.long_steps:,} steps: each seed's accuracy on each device")
        show_figure(f"Each seed's accuracy at N = {' and '.join(f'{n:,}' for n in shown)} after {P.long_steps:,} steps "
                    f"({P.long_seeds} seeds on the CPU, {P_paper.n_seeds} on the GPU), with the mean ± one standard "
                    "deviation. Two devices trained alike would overlap.")

    def counter_arm(self):
        """The longer training again on the counter stream (counter_seeds): its runs, and the CPU's two
        streams compared by Welch's test at every length beyond training (the seeds of the two streams
        are independent runs, not pairs); a note where the profile has no such arm."""
        P = self.P
        arm = variants.counter_arm(P) if self.long else None
        if arm is None:
            display(Markdown("*Not run at this profile (`counter_seeds` is 0).*"))
            return
        accuracy, _, runs = variants.long_training(arm, self.task, list(PAIR), ["fixed"], self.device)
        self.counter = {"runs": runs}
        show_runs(runs, LABELS)
        streams = {f"generators ({P.long_seeds} seeds)": (P.eval_lengths, {v: self.long["accuracy"][v] for v in PAIR}),
                   f"counter stream ({arm.long_seeds} seeds)": (P.eval_lengths, {v: accuracy[v] for v in PAIR})}
        beyond = compare.beyond_training(P.eval_lengths, P.max_len)
        display(devices.device_table(devices.device_frame(streams, beyond), *streams, LABELS))

    def same_seeds_on_a_gpu(self):
        """The counter arm's seeds beside the same seeds of the paper-scale runs, where those ran on the
        counter stream for as many steps: where the two devices' training losses part, and their accuracy
        paired over those seeds on the test sequences both scored; a note where there is nothing to compare."""
        P, arm = self.P, (variants.counter_arm(self.P) if self.long else None)
        shown = self.paper_scale
        if arm is None or not self.counter or not shown or shown["draws"] != arm.draws or \
                shown["P"].steps != arm.long_steps:
            display(Markdown("*Nothing to compare at this profile: it needs the counter arm (`counter_seeds`) and "
                             "the paper-scale runs on the counter stream for as many steps, committed.*"))
            return
        P_paper = shown["P"]
        gpu_runs = {v: runs.run_records(r) for v, r in shown["runs"].items()}
        if not same_seeds.trained_alike(self.counter["runs"], gpu_runs):
            display(Markdown("*Nothing to compare: the counter arm's settings differ from the paper profile's "
                             "(other than its seeds), so its seeds are not the GPU's.*"))
            return
        steps = same_seeds.parting_steps(self.counter["runs"][PAIR[0]][0]["loss_history"])
        parting = same_seeds.loss_parting(self.counter["runs"], gpu_runs, steps)
        display(same_seeds.parting_table(parting, LABELS))
        with runs.stored_only():
            gpu, gpu_seeds = variants.scored_blocks(P_paper, self.task, PAIR, variants.train_configs(P_paper),
                                                    "cuda")
        cpu, cpu_seeds = variants.scored_blocks(arm, self.task, PAIR, variants.long_train_configs(arm), self.device)
        beyond = [n for n in compare.beyond_training(P.eval_lengths, P.max_len) if n in P_paper.eval_lengths]
        paired = same_seeds.paired_on_shared_blocks({v: (cpu[v], cpu_seeds, P.eval_lengths) for v in cpu},
                                                    {v: (gpu[v], gpu_seeds, P_paper.eval_lengths) for v in gpu},
                                                    beyond, EVAL_BLOCK)
        display(same_seeds.paired_table(paired, LABELS, "GPU minus CPU (points) [95%]"))
        display(Markdown(same_seeds.summary(parting, paired, LABELS, compare.ALPHA)))

    def recheck(self):
        """Is the test set the longer training is scored on an easy or a hard one?  Its runs from
        recheck_from_seed on, evaluated again on recheck_sequences per length: the first
        n_eval_sequences are the ones scored above, the others are new; a table per variant and length."""
        P = self.P
        rechecked = variants.recheck_runs(P) if self.long else []
        if not rechecked:
            display(Markdown("*Not run at this profile (`recheck_sequences` is 0). It needs the runs' weights, which "
                             "the store does not keep, so it is made in the sitting that trains them.*"))
            return
        cfg, blocks = variants.recheck_config(P), variants.rechecked(P, self.task, PAIR, self.device)
        self.recheck_summary = devices.recheck_summary(blocks, cfg.lengths, P.n_eval_sequences // EVAL_BLOCK, EVAL_BLOCK)
        last = rechecked[-1].first_seed + rechecked[-1].n_seeds - 1
        display(Markdown(f"The longer training's seeds {rechecked[0].first_seed}-{last}, on {cfg.n_sequences:,} test "
                         f"sequences per length:"))
        display(devices.recheck_table(self.recheck_summary, P.n_eval_sequences, cfg.n_sequences - P.n_eval_sequences,
                                     LABELS))
