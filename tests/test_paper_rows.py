"""Chapter 11's paper-scale rows judged over every length beyond training, by the book's verdict rule."""

from vvlib.book.chapters.c11_sensitivity import paper_rows

BEYOND = [32, 64, 128, 256]


def row(name, gains, p_values, task="dictionary"):
    difference = {str(n): {"diff": g, "low": g - 1, "high": g + 1, "p": p} for n, g, p in zip(BEYOND, gains, p_values)}
    return {"task": task, "row": name, "difference": difference}


def test_each_committed_row_is_counted_at_every_length_and_given_the_books_verdict():
    records = [row("ahead", [1, 2, 3, -1], [0.01, 0.01, 0.2, 0.3]),  # significantly ahead at 2 of 4: supported
               row("both", [1, 2, -3, -1], [0.01, 0.2, 0.01, 0.3]),  # one each way: mixed
               row("behind", [-1, -2, -3, 1], [0.01, 0.01, 0.01, 0.9]),  # 3 of 4 behind: contradicted
               {"task": "dictionary", "row": "pending", "difference": None},
               row("other task", [1, 1, 1, 1], [0.01] * 4, task="argmax")]
    table = paper_rows.lengths_table(records, "dictionary", BEYOND)
    assert table.values.tolist() == [[2, 0, 4, "supported"], [1, 1, 4, "mixed"], [0, 3, 4, "contradicted"]]
    assert list(table.index) == ["ahead", "both", "behind"]  # neither the pending row nor the other task's
    assert paper_rows.lengths_table(records[3:4], "dictionary", BEYOND).empty


def test_the_table_names_each_rows_card_and_both_where_its_variants_trained_on_two():
    assert paper_rows.card("NVIDIA H100 80GB HBM3") == "H100" and paper_rows.card("cpu (x86_64, 2 threads)") == (
        "cpu (x86_64, 2 threads)")
    one = {**row("one card", [1] * 4, [0.5] * 4), "n_seeds": 100, "steps": 10, "trained_on": ["NVIDIA H200"]}
    two = {**one, "row": "two cards", "trained_on": ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]}
    pending = {"task": "dictionary", "row": "pending", "n_seeds": 100, "steps": 10, "difference": None}
    shown = paper_rows.table([one, two, pending], [32])["trained on"]
    assert list(shown) == ["H200", "H100 and H200", "—"]
