"""The papermill runner: a chapter (book/chapters/, one place each) resolved at a profile,
checked, and executed.  A chapter's parameters (names, types, defaults, help) are its record's;
inside the kernel, page.configure resolves the notebook's cell against them.
"""

from pathlib import Path

from .. import distributed
from ..experiments.setups.params import DEFAULT_PROFILE, Params, coerce, resolve, unknown_parameter
from .chapters import Chapter, get_chapter
from ..experiments.records import checks
from ..experiments.storage.store import REPO_ROOT


def parse_overrides(chapter: Chapter, pairs) -> dict:
    """[(name, text), ...] from the command line -> typed values, names checked."""
    spec = chapter.parameters()
    values = {}
    for name, text in pairs:
        if name not in spec:
            raise unknown_parameter(name, spec, chapter.name)
        values[name] = coerce(spec[name], text)
    return values


def checked_parameters(name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None,
                       output_dir: Path | None = None) -> dict:
    """What papermill will inject: the profile and the overrides, with relative *_dir paths
    made absolute (the kernel runs in the repository root).  Raises ParameterError for any
    bad chapter, profile, name or value, so nothing runs."""
    overrides = dict(overrides or {})
    if output_dir is not None:
        overrides["output_dir"] = str(output_dir)
    given = {k: str(Path(v).resolve()) if k.endswith("_dir") and v else v for k, v in overrides.items()}
    P, chapter = resolved(name, profile, given), get_chapter(name)  # raises on anything bad
    checks.run_all(chapter.checks, P)
    return {"profile": profile, **given}


def resolved(name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None):
    """The parameters a chapter runs with at `profile` (e.g. to train its runs from a script,
    into the same store entries the chapter will read)."""
    chapter = get_chapter(name)
    spec = chapter.parameters()
    given = {"profile": profile, **(overrides or {})}
    return Params(resolve(spec, chapter.profiles, {**{n: p.default for n, p in spec.items()}, **given},
                          explicit=set(given) - {"profile"}))


def run_chapter(name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None,
                output_dir: Path | None = None, notebook_out: Path | None = None, progress=True) -> Path:
    """Execute a chapter with papermill; returns the executed notebook's path.

    All parameters are checked before the kernel starts, so a bad value writes nothing.
    """
    import tempfile

    chapter = get_chapter(name)
    if distributed.env_rank() > 0:  # under torchrun, rank 0 alone keeps the executed notebook and results.json
        output_dir, notebook_out = Path(tempfile.mkdtemp(prefix=f"vvlib-rank{distributed.env_rank()}-")), None
    given = checked_parameters(name, profile, overrides, output_dir)
    out_dir = Path(given["output_dir"]) if "output_dir" in given else REPO_ROOT / chapter.parameters()["output_dir"].default
    notebook_out = Path(notebook_out or out_dir / f"{name}.ipynb")
    notebook_out.parent.mkdir(parents=True, exist_ok=True)
    execute_notebook(str(chapter.notebook), str(notebook_out), parameters=given, cwd=str(REPO_ROOT),
                     progress_bar=progress, kernel_name="python3")
    return notebook_out


def execute_notebook(*args, **kwargs):
    """papermill.execute_notebook, started again when its kernel died before running a cell."""
    import papermill

    for attempt in range(KERNEL_START_TRIES):
        try:
            return papermill.execute_notebook(*args, **kwargs)
        except RuntimeError as error:
            if not str(error).startswith(KERNEL_START_FAILURE) or attempt == KERNEL_START_TRIES - 1:
                raise


# jupyter_client picks a kernel's ports before the kernel binds them, so kernels started at once
# (chapters run at once, test workers) can collide and the new kernel dies before running a cell
# (jupyter/jupyter_client#154).  No cell has run then, so starting again with fresh ports is safe.
KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"
KERNEL_START_TRIES = 3
