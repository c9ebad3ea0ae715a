"""The text stage around a model (text/slots.py, text/pipeline.py): one output line per input line,
sentences joined with the source's spacing, items carried through slots, and a line that was not
translated never reported as success."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from rnnsearch import SearchSettings, Source, Translator
from rnnsearch.cli import main
from rnnsearch.data.vocab import UNK_TOKEN
from rnnsearch.decoding.placement import punctuation
from rnnsearch.decoding.source import Translation
from rnnsearch.text import slots
from rnnsearch.text.pipeline import LineStats, TextSettings, translate_lines


@pytest.fixture(scope="module")
def tiny(tiny_run):
    return Translator.from_checkpoint(str(tiny_run / "best.pt"))


def lines_of(translator, lines, search=None, **text):
    return [t for part in translate_lines(translator, lines, search or SearchSettings(beam=3), TextSettings(**text))
            for t in part]


def test_match_is_one_to_one_and_prefers_each_unks_own_slot():
    rows = np.array([[0.1, 0.8, 0.1, 0.0], [0.0, 0.6, 0.4, 0.0], [0.0, 0.0, 0.0, 1.0]])  # (T + 1, S + 1)
    assert slots.match(rows, [0, 1], [1, 2]) == {0: 1, 1: 2}  # both lean on slot 1: the second gets slot 2
    assert slots.match(rows, [0], [1, 2]) == {0: 1}


def test_a_slot_the_model_dropped_goes_back_where_the_alignment_crosses_it_least():
    rows = np.eye(4)[[0, 2, 3, 3]]  # words aligned to source 0, 2 and a full stop; source 1 was dropped
    assert slots.insertion_point(rows, 1, ["a", "c", "."], [False, False, True]) == 1
    assert slots.insertion_point(rows, 3, ["a", "c", "."], [False, False, True]) == 2  # before the closing mark


def test_restore_puts_each_item_once_and_keeps_the_shapes():
    src = ["see", slots.marker(0), "and", slots.marker(1), "</s>"]
    tokens = ["voir", slots.marker(0), "et", slots.marker(0)]  # [UNK] replacement copied slot 0 twice
    attention = np.full((5, 5), 0.2, dtype=np.float32)
    t = Translation("x", tokens, src, -1.0, attention, replaced=[1, 3])
    rows = np.zeros((5, 5))
    rows[[0, 2, 4], [0, 2, 4]], rows[1, 1], rows[3, 1], rows[3, 3] = 1, 0.9, 0.6, 0.4
    from rnnsearch.data.tokenize import TextCodec
    from rnnsearch.data.vocab import Vocab
    codec = TextCodec("fr", "moses", Vocab.build([["voir", "et"]], 10, 1))
    done, put_back = slots.restore(t, [("https://a.example.org", "https://a.example.org"), ("5,600", "5 600")], rows,
                                   codec, punctuation)
    assert done.text == "voir https://a.example.org et 5 600" and put_back == []
    assert done.attention.shape == (len(done.tokens) + 1, 5) and done.alignment.shape == done.attention.shape
    assert done.source_tokens == ["see", "https://a.example.org", "and", "5,600", "</s>"] and done.replaced == []


def test_a_number_the_model_wrote_for_a_numbers_slot_gives_way_to_it():
    """``6.1%`` came out ``6,1 9 p. 100``: the model wrote 9 where it read the slot, and the slot was put back
    beside it; a number the source does not hold, aligned to a number's slot, stands in for it as an <unk>
    would. One the source holds (``9``) stays."""
    from rnnsearch.data.tokenize import TextCodec
    from rnnsearch.data.vocab import Vocab
    codec = TextCodec("fr", "moses", Vocab.build([["taux", "p.", "100", "9", "et"]], 10, 1))
    for src, expected in ((["rate", slots.marker(0), "%", "and", "</s>"], "taux 6,1 p. 100"),
                          (["9", slots.marker(0), "%", "and", "</s>"], "taux 6,1 9 p. 100")):
        tokens = ["taux", "9", "p.", "100"]
        t = Translation("x", tokens, src, -1.0, np.full((5, 5), 0.2, dtype=np.float32))
        rows = np.zeros((5, 5))
        rows[0, 0], rows[1, 1], rows[2, 2], rows[3, 2], rows[4, 4] = 1, 1, 1, 1, 1
        done, _ = slots.restore(t, [("6.1", "6,1")], rows, codec, punctuation)
        assert done.text == expected, (src, done.text)


def test_a_days_le_after_the_models_own_preposition_is_french():
    """``The debate began on 2 October.`` came out ``a commencé à le 2 octobre``: the model's "à" before the
    item's "le 2 octobre"; "à le" before a day is "le", "de le" "du"."""
    from rnnsearch.data.tokenize import TextCodec
    from rnnsearch.data.vocab import Vocab
    codec = TextCodec("fr", "moses", Vocab.build([["commencé", "à", "de", "."]], 10, 1))
    for tokens, expected in ((["commencé", "à", slots.marker(0), "."], "commencé le 2 octobre."),
                             (["commencé", "de", slots.marker(0), "."], "commencé du 2 octobre.")):
        src = ["began", slots.marker(0), ".", "</s>"]
        rows = np.zeros((5, 4))
        rows[0, 0], rows[1, 0], rows[2, 1], rows[3, 2], rows[4, 3] = 1, 1, 1, 1, 1
        t = Translation("x", tokens, src, -1.0, np.full((5, 4), 0.25, dtype=np.float32))
        done, _ = slots.restore(t, [("on 2 October", "le 2 octobre")], rows, codec, punctuation)
        assert done.text == expected, done.text


