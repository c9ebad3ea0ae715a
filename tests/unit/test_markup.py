"""Markup through the alignments (decoding/markup.py): tags out of the source, back around the aligned
target words; the output is well-formed and keeps every tag as written, nested as it came, whatever
the alignment; text is escaped; what is not well-formed is refused in one line."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnsearch.cli import main
from rnnsearch.decoding.markup import MarkupError, parse, transfer


@dataclass
class Output:
    tokens: list[str]
    text: str


def _tags(text: str) -> list[str]:
    return re.findall(r"<[^<>]+>", text)


def _identity(words: list[str]) -> np.ndarray:
    rows = np.zeros((len(words) + 1, len(words) + 1))
    rows[np.arange(len(words) + 1), np.arange(len(words) + 1)] = 1
    return rows


def test_parse_nested_self_closing_and_entities():
    plain, elements = parse('A <b>bold <i a="1 &amp; 2">and</i> more</b> text<br/>here &lt;3 &amp; co')
    assert plain == "A bold and more text here <3 & co"  # <br/> between two words keeps them apart
    (b, br) = elements
    assert (b.start_tag, b.end_tag, plain[b.start:b.end]) == ("<b>", "</b>", "bold and more")
    assert b.children[0].start_tag == '<i a="1 &amp; 2">' and plain[b.children[0].start:b.children[0].end] == "and"
    assert br.end_tag is None and br.start_tag == "<br/>"
    assert parse("line<br>next", "html")[1][0].end_tag is None  # an HTML void element


@pytest.mark.parametrize("text, message", [("<b>x</i>", "</i> at character 4 closes <b>"),
                                           ("<b>x", "<b> is never closed"), ("x</b>", "closes no open element"),
                                           ("a < b", "not part of a tag at character 2"),
                                           ("The <!-- open", "comment, processing instruction or CDATA section at "
                                                             "character 4 is never closed"),
                                           ("<x>Copyright &copy; 2024.</x>", "&copy; at character 13 is not"),
                                           ("<x>a</x> and &copy;", "&copy; at character 13 is not")])
def test_what_is_not_well_formed_is_refused_in_one_line(text, message):
    with pytest.raises(MarkupError, match=message):
        parse(text)


def test_a_monotone_alignment_gives_the_markup_back():
    source = 'The <b>big <i>red</i> dog</b> sees <a href="/x?a=1&amp;b=2">a cat</a>.<br/> Yes &amp; no'
    plain, _ = parse(source)
    words = re.findall(r"\w+|[^\w\s]+", plain)
    out = transfer(source, "xml", words, Output(words, plain), _identity(words))
    assert out == 'The <b>big <i>red</i> dog</b> sees <a href="/x?a=1&amp;b=2">a cat</a>.<br/> Yes &amp; no'


@pytest.mark.parametrize("kept", ["<!-- a <b> note -->", "<?page break?>", "<![CDATA[ a < b & c ]]>"])
def test_xml_keeps_a_comment_a_processing_instruction_and_cdata_as_written(kept):
    source = f"The minister spoke. {kept} He left <b>early</b>."
    plain, elements = parse(source)
    assert plain == "The minister spoke.  He left early."
    assert elements[0].start_tag == kept and elements[0].end_tag is None
    words = re.findall(r"\w+|[^\w\s]+", plain)
    out = transfer(source, "xml", words, Output(words, "The minister spoke. He left early."), _identity(words))
    assert out == source  # written where it was, one space on each side, never translated


def test_a_tag_of_no_words_that_begins_a_line_gets_no_space_before_it():
    source = "<!-- c --> The <b>house</b>."
    plain, _ = parse(source)
    words = re.findall(r"\w+|[^\w\s]+", plain)
    assert transfer(source, "xml", words, Output(words, plain), _identity(words)) == source


def test_a_tag_takes_the_words_mostly_aligned_to_its_words_not_a_stray_link():
    """Source "the red dog runs" -> target "le chien rouge court vite": <b> around "red dog" covers the
    reordered "chien rouge"; "vite" leans to "red" (0.45, its largest share, but less than half), and a
    span from the first to the last word whose best link is inside would take in "court vite" too."""
    source = "the <b>red dog</b> runs"
    words = ["the", "red", "dog", "runs"]
    output = ["le", "chien", "rouge", "court", "vite"]
    rows = np.zeros((6, 5))
    rows[0, 0] = rows[1, 2] = rows[2, 1] = rows[3, 3] = rows[5, 4] = 1
    rows[4, :3] = [0.25, 0.45, 0.0]
    rows[4, 3] = 0.3
    out = transfer(source, "xml", words, Output(output, " ".join(output)), rows)
    assert out == "le <b>chien rouge</b> court vite"


@pytest.mark.parametrize("source, comma_on, expected", [
    ("<b>then</b> we left", "then", "<b>ensuite</b> , nous sommes partis"),
    ("<b>then ,</b> we left", ",", "<b>ensuite ,</b> nous sommes partis"),  # its source words end with one: kept
    ("then <b>we left</b>", "we", "ensuite , <b>nous sommes partis</b>")])
def test_a_tag_does_not_take_a_punctuation_mark_its_words_do_not_end_or_begin_with(source, comma_on, expected):
    """"," leans to a neighbour (as a head puts a French word with no English one), and at the edge of a
    tag whose source words do not end (or begin) with a mark it would be a mark the source did not tag."""
    words = parse(source)[0].split()
    output = ["ensuite", ",", "nous", "sommes", "partis"]
    rows = np.zeros((len(output) + 1, len(words) + 1))
    for t, w in enumerate(["then", comma_on, "we", "left", "left"]):
        rows[t, words.index(w)] = 1
    rows[-1, -1] = 1
    assert transfer(source, "xml", words, Output(output, " ".join(output)), rows) == expected


WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=1, max_size=8)


@st.composite
def marked(draw):
    """Random well-formed markup over random words: nested pairs, empty pairs, self-closing tags."""
    def node(depth):
        parts = []
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["word", "word", "pair", "empty", "self"] if depth < 3 else ["word"]))
            n = draw(st.integers(0, 99))
            if kind == "word":
                parts.append(draw(st.sampled_from(["a", "b", "c", "d", "&amp;"])))
            elif kind == "pair":
                parts.append(f'<t{n} k="{n}">' + node(depth + 1) + f"</t{n}>")
            elif kind == "empty":
                parts.append(f"<e{n}></e{n}>")
            else:
                parts.append(f"<s{n}/>")
        return " ".join(parts)
    return node(0)


@given(marked(), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_any_alignment_keeps_every_tag_well_formed(source, rng):
    plain, _ = parse(source)
    words = plain.split()
    output = list(words)
    rng.shuffle(output)  # a reordering translation, aligned word to word
    rows = np.zeros((len(output) + 1, len(words) + 1))
    order = list(range(len(words)))
    rng.shuffle(order)
    for i, j in enumerate(order):
        rows[i, j] = 1
    rows[len(output), len(words)] = 1
    out = transfer(source, "xml", words, Output(output, " ".join(output)), rows)
    parse(out)  # well-formed: nested as it came, nothing left open
    assert sorted(_tags(out)) == sorted(_tags(source))
    assert parse(out)[0].split() == [w.replace("&amp;", "&") for w in output]


def test_cli_markup(tiny_run, tmp_path, capsys):
    lines = ["The <b>tired table</b> calls the <i>pretty letter</i> without a white chair.",
             'A big <a href="x?a=1&amp;b=2">strong <b>table</b></a> finds<br/> the big houses.',
             "bad <b>tag</i>", "A old blue hat takes a hat on some old chairs &amp; <x id=\"1\"/> tables."]
    path = tmp_path / "in.xml"
    path.write_text("\n".join(lines) + "\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--markup", "xml", "--input", str(path), "--beam", "3"]) == 3
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert len(out) == 4 and out[2] == "" and "1 of 4 lines not translated" in captured.err.splitlines()[-1]
    for source, line in zip(lines, out):
        if line:
            parse(line)
            assert sorted(_tags(line)) == sorted(_tags(source))
    assert "line 3: not translated: </i> at character 10 closes <b>" in captured.err


def test_json_and_markup_warnings_come_in_the_order_of_their_lines(tiny_run, tmp_path, capsys):
    import json
    rows = [json.dumps({"text": "The <b>dog</i> sees."}), '{"text": "A cat."', json.dumps({"text": "A <i>hat</b>."})]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(rows) + "\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--json-input", "--markup", "html", "--input", str(path),
                 "--beam", "2"]) == 3
    warned = [x for x in capsys.readouterr().err.splitlines() if ": warning: " in x]
    lines = [int(x.split(" line ")[1].split(":")[0]) for x in warned]
    assert lines == sorted(lines) and lines.count(2) == 1 and len(warned) == 5


def test_a_line_of_tags_alone_keeps_them(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.html"
    path.write_text('<p><br></p>\n<img src="a.png">\n')
    assert main(["translate", str(tiny_run / "best.pt"), "--markup", "html", "--input", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == ["<p><br></p>", '<img src="a.png">']


def test_tags_read_as_words_without_markup_are_named_in_one_warning(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text('The <b>table</b> sees.\nA hat, 3 < 5 and 7 > 2, AT&T.\n<a href="x">chairs</a> and <br/> hats.\n'
                    'A table&nbsp;sees.\n')
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(path)]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if "markup" in x]
    assert len(warned) == 1 and "--markup html" in warned[0]
    assert "lines 1, 3, 4 hold markup (<b>, <a>, <br>, ...)" in warned[0]
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(path), "--markup", "html"]) == 0
    assert "read as words" not in capsys.readouterr().err


def test_an_xml_line_of_elements_side_by_side_reads_as_their_words_apart():
    """``<b>Bill</b><i>House</i>`` came out ``<i></i><b>BillHouse</b>``: one word, one element emptied (HTML read the
    row apart already); a word formatted in two parts inside a sentence stays one word."""
    from rnnsearch.text.documents import read
    (unit,) = read('<g id="1">Save</g><g id="2">As</g>', "xml").units
    assert unit.plain == "Save As" and [(e.start, e.end) for e in unit.elements] == [(0, 4), (5, 7)]
    (unit,) = read("The <b>Re</b><i>port</i> is here.", "xml").units
    assert unit.plain == "The Report is here."
