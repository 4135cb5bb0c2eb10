"""vvlib: the code behind the executable book on vanishing variance in attention.

One concept per module:
    rng        deterministic seeds and generators
    tasks      argmax retrieval and dictionary lookup data
    attention  softmax temperature and the norms applied to the attention output
    model      the one-layer, single-query attention model as a batched ensemble
    train      seed-batched training with checkpoints and resume
    graphdraw  training batches replayed from CUDA graphs (argmax on a GPU)
    evaluate   chunked accuracy at long lengths
    stats      per-length summaries and paired tests
    store      results on disk with provenance
    params     chapter parameters: profiles and validation
    chapters   the chapter registry and the papermill runner
    plots      seaborn figures
    paper      the paper's own numbers, for side-by-side tables
"""

__version__ = "0.1.0"
