import dataclasses

import pytest
import torch
import torch.nn.functional as F

from tests.test_model import reference_forward
from vvlib import seed_groups
from vvlib.model import ModelConfig
from vvlib.task_base import Batch
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig, Trainer, max_len_at, train, training_batch, weight_settings


def stop_at(stop: int):
    def hook(step):
        if step == stop:
            raise KeyboardInterrupt
    return hook


def small(**kw):
    base = dict(n_seeds=3, steps=8, batch_size=16, checkpoint_every=3, checkpoint_gap_s=0)
    return TrainConfig(**{**base, **kw})


@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_ensemble_training_equals_training_each_seed_alone(fixture, request, device):
    cfg = request.getfixturevalue(fixture)
    together, _ = train(cfg, small(), device, progress=False)
    for s in range(3):
        alone, _ = train(cfg, small(n_seeds=1, first_seed=s), device, progress=False)
        for name in together:
            assert torch.allclose(together[name][s], alone[name][0], atol=1e-5), name


@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_same_settings_train_the_same_weights(fixture, request, device):
    """Bit for bit on one device: the store reuses a run only if a rerun would match it."""
    cfg = request.getfixturevalue(fixture)
    first, _ = train(cfg, small(), device, progress=False)
    second, _ = train(cfg, small(), device, progress=False)
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_resume_after_interruption_equals_uninterrupted(small_argmax, tmp_path, device):
    """The checkpoint at step 6 falls between the losses logged at steps 4 and 8: the loss summed
    over steps 5-6 travels with it, so step 8 still logs the mean over steps 5-8."""
    cfg = small(steps=12)
    straight = Trainer(small_argmax, cfg, device)
    weights = straight.run(progress=False, log_every=4)
    checkpoint = tmp_path / "ckpt.pt"
    with pytest.raises(KeyboardInterrupt):
        Trainer(small_argmax, cfg, device).run(checkpoint, progress=False, on_step=stop_at(7), log_every=4)
    resumed = Trainer(small_argmax, cfg, device)
    assert resumed.resume(checkpoint) and resumed.step == 6  # the last checkpoint before the interruption
    again = resumed.run(checkpoint, progress=False, log_every=4)
    assert all(torch.equal(weights[k], again[k]) for k in weights)
    assert [step for step, _ in resumed.loss_history] == [4, 8, 12] and resumed.loss_history == straight.loss_history


@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_seed_groups_train_the_same_weights_as_the_whole_ensemble(fixture, request, one_thread):
    cfg = request.getfixturevalue(fixture)
    whole, whole_history = train(cfg, small(n_seeds=5), progress=False)
    for size in (1, 2):
        grouped, history = train(cfg, small(n_seeds=5, seed_group=size), progress=False)
        assert all(torch.equal(whole[k], grouped[k]) for k in whole), size
        assert history == whole_history


def test_more_seeds_leave_the_whole_groups_before_them_unchanged(small_argmax):
    """Chapter 11's 20-seed row: in groups of 4, seeds 0-7 of 20 train as seeds 0-7 of 10."""
    ten, _ = train(small_argmax, small(n_seeds=10, seed_group=4), progress=False)
    twenty, _ = train(small_argmax, small(n_seeds=20, seed_group=4), progress=False)
    assert all(torch.equal(ten[k][:8], twenty[k][:8]) for k in ten)


def test_seed_group_is_a_setting_only_where_it_splits_the_seeds():
    """Every group size that covers all seeds trains the same weights: one store entry."""
    assert weight_settings(small(n_seeds=3))["seed_group"] == 0
    assert weight_settings(small(n_seeds=3, seed_group=3)) == weight_settings(small(n_seeds=3))
    assert weight_settings(small(n_seeds=3, seed_group=8)) == weight_settings(small(n_seeds=3))
    assert weight_settings(small(n_seeds=3, seed_group=2))["seed_group"] == 2


COUNTER = {"draws": "counter"}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_counter_batches_are_the_same_bits_on_cpu_and_cuda(task, small_argmax):
    model = small_argmax if task == "argmax" else CAPTURABLE_DICTIONARY
    cfg = small(n_seeds=3, seed_group=2, min_len=3, max_len=16, **COUNTER)
    on_cpu, on_gpu = Trainer(model, cfg, "cpu"), Trainer(model, cfg, "cuda", graph_draws=False)
    for step in (0, 1, 999):
        on_cpu.step = on_gpu.step = step
        for group in range(2):
            ours, theirs = on_cpu.draw(group), on_gpu.draw(group)
            for field in ("label", "target", "priority", "key", "query", "mask"):
                a, b = getattr(ours, field), getattr(theirs, field)
                assert (a is None and b is None) or torch.equal(a, b.cpu()), field


