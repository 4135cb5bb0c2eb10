"""Chapter 11's paper-scale rows judged over every length beyond training, by the book's verdict rule."""

from vvlib.experiments.reports import paper_rows

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
    said = paper_rows.lengths_sentence(records, "dictionary", BEYOND)
    assert "ahead: ahead at 2 and behind at 0 of 4, supported" in said
    assert "both: ahead at 1 and behind at 1 of 4, mixed" in said
    assert "behind: ahead at 0 and behind at 3 of 4, contradicted" in said
    assert "pending" not in said and "other task" not in said
    assert paper_rows.lengths_sentence(records[3:4], "dictionary", BEYOND) == ""
