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

Experiments, vvlib/experiments/ (shared by the chapters; none names a chapter), in four rooms (packages),
each importing only from the rooms listed before it:
    storage         where results live
        store           results on disk with provenance
        runs            train once, probe many: stored runs and their evaluations
    setups          from a chapter's parameters to what it computes
        paper           the paper's own numbers, for side-by-side tables
        paper_tasks     the paper's two tasks as the book sees them: table, chapter, scales, one record each
        params          chapter parameters: profiles and validation
        variants        the training chapters' common flow: each variant trained once, evaluated per temperature
        probes          how a probe is made: one part per trained run, its tables stored under its spec
        sensitivity     what a row is (one unstated setting changed): its parameters, training, record, paper-scale read
        computed        tables computed without training, stored under their parameters
    records         what a chapter's record is, and what several records share
        record          a chapter's record: its name, the keys its results.json promises, what it trains and probes
        declare         a chapter's parameters declared: names, defaults, help, the notebook's parameters cell
        checks          checks between parameters that several chapters make
        scales          the scales several chapters share: the book's seeds and steps, the paper's
    reports         what a page shows
        report          tables beside the paper's, verdict rows, results.json
        answers         the answer a chapter page opens with: a verdict table, then a few rows beside the paper's
        provisional     the rule that marks a verdict resting on fewer steps than the paper's as provisional
        run_groups      every committed training run, grouped from its records, for the scale page
        plots           seaborn figures
        palette         one colour per variant across the book
        explore         slider views that work on the static page
        probed          what the probing chapters keep of their probe tables in results.json, at each scale
        along_training  training losses in a table: the lowest, the last, how far they rise

The book, vvlib/book/ (and the command line):
    chapters        every chapter in one place: its record (a module, or a folder's __init__), its page, its reports
        c01_vanishing_variance_proof Proposition 1 and its proof, with numbers
        c02_monte_carlo the N^-1/2 law by Monte Carlo
        c03_pretrained_transformer Figure 1 on pretrained models: the record, its page, its stored measurements
        c04_argmax_retrieval Table 1: Baseline against +LN on argmax retrieval
        c05_dictionary_lookup Table 2: Baseline against +LN on dictionary lookup; where adaptive temperature acts
        accuracy_page   chapters 4 and 5's one page: each notebook's prose calls its sections
        c06_distribution_shift Figures 2 and 3: the record and its page
        c07_dispersion  Figure 4: the record, its page, the two accounts, the gain at equal entropy, its figures
        c08_ablations   Tables 3 and 6: Baseline, +std and +LN
        c09_longer_training Tables 4 and 5: longer sets, longer training
        c10_beyond      beyond the paper: the variance-keeping output, length-aware logits, the deep model
        c11_sensitivity beyond the paper: each unstated setting's row; its row tables and sentences, at each scale
        summary         the paper's claims against the chapters' results, Table 6, what the runs cost
    gpu_queue       the GPU queue in one place
        plan            the store entries a training chapter will compute, and how far each has got
        units           the plan cut into units that fit one GPU command, with estimates from measured speeds
        paper_run       python -m vvlib paper: the training chapters at the paper's scale, one progress bar
        paper_queue     python -m vvlib paper --for-minutes: the next units in order, while they fit a GPU command
        pending         what of the paper's scale is still to run, per chapter, as the pages say it
    page            what every chapter's page begins and ends with: checked parameters, device, results.json
    runner          the papermill runner: a chapter resolved at a profile, checked, executed
    paper_scale     a chapter's results at its paper profile, read where the GPU queue committed them
    key_results     the introduction's key-result box: the headline tables at the paper's scale, with intervals
    exercises       the chapters' exercises: one record each, reference runs that compute their ranges, the check
    colab           the install cell a notebook runs first when opened in Colab, and the profile it runs at there
    webassets       offline MathJax and widget scripts
    build           executing every chapter, then Jupyter Book
    generated       blocks of docs rendered from records between markers (results/paper/README.md's runs)
    readable        what a reader should never see in a built page (a table cut short, raw TeX), over a book
    sentences       how long the book's written sentences run: each page's share over 40 words
    __main__        vvlib/__main__.py: python -m vvlib {list, run, book, paper, metric, exercises, check}
"""

__version__ = "0.1.0"
