"""HTML read as units (text/blocks.py) and written back (text/documents.py): blocks bound units, what is
not text passes through as written, entities are kept, a fragment not well-formed is read through
with a warning naming its character, and whatever the alignment the markup comes back whole
(analysis/markup_check.damage finds nothing)."""
from __future__ import annotations

import html
import re
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnsearch.analysis.markup_check import damage
from rnnsearch.cli import main
from rnnsearch.decoding.markup import put_back
from rnnsearch.decoding.placement import word_edges
from rnnsearch.text.blocks import read, write


def Output(tokens: list[str], text: str) -> SimpleNamespace:
    """A translation as put_back reads it."""
    return SimpleNamespace(tokens=tokens, text=text)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", " ", markup))


def _through(source: str, rng=None) -> str:
    """``source`` with each unit's words as its own output (shuffled with ``rng``), aligned word to word."""
    page = read(source)
    outputs = []
    for unit in page.units:
        words = _words(unit.plain)
        order = list(range(len(words)))
        if rng is not None:
            rng.shuffle(order)
        rows = np.zeros((len(words) + 1, len(words) + 1))
        for i, j in enumerate(order):
            rows[i, j] = 1
        rows[-1, -1] = 1
        out = [words[j] for j in order]
        text = unit.plain if rng is None else " ".join(out)  # as written, or reordered
        outputs.append(put_back(unit.plain, unit.elements, words, Output(out, text), rows, unit.entities))
    return write(page, outputs)


@pytest.mark.parametrize("source, units", [
    ("<ul><li>Health</li><li>Finance</li><li>Defence</li></ul>", ["Health", "Finance", "Defence"]),
    ("<table><tr><td>Name</td><td>Age</td></tr></table>", ["Name", "Age"]),
    ("<ol><li>First step<li>Second step</ol>", ["First step", "Second step"]),  # end tags left out
    ("<p>One.<br>Two.</p>", ["One.", "Two."]),
    ("<p>The committee<br>met today.</p>", ["The committee met today."]),  # a line broken mid-sentence: one unit
    ("<p>12 Main Street<br>Ottawa<br>\nCanada</p>", ["12 Main Street", "Ottawa", "Canada"]),  # an address's lines
    ("<p>Thank you:<br>the committee</p>", ["Thank you:", "the committee"]),
    ("<h2>Title</h2><p>Body <b>bold</b> text.</p>", ["Title", "Body bold text."]),
    ("<div>Intro<p>Para</p>tail</div>", ["Intro", "Para", "tail"]),
    ('<a href="/x"><div>Block in a link</div></a>', ["Block in a link"]),
])
def test_blocks_bound_units(source, units):
    page = read(source)
    assert [u.plain for u in page.units] == units and not page.warnings
    assert not damage(source, _through(source))


@pytest.mark.parametrize("kept", ["<!-- a note -->", "<script>if (a < b) go();</script>", "<style>p {x: 1}</style>",
                                  "<pre>  as  written </pre>", '<div class="notranslate">Brand Name</div>',
                                  '<p translate="no">Keep</p>', "<!DOCTYPE html>"])
def test_what_is_not_text_passes_through_as_written(kept):
    source = f"<p>Words here.</p>{kept}<p>More words.</p>"
    page = read(source)
    assert kept in page.pieces and [u.plain for u in page.units] == ["Words here.", "More words."]
    assert _through(source) == source


def test_entities_are_kept():
    source = "<p>&copy; 2024 The caf&eacute;.&nbsp;All &mdash; rights &amp; more &foo; here &#8212; end</p>"
    (unit,) = read(source).units
    assert unit.plain.startswith("© 2024 The café. All — rights & more")
    out = _through(source)
    assert not damage(source, out), out
    for entity in ("&copy;", "&nbsp;", "&mdash;", "&amp;", "&foo;", "&#8212;"):
        assert entity in out


def test_a_footnote_mark_stays_on_the_word_it_follows():
    """``Today<sup>1</sup> the`` read ``Today1`` as one word (a slot) and the mark spread over it; a
    ``sup``/``sub`` of a number, ``*`` or a small letter with no word right after it is kept on its word."""
    source = "<p>Today<sup>1</sup> the government<sub>2</sub> acted.<sup>*</sup></p>"
    (unit,) = read(source).units
    assert unit.plain.split() == ["Today", "the", "government", "acted."]
    out = _through(source)
    assert out == source and not damage(source, out), out
    (chem,) = read("<p>Water is H<sub>2</sub>O.</p>").units  # a word goes on after it: no footnote
    assert "H2O" in chem.plain


