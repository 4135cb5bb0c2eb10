"""Chapter 5's counter-stream arm (counter_seeds): the longer training again with draws counter, the
stream that gives a CPU and a GPU the same batches, in runs of long_seed_group seeds each."""

import dataclasses

import pytest

from vvlib import rng
from vvlib.book.runner import checked_parameters, resolved
from vvlib.book.gpu_queue import plan
from vvlib.experiments.storage import runs
from vvlib.experiments.setups import variants
from vvlib.experiments.setups.params import ParameterError


def _params(tmp_path, **given):
    return resolved("05_dictionary_lookup", "ci", {"store_dir": str(tmp_path), **given})


def test_the_arm_is_the_longer_training_on_the_other_stream_a_group_per_run(tmp_path):
    P = _params(tmp_path, counter_seeds=4, long_seed_group=2)
    arm = variants.counter_arm(P)
    configs = variants.long_train_configs(arm)
    assert [(c.first_seed, c.n_seeds) for c in configs] == [(0, 2), (2, 2)]
    longer = variants.long_train_configs(P)[0]
    for c in configs:  # only the stream and the seeds differ from the longer training's runs
        assert c.draws == "counter" and longer.draws == "generators"
        assert dataclasses.replace(c, draws=longer.draws, first_seed=0, n_seeds=longer.n_seeds) == longer
    assert variants.eval_config(arm, "fixed").draws == "counter"  # its test sequences come from the same stream
    assert variants.counter_arm(_params(tmp_path, counter_seeds=0)) is None


def test_the_plan_holds_the_arms_runs_only_when_asked_for(tmp_path):
    def training_paths(P):
        return {job.path for job in plan.chapter_jobs("05_dictionary_lookup", P) if job.label.startswith("train")}

    P = _params(tmp_path, counter_seeds=4, long_seed_group=2)
    arm = variants.counter_arm(P)
    expected = {runs.run_dir(P.store_dir, variants.model_config(arm, variants.task_config(arm, "dictionary"), v), c,
                             rng.resolve_device(P.device)) / "run.json"
                for v in ("baseline", "layernorm") for c in variants.long_train_configs(arm)}
    assert len(expected) == 4 and expected <= training_paths(P)
    assert training_paths(P) - expected == training_paths(_params(tmp_path, counter_seeds=0, long_seed_group=2))


@pytest.mark.parametrize("given, message", [
    ({"counter_seeds": 3, "long_seed_group": 2}, "counter_seeds: expected a multiple of long_seed_group"),
    ({"counter_seeds": 2, "draws": "counter"}, "counter_seeds: expected 0 when draws is already counter"),
    ({"counter_seeds": 2, "long_steps": 0},
     "counter_seeds: expected 0 while long_steps is 0"),
    ({"counter_seeds": -1}, "counter_seeds: expected an int >= 0"),
])
def test_an_arm_that_cannot_be_run_is_refused_before_anything_runs(given, message):
    with pytest.raises(ParameterError, match=message):
        checked_parameters("05_dictionary_lookup", "ci", given)
