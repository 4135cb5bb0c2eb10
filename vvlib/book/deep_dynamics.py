"""Chapter 10's deep dictionary model along training: when do its Baseline, its +LN and +LN with the norm after
the last layer only part, layer by layer?  Chapter 5 measures them (those of its dynamics_rows that change its
model into chapter 10's deep one, at the constant rate: the first seeds of chapter 11's rows of that model);
this page reads their tables from the store and never trains anything.  Chapter 11 trains both kinds of +LN
taking the Baseline's run over (start_from_step) as rows of its own, which keep their weights: show_handover
reads their accuracy at the test lengths.  Chapter 5 also measures +LN taking over only part of the Baseline's
run, its weights or its AdamW moments, or the weights of one part of the model (handover): show_parts draws each
seed of those, since a mean over seeds would blend the seeds whose first layer attends with those whose does not.
"""

from dataclasses import dataclass

import pandas as pd
from IPython.display import Markdown, display

from ..experiments.chapters import DICTIONARY_LOOKUP
from ..experiments.reports import along_training, dynamics_plots, layer_rows, plots
from ..experiments.reports.answers import device_kind
from ..experiments.setups import dynamics_runs, sensitivity, variants
from ..experiments.storage import runs, store
from . import decay_rows
from .decay_rows import TASK, deep_model
from .norm_rows import LAST, LAST_LABEL
from .page import show_figure
from .runner import resolved


# what a handover carries (handover.HANDOVERS), as the page names it
PART_NAMES = {"all": "its weights and AdamW moments", "weights": "its weights only (AdamW afresh)",
              "moments": "its AdamW moments only (on the initial weights)",
              "weights and second moments": "its weights and AdamW's second moments only (its first moments afresh)",
              "all, first moments negated": "its weights and AdamW moments, the first moments negated",
              "input weights": "its embeddings' and encoder's weights only (AdamW afresh)",
              "attention weights": "its attention layers' weights only (AdamW afresh)",
              "first layer weights": "its first attention layer's weights only (AdamW afresh)",
              "first layer query and key weights": "its first attention layer's query and key weights only (AdamW afresh)",
              "first layer value weights": "its first attention layer's value weights only (AdamW afresh)",
              "later layer weights": "its later attention layers' weights only (AdamW afresh)",
              "readout weights": "its readout's weights only (AdamW afresh)"}


def part_name(row: dict) -> str:
    """What a row's handover carries, as the page names it, its rate's warm-up after the handover where it has one
    (handover_warmup_steps), and its batches after it where they are not the Baseline's (handover_data)."""
    warmup = row.get("handover_warmup_steps", 0)
    warmed = f", the rate warmed up again over {warmup:,} steps" if warmup else ""
    fresh = ", fresh batches after it" if row.get("handover_data", "carried") == "fresh" else ""
    return PART_NAMES[row.get("handover", "all")] + warmed + fresh


def row_label(row: dict) -> str:
    """A measured row of the deep model as chapter 10 names its variants, and the step where it takes its
    Baseline's run over if it does, with what it takes where that is not all of it and its number of seeds where
    the row sets its own."""
    if row.get("norm_layers") == LAST["norm_layers"]:
        name = LAST_LABEL
    else:
        name = variants.LABELS["deep_layernorm" if row.get("variant") == "layernorm" else "deep_baseline"]
    start, seeds, first, carried = row.get("start_from_step"), row.get("n_seeds"), row.get("first_seed"), part_name(row)
    if start is None:
        return name
    if first is not None:  # a row on later seeds: which ones
        seeds = f"seed {first}" if seeds == 1 else f"seeds {first}-{first + seeds - 1}" if seeds else f"seeds from {first}"
    elif seeds is not None:
        seeds = f"{seeds} seeds"
    return (f"{name}, from the Baseline's step {start:,}" + ("" if carried == PART_NAMES["all"] else f", {carried}")
            + ("" if seeds is None else f", {seeds}"))


def _of_deep_model(P, row: dict) -> bool:
    """Whether a row's model is chapter 10's deep one (P), its norm after every layer or after the last only."""
    return {k: v for k, v in dynamics_runs.model_changes(row).items() if k != "norm_layers"} == deep_model(P)