def test_a_bare_ampersand_before_letters_is_text():
    """``AT&T`` written with a bare ampersand (as many pages do) reads as a browser shows it, the text
    ``AT&T`` (an item carried whole), not an entity ``&T`` placed apart from its word."""
    (unit,) = read("<p>AT&T signed it.</p>").units
    assert unit.plain.startswith("AT&T signed") and not unit.elements
    out = _through("<p>AT&T signed it.</p>")
    assert "AT&T" in out.replace("&amp;", "&") and not damage("<p>AT&T signed it.</p>", out), out


def test_a_currency_signs_entity_is_its_amounts_sign():
    """``&euro;25`` is an amount (the text stage's item), not a sign apart; written back as the entity."""
    source = "<p>It costs &euro;25 and &copy; stays.</p>"
    (unit,) = read(source).units
    assert "€25" in unit.plain and [unit.plain[a:b] for a, b in unit.keep] == ["©"]
    out = _through(source)
    assert "&euro;" in out and "€" not in out and not damage(source, out), out


def test_inline_code_and_marked_spans_are_carried_verbatim():
    (unit,) = read('<p>Run <code>make test</code> on <span translate="no">Parliament Online</span>.</p>').units
    assert [unit.plain[a:b] for a, b in unit.keep] == ["make test", "Parliament Online"]


@pytest.mark.parametrize("source, warning", [
    ("<p>bad <b>tag</i> here</p>", "</i> at character 13 closes no open element: kept where it was"),
    ("<p>open <b>bold</p>", "<b> at character 8 is not closed before </p> at character 15: it ends there"),
    ("<p>never <i>closed", "<i> at character 9 is not closed by the end of the text"),
])
def test_a_fragment_not_well_formed_is_read_through_with_a_warning(source, warning):
    page = read(source)
    assert any(w.startswith(warning) for w in page.warnings), page.warnings
    out = _through(source)
    assert re.sub(r"<[^>]*>", "", out).split() == re.sub(r"<[^>]*>", "", source).split()  # no word lost
    assert not damage(source, out)  # every tag as written, none added


def test_a_tag_never_stands_inside_a_word():
    tokens = ["Contactez", "notre", "bureau", "aujourd'", "hui", "l'", "ont", "dit", ","]
    text = "Contactez notre bureau aujourd'hui l'ont dit,"
    starts, ends = word_edges(tokens, text).tolist()
    assert starts == [True, True, True, True, False, True, True, True, True, True]  # d'<a>Ottawa</a>
    assert ends == [True, True, True, True, False, True, False, True, True, True]  # never l'</b>ont
    rows = np.zeros((len(tokens) + 1, 6))  # "today" -> aujourd' only: its tag still takes the whole word
    rows[[0, 1, 2, 3, 5, 6, 7, 8], [0, 1, 2, 3, 5, 5, 5, 5]] = 1
    plain = "Contact our office today they said"
    from rnnsearch.decoding.markup import parse
    _, elements = parse("Contact our office <a>today</a> they said")
    out = put_back(plain, elements, plain.split(), Output(tokens, text), rows)
    assert "<a>aujourd'hui</a>" in out


def _fragment(depth: int = 2):
    """Random fragments: blocks of inline runs (elements nested ``depth`` deep), comments, images, entities."""
    inline = st.sampled_from(["b", "i", "a", "span", "em"])
    block = st.sampled_from(["p", "li", "td", "div", "h2"])
    word = st.sampled_from(["alpha", "beta", "gamma", "delta", "&amp;", "&copy;", "&nbsp;", "&eacute;t&eacute;"])

    @st.composite
    def inline_run(draw, level=0):
        parts = []
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["word", "word", "tag", "comment", "img"] if level < depth else ["word"]))
            if kind == "word":
                parts.append(draw(word))
            elif kind == "tag":
                t = draw(inline)
                parts.append(f'<{t} k="{draw(st.integers(0, 9))}">' + draw(inline_run(level + 1)) + f"</{t}>")
            elif kind == "comment":
                parts.append("<!-- c -->")
            else:
                parts.append('<img src="x.png">')
        return " ".join(parts)

    @st.composite
    def page(draw):
        out = []
        for _ in range(draw(st.integers(1, 4))):
            b = draw(block)
            out.append(f"<{b}>" + draw(inline_run()) + f"</{b}>" if draw(st.booleans()) else draw(inline_run()) + "<br>")
        return "".join(out)
    return page()


