"""Measures along training (vvlib/dynamics.py) and the stored measured runs (dynamics_runs)."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from vvlib import dynamics, rng, tasks
from vvlib.experiments.setups import dynamics_runs
from vvlib.experiments.reports import along_training
from vvlib.experiments.setups.params import Params
from vvlib.experiments.setups.variants import BASE, NORMED
from vvlib.model import features, forward, init_params, layer_prefix, linear, mlp
from vvlib.train import TrainConfig, Trainer, train


def small(**kw):
    return TrainConfig(**{**dict(n_seeds=2, steps=12, batch_size=16, checkpoint_every=4, checkpoint_gap_s=0), **kw})


@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_the_answer_is_where_the_task_put_it(fixture, request):
    """The item at answer_position holds the target: the queried key, or the highest real priority."""
    cfg = request.getfixturevalue(fixture)
    lengths = torch.tensor([3, 7, 7, 5])
    mask = torch.arange(7) < lengths.unsqueeze(-1)
    batch = tasks.sample(cfg.task, rng.generator("cpu", 0, "t"), 4, 7, "cpu", lengths=lengths) \
        if cfg.task.name == "argmax" else tasks.sample(cfg.task, rng.generator("cpu", 0, "t"), 4, 7, "cpu")
    where = tasks.get(cfg.task.name).answer_position(batch)
    assert torch.equal(batch.label.gather(-1, where.unsqueeze(-1)).squeeze(-1), batch.target)
    if cfg.task.name == "dictionary":
        assert torch.equal(batch.key.gather(-1, where.unsqueeze(-1)).squeeze(-1), batch.query)
    else:
        for b in range(4):  # the highest priority among the real items, found by a plain loop
            real = batch.priority[b][mask[b]].tolist()
            assert where[b] == real.index(max(real))


def textbook_logits(cfg, params, batch, s):
    """Seed s's attention logits written as the model's docstring states them: <h_n W_K, y W_Q> / sqrt(D)."""
    x, y = features(cfg, params, batch)
    h = mlp(params, "enc", cfg.encoder_layers, x)[s]  # (B, N, D)
    q = linear(mlp(params, "enc", cfg.encoder_layers, y), params["wq"])[s]  # (B, D)
    keys = h @ params["wk"][s]
    return (keys @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(cfg.hidden)


def test_retrieval_measures_match_the_logits_computed_by_hand(small_dictionary):
    cfg = small_dictionary
    params = init_params(cfg, [0, 1])
    batch = dynamics.probe_batch(cfg, 6, 32, 7, "cpu")
    found = dynamics.retrieval(cfg, params, batch)
    answer = tasks.get(cfg.task.name).answer_position(batch)
    for s in range(2):
        logits = textbook_logits(cfg, params, batch, s).double()
        at_answer = logits.gather(-1, answer.unsqueeze(-1)).squeeze(-1)
        others = logits.scatter(-1, answer.unsqueeze(-1), -math.inf).amax(-1)
        assert found["margin"][s] == pytest.approx((at_answer - others).mean().item(), abs=1e-4)
        missed = logits.argmax(-1) != answer
        assert found["missed"][s] == pytest.approx(missed.double().mean().item())
        out = forward(cfg, {k: v[s:s + 1] for k, v in params.items()}, batch)[0]
        losses = torch.nn.functional.cross_entropy(out, batch.target, reduction="none")
        assert found["probe_loss"][s] == pytest.approx(losses.mean().item(), rel=1e-5)
        assert found["loss_hit"][s] == pytest.approx(losses[~missed].mean().item(), rel=1e-5)
    assert set(found) == {"probe_loss", "loss_hit", "missed", "margin"} and all(v.shape == (2,) for v in found.values())


def test_each_layers_attention_is_measured_for_a_model_of_several_layers(small_dictionary):
    """entropy, largest weight and on_answer per layer, against the weights' own sums: over heads and sequences,
    -sum p log p, max p and the share whose argmax is the answer's item; the existing measures read the last
    layer's first head, and a one-layer model gets none of the new ones."""
    cfg = dataclasses.replace(small_dictionary, heads=2, layers=2, norm="layernorm")
    params = init_params(cfg, [0, 1, 2])
    batch = dynamics.probe_batch(cfg, 6, 32, 7, "cpu")
    found = dynamics.retrieval(cfg, params, batch)
    _, inside = forward(cfg, params, batch, probe=True)
    answer = tasks.get(cfg.task.name).answer_position(batch)
    for k, attn in enumerate(inside["layer_attention"], start=1):  # (S, B, H, N)
        p = attn.double()
        by_hand = {"entropy": -(p * p.log()).sum(-1).mean((1, 2)), "top1_weight": p.amax(-1).mean((1, 2)),
                   "on_answer": (p.argmax(-1) == answer.view(1, -1, 1)).double().mean((1, 2))}
        for column, value in by_hand.items():
            assert torch.allclose(found[f"{column}_layer{k}"].double(), value, atol=1e-5), (column, k)
    assert (found["entropy_layer1"] <= math.log(6) + 1e-5).all()
    first_head = inside["attention"][:, :, 0]
    missed = (first_head.argmax(-1) != answer).double().mean(1)
    assert torch.allclose(found["missed"].double(), missed)
    names = dynamics.measure_names(cfg)
    assert names[:len(dynamics.MEASURES)] == dynamics.MEASURES and len(names) == len(dynamics.MEASURES) + 10
    assert {n for n in names if not n.startswith("qk_")} - set(dynamics.MEASURES) == \
        set(found) - {"probe_loss", "loss_hit", "missed", "margin"}
    assert dynamics.measure_names(small_dictionary) == dynamics.MEASURES


