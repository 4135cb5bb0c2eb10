"""The book's written sentences: how they are cut, and that no page runs long."""

from pathlib import Path

import pytest

from vvlib.book import sentences

ROOT = Path(__file__).resolve().parents[1]


def test_prose_is_cut_into_sentences_and_list_items_and_leaves_code_tables_and_math_out():
    text = "\n".join([
        "# A heading is not prose",
        "First one, e.g. with an abbreviation, ends here. Second (a short one) too!",
        "Is this a third?",
        "",
        "- a list item without a full stop",
        "- another item, as in Li et al. 2025",
        "",
        "| a | table |",
        "```python",
        "x = 1. Not. A. Sentence.",
        "```",
        "$$",
        "a = b. C = d.",
        "$$",
        "```{figure} x.png",
        "A caption written as a directive.",
        "```",
    ])
    assert sentences.sentences(text) == [
        "First one, e.g with an abbreviation, ends here.", "Second (a short one) too!", "Is this a third?",
        "a list item without a full stop", "another item, as in Li et al 2025"]


def test_a_sentence_over_the_limit_is_long_and_one_at_it_is_not():
    at_limit = " ".join(["Word"] * sentences.LONG) + "."
    over = " ".join(["Word"] * (sentences.LONG + 1)) + "."
    assert sentences.long_sentences(f"{at_limit} {over}") == [over]


@pytest.mark.parametrize("page", sentences.pages(ROOT), ids=lambda p: p.name)
def test_no_page_has_more_than_its_share_of_long_sentences(page):
    text = sentences.page_markdown(page)
    long, every = sentences.long_sentences(text), sentences.sentences(text)
    assert len(long) <= sentences.MOST_LONG * len(every), "\n\n".join(long)