def one_sequence(batch: Batch, s: int, b: int) -> Batch:
    """Seed s's sequence b of a stacked batch, cut to its real length (a batch of one)."""
    n = int(batch.mask[s, b].sum())
    fields = {name: getattr(batch, name) for name in ("label", "target", "priority", "key", "query")}
    return Batch(**{name: None if v is None else (v[s, b:b + 1, :n] if v.dim() == 3 else v[s, b:b + 1])
                    for name, v in fields.items()})


@pytest.mark.parametrize("seed_group", [0, 2])
@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_training_steps_equal_a_textbook_reference(fixture, seed_group, request):
    """The engine's steps (seed-batched products, K and V never formed, fused AdamW, seed
    groups) against the plain computation: each seed its own weights, each sequence alone at
    its own length with K and V formed, cross-entropy, torch's unfused AdamW."""
    cfg = request.getfixturevalue(fixture)
    # weight decay well above the default, so that a reference without it would be told apart
    train_cfg = small(steps=3, min_len=3, max_len=9, weight_decay=0.1, seed_group=seed_group)
    engine, data = Trainer(cfg, train_cfg), Trainer(cfg, train_cfg)  # `data` only draws the batches
    start = engine.weights()
    reference = {name: [w[s].clone().requires_grad_(True) for s in range(3)] for name, w in start.items()}
    leaves = [w for ws in reference.values() for w in ws]
    optimizer = torch.optim.AdamW(leaves, lr=train_cfg.lr, weight_decay=train_cfg.weight_decay,
                                  foreach=False, fused=False)
    for _ in range(train_cfg.steps):
        engine.train_step()
        batch = training_batch(cfg, train_cfg, [g for group in data.groups for g in group.generators],
                               data.step, "cpu")
        data.step += 1
        loss = 0
        for s in range(3):
            logits = torch.cat([reference_forward(cfg, reference, one_sequence(batch, s, b), s)[0]
                                for b in range(train_cfg.batch_size)])
            loss = loss + F.cross_entropy(logits, batch.target[s])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for name, weights in engine.weights().items():
        expected = torch.stack([w.detach() for w in reference[name]])
        assert not torch.equal(expected, start[name]) or name.startswith("ln."), name  # it did train
        torch.testing.assert_close(weights, expected, atol=5e-6, rtol=0, msg=name)  # measured: up to 5e-7


def test_checkpoint_of_other_settings_is_refused(small_argmax, tmp_path):
    checkpoint = tmp_path / "ckpt.pt"
    with pytest.raises(KeyboardInterrupt):  # stopped after its checkpoint at step 3
        train(small_argmax, small(steps=5), checkpoint=checkpoint, progress=False, on_step=stop_at(4))
    with pytest.raises(RuntimeError, match="other settings"):
        Trainer(small_argmax, small(steps=5, lr=0.01)).resume(checkpoint)


def test_a_run_that_never_checkpointed_resumes_from_the_start_to_the_same_weights(small_argmax, tmp_path):
    cfg = small(steps=6, checkpoint_every=2, checkpoint_gap_s=3600)
    straight, _ = train(small_argmax, cfg, progress=False)
    checkpoint = tmp_path / "ckpt.pt"
    with pytest.raises(KeyboardInterrupt):
        train(small_argmax, cfg, checkpoint=checkpoint, progress=False, on_step=stop_at(5))
    assert not checkpoint.exists()
    resumed, _ = train(small_argmax, cfg, checkpoint=checkpoint, progress=False)
    assert all(torch.equal(straight[k], resumed[k]) for k in straight)


def test_training_lowers_the_loss(small_argmax):
    trainer = Trainer(small_argmax, small(n_seeds=2, steps=300, batch_size=64))
    trainer.run(progress=False, log_every=50)
    first, last = trainer.loss_history[0][1], trainer.loss_history[-1][1]
    assert all(b < 0.7 * a for a, b in zip(first, last))


def test_curriculum_is_monotone_and_reaches_the_maximum():
    cfg = TrainConfig(min_len=5, max_len=256, curriculum_steps=1000, curriculum_start_len=16, steps=2000)
    caps = [max_len_at(cfg, t) for t in range(2000)]
    assert caps[0] == 16 and max(caps) == 256 and caps[999] == 256
    assert all(a <= b for a, b in zip(caps, caps[1:]))
    assert set(caps) == {16, 32, 64, 128, 256}
    assert max_len_at(TrainConfig(), 0) == 16  # no curriculum