def test_each_layers_query_and_key_gradient_is_the_norm_of_its_own_weights_gradients(small_dictionary):
    """After a step, qk_grad_layerK is each seed's norm over layer K's wq and wk gradients (and qk_norm_layerK
    over the weights), computed weight by weight; measure returns them with the rest."""
    cfg = dataclasses.replace(small_dictionary, heads=2, layers=2, norm="layernorm")
    trainer = Trainer(cfg, small(steps=2))
    trainer.run(progress=False)
    group = trainer.groups[0]
    batch = dynamics.probe_batch(cfg, 6, 16, 7, "cpu")
    found = dynamics.measure(cfg, group.params, group.optimizer, batch, None)
    assert set(found) == set(dynamics.measure_names(cfg))
    for k, prefix in ((1, layer_prefix(0)), (2, layer_prefix(1))):
        for s in range(2):
            grads = torch.cat([group.params[prefix + n].grad[s].flatten() for n in ("wq", "wk")])
            weights = torch.cat([group.params[prefix + n][s].detach().flatten() for n in ("wq", "wk")])
            assert found[f"qk_grad_layer{k}"][s] == pytest.approx(grads.norm().item(), rel=1e-5)
            assert found[f"qk_norm_layer{k}"][s] == pytest.approx(weights.norm().item(), rel=1e-5)
            assert grads.norm() > 0


def test_a_layer_of_uniform_weights_measures_ln_n_and_one_in_n(small_dictionary):
    """With the first layer's query weights zeroed its attention is uniform: entropy ln N, largest weight 1/N,
    and the first item (argmax's tie-break) is the answer in the share of sequences whose answer sits there."""
    cfg = dataclasses.replace(small_dictionary, heads=2, layers=2)
    params = init_params(cfg, [0])
    params[layer_prefix(0) + "wq"] = torch.zeros_like(params[layer_prefix(0) + "wq"])  # every logit 0
    batch = dynamics.probe_batch(cfg, 8, 64, 3, "cpu")
    found = dynamics.retrieval(cfg, params, batch)
    answer = tasks.get(cfg.task.name).answer_position(batch)
    assert found["entropy_layer1"].item() == pytest.approx(math.log(8), abs=1e-5)
    assert found["top1_weight_layer1"].item() == pytest.approx(1 / 8, abs=1e-6)
    assert found["on_answer_layer1"].item() == pytest.approx((answer == 0).double().mean().item())


def test_a_layer_attends_below_the_entropy_of_uniform_weights_over_the_root_of_n_items():
    """attending_below(N), half of ln N: the entropy of weights spread evenly over sqrt(N) of the N items."""
    for n in (4, 16, 256):
        weights = torch.full((math.isqrt(n),), 1 / math.isqrt(n), dtype=torch.float64)
        assert dynamics.attending_below(n) == pytest.approx(-(weights * weights.log()).sum().item(), rel=1e-12)


