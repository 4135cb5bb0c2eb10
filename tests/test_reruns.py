"""Seeds of the longer training trained again, each alone (chapter 9's rerun_seeds): the runs, the check of the
parameter, and the page's table and sentence."""

import numpy as np
import pytest

from test_ladder import long_params
from vvlib.book.runner import checked_parameters, resolved
from vvlib.experiments.reports import reruns, same_seeds
from vvlib.experiments.setups import variants
from vvlib.experiments.setups.params import ParameterError


def test_a_rerun_is_its_seed_alone_with_the_longer_runs_settings():
    P = long_params("unused", rerun_seeds=[3, 0])
    longer = variants.long_train_configs(P)[0]
    again = variants.rerun_train_configs(P)
    assert [(c.first_seed, c.n_seeds) for c in again] == [(3, 1), (0, 1)]
    for cfg in again:
        assert {k: v for k, v in vars(cfg).items() if k not in ("first_seed", "n_seeds")} == \
            {k: v for k, v in vars(longer).items() if k not in ("first_seed", "n_seeds")}


def test_a_rerun_on_the_same_machine_repeats_its_first_run_in_an_entry_of_its_own(tmp_path, one_thread):
    """Seed groups of one seed and one thread: a seed alone computes what it computed beside the others, so its
    rerun repeats its first run's losses and scores; both are stored, side by side."""
    P = long_params(tmp_path, long_seed_chunk=2, ladder_steps=[], rerun_seeds=[3, 0])
    task = variants.task_config(P, "argmax")
    first, _, first_runs = variants.long_training(P, task, ["baseline"])
    again, again_runs = variants.reruns(P, task, ["baseline"])
    assert again["baseline"].shape == (2, 2)
    assert np.array_equal(again["baseline"], first["baseline"][[3, 0]])
    first_losses = same_seeds.seed_losses(first_runs["baseline"])
    assert [same_seeds.seed_losses([r])[s] for r, s in zip(again_runs["baseline"], (3, 0))] == \
        [first_losses[3], first_losses[0]]
    assert len(list(tmp_path.glob("train-*/run.json"))) == 2 + 2


@pytest.mark.parametrize("given, message", [
    ({"dictionary": [16]}, r"rerun_seeds\['dictionary'\]: expected seeds of the longer training in runs of more than one "
                           r"seed \(0-15\), got \[16\]"),
    ({"dictionary": [1, 1]}, r"rerun_seeds\['dictionary'\]: expected a list of distinct seed indices >= 0"),
    ({"argmax": [-1]}, r"rerun_seeds\['argmax'\]: expected a list of distinct seed indices >= 0"),
])
def test_rerun_seeds_outside_the_longer_runs_are_refused_naming_them(given, message):
    with pytest.raises(ParameterError, match=message):
        checked_parameters("09_longer_training", "book", {"rerun_seeds": given})


def test_a_seed_alone_in_its_first_run_cannot_be_trained_again():
    """ci trains its longer runs one seed a run: a rerun would be that run's own store entry."""
    with pytest.raises(ParameterError, match=r"rerun_seeds\['dictionary'\]: expected .*\(none at this profile\), got \[0\]"):
        checked_parameters("09_longer_training", "ci", {"rerun_seeds": {"dictionary": [0]}})
    assert resolved("09_longer_training", "book").rerun_seeds == {"argmax": [], "dictionary": list(range(16))}


def _record(first_seed, losses, cpu="CPU A", threads="2 threads"):
    return {"spec": {"train": {"first_seed": first_seed, "n_seeds": len(losses)}}, "final_loss": losses,
            "provenance": {"device": f"cpu (x86_64, {threads})", "cpu": cpu}}


LENGTHS = [16, 256, 16384]
LABELS = {"baseline": "Baseline", "layernorm": "+LN"}
# four first-run seeds per variant (fractions), seeds 2 and 3 trained again
FIRST = {"baseline": np.array([[1.0, 0.98, 0.40], [1.0, 0.97, 0.30], [1.0, 0.99, 0.50], [1.0, 0.96, 0.20]]),
         "layernorm": np.array([[1.0, 0.97, 0.45], [1.0, 0.99, 0.35], [1.0, 0.91, 0.10], [1.0, 0.98, 0.40]])}
AGAIN = {"baseline": np.array([[1.0, 0.99, 0.50], [1.0, 0.97, 0.25]]),
         "layernorm": np.array([[1.0, 0.98, 0.42], [1.0, 0.98, 0.38]])}
FIRST_RUNS = {v: [_record(0, [0.1, 0.2]), _record(2, [0.3, 0.4])] for v in FIRST}
AGAIN_RUNS = {"baseline": [_record(2, [0.3], "CPU B", "1 thread"), _record(3, [0.41], "CPU B", "1 thread")],
              "layernorm": [_record(2, [0.35], "CPU B", "1 thread"), _record(3, [0.45], "CPU B", "1 thread")]}


def test_the_rerun_table_sets_each_seeds_scores_and_losses_beside_its_first_runs():
    table = reruns.scores_table(FIRST, AGAIN, [2, 3], LENGTHS, [256, 16384], LABELS, FIRST_RUNS, AGAIN_RUNS)
    assert list(table.index) == [(2, "Baseline"), (3, "Baseline"), (2, "+LN"), (3, "+LN")]
    assert table.loc[(2, "+LN")].tolist() == [91.0, 98.0, 10.0, 42.0, 0.3, 0.35]
    assert table.loc[(3, "Baseline"), "final loss: first"] == 0.4  # seed 3: the second seed of the run from seed 2
    with pytest.raises(ValueError, match="no run holds seed 7"):
        reruns.first_run_loss(FIRST_RUNS["baseline"], 7)