@pytest.mark.parametrize("kw, match", [
    (dict(n_seeds=0), "n_seeds"), (dict(steps=-1), "steps"), (dict(min_len=20), "min_len"),
    (dict(seed_group=-1), "seed_group"), (dict(seed_group=2.5), "seed_group"),
    (dict(draws="philox"), "draws must be one of generators, counter; got 'philox'"),
    (dict(lr_schedule="linear"), "lr_schedule must be one of constant, cosine, drop; got 'linear'"),
    (dict(steps=8, warmup_steps=9), r"warmup_steps must be an int from 0 to steps \(8\); got 9"),
    (dict(grad_clip=-1.0), "grad_clip must be a number >= 0"),
    (dict(steps=8, lr_schedule="drop", drop_step=8), r"drop_step must be an int from 1 to steps - 1 \(7\)"),
    (dict(drop_step=3), "drop_step is read only with lr_schedule 'drop'"),
    (dict(adam_eps=0.0), "adam_eps must be a number > 0"),
])
def test_bad_training_settings_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(**kw)


def test_graph_draws_are_refused_where_unsupported(small_argmax, small_dictionary):
    with pytest.raises(ValueError, match="graph_draws=True needs CUDA"):
        Trainer(small_argmax, small(), "cpu", graph_draws=True)
    if torch.cuda.is_available():  # 256 keys: too few for the fixed draw at 16 items
        with pytest.raises(ValueError, match="graph_draws=True needs CUDA and a task"):
            Trainer(small_dictionary, small(), "cuda", graph_draws=True)
    with pytest.raises(ValueError, match="graph_draws and graph_step must each be None"):
        Trainer(small_argmax, small(), "cpu", graph_draws="yes")
    with pytest.raises(ValueError, match="graph_step=True needs CUDA"):
        Trainer(small_argmax, small(), "cpu", graph_step=True)
    with pytest.raises(ValueError, match="must each be None .where supported., True or False; got None and 1"):
        Trainer(small_argmax, small(), "cpu", graph_step=1)
    if torch.cuda.is_available():
        default, draws_only = Trainer(small_argmax, small(), "cuda"), Trainer(small_argmax, small(), "cuda", True)
        assert default.graph_step and not default.graph_draws
        assert draws_only.graph_draws and not draws_only.graph_step


# dictionary lookup with the paper's 16384 keys: its GPU draw is a fixed sequence of kernels
CAPTURABLE_DICTIONARY = ModelConfig(task=TaskConfig("dictionary", n_values=8), hidden=16, key_dim=8, value_dim=8)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA GPU")
@pytest.mark.parametrize("task", ["argmax", "dictionary"])
@pytest.mark.parametrize("draws", ["generators", "counter"])
def test_a_graphed_whole_step_gives_the_eager_losses_and_weights(task, draws, small_argmax, tmp_path):
    """Replaying the whole step (draw, forward, backward, AdamW) changes no number: the same losses
    every step, weights, AdamW state and generator states, through a curriculum, in seed groups,
    and across a checkpoint and resume in the middle (which records the graphs afresh)."""
    model = small_argmax if task == "argmax" else CAPTURABLE_DICTIONARY
    cfg = small(n_seeds=3, seed_group=2, steps=10, min_len=3, max_len=16, curriculum_steps=6, curriculum_start_len=4,
                draws=draws)
    graphed, eager = Trainer(model, cfg, "cuda", graph_step=True), Trainer(model, cfg, "cuda", graph_draws=False)
    assert graphed.graph_step and not graphed.graph_draws
    for step in range(cfg.steps):
        if step == 3:  # stop and resume: a new trainer records its own graphs
            graphed.save(tmp_path / "checkpoint.pt")
            graphed = Trainer(model, cfg, "cuda", graph_step=True)
            assert graphed.resume(tmp_path / "checkpoint.pt")
        assert torch.equal(graphed.train_step(), eager.train_step()), step
    assert sorted(graphed.graphed[0].graphs) == [8, 16]  # recorded after the resume, one per length
    for a, b in zip(graphed.groups, eager.groups):
        for ga, gb in zip(a.generators, b.generators):
            assert torch.equal(ga.get_state(), gb.get_state())
    for name, value in eager.weights().items():
        assert torch.equal(graphed.weights()[name], value), name
    ours, theirs = (seed_groups.joined_optimizer_state(t.groups)["state"] for t in (graphed, eager))
    for i in theirs:
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(ours[i][key], theirs[i][key]), (i, key)