def test_a_rendering_that_ends_with_a_full_stop_takes_the_sentences_own():
    """``It is counterproductive 1:30 p.m..``: the rendering's full stop and the sentence's, written once."""
    from rnnsearch.data.tokenize import TextCodec
    from rnnsearch.data.vocab import Vocab
    src, tokens = ["ends", slots.marker(0), ".", "</s>"], ["finit", slots.marker(0), "."]
    t = Translation("x", tokens, src, -1.0, np.full((4, 4), 0.25, dtype=np.float32))
    codec = TextCodec("en", "moses", Vocab.build([["finit"]], 10, 1))
    done, _ = slots.restore(t, [("13 h 30", "at 1:30 p.m.")], np.eye(4), codec, punctuation)
    assert done.text == "finit at 1:30 p.m."


def test_two_sentences_one_line_joined_with_the_source_spacing(tiny):
    one, two = "The big dog sees a cat.", "A girl paints the red car."
    [joined] = lines_of(tiny, [f"{one}  {two}"])
    alone = lines_of(tiny, [one, two], split=False)
    assert joined.text == f"{alone[0].text}  {alone[1].text}" and len(joined.segments) == 2
    assert joined.tokens == alone[0].tokens + alone[1].tokens
    assert joined.score == pytest.approx(alone[0].score + alone[1].score)
    assert joined.attention.shape == (len(joined.tokens) + 1, len(joined.source_tokens))
    assert np.allclose(joined.attention.sum(1), 1, atol=1e-4)
    [whole] = lines_of(tiny, [f"{one}  {two}"], split=False)
    assert len(whole.segments) == 1


def test_the_api_takes_running_text_through_translate_text_and_refuses_a_string(tiny):
    """``Translator.translate`` reads each text as one sentence (a second was left out, no error);
    ``rnnsearch.translate_text`` is the text stage; one string where a list is asked was read letter by letter."""
    from rnnsearch import translate_text
    text = "The big dog sees a cat. A girl paints the red car."
    [line] = translate_text(tiny, [text])
    assert line.text == lines_of(tiny, [text])[0].text and len(line.segments) == 2
    for call in (lambda: tiny.translate(text), lambda: translate_text(tiny, text), lambda: tiny.translate([b"A dog."]),
                 lambda: translate_text(tiny, [None]), lambda: translate_text(tiny, [text], TextSettings())):
        with pytest.raises(TypeError, match="not one string|not a sentence|3rd argument"):
            call()


@pytest.mark.parametrize("marker", ["1.", "- ", "•", "(a)", "b)", "iv."])
def test_a_list_marker_stays_in_front_as_written(tiny, marker):
    """``• Ou téléphoner`` came out ``• • phone calls``, ``- Call us`` as ``Nous nous Call``: the marker is not the
    model's to translate."""
    [line] = lines_of(tiny, [f"  {marker.strip()}  The big dog sees a cat. A girl paints the red car."])
    assert line.text.startswith(f"  {marker.strip()}  ") and len(line.segments) == 3, line.text
    assert line.segments[0].text == marker.strip() and line.segments[1].text