def test_the_rerun_sentence_gives_the_moves_the_lowest_model_and_the_seeds_spread():
    text = reruns.summary(FIRST, AGAIN, [2, 3], LENGTHS, LABELS, FIRST_RUNS, AGAIN_RUNS, 256)
    # at 256: Baseline +0, +1; +LN +7, 0 (points): median of |moves| 0.5, from +0.0 to +7.0
    assert "each alone, 1 of the 4 models end on their first run's final loss to the bit." in text
    assert "The reruns ran on CPU B, 1 thread; the first runs on CPU A, 2 threads." in text
    assert "At 256 items their scores moved by a median of 0.5 points (from +0.0 to +7.0)." in text
    assert "Seed 2's +LN, the first runs' lowest there (91.0%), scores 98.0% alone." in text
    # at 2^14: Baseline 0, +5; +LN +32, -2: median 3.5
    spread = [100 * np.std(FIRST[v][:, 2], ddof=1) for v in ("baseline", "layernorm")]
    assert (f"At 2¹⁴ the scores moved by a median of 3.5 points (from -2.0 to +32.0), where the first runs' 4 seeds "
            f"spread with a standard deviation of {spread[0]:.1f} points (Baseline) and {spread[1]:.1f} points (+LN).") in text
    # +LN minus Baseline at 2^14 over seeds 2 and 3: first (-40 + 20) / 2, alone (-8 + 13) / 2
    assert text.endswith("Over these seeds +LN minus Baseline at 2¹⁴ averages -10.0 points in the first runs and +2.5 "
                         "alone.")
    # the lowest model not among the reruns: no clause about it
    assert "lowest" not in reruns.summary(FIRST, {v: a[1:] for v, a in AGAIN.items()}, [3], LENGTHS, LABELS, FIRST_RUNS,
                                          {v: r[1:] for v, r in AGAIN_RUNS.items()}, 256)


def test_the_rerun_sentence_gives_how_closely_a_seeds_two_scores_go_together_from_three_seeds():
    """At 2^14, seeds 1, 0, 2: Baseline first 30, 40, 50 and alone 40, 30, 50 (deviations -1, 0, +1 and 0, -1, +1:
    r = 1 / 2); +LN alone equal to first (r = 1). With two seeds r is always +-1, so no sentence."""
    again = {"baseline": np.array([[1.0, 0.98, 0.40], [1.0, 0.98, 0.30], [1.0, 0.98, 0.50]]),
             "layernorm": FIRST["layernorm"][[1, 0, 2]]}
    records = {v: [_record(s, [0.3], "CPU B", "1 thread") for s in (1, 0, 2)] for v in again}
    text = reruns.summary(FIRST, again, [1, 0, 2], LENGTHS, LABELS, FIRST_RUNS, records, 256)
    assert ("Over the 3 seeds a model's first score there and its score alone correlate by r = 0.50 (Baseline) and "
            "1.00 (+LN).") in text
    assert "correlate" not in reruns.summary(FIRST, AGAIN, [2, 3], LENGTHS, LABELS, FIRST_RUNS, AGAIN_RUNS, 256)


def test_parting_steps_are_the_first_logs_and_the_last():
    history = [(100 * (k + 1), [0.0]) for k in range(100)]
    assert same_seeds.parting_steps(history) == [100, 200, 500, 1000, 2000, 10_000]
    assert same_seeds.parting_steps(history[:3]) == [100, 200, 300]


def _parting(rows):
    import pandas as pd

    return pd.DataFrame([{"variant": v, "step": step, "seeds": 2, "same seed: median": same, "same seed: largest": largest,
                          "different seeds: median": other} for v, step, same, largest, other in rows]
                        ).set_index(["variant", "step"])


def test_the_parting_sentence_says_whether_the_reruns_started_alike_and_when_they_parted():
    parting = _parting([("baseline", 100, 0.003, 0.006, 0.6), ("baseline", 500, 7.0, 14.0, 13.0),
                        ("baseline", 1000, 16.0, 22.0, 20.0),
                        ("layernorm", 100, 0.009, 0.02, 2.0), ("layernorm", 500, 2.0, 8.0, 4.4),
                        ("layernorm", 1000, 17.0, 29.0, 15.0)])
    text = reruns.parting_sentence(parting, LABELS)
    assert text.startswith("At step 100 the same seed's logged training loss differs between its two runs by a median "
                           "of 0.009% or less and at most 0.020%, where different seeds differ by a median of 0.60% or "
                           "more. So the reruns started on their first runs' draws. By")
    # at 500 +LN's 2.0 is under half of 4.4: both variants are half as far apart only from step 1,000
    assert text.endswith("By step 1,000 they lie at least half as far apart as different seeds (a median of 16.0% "
                         "against 20.0% for Baseline, 17.0% against 15.0% for +LN).")
    never = reruns.parting_sentence(_parting([("baseline", 100, 0.5, 1.5, 1.2), ("baseline", 500, 1.0, 2.0, 13.0)]),
                                    LABELS)
    assert "0.60%" not in never and ". So the reruns did not start alike." in never
    # the median seed starts alike (0.003% against 0.71%), one run had parted within the first 100 steps
    one_parted = reruns.parting_sentence(_parting([("baseline", 100, 0.003, 0.69, 0.71),
                                                   ("baseline", 500, 9.0, 20.0, 13.0)]), LABELS)
    assert ("by a median of 0.003% or less and at most 0.690%, where different seeds differ by a median of 0.71% or "
            "more. So the reruns started on their first runs' draws, but at least one had parted from its first run "
            "within those steps. By step 500") in one_parted
    assert never.endswith("At no step shown do they lie half as far apart as different seeds.")