def deep_rows(P, P_measured) -> list:
    """Chapter 5's measured rows (its parameters P_measured) of chapter 10's deep model (P) that change nothing
    else but where they start, in chapter 5's order: the Baseline, +LN, +LN with its norm after the last layer
    only, and each +LN taking the Baseline's run over."""
    return [row for row in P_measured.dynamics_rows if _of_deep_model(P, row)
            and set(row) <= {"variant", "start_from_step", *dynamics_runs.model_changes(row)}]


# How chapter 10 draws the partial handovers, a panel per kind at each step: {kind: (the handover its panel draws
# first, as the whole its rows split; its title's end; the handovers it splits that whole into)}
PANELS = {"state": ("all", "", ("weights", "moments", "weights and second moments", "all, first moments negated")),
          "parts": ("weights", ", which part's weights", ("input weights", "attention weights", "readout weights")),
          "attention": ("attention weights", ", which attention weights",
                        ("first layer weights", "later layer weights", "first layer query and key weights",
                         "first layer value weights"))}
PANEL_OF = {handover: kind for kind, (_, _, splits) in PANELS.items() for handover in splits}


def panel_of(row: dict) -> str:
    """The kind of panel a row taking over part of the Baseline's run is drawn in; all of it, with the rate warmed up
    again after the handover or on fresh batches, is drawn beside all of it as it is."""
    return PANEL_OF.get(row.get("handover", "all"), "state")


# the fields that say what a handover carries and how the run goes on from it: rows differing in them alone share a panel
HANDOVER_FIELDS = ("handover", "handover_warmup_steps", "handover_data")


def part_rows(P, P_measured) -> list:
    """[[rows]]: chapter 5's measured rows of the deep model (P) in which +LN takes only part of the Baseline's run
    over (handover) or goes on from it with its rate warmed up again (handover_warmup_steps) or on fresh batches
    (handover_data), grouped by the run they take part of and by the kind of split (PANELS), after the row of the
    whole they split where chapter 5 has one; ordered by the step they take over at, then by their number of seeds,
    then by kind."""
    parts = [row for row in P_measured.dynamics_rows if _of_deep_model(P, row) and set(row) & set(HANDOVER_FIELDS)]
    key = lambda row: ({k: v for k, v in row.items() if k not in HANDOVER_FIELDS}, panel_of(row))
    keys = []
    for row in parts:
        if key(row) not in keys:
            keys.append(key(row))
    keys.sort(key=lambda k: (k[0]["start_from_step"], k[0].get("n_seeds", 0), k[0].get("first_seed", 0),
                             list(PANELS).index(k[1])))
    groups = []
    for whole, kind in keys:
        first = whole if PANELS[kind][0] == "all" else {**whole, "handover": PANELS[kind][0]}
        groups.append([first] * (first in P_measured.dynamics_rows) + [row for row in parts if key(row) == (whole, kind)])
    return groups


def seed_runs(P_measured, row: dict) -> list:
    """The rows whose seeds together are seeds 0 to a row's last, in seed order: a row on later seeds (first_seed)
    extends the row of the same settings whose seeds end where its own begin, and so on down to seed 0.  A row on
    seeds from 0 is its own; where no row ends where another begins, the chain stops there."""
    config = lambda r: dynamics_runs.row_train_config(P_measured, r)
    settings = lambda r: {k: v for k, v in r.items() if k not in ("first_seed", "n_seeds")}
    chain = [row]
    while config(chain[0]).first_seed:
        before = [r for r in P_measured.dynamics_rows if settings(r) == settings(row)
                  and config(r).first_seed + config(r).n_seeds == config(chain[0]).first_seed]
        if not before:
            break
        chain.insert(0, before[0])
    return chain


def measured_params(P):
    """Chapter 5's parameters at the profile of P's name, with P's store: the measured rows' own."""
    return resolved(DICTIONARY_LOOKUP.name, DICTIONARY_LOOKUP.profile_or_default(P.profile), {"store_dir": P.store_dir})


