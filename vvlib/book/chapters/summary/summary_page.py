"""The summary page: the paper's claims against the chapters' results (their results.json files), chapter 11's rows
counted by sign, Table 6's +LN against +std, and what each chapter's runs cost.  The notebook holds the prose and
calls one method per cell."""


import pandas as pd
from IPython.display import Markdown, display

from .... import compare
from .. import SENSITIVITY, SUMMARY
from ....experiments.reports import plots
from . import claims, summary_tables
from ...page import ChapterPage, show_collapsed, show_figure


class SummaryPage(ChapterPage):
    """The summary being executed: its parameters, the claims read from the chapters' results, and what it shows."""

    chapter = SUMMARY.name
    uses_device = False  # it reads the chapters' results only

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        self.rows = claims.claims(self.P.results_dir)
        self.records = {c.claim: c.record() for c in self.rows}
        self.chapters = sorted({c.chapter for c in self.rows} | {SENSITIVITY.name})
        self.slope = self.equivalences = self.explored = None

    def claims_table(self):
        display(Markdown(claims.claims_table(self.records)))

    def _table(self) -> pd.DataFrame:
        return pd.DataFrame([{"claim": c.claim, "paper": c.source, "chapter": c.chapter, "verdict": c.shown_verdict(),
                              "rests on": c.decisive().scale(),
                              "evidence (beyond the training length)": c.decisive().evidence.text(),
                              "at smaller scales": "; ".join(f"{r.shown_verdict()} at {r.scale()}"
                                                             for r in c.smaller()) or "—"}
                             for c in self.rows]).set_index("claim")

    def evidence(self):
        """Each claim's lengths for and against at its largest scale, as a figure and a table."""
        table = self._table()
        counts = pd.DataFrame([vars(c.decisive().evidence) for c in self.rows], index=table.index)
        plots.claim_evidence(counts, title="Each claim at its largest scale: lengths where it holds (right) or fails "
                                           "(left) significantly")
        show_figure("Each of the paper's claims (a row) at the largest scale that tested it; the table gives each "
                    "scale. The bars count the test lengths beyond training where the claimed run is significantly "
                    "ahead (right, green) or behind (left, red), paired over seeds, p < 0.05. A bar "
                    "right only supports the claim; a bar left only contradicts it.")
        show_collapsed("Each claim's verdict, the scale it rests on, its evidence and its verdicts at smaller scales",
                       table.to_html())

    def slope_claim(self):
        self.slope = summary_tables.slope_claim(self.P.results_dir)
        slope, sem, verdict, scale = self.slope
        display(Markdown(f"With LN, the median component's slope is {slope:.2f} ± {sem:.2f} (mean ± s.e. over "
                         f"seeds; {scale}): **{verdict}**."))

    def not_supported(self):
        """How many claims each verdict holds, and the claims that are not supported."""
        table = self._table()
        verdicts = pd.Series([c.verdict() for c in self.rows], index=table.index)  # without the provisional notes
        counts = verdicts.value_counts()
        provisional = sum(not c.decisive().record()["at_paper_steps"] for c in self.rows)
        display(Markdown(
            f"Of {len(table)} claims, {counts.get(compare.SUPPORTED, 0)} are supported at their largest scale, "
            f"{counts.get(compare.CONTRADICTED, 0)} contradicted, {counts.get(compare.MIXED, 0)} mixed, "
            f"{counts.get(compare.UNCLEAR, 0)} not shown and {counts.get(compare.UNTESTED, 0)} not tested (no length "
            f"to compare); {provisional} of these verdicts "
            f"{'is' if provisional == 1 else 'are'} provisional (they rest "
            f"on fewer training steps than the paper's). Those that are not supported:"))
        display(table[verdicts != compare.SUPPORTED][["rests on", "evidence (beyond the training length)", "verdict"]])

    def headline(self):
        display(Markdown(claims.headline(self.rows)))

    def sensitivity(self):
        """Chapter 11's rows counted by sign, at the book's scale and at the paper's."""
        self.explored = explored = claims.load(self.P.results_dir, SENSITIVITY.name)
        profile = explored["parameters"]["profile"]
        scales = [(f"profile {profile}", summary_tables.budget_table(explored),
                   pd.DataFrame(summary_tables.sensitivity_table(explored)).set_index(["task", "N"]))]
        if at_paper_scale := summary_tables.paper_scale_table(explored):
            scales.insert(0, ("the paper's scale (profile paper, trained on a GPU)",
                              summary_tables.budget_table(explored, "paper_scale"),
                              pd.DataFrame(at_paper_scale).set_index(["task", "N"])))
        (where, budget, counts), *smaller = scales  # the largest scale shown, the others collapsed
        display(Markdown(f"At {where}:"), budget, counts)
        for where, budget, counts in smaller:
            show_collapsed(f"The same at {where}", budget.to_html() + counts.to_html())

    def equivalence(self):
        """Table 6: +LN minus +std on dictionary lookup at each scale chapter 8 ran."""
        self.equivalences = summary_tables.equivalence(self.P.results_dir)  # {scale: {N: +LN - +std}}
        for where, equal in self.equivalences.items():
            display(Markdown(f"**{where}**: {summary_tables.equivalence_text(equal)}"))
            show_collapsed(f"+LN minus +std (points) with its 95% interval and p at each length, {where}",
                           pd.DataFrame(equal).T.rename_axis("N").round(3).to_html())

    def compute(self):
        show_collapsed("Each chapter's scale, training runs, training time and page run time",
                       pd.DataFrame(summary_tables.compute_table(self.P.results_dir, self.chapters))
                       .set_index("chapter").to_html())

    def write(self):
        slope, sem, verdict, scale = self.slope
        explored = self.explored
        results = {"claims": self.records,
                   "component_slope_with_ln": {"slope": slope, "sem": sem, "verdict": verdict, "scale": scale},
                   "ln_minus_std_dictionary": self.equivalences,
                   "sensitivity": {"counts": summary_tables.sensitivity_table(explored),
                                   "paper_scale_counts": summary_tables.paper_scale_table(explored)},
                   "sources": {name: claims.load(self.P.results_dir, name)["provenance"] for name in self.chapters}}
        self.write_results(results)