def test_optimizer_measures_match_a_seed_by_seed_computation(small_dictionary):
    trainer = Trainer(small_dictionary, small(steps=3))
    trainer.run(progress=False)
    group = trainer.groups[0]
    before = {k: v.detach().clone() * 0.9 for k, v in group.params.items()}
    found = dynamics.optimizer_state(group.params, group.optimizer, before)
    beta2 = group.optimizer.param_groups[0]["betas"][1]
    for s in range(2):
        grads = torch.cat([p.grad[s].flatten() for p in group.params.values()])
        weights = torch.cat([p[s].detach().flatten() for p in group.params.values()])
        assert found["grad_norm"][s] == pytest.approx(grads.norm().item(), rel=1e-5)
        assert found["weight_norm"][s] == pytest.approx(weights.norm().item(), rel=1e-5)
        assert found["moved"][s] == pytest.approx(0.1, rel=1e-4)  # moved by a tenth of itself
        assert found["key_norm"][s] == pytest.approx(group.params["emb_key"][s].norm().item(), rel=1e-5)
        roots = {}
        for name, p in group.params.items():
            state = group.optimizer.state[p]
            roots[name] = (state["exp_avg_sq"][s] / (1 - beta2 ** 3)).sqrt().flatten()
        network = torch.cat([r for n, r in roots.items() if n not in dynamics.TABLES])
        assert found["adam_root"][s] == pytest.approx(network.median().item(), rel=1e-6)
        assert found["adam_root_keys"][s] == pytest.approx(roots["emb_key"].median().item(), rel=1e-6)


def test_argmax_has_no_key_table_to_measure(small_argmax):
    trainer = Trainer(small_argmax, small(steps=1))
    trainer.run(progress=False)
    found = dynamics.optimizer_state(trainer.groups[0].params, trainer.groups[0].optimizer, None)
    assert torch.isnan(found["key_norm"]).all() and torch.isnan(found["adam_root_keys"]).all()
    assert torch.equal(found["moved"], torch.zeros(2)) and (found["adam_root"] > 0).all()


def test_a_measured_run_trains_the_unmeasured_weights_and_resumes_to_the_same_table(small_dictionary, tmp_path):
    cfg = small(seed_group=1)
    plain, _ = train(small_dictionary, cfg, "cpu", progress=False)
    table, provenance = dynamics_runs.measured(tmp_path / "a", small_dictionary, cfg, 2, "cpu", progress=False)
    assert list(table["step"].unique()) == [2, 4, 6, 8, 10, 12] and list(table["seed"].unique()) == [0, 1]
    assert set(dynamics.MEASURES) | {"step", "seed", "train_loss", "loss_from_misses", "loss_missed"} == set(table.columns)
    assert provenance["device"].startswith("cpu")
    # the weights it trained are the plain run's: measured again at the end, they give the same probe loss
    batch = dynamics.probe_batch(small_dictionary, cfg.max_len, dynamics_runs.PROBE_ROWS, dynamics_runs.PROBE_SEED, "cpu")
    final = dynamics.retrieval(small_dictionary, plain, batch)["probe_loss"]
    assert np.allclose(table[table.step == 12]["probe_loss"], final.numpy(), atol=1e-6)

    # interrupted after its checkpoint at step 8, then run again: the same table
    original = Trainer.run

    def stopping(self, checkpoint=None, progress=True, on_step=None, log_every=None):
        def hook(step):
            on_step(step)
            if step == 9:
                raise KeyboardInterrupt
        return original(self, checkpoint, progress, hook, log_every)

    Trainer.run = stopping
    try:
        with pytest.raises(KeyboardInterrupt):
            dynamics_runs.measured(tmp_path / "b", small_dictionary, cfg, 2, "cpu", progress=False)
    finally:
        Trainer.run = original
    resumed, _ = dynamics_runs.measured(tmp_path / "b", small_dictionary, cfg, 2, "cpu", progress=False)
    pd.testing.assert_frame_equal(resumed, table)
    again, _ = dynamics_runs.measured(tmp_path / "b", small_dictionary, cfg, 2, "cpu", progress=False)  # read back
    pd.testing.assert_frame_equal(again, table, check_exact=False, rtol=1e-12)


def test_measurements_must_land_on_checkpoints(small_argmax, tmp_path):
    with pytest.raises(ValueError, match="every must be an int from 1 to steps .12. that divides checkpoint_every .4."):
        dynamics_runs.measured(tmp_path, small_argmax, small(), 3, "cpu")


def test_a_measured_row_is_the_longer_trainings_run_with_its_changes():
    P = Params(dict(n_seeds=20, steps=1500, batch_size=128, lr=1e-3, weight_decay=1e-3, min_len=5, max_len=16,
                    seed=0, checkpoint_every=500, seed_group=0, long_steps=10_000, long_seed_group=4, dynamics_seeds=4))
    cfg = dynamics_runs.row_train_config(P, {"variant": "layernorm", "lr_schedule": "drop", "drop_step": 2000})
    assert (cfg.n_seeds, cfg.first_seed, cfg.steps, cfg.seed_group, cfg.drop_step) == (4, 0, 10_000, 4, 2000)
    with pytest.raises(ValueError, match=r"may set variant and TrainConfig fields; got \['hiden'\]"):
        dynamics_runs.row_train_config(P, {"hiden": 64})
    with pytest.raises(ValueError, match="variant: expected one of baseline, "):
        dynamics_runs.row_train_config(P, {"variant": "ln"})
    assert dynamics_runs.label({"variant": "layernorm", "adam_eps": 1e-6}) == "Baseline (+ LN) (adam_eps=1e-06)"