def test_an_initial_is_no_list_marker():
    from rnnsearch.text.segments import LIST_MARKER
    assert not any(LIST_MARKER.match(t) for t in ["M. Trudeau a dit.", "J. B. Milner taught.", "-5 degrees", "1.5 m"])


def test_a_lines_leading_and_trailing_spaces_and_tabs_stay_around_its_translation(tiny):
    plain, indented, tabbed, two = lines_of(tiny, ["The dog sees a cat.", "  The dog sees a cat. ",
                                                   "\tThe dog sees a cat.", "\t The dog sees a cat.  A girl paints.\t"])
    assert plain.text and not plain.text[0].isspace()
    assert indented.text == f"  {plain.text} " and tabbed.text == f"\t{plain.text}"
    assert two.text.startswith(f"\t {plain.text}  ") and two.text.endswith("\t") and len(two.segments) == 2


def test_every_line_gives_one_output_blank_lines_stay_blank(tiny):
    out = lines_of(tiny, ["The dog sees a cat. The cat sees a dog.", "", "   ", "A girl paints."])
    assert len(out) == 4 and out[1].text == out[2].text == "" and all(t.text for t in (out[0], out[3]))


@hsettings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["https://x.example.org/a?b=1", "info@health-region.ca", "(613) 555-0142",
                                 "€25,000", "37.5%", "Raghunathan", "v2.3.1"]), min_size=1, max_size=4))
def test_each_item_comes_through_once(tiny_run, items):
    translator = _tiny(tiny_run)
    text = "The dog sees " + " and ".join(items) + ". The cat sees a dog."
    [out] = lines_of(translator, [text])
    expected = {"€25,000": "25\u202f000\u00a0€", "37.5%": "37,5"}
    for item in set(items):
        assert out.text.count(expected.get(item, item)) >= items.count(item)


_TINY = {}


def _tiny(run):
    if run not in _TINY:
        _TINY[run] = Translator.from_checkpoint(str(run / "best.pt"))
    return _TINY[run]


def test_no_placeholders_gives_the_model_the_text_as_it_is(tiny):
    stats = LineStats()
    list(translate_lines(tiny, ["The dog sees https://x.example.org."], SearchSettings(beam=2),
                         TextSettings(placeholders=False), stats=stats))
    assert stats.slots == 0


def test_a_long_sentence_is_translated_in_pieces(tiny):
    text = " , ".join(["the big dog sees a small cat"] * 6) + " ."
    [out] = lines_of(tiny, [text], max_units=12)
    assert len(out.segments) > 1 and all(s.text for s in out.segments)


def test_n_best_of_a_joined_line(tiny):
    [out] = lines_of(tiny, ["The dog sees a cat. A girl paints the car."], SearchSettings(beam=4, n_best=3))
    assert len(out.nbest) == 3 and out.nbest[0] is out
    assert [t.score for t in out.nbest[1:]] == sorted((t.score for t in out.nbest[1:]), reverse=True)


def test_the_exit_status_and_summary_when_lines_are_not_translated(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    rows = [{"text": "The dog sees a cat."}, "not json", {"text": "A girl paints.", "constraints": ["zzzunknown"]}]
    path.write_text("".join((json.dumps(r) if isinstance(r, dict) else r) + "\n" for r in rows), encoding="utf-8")
    code = main(["translate", str(tiny_run / "best.pt"), "--json-input", "--input", str(path), "--beam", "2"])
    captured = capsys.readouterr()
    assert code == 3 and len(captured.out.splitlines()) == 3 and captured.out.splitlines()[0]
    assert "2 of 3 lines not translated; see the warnings above" in captured.err.splitlines()[-1]
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(tmp_path / "in.jsonl"), "--beam", "2"]) == 0


def test_an_output_file_is_written_whole_or_left_as_it_was_and_keeps_crlf(tiny_run, tmp_path, monkeypatch):
    """A SIGTERM after 20 of 30 lines left the old output file with those 20 lines; CRLF came out as LF."""
    from rnnsearch.cli import translate as cli_translate
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_bytes(b"The dog sees a cat.\r\n\r\nA girl paints.\r\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(source), "--output", str(out), "--beam", "2"]) == 0
    written = out.read_bytes()
    assert written.count(b"\r\n") == 3 and written.count(b"\n") == 3 and written.split(b"\r\n")[1] == b""
    real, seen = cli_translate._written, []

    def failing(i, *rest):
        seen.append(i)
        if i == 1:
            raise KeyboardInterrupt
        return real(i, *rest)
    monkeypatch.setattr(cli_translate, "_written", failing)
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(source), "--output", str(out), "--beam", "2"]) == 130
    assert seen == [0, 1] and out.read_bytes() == written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.txt"]