def read_rows(P_measured, rows: list, device) -> tuple:
    """({label: table}, {label: provenance}, [labels not stored]) of chapter 5's measured rows, from its store only."""
    task = variants.task_config(P_measured, TASK)
    tables, provenance, missing = {}, {}, []
    for row in rows:
        try:
            with runs.stored_only():
                tables[row_label(row)], provenance[row_label(row)] = dynamics_runs.measured_row(
                    P_measured, task, row, device, progress=False)
        except store.StoreError:
            missing.append(row_label(row))
    return tables, provenance, missing


def read_pooled(P_measured, rows: list, device) -> tuple:
    """read_rows of each row with the rows that precede it on earlier seeds (seed_runs), their tables joined into
    the row's: ({label: table of all their seeds}, {label: provenance} of every row read, [labels not stored]).  A
    row any of whose runs is not stored is left out whole."""
    tables, provenance, missing = {}, {}, []
    for row in rows:
        found, sources, absent = read_rows(P_measured, seed_runs(P_measured, row), device)
        provenance |= sources
        missing += absent
        if not absent:
            tables[row_label(row)] = pd.concat(found.values(), ignore_index=True)
    return tables, provenance, missing


def stored_tables(P, device) -> tuple:
    """(chapter 5's parameters at the profile of P's name, {label: table}, {label: provenance}, [labels not
    stored]) of the deep rows, read from P's store only."""
    P_measured = measured_params(P)
    return (P_measured, *read_rows(P_measured, deep_rows(P, P_measured), device))


def show(P, device) -> dict:
    """The figure of each layer's attention along training and a sentence on when the runs part; the runs not
    stored named.  Returns their provenance {"deep_dynamics/<label>": provenance} for the chapter's results.json."""
    P_measured, tables, provenance, missing = stored_tables(P, device)
    rows = deep_rows(P, P_measured)
    if not tables:
        display(Markdown("*Not measured at this profile: chapter 5's `dynamics_rows` has no row of this deep model*"
                         if not rows else f"*Not stored yet: {'; '.join(missing)} (chapter 5 measures them: "
                                          f"`python -m vvlib run 05_dictionary_lookup --profile {P.profile}`)*"))
        return {}
    kind = device_kind(next(iter(provenance.values()))["device"])
    figure = dynamics_plots.layer_dynamics(tables, P.deep_layers, P_measured.max_len,
                                  title=f"{TASK}, H={P.deep_heads} L={P.deep_layers}, constant rate: "
                                        f"{P_measured.dynamics_seeds} seeds x {P_measured.long_steps:,} steps ({kind}), measured "
                                        f"every {P_measured.dynamics_every} steps on {dynamics_runs.PROBE_ROWS} "
                                        f"sequences of {P_measured.max_len} items (mean over seeds)")
    show_figure(f"The deep model ({P.deep_heads} heads x {P.deep_layers} layers) at the constant rate "
                f"({P_measured.dynamics_seeds} seeds x {P_measured.long_steps:,} steps, {kind}), mean over seeds, a "
                "line per run. Left, the whole model's losses and norms; then each layer's attention entropy, share "
                "of largest weights on the answer (dashed: uniform weights), and query and key weights.", figure)
    display(Markdown("Each layer's attention along training (entropy in nats; the share of largest weights on the "
                     "answer; the norm of its query and key weights), means over seeds:"))
    display(along_training.layer_dynamics_table(tables, P.deep_layers, P_measured.max_len))
    end = along_training.last_tenth(next(iter(tables.values())).groupby("step").mean(numeric_only=True)).index
    display(Markdown(f"*At the end*: means over steps {end[0]:,}-{end[-1]:,}, the last tenth of the measurements. "
                     "When each run's first layer parts from the first run's:"))
    display(along_training.layers_parting_table(tables, P_measured.max_len))
    if missing:
        display(Markdown(f"Not stored yet: {'; '.join(missing)}."))
    return {f"deep_dynamics/{label}": p for label, p in provenance.items()}


@dataclass
class Panel:
    """One panel of show_parts: the step +LN starts from, its seeds (0 to seeds - 1), which split, {run: table}."""
    start: int
    seeds: int
    which: str
    tables: dict