def test_the_cosine_schedule_warms_up_then_decays_to_zero():
    from vvlib.optim import learning_rate

    rates = [learning_rate(1.0, "cosine", 4, 20, step) for step in range(20)]
    assert rates[:4] == [0.25, 0.5, 0.75, 1.0]  # linear warmup reaches lr at the last warmup step
    assert rates[4] == 1.0 and rates[12] == pytest.approx(0.5) and 0 < rates[-1] < 0.02  # halfway: half; the end: near 0
    assert all(a >= b for a, b in zip(rates[4:], rates[5:]))
    assert {learning_rate(0.1, "constant", 0, 20, s) for s in range(20)} == {0.1}


def test_clipping_scales_each_seeds_gradient_on_its_own():
    """Seed 0's gradient (norm 5) is scaled to norm 1; seed 1's (norm 0.5) is left as it is."""
    from vvlib.optim import clip_per_seed

    a, b = torch.zeros(2, 2, requires_grad=True), torch.zeros(2, 1, requires_grad=True)
    a.grad, b.grad = torch.tensor([[3.0, 0.0], [0.3, 0.0]]), torch.tensor([[4.0], [0.4]])
    norms = clip_per_seed([a, b], 1.0)
    assert torch.allclose(norms, torch.tensor([5.0, 0.5]))
    assert torch.allclose(a.grad, torch.tensor([[0.6, 0.0], [0.3, 0.0]]), atol=1e-6)
    assert torch.allclose(b.grad, torch.tensor([[0.8], [0.4]]), atol=1e-6)


def test_a_schedule_and_clipping_train_like_a_textbook_loop_seed_by_seed(small_argmax, device):
    """The ensemble with a cosine schedule and clipping equals each seed trained alone (the
    schedule and the clip are per seed), and differs from the constant, unclipped run."""
    cfg = small(steps=6, lr_schedule="cosine", warmup_steps=2, grad_clip=0.05)
    together, _ = train(small_argmax, cfg, device, progress=False)
    for s in range(3):
        alone, _ = train(small_argmax, dataclasses.replace(cfg, n_seeds=1, first_seed=s), device, progress=False)
        assert all(torch.allclose(together[k][s], alone[k][0], atol=1e-6) for k in together)
    plain, _ = train(small_argmax, small(steps=6), device, progress=False)
    assert any(not torch.allclose(together[k], plain[k]) for k in plain)


def test_a_dropped_rate_trains_like_adamw_whose_rate_is_set_by_hand(small_argmax):
    """Seed by seed, the drop schedule equals torch's AdamW with its rate lowered at drop_step."""
    from vvlib.model import init_params, per_seed_loss
    from vvlib.train import training_batch
    from vvlib import rng

    cfg = small(n_seeds=1, steps=6, lr_schedule="drop", drop_step=3, adam_eps=1e-4)
    ours, _ = train(small_argmax, cfg, "cpu", progress=False)
    params = {k: v.clone().requires_grad_(True) for k, v in init_params(small_argmax, [0], cfg.seed).items()}
    optimizer = torch.optim.AdamW(params.values(), lr=cfg.lr, weight_decay=cfg.weight_decay, eps=1e-4)
    generator = rng.generator("cpu", cfg.seed, "train-data", 0)
    for step in range(cfg.steps):
        for group in optimizer.param_groups:
            group["lr"] = cfg.lr if step < 3 else cfg.lr * 0.1
        batch = training_batch(small_argmax, cfg, [generator], step, "cpu")
        optimizer.zero_grad()
        per_seed_loss(small_argmax, params, batch).sum().backward()
        optimizer.step()
    assert all(torch.allclose(ours[k], params[k].detach(), atol=1e-6) for k in ours)


def test_dropout_masks_keep_the_mean_and_are_a_seeds_own(device):
    """Each activation is kept with chance 1 - p and scaled by 1 / (1 - p); seed s's masks are the same
    whichever seeds share its group, and differ from step to step and from seed to seed."""
    from vvlib.train import dropout_masks

    cfg = small(dropout=0.25)
    step = torch.tensor(3, device=device)
    masks = dropout_masks(cfg, step, torch.tensor([0, 1, 2], device=device))((3, 64, 32))
    assert masks.shape == (3, 64, 32) and set(masks.unique().tolist()) == {0.0, torch.tensor(1 / 0.75).item()}
    assert abs((masks == 0).float().mean().item() - 0.25) < 0.02  # 6,144 draws: sd of the fraction 0.006
    alone = dropout_masks(cfg, step, torch.tensor([2], device=device))((1, 64, 32))
    assert torch.equal(alone[0], masks[2]) and not torch.equal(masks[0], masks[1])
    later = dropout_masks(cfg, step + 1, torch.tensor([0, 1, 2], device=device))((3, 64, 32))
    assert not torch.equal(later, masks)
    assert dropout_masks(small(), step, torch.tensor([0], device=device)) is None


