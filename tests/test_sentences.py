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
def test_no_page_runs_over_its_word_budget(page):
    allowed = sentences.words_allowed(page)
    assert allowed is None or sentences.words(sentences.page_markdown(page)) <= allowed


@pytest.mark.parametrize("page", sentences.pages(ROOT), ids=lambda p: p.name)
def test_no_page_has_more_than_its_share_of_long_sentences(page):
    text = sentences.page_markdown(page)
    long, every = sentences.long_sentences(text), sentences.sentences(text)
    assert len(long) <= sentences.MOST_LONG * len(every), "\n\n".join(long)


def test_a_built_pages_prose_counts_generated_text_and_leaves_tables_code_and_collapsed_blocks_out():
    from vvlib.book import readable

    page = ("<nav><p>Not the article.</p></nav><article><h1>A heading here</h1><p>A written sentence of six words. "
            "generated sentence opening with a lowercase task name.</p><table><tr><td>A cell. Another cell of "
            "words.</td></tr></table><pre>code = 1. more code here</pre><details><p>Hidden text in a block."
            '</p></details><p>At <span class="math notranslate">\\(N = 2^{10}\\)</span> the attention spreads out.'
            "</p><ul><li>a list item of five words</li></ul></article>")
    assert sentences.sentences(readable.article_prose(page)) == [
        "A written sentence of six words.", "generated sentence opening with a lowercase task name.",
        "At M the attention spreads out.", "a list item of five words"]


def test_a_built_page_with_more_than_its_share_of_long_sentences_is_a_problem():
    from vvlib.book import readable

    short, long = "Three short words.", " ".join(["Word"] * (sentences.LONG + 1)) + "."
    within = "<article><p>" + " ".join([short] * 49 + [long]) + "</p></article>"  # 1 of 50: 2%, the most allowed
    assert readable.long_prose(within) == []
    over = "<article><p>" + " ".join([short] * 48 + [long] * 2) + "</p></article>"
    assert readable.long_prose(over)[0].startswith(f"2 of 50 prose sentences over {sentences.LONG} words")
    assert readable.problems(over) == readable.long_prose(over)