def widest(panels: list) -> list:
    """The panels less each whose runs a later panel of the same start and split shows on more seeds: a panel's
    seeds run from 0 (read_pooled), so the later one holds the earlier's (step 100's runs of 24 and 36 seeds are
    the first seeds of its runs of 48)."""
    return [p for i, p in enumerate(panels)
            if not any((q.start, q.which, set(q.tables)) == (p.start, p.which, set(p.tables)) and q.seeds > p.seeds
                       for q in panels[i + 1:])]


def show_parts(P, device) -> dict:
    """Per group of part_rows (a panel each): each seed's first-layer entropy along training with each part handed
    over, a sentence of how many seeds end with it below half of ln N, and where runs share their seeds, a grid of
    every seed's entropy at the end run by run; the rows not stored named.  Returns their provenance
    {"handover_parts/<label>": provenance} for the chapter's results.json."""
    P_measured = measured_params(P)
    groups = part_rows(P, P_measured)
    if not groups:
        display(Markdown("*Not measured at this profile: no row of chapter 5's `dynamics_rows` hands only part of the "
                         "Baseline's run over (`handover`)*"))
        return {}
    found, sources, missing = [], {}, []
    for rows in groups:
        tables, provenance, absent = read_pooled(P_measured, rows, device)
        names = {row_label(row): part_name(row) for row in rows}
        if tables:
            found.append(Panel(rows[0]["start_from_step"], next(iter(tables.values()))["seed"].nunique(),
                               PANELS[panel_of(rows[-1])][1], {names[label]: t for label, t in tables.items()}))
        sources |= {f"handover_parts/{label}": p for label, p in provenance.items()}
        missing += absent
    panels = {f"+LN from the Baseline's step {p.start:,}, {p.seeds} seed{'s' * (p.seeds > 1)}{p.which}": p.tables
              for p in widest(found)}
    if panels:
        kind = device_kind(next(iter(sources.values()))["device"])
        figure = dynamics_plots.seed_entropy_lines(panels, 1, P_measured.max_len,
                                          title=f"{TASK}, H={P.deep_heads} L={P.deep_layers}, constant rate: "
                                                f"{P_measured.long_steps:,} steps ({kind}), measured every "
                                                f"{P_measured.dynamics_every} steps on {dynamics_runs.PROBE_ROWS} "
                                                f"sequences of {P_measured.max_len} items")
        show_figure(f"Each seed's first-layer attention entropy along training ({P_measured.long_steps:,} steps, "
                    f"{kind}), a panel per start of +LN, a colour per run. Dashed: ln {P_measured.max_len}, uniform "
                    "weights; a line that ends below the dotted half of it attends.", figure)
        display(Markdown(along_training.seeds_below_note(1, P_measured.max_len)))
        for name, tables in panels.items():
            display(Markdown(f"**{name}**"))
            display(along_training.seeds_below_table(tables, 1, P_measured.max_len))
        _show_seed_grid(panels, P_measured.max_len)
    if missing:
        display(Markdown(f"*Not stored yet: {'; '.join(missing)} (chapter 5 measures them: "
                         f"`python -m vvlib run 05_dictionary_lookup --profile {P.profile}`)*"))
    return sources


def _show_seed_grid(panels: dict, length: int):
    """The panels whose runs can be asked whether they attend in the same seeds (along_training.shared_seed_ends),
    each seed's first-layer entropy at the end run by run: whether the seeds that attend are the same from run to
    run."""
    grids = {name: ends for name, tables in panels.items()
             if (ends := along_training.shared_seed_ends(tables, 1, length)) is not None}
    if grids:
        figure = dynamics_plots.seed_grid(grids, length, title="Each seed's first-layer entropy at the end, run by run (dotted "
                                                       "where below half of ln N: it attends)")
        show_figure(f"Each seed (column) of each run (row): its first-layer attention entropy at the end, from 0 to "
                    f"ln {length}. A white dot: the seed attends. A column dotted all the way down attends however "
                    "it is handed over.", figure)


def handover_rows(P, P_rows) -> list:
    """[(the row, the same row from its own start)] of chapter 11's TASK rows (its parameters P_rows) of the deep
    model (P) where +LN, its norm after every layer or the last only, takes the Baseline's run over
    (start_from_step), in chapter 11's order."""
    return [(row, {k: v for k, v in row.items() if k not in ("start_from_step", "handover")})
            for row in P_rows[sensitivity.row_parameters()[TASK]] if "start_from_step" in row and _of_deep_model(P, row)]


