"""vvlib: the code behind the executable book on vanishing variance in attention.

One concept per module, in three layers, one folder each; a module imports only from its own
layer or the ones above it (tests/test_layers.py checks this).

The science, vvlib/ (no files, no pages):
    rng             deterministic seeds and generators
    philox          Philox-4x32-10 in int64 tensor arithmetic: the same bits on every device
    draws           where a batch's numbers come from: per-seed generators or the counter stream
    task_base       what a task implements, the batch it draws, and helpers every task shares
    tasks           the task registry (it imports each task module) and a task's settings
    task_argmax     argmax retrieval: its data and how the model reads it
    task_dictionary dictionary lookup: its data and how the model reads it
    attention       softmax temperature and the norms applied to the attention output
    model           the one-layer, single-query attention model as a batched ensemble
    train_config    a training run's settings, their rules, and which of them decide the weights
    train           seed-batched training with checkpoints and resume
    seed_groups     the seeds in groups, each with its AdamW, and checkpoints laid out the same for any grouping
    optim           a learning-rate schedule and per-seed gradient clipping, when asked for
    distributed     a run's seeds spread over the processes of a torchrun launch
    graphdraw       training batches replayed from CUDA graphs (argmax on a GPU)
    graphstep       a whole training step replayed from a CUDA graph (the default on a GPU)
    capture_safety  host copies and host reads, which a CUDA graph cannot record, caught on any device
    evaluate        chunked accuracy at long lengths
    montecarlo      Monte Carlo of random attention (chapters 1-2)
    probing         inside trained models at long lengths (chapters 6-7)
    model_files     pretrained models on disk: bundled, Hugging Face directories, GGUF files
    pretrained      Figure 1 on pretrained transformers, every layer (chapter 3)
    beyond          the paper's open questions (chapter 10)
    stats           per-length summaries and paired tests
    compare         how two runs are compared: alpha, pair names, the verdict rule
    atomic          files written whole or not at all (checkpoints, weights, results)
    errors          the error a bad parameter raises, and the check that raises it

Experiments, vvlib/experiments/ (cached runs, results, tables), in five rooms (packages), each
importing only from the rooms listed before it:
    storage         where results live
        store           results on disk with provenance
        runs            train once, probe many: stored runs and their evaluations
    setups          from a chapter's parameters to what it computes
        paper           the paper's own numbers, for side-by-side tables
        paper_tasks     the paper's two tasks as the book sees them: table, chapter, scales, one record each
        params          chapter parameters: profiles and validation
        variants        the training chapters' common flow: each variant trained once, evaluated per temperature
        probes          the probe tables of chapters 6, 7 and 10, each defined once for its chapter and the plan
        sensitivity     chapter 11: one unstated setting at a time, +LN against the Baseline per configuration
        migrate         a results store rewritten once in today's spec format
        computed        chapter 2's tables, stored under its parameters
        pretrained_probe chapter 3's measurements of a pretrained model, stored as the tables it shows
    chapters        one file per chapter: its record, profiles and checks; the scales they share
    reports         what a page shows
        report          tables beside the paper's, chapter 8's verdict rows, results.json
        answers         the answer a chapter page opens with: a verdict table, then a few rows beside the paper's
        summary         the paper's claims against the chapters' results
        summary_tables  the summary's other tables: +LN against +std, chapter 11's rows by sign, compute spent
        provisional     the rule that marks a verdict resting on fewer steps than the paper's as provisional
        run_groups      every committed training run, grouped from its records, for the scale page
        plots           seaborn figures
        attention_plots the attention's figures (chapter 7): Figure 4's heatmaps, accuracy against entropy and
                        against each account's measure, the sharpness test
        palette         one colour per variant across the book
        explore         slider views that work on the static page
        probed          what chapters 6 and 7 keep of their probe tables in results.json, at each scale
        adaptive_reach  where adaptive temperature acts: the heads' entropy per length beside what it changes
        along_training  training losses in a table: the lowest, the last, how far they rise
        attention_gain  how much of +LN's gain goes with its sharper attention (chapter 7)
        two_accounts    the variance account and attention dispersion read on the same models (chapter 7)
        paper_rows      chapter 11's rows at the paper's scale as the pages show them, each judged at every length
    paper_scale     the paper's scale, planned
        plan            the store entries a training chapter will compute, and how far each has got
        units           the plan cut into units that fit one GPU command, with estimates from measured speeds

The book, vvlib/book/ (and the command line):
    runner          the papermill runner: a chapter resolved at a profile, checked, executed
    paper_scale     a chapter's results at its paper profile, read where the GPU queue committed them
    page            what every chapter's page begins and ends with: checked parameters, device, results.json
    pretrained_page chapter 3's page: Figure 1 on the pretrained models, per head, deeper layers, positions
    accuracy_page   chapters 4 and 5 as one body: each notebook's prose calls its sections
    summary_page    the summary page: the claims, chapter 11's rows by sign, Table 6, what the runs cost
    sensitivity_page chapter 11's page: each unstated setting's row, at the paper's scale and this page's
    longer_page     chapter 9's page: both tasks on longer sets, and the longer training
    ablation_page   chapter 8's page: Baseline, +std and +LN on both tasks at each scale
    distribution_page chapter 6's page: Figures 2 and 3 at each scale, and what +LN's norm does
    dispersion_page chapter 7's page: Figure 4, the gain at equal entropy, the sharpness test
    accounts_page   chapter 7's two accounts side by side on the paper-scale models
    beyond_page     chapter 10's page: the variance-keeping output, length-aware logits, the deep model
    webassets       offline MathJax and widget scripts
    exercises       the chapters' exercises: one record each, reference runs that compute their ranges, the check
    colab           the install cell a notebook runs first when opened in Colab, and the profile it runs at there
    build           executing every chapter, then Jupyter Book
    key_results     the introduction's key-result box: the headline tables at the paper's scale, with intervals
    pending         what of the paper's scale is still to run: the GPU queue's units not yet stored, per chapter
    generated       blocks of docs rendered from records between markers (results/paper/README.md's runs)
    readable        what a reader should never see in a built page (a table cut short, raw TeX), over a book
    sentences       how long the book's written sentences run: each page's share over 40 words
    paper_run       python -m vvlib paper: the training chapters at the paper's scale, one progress bar
    paper_queue     python -m vvlib paper --for-minutes: the next units in order, while they fit a GPU command
    __main__        vvlib/__main__.py: python -m vvlib {list, run, book, paper, metric, exercises, check,
                    migrate-store}
"""

__version__ = "0.1.0"