def test_a_sentence_the_model_cannot_honour_marks_its_line(tiny):
    [out] = lines_of(tiny, [Source("The dog sees a cat. A girl paints.", constraints=("zzzunknown",))])
    assert out.error and not out.tokens


def test_an_unknown_capitalised_word_that_is_a_known_word_is_read_lower_case(tiny):
    from rnnsearch.text.segments import sentence_units
    text = "Sees the Dog and Vandermeer"
    units, found = sentence_units(tiny, text, 0, len(text), [], True)
    assert units[:4] == ["sees", "the", "dog", "and"] and found == [("Vandermeer", "Vandermeer")]
    assert slots.slot_index(units[4]) == 0 and UNK_TOKEN not in units


def test_a_mixed_case_word_outside_the_vocabulary_is_a_name_not_a_lower_case_word(tiny):
    from rnnsearch.text.segments import sentence_units
    text = "the DoG sees a cAt"  # "dog" and "cat" are words the tiny model knows: "DoG" is a name all the same
    units, found = sentence_units(tiny, text, 0, len(text), [], True)
    assert found == [("DoG", "DoG"), ("cAt", "cAt")] and "dog" not in units and "cat" not in units


def test_capitalised_known_words_beside_a_capitalised_word_are_a_name(tiny):
    """Inside a sentence, two or more capitalised words are a name of several words ("Lightning
    Experience"): a word the vocabulary holds only in lower case is carried, not read as that word;
    the sentence's first word is read in lower case as before."""
    from rnnsearch.text.segments import sentence_units
    text = "Sees the Dog Vandermeer"
    units, found = sentence_units(tiny, text, 0, len(text), [], True)
    assert units[:2] == ["sees", "the"] and found == [("Dog Vandermeer", "Dog Vandermeer")]
    assert slots.slot_index(units[2]) == 0 and len(units) == 3
    text = "Dog Sees the dog"  # the first word: capitalised as any first word is
    units, found = sentence_units(tiny, text, 0, len(text), [], True)
    assert units[:2] == ["dog", "sees"] and not found