def show_handover(P, device) -> dict:
    """Per scale with such rows: the accuracy at each test length of +LN taking the Baseline's run over, beside +LN
    from its own start and the Baseline (the same seeds, the same Baseline run), a figure and a sentence; the rows
    not stored named.  Returns their runs' provenance for the chapter's results.json."""
    sources, scales = {}, decay_rows.scales(P, device)
    if not any(handover_rows(P, P_rows) for P_rows, _ in scales.values()):
        display(Markdown("*No row of chapter 11 at this profile takes the Baseline's run over (`start_from_step`)*"))
    for where, (P_rows, on) in scales.items():
        found, missing = [], []
        for row, own in handover_rows(P, P_rows):
            P_row = sensitivity.row_params(P_rows, TASK, row)
            handed = sensitivity.stored_accuracy(P_row, TASK, on)
            start = sensitivity.stored_accuracy(sensitivity.row_params(P_rows, TASK, own), TASK, on)
            if handed is None or start is None:
                missing.append(_ln_label(row))
            else:
                found.append((row, own, P_row, handed, start))
        if found:
            sources |= _show_handed(P, P_rows, where, found, on)
        if missing:
            display(Markdown(f"*At {where}, not stored yet: {'; '.join(missing)} (chapter 11's rows: "
                             f"`python -m vvlib run 11_sensitivity --profile {P_rows.profile}`)*"))
    return sources


def _ln_label(row: dict) -> str:
    """row_label of a chapter 11 row's +LN side."""
    return row_label({**row, "variant": "layernorm"})


def _show_handed(P, P_rows, where: str, found: list, device) -> dict:
    """The figure, the sentence and each layer's attention of show_handover at one scale; found [(row, own row, row
    parameters, stored accuracy of the row, of its own row)], each stored accuracy (accuracy {side: (seeds,
    lengths)}, training {side: record}).  Returns the runs' and probes' provenance."""
    _, _, P_row, (_, first_training), (own_accuracy, _) = found[0]
    accuracy, names = {"baseline": own_accuracy["baseline"]}, {"baseline": variants.LABELS["deep_baseline"]}
    for i, (row, own, _, (handed, _), (start, _)) in enumerate(found):  # every row's Baseline is the same run
        accuracy |= {f"own{i}": start["layernorm"], f"handed{i}": handed["layernorm"]}
        names |= {f"own{i}": _ln_label(own), f"handed{i}": _ln_label(row)}
    kind = device_kind(first_training["layernorm"]["provenance"]["device"])
    figure = plots.variants_accuracy(accuracy, list(accuracy), names, P_rows.eval_lengths,
                                     title=f"{TASK}, H={P.deep_heads} L={P.deep_layers}, constant rate: {P_row.n_seeds} "
                                           f"seeds x {P_row.steps:,} steps ({kind}), chapter 11's rows")
    show_figure(f"The deep model's accuracy against N ({P_row.n_seeds} seeds x {P_row.steps:,} steps, {kind}, "
                "chapter 11's rows), mean ± s.e. over seeds: its Baseline, each +LN from its own start, and each +LN "
                "that takes the Baseline's run over. The table below pairs them seed by seed.", figure)
    compared = [(_ln_label(row), start, handed) for row, _, _, (handed, _), (start, _) in found]
    display(Markdown(f"**At {where}**, the accuracy of each +LN taken over, paired seed by seed:"))
    display(layer_rows.paired_rows_table(compared, P_rows.eval_lengths, P_rows.compared_lengths,
                                         "+LN from its own start"))
    sources = {f"handover/{where}/{_ln_label(row)}/{side}": record["provenance"]
               for row, _, _, (_, training), _ in found for side, record in training.items()}
    sides = {"baseline": variants.LABELS["deep_baseline"], "layernorm": "+LN taken over"}
    return sources | decay_rows.show_layers(P_rows, [(_ln_label(row), P_row) for row, _, P_row, _, _ in found], device,
                                            where, kind, sides)