@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_dropout_trains_other_weights_with_the_same_grouping_guarantee(fixture, request, one_thread):
    cfg = request.getfixturevalue(fixture)
    plain, _ = train(cfg, small(n_seeds=4), progress=False)
    dropped, _ = train(cfg, small(n_seeds=4, dropout=0.1), progress=False)
    assert not torch.equal(plain["enc0.w"], dropped["enc0.w"])
    grouped, _ = train(cfg, small(n_seeds=4, dropout=0.1, seed_group=2), progress=False)
    assert all(torch.equal(dropped[k], grouped[k]) for k in dropped)
    assert "dropout" not in weight_settings(small()) and weight_settings(small(dropout=0.1))["dropout"] == 0.1
    with pytest.raises(ValueError, match="dropout must be a number from 0"):
        small(dropout=1.0)


def test_tf32_is_a_weight_setting_asked_for_on_a_gpu_only_and_leaves_torchs_flag_as_it_was():
    from vvlib.train import matmul_tf32, weight_settings

    assert "tf32" not in weight_settings(TrainConfig())  # every stored run keeps its entry
    assert weight_settings(TrainConfig(tf32=True))["tf32"] is True  # a TF32 run has its own
    with pytest.raises(ValueError, match="tf32 must be True or False"):
        TrainConfig(tf32=1)
    with pytest.raises(ValueError, match="tf32=True needs a CUDA GPU"):
        Trainer(ModelConfig(task=TaskConfig("argmax")), TrainConfig(n_seeds=1, tf32=True), "cpu")
    before = torch.backends.cuda.matmul.allow_tf32
    with pytest.raises(RuntimeError):
        with matmul_tf32(not before):
            assert torch.backends.cuda.matmul.allow_tf32 is (not before)
            raise RuntimeError("a step that fails")
    assert torch.backends.cuda.matmul.allow_tf32 is before


@pytest.mark.skipif(not torch.cuda.is_available(), reason="TF32 needs a CUDA GPU")
def test_a_tf32_run_on_a_gpu_trains_in_tf32_and_restores_the_flag():
    model_cfg = ModelConfig(task=TaskConfig("argmax"))
    runs = {}
    for tf32 in (False, True):
        trainer = Trainer(model_cfg, TrainConfig(n_seeds=2, steps=5, draws="counter", tf32=tf32), "cuda")
        trainer.run(progress=False)
        runs[tf32] = trainer.weights()
        assert torch.backends.cuda.matmul.allow_tf32 is False
    # the same batches, other rounding in the products: close (bench/tf32_ab.py measures what it does to accuracy)
    assert all(torch.allclose(runs[False][k], runs[True][k], atol=1e-2) for k in runs[False])


@pytest.mark.parametrize("fixture", ["small_argmax", "small_dictionary"])
def test_a_run_stopped_at_its_deadline_saves_its_step_and_resumes_to_the_uninterrupted_run(
        fixture, request, tmp_path, device):
    """A lent GPU's command trains inside stopping_at: at the deadline (here: after step 5, between the
    checkpoints of steps 3 and 6 and the losses logged at 4 and 8) the run saves that step and raises TimeUp;
    resumed without a deadline it ends with the uninterrupted run's weights and logged losses."""
    from vvlib.train import TimeUp, stopping_at

    model, cfg = request.getfixturevalue(fixture), small(steps=12, **COUNTER)
    straight = Trainer(model, cfg, device)
    straight.run(progress=False, log_every=4)
    seen = []
    checkpoint = tmp_path / "ckpt.pt"
    with stopping_at(5, clock=lambda: len(seen)), pytest.raises(TimeUp, match="step 5 of 12"):
        Trainer(model, cfg, device).run(checkpoint, progress=False, on_step=seen.append, log_every=4)
    assert seen == [1, 2, 3, 4, 5]
    resumed = Trainer(model, cfg, device)
    assert resumed.resume(checkpoint) and resumed.step == 5
    weights = resumed.run(checkpoint, progress=False, log_every=4)
    assert all(torch.equal(straight.weights()[k], weights[k]) for k in weights)
    assert resumed.loss_history == straight.loss_history
    # a run that finishes before its deadline never sees it; one without a checkpoint stops all the same
    with stopping_at(100, clock=lambda: len(seen)):
        Trainer(model, cfg, device).run(progress=False)
    with stopping_at(0, clock=lambda: 0), pytest.raises(TimeUp, match="step 1 of 12 at the deadline$"):
        Trainer(model, cfg, device).run(progress=False)