def test_json_input_blank_lines_and_markup(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    rows = [json.dumps({"text": "The <b>dog</b> sees a cat."}), "", json.dumps({"text": "A girl <i>paints</i>."})]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code = main(["translate", str(tiny_run / "best.pt"), "--json-input", "--markup", "xml", "--input", str(path),
                 "--beam", "2"])
    out = capsys.readouterr().out.split("\n")
    assert code == 0 and len(out) == 4 and out[1] == "" and out[3] == ""  # a blank line is no failure
    assert out[0].count("<b>") == 1 and out[0].count("</b>") == 1 and out[2].count("<i>") == 1


@given(st.text(alphabet="ab ’‘“”–—'\"-", max_size=30))
def test_typographic_marks_are_read_as_plain_ones_one_for_one(text):
    from rnnsearch.text.typography import for_model
    plain = for_model(text)
    assert len(plain) == len(text) and not set(plain) & set("’‘“”–—")


def test_a_curly_apostrophe_is_read_as_the_straight_one(tiny):
    from rnnsearch.text.segments import sentence_units
    curly, straight = "The dog’s hat – a “hat”", 'The dog\'s hat - a "hat"'
    assert sentence_units(tiny, curly, 0, len(curly), [], True) == sentence_units(tiny, straight, 0, len(straight), [], True)


def test_a_sentence_of_no_letter_or_digit_is_written_as_it_is(tiny):
    """An emoji, an ellipsis, a dash: nothing to translate, so nothing of the model's own is written
    (a release wrote 'MME 🔥 🔥' for '🔥🔥' and "D'accord." for '.')."""
    out = lines_of(tiny, ["🔥🔥", "...", "The dog sees a cat. ...", "—"])
    assert [t.text for t in out[:2]] == ["🔥🔥", "..."] and out[3].text == "—"
    assert out[2].text.endswith(" ...") and len(out[2].segments) == 2 and out[2].attention is not None
    assert all(t.tokens and not t.error for t in out)


def test_a_line_translated_whole_with_fewer_sentences_out_is_named(tiny):
    """A line kept whole (its constraints, or split off) whose output has fewer sentences than it gets a
    warning naming its line; one whose sentences all came out, or a split line, none."""
    from rnnsearch.text.pipeline import _fewer_sentences
    from rnnsearch.text.settings import TextSettings
    warned = []
    tiny.warn, warn = warned.append, tiny.warn
    try:
        merged, kept = Translation("Le chien voit un chat.", ["x"], [], -1.0, None), \
            Translation("Le chien dort. Le chat voit.", ["x"], [], -1.0, None)
        two = "The dog sleeps. The cat sees."
        _fewer_sentences(tiny, [Source(two, constraints=("chat",)), Source(two, constraints=("chat",))], [merged, kept],
                         TextSettings(), [4, 5])
        _fewer_sentences(tiny, [Source(two)], [merged], TextSettings(split=False), [6])
        _fewer_sentences(tiny, [Source(two)], [merged], TextSettings(), [7])  # split: each sentence its own
    finally:
        tiny.warn = warn
    assert [w.split(":")[0] for w in warned] == ["line 4", "line 6"]
    assert "2 sentences in, 1 out" in warned[0] and "constraints keep it whole" in warned[0]


def test_a_constraint_the_search_met_but_the_text_does_not_hold_is_named(tiny_run):
    """``maison .`` was met unit by unit and written ``maison.``: the line counted as not translated (exit status 3)
    with no warning saying why."""
    translator = Translator.from_pretrained(tiny_run / "best.pt")
    warnings = []
    translator.warn = warnings.append
    (t,) = next(translate_lines(translator, [Source("The dog sees a cat.", constraints=("maison .",))]))
    assert not t.constraints_met and t.text
    assert warnings == [f"line 1: 'maison .' not in the output as written ({t.text!r}): check this translation"]


def test_decomposed_and_invisible_characters_are_read_as_the_word_they_are_part_of(tiny_run):
    """``Be\\u0301langer`` came out ``M. ́ langer`` and ``commit\\xadtee`` lost its word: NFC, soft hyphens and
    zero-width spaces out, a slot moved with its text."""
    from rnnsearch.text.normalize import clean, clean_source
    assert clean("Be\u0301langer a\u00adb\u200bc") == ("Bélanger abc", [0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 11, 11,
                                                                      12])
    moved = clean_source(Source("e\u0301 {0} x", slots=((3, 6, "{0}"),)))
    assert moved.text == "é {0} x" and moved.slots == ((2, 5, "{0}"),) and moved.text[2:5] == "{0}"
    translator = Translator.from_pretrained(tiny_run / "best.pt")
    plain, *odd = [t.text for t in next(translate_lines(translator, ["The dog sees a cat.", "The d\u00adog sees a cat.",
                                                                    "The d\u200bog sees a cat."]))]
    assert odd == [plain, plain]


def test_a_headings_capitals_the_source_does_not_have_are_undone():
    """``Sales`` came out ``LE Sales`` and ``Contact`` ``LES contacts``: the Hansards write their headings in capitals."""
    from rnnsearch.data.tokenize import TextCodec
    from rnnsearch.data.vocab import Vocab
    from rnnsearch.text.pipeline import _uncapped
    from rnnsearch.text.segments import Segment
    codec = TextCodec("fr", "moses", Vocab.build([["le", "les", "le", "les", "LE", "ONU", "contacts"]], 20, 1))

    def out(tokens, source):
        t = Translation(" ".join(tokens), tokens, source + ["</s>"], -1.0, None)
        return _uncapped(t, Segment(0, source, [], first=source[0][0]), codec).text
    assert out(["LES", "contacts"], ["Contact"]) == "Les contacts"
    assert out(["LE", "Sales"], ["Sales"]) == "Le Sales"
    assert out(["ONU"], ["Un"]) == "ONU"  # no small form in the vocabulary: an acronym
    assert out(["LES", "CONTACTS"], ["Contact"]) == "LES CONTACTS"  # a heading throughout: as written
    assert out(["LES", "contacts"], ["CONTACT", "list"]) == "LES contacts"  # the source's capitals