def test_the_summary_averages_the_window_of_lowest_loss_and_the_last():
    steps = np.arange(1, 21) * 100  # 20 measurements: windows of 2
    loss = np.r_[np.linspace(1.0, 0.1, 10), np.linspace(0.15, 0.6, 10)]  # lowest at step 1,000, then 0.15
    frames = []
    for seed, shift in ((0, 0.0), (1, 0.02)):
        frames.append(pd.DataFrame({"step": steps, "seed": seed, "train_loss": loss + shift, "missed": steps / 1e4,
                                    "probe_loss": 0.5, "loss_hit": 0.1, "margin": 5.0 * steps / 100, "grad_norm": 1.0,
                                    "adam_root": 1e-4, "adam_root_keys": 1e-7}))
    summary = along_training.dynamics_summary({"run": dynamics_runs.with_loss_per_miss(pd.concat(frames))})["run"]
    assert summary["lowest_steps"] == [1000, 1100] and summary["last_steps"] == [1900, 2000]
    assert summary["train_loss_at_lowest"] == pytest.approx((0.1 + 0.15) / 2 + 0.01)
    assert summary["train_loss_last"] == pytest.approx((0.55 + 0.6) / 2 + 0.01)
    assert summary["missed_last"] == pytest.approx(0.195) and summary["n_seeds"] == 2
    # the misses' part of a probe loss of 0.5 when 19.5% of sequences miss and a hit costs 0.1 (around the
    # lowest, 10.5% miss: 0.5 - 0.895 * 0.1 = 0.4105, 82% of it)
    assert summary["loss_from_misses_last"] == pytest.approx(0.5 - (1 - 0.195) * 0.1)
    assert summary["loss_missed_last"] == pytest.approx(np.mean([(0.5 - 0.81 * 0.1) / 0.19, (0.5 - 0.8 * 0.1) / 0.2]))
    row = along_training.dynamics_table({"run": summary}).loc["run"]
    assert (row["lowest loss"], row["at steps"], row["last / lowest"]) == ("0.14", "1,000-1,100", "4.3")
    assert row["misses' share of the probe loss"] == "82% → 84%" and row["logit margin"] == "52.5 → ≥ 97.5"
    assert dynamics.MARGIN_CAP == pytest.approx(87.34, abs=0.01)
    # a window in which no probe sequence missed: its loss per miss is unknown, and the windows still count
    none_missed = pd.concat(frames).assign(missed=lambda f: np.where(f.step > 1500, 0.0, f.missed),
                                           train_loss=lambda f: np.where(f.step > 1500, 0.03 - f.step * 1e-5, f.train_loss))
    late = along_training.dynamics_summary({"run": dynamics_runs.with_loss_per_miss(none_missed)})["run"]
    assert late["lowest_steps"][-1] == 2000 and np.isnan(late["loss_missed_last"])
    assert along_training.dynamics_table({"run": late}).loc["run", "loss per miss (nats)"].endswith("none missed")


def test_the_rise_rows_table_sets_each_row_beside_the_constant_rate():
    """The constant rate's two runs of seeds joined (last losses 0.1, 0.3 and 0.5: mean 0.3), and one row's."""
    history = lambda *last: [(100, [1.0] * len(last)), (200, list(last))]
    constant = {BASE: [{"loss_history": history(0.1, 0.3)}, {"loss_history": history(0.5)}],
                NORMED: [{"loss_history": history(0.2, 0.2, 0.2)}]}
    row = {"row": "lr_schedule=cosine", "n_seeds": 10, "accuracy": {BASE: {"64": 82.14}, NORMED: {"64": 83.96}}}
    training = {BASE: {"loss_history": history(0.01, 0.03)}, NORMED: {"loss_history": history(0.02)}}
    table = along_training.rise_rows_table([(row, training)], {BASE: {"64": 38.9}, NORMED: {"64": 35.5}}, constant,
                                           "64", 100)
    assert table.index.tolist() == ["constant rate", "lr_schedule=cosine"]
    assert table.loc["constant rate"].tolist() == [100, "0.3", "0.2", "38.9", "35.5"]
    assert table.loc["lr_schedule=cosine"].tolist() == [10, "0.02", "0.02", "82.1", "84.0"]