@given(_fragment(), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_any_alignment_gives_every_tag_back_as_written_and_between_words(source, rng):
    out = _through(source, rng)
    assert not [f for f in damage(source, out) if not f.endswith("emptied")], (source, out)
    assert sorted(_words(_text(out))) == sorted(_words(_text(source)))


@given(_fragment(depth=1), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_any_alignment_leaves_no_element_of_a_block_empty(source, rng):
    """Elements side by side in a block each keep a word of their own, however the words are reordered
    (one nested in another that the output gives fewer words than it has such children can still be
    left empty: docs/text.md)."""
    out = _through(source, rng)
    assert not damage(source, out), (source, out)


def test_cli_markup_html(tiny_run, tmp_path, capsys):
    lines = ["<ul><li>the table</li><li>a chair</li><li>the letter</li></ul>",
             "<p>the big house &copy; finds<br>a table</p><!-- note -->",
             "<p>bad <b>table</i> here</p>"]
    path = tmp_path / "in.html"
    path.write_text("\n".join(lines) + "\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--markup", "html", "--input", str(path)]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert len(out) == 3
    for source, line in zip(lines, out):
        assert not [f for f in damage(source, line) if not f.endswith("emptied")], (source, line)
    assert "line 3: </i> at character 15 closes no open element: kept where it was" in captured.err


def test_a_row_of_links_is_translated_item_by_item():
    page = read('<a href="#">Home</a> | <a href="/news">News and <b>events</b></a> <!-- x -->')
    assert [u.plain for u in page.units] == ["Home", "News and events"]
    assert read("<p>Go <a>home</a> or <a>away</a>.</p>").units[0].plain == "Go home or away."  # words outside


def test_tokens_are_found_in_any_case():
    from rnnsearch.decoding.placement import token_spans
    assert token_spans("Type ls to list.", ["type", "ls", "to", "list", "."]) == [(0, 4), (5, 7), (8, 10), (11, 15),
                                                                                 (15, 16)]


def test_units_read_with_plain_marks_are_found_in_typographic_text():
    """The model reads ``’s`` as ``'s`` (text/typography.py); its units are still found in the text as
    written, so an element after a typographic apostrophe keeps its words (it came out empty, at the end)."""
    from rnnsearch.decoding.markup import parse
    from rnnsearch.decoding.placement import token_spans
    plain, elements = parse("The minister’s <i>office</i> is “open”.", "xml")
    units = ["The", "minister", "'s", "office", "is", '"', "open", '"', "."]
    assert [plain[a:b] for a, b in token_spans(plain, units)] == ["The", "minister", "’s", "office", "is", "“",
                                                                  "open", "”", "."]
    rows = np.eye(len(units) + 1)
    out = put_back(plain, elements, units, Output(units, plain), rows)
    assert out == "The minister’s <i>office</i> is “open”."


def test_a_unit_of_no_words_keeps_its_tags_around_it(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.html"
    path.write_text("<p><b>—</b> <i>…</i></p>\n<ul><li>•</li><li>A dog.</li></ul>\n", encoding="utf-8")
    assert main(["translate", str(tiny_run / "best.pt"), "--markup", "html", "--input", str(path), "--beam", "2"]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first == "<p><b>—</b> <i>…</i></p>" and second.startswith("<ul><li>•</li><li>")


def test_a_space_entity_inside_an_item_stays_in_it(tiny_run, tmp_path, capsys):
    """``Call 613&nbsp;555&nbsp;0199`` came out ``613 555 0199&nbsp;&nbsp;.``: a tag of no words cannot be placed
    inside an item's slot; it is now the item's own character, written back as the source wrote it."""
    path = tmp_path / "in.html"
    path.write_text("<p>Call <b>613&nbsp;555&nbsp;0199</b> if x&nbsp;&gt;&nbsp;2, the table&nbsp;finds.</p>\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--markup", "html", "--input", str(path), "--beam", "2"]) == 0
    (out,) = capsys.readouterr().out.splitlines()
    assert "<b>613&nbsp;555&nbsp;0199</b>" in out and "x&nbsp;&gt;&nbsp;2" in out and out.count("&nbsp;") == 5, out
    assert not damage(path.read_text().strip(), out), out


def test_a_stray_end_tag_before_another_tag_adds_no_space():
    """``<p>The House rose.</b></p>`` came out ``...</b> </p>``: the tag after it is no word to keep apart."""
    assert read("<p>The House rose.</b></p>").units[0].plain == "The House rose."
    assert read("<p>The House</b>rose.</p>").units[0].plain == "The House rose."


def test_a_symbol_entity_or_a_non_breaking_hyphen_inside_an_item_stays_in_it(tiny_run, tmp_path, capsys):
    """``20&#176;C`` came out ``20 &#176;`` (the symbol a span of its own, the C lost) and ``613&#8209;555&#8209;0123``
    as ``613-555-0123`` (no item: its hyphens were not read as hyphens)."""
    path = tmp_path / "in.html"
    path.write_text("<p>It was 20&#176;C, call 613&#8209;555&#8209;0123.</p>\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--markup", "html", "--input", str(path), "--beam", "2"]) == 0
    (out,) = capsys.readouterr().out.splitlines()
    assert "&#176;C" in out and "613&#8209;555&#8209;0123" in out, out
