"""Lexically constrained beam search (decoding/constraints.py): included words and phrases appear,
avoided ones do not, at any beam size and in batches mixing constrained and free sentences; what cannot
be honoured is refused per sentence in one line; --json-input reads Sockeye's lines."""
from __future__ import annotations

import json

import pytest

from rnnsearch.cli import main
from rnnsearch.decoding.constraints import Constraints, Progress
from rnnsearch.decoding.source import Source
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from rnnsearch.decoding.sampling import Sampling

SOURCES = ["The tired table calls the pretty letter without a white chair.",
           "A big strong table finds the big houses.",
           "A old blue hat takes a hat on some old chairs.",
           "The river carries the small blue river under the big trains."]


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_pretrained(tiny_run / "best.pt")


def _words(text: str) -> list[str]:
    return text.rstrip(".").split()


@pytest.mark.parametrize("beam", [1, 5])
def test_included_words_and_phrases_appear_and_free_sentences_are_untouched(translator, beam):
    settings = translator.search_settings(beam=beam)
    free = [t.text for t in translator.translate(SOURCES, settings)]
    wanted = {0: ("maison",), 2: ("le chien", "rouge")}  # not in the free outputs
    assert not any(w in free[i] for i, ws in wanted.items() for w in ws)
    mixed = [Source(s, constraints=wanted[i]) if i in wanted else s for i, s in enumerate(SOURCES)]
    got = translator.translate(mixed, settings)
    for i, t in enumerate(got):
        if i in wanted:
            assert all(f" {w} " in f" {' '.join(_words(t.text))} " for w in wanted[i]), t.text
            assert t.constraints_met and t.error is None
        else:
            assert t.text == free[i]  # another sentence's constraints never change this one's output


@pytest.mark.parametrize("beam", [1, 5])
def test_avoided_words_and_phrases_do_not_appear(translator, beam):
    settings = translator.search_settings(beam=beam)
    free = translator.translate(SOURCES, settings)
    avoid = [tuple(_words(t.text)[1:2]) for t in free]  # each output's second word
    phrase = " ".join(_words(free[3].text)[2:4])  # and a two-word phrase of the last
    got = translator.translate([Source(s, avoid=a + ((phrase,) if i == 3 else ())) for i, (s, a) in
                                enumerate(zip(SOURCES, avoid))], settings)
    for t, a in zip(got, avoid):
        assert a[0] not in _words(t.text), t.text
    assert phrase not in " ".join(_words(got[3].text))


def test_an_avoided_phrase_bars_its_form_with_the_first_letter_in_the_other_case_too(translator):
    from rnnsearch.decoding.constraints import from_text
    codec = translator.tgt_codec
    words = [w for w in codec.vocab.itos[4:] if w.isalpha() and w.islower()]
    word = next(w for w in words if codec.vocab.encode([w.capitalize()])[0] > 3)
    c = from_text((), (word,), codec, 10, 2.0)
    assert set(c.avoid) == {tuple(codec.vocab.encode([word])), tuple(codec.vocab.encode([word.capitalize()]))}
    only = next(w for w in words if codec.vocab.encode([w.capitalize()])[0] <= 3)
    assert from_text((), (only,), codec, 10, 2.0).avoid == (tuple(codec.vocab.encode([only])),)  # a form it cannot write
    assert isinstance(from_text((), ("zzzunknown",), codec, 10, 2.0), str)  # no form it can write: refused


def test_the_reported_score_is_the_models_log_probability_of_the_constrained_output(translator):
    got = translator.translate([Source(SOURCES[0], constraints=("maison",))], translator.search_settings(beam=5))[0]
    scored = translator.score([SOURCES[0]], [got.text])[0]
    assert scored.logprob == pytest.approx(got.score, abs=1e-3)


def test_what_cannot_be_honoured_is_refused_per_sentence_and_the_rest_translated(translator):
    warnings, warn = [], translator.warn
    translator.warn = warnings.append
    try:
        got = translator.translate([Source(SOURCES[0], constraints=("zzqx",)), SOURCES[1],
                                    Source("a b", constraints=(" ".join(["maison"] * 30),)),
                                    Source(SOURCES[2], avoid=("",))], translator.search_settings(beam=3))
    finally:
        translator.warn = warn  # the fixture's translator is shared
    assert got[1].text and got[1].error is None
    assert "'zzqx' not in the model's target vocabulary" in got[0].error and got[0].text == ""
    assert "do not fit the output length limit" in got[2].error
    assert "avoid '' is empty" in got[3].error
    assert [w.split(":")[0] for w in warnings] == ["line 1", "line 3", "line 4"]
    assert all("\n" not in w for w in warnings)


def test_a_constraint_holding_markup_is_refused_in_one_line(translator):
    """``<b>enregistrer</b>`` was written ``< b > enregistrer < / b >``, then found missing from the output: exit
    status 3 with no warning."""
    got = translator.translate([Source(SOURCES[0], constraints=("<b>maison</b>",)),
                                Source(SOURCES[0], avoid=("maison&nbsp;bleue",))], translator.search_settings(beam=2))
    assert "constraint '<b>maison</b>' holds markup (<b>): give its words alone" in got[0].error
    assert "avoid 'maison&nbsp;bleue' holds markup (&nbsp;)" in got[1].error and not got[1].text

def test_a_constraint_holding_what_the_line_avoids_is_refused(translator):
    got = translator.translate([Source(SOURCES[0], constraints=("maison",), avoid=("maison",)),
                                Source(SOURCES[0], constraints=("la maison",), avoid=("Maison",)),
                                Source(SOURCES[0], constraints=("maison",), avoid=("chapeau",))],
                               translator.search_settings(beam=3))
    assert "constraint 'maison' holds 'maison', which the line also avoids" in got[0].error and got[0].text == ""
    assert "holds 'Maison'" in got[1].error  # an avoided phrase bars its other-case form too
    assert got[2].error is None and "maison" in got[2].text


def test_a_line_whose_constraints_were_not_met_is_not_translated():
    """The search's best output that ran out of length before meeting its constraints counts as not
    translated (exit status 3), as the warning the search gave says."""
    from rnnsearch.cli.translate import _not_translated
    from rnnsearch.decoding.source import Translation
    warnings = []
    unmet = Translation("la la la", ["la", "la", "la"], [], -9.0, None, constraints_met=False)
    assert _not_translated(0, unmet, "The house.", None, warnings.append) and warnings == []  # the search warned
    assert not _not_translated(0, Translation("la", ["la"], [], -1.0, None), "The house.", None, warnings.append)


def test_constraints_refuse_sampling(translator):
    with pytest.raises(UsageError, match="not sampling"):
        translator.translate([Source(SOURCES[0], constraints=("maison",))],
                             translator.search_settings(sampling=Sampling(seed=1)))


def test_progress_through_a_phrase_is_lost_when_the_phrase_is_left():
    c = Constraints(include=((7, 8, 9), (5,)))
    p = Progress().after(c, 7).after(c, 8)
    assert (p.inside, p.position, p.met(c)) == (0, 2, 2) and p.wanted(c) == {9}
    assert Progress().after(c, 7).after(c, 5).met(c) == 1  # left the phrase; 5 meets the other constraint
    assert p.after(c, 9).met(c) == 3 and p.after(c, 9).after(c, 5).met(c) == c.words == 4


def test_json_input_lines(tiny_run, tmp_path, capsys):
    lines = [json.dumps({"text": SOURCES[0], "constraints": ["maison"]}), json.dumps({"text": SOURCES[1]}),
             "not json", json.dumps({"text": SOURCES[2], "avoid": ["chapeau"]}),
             json.dumps({"text": SOURCES[3], "constraint": ["x"]})]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--json-input", "--input", str(path), "--beam", "5"]) == 3
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1].startswith("rnnsearch translate: 2 of 5 lines not translated")
    out = captured.out.splitlines()
    assert len(out) == 5 and "maison" in out[0] and out[1] and out[2] == "" and "chapeau" not in out[3]
    assert out[4] == ""
    warned = [w for w in captured.err.splitlines() if "warning:" in w]
    assert len(warned) == 2 and "line 3: not translated" in warned[0] and "unknown field 'constraint'" in warned[1]
    # --json-output: a line refused before the search says why in its own object, as its warning did
    assert main(["translate", str(tiny_run / "best.pt"), "--json-input", "--json-output", "--input", str(path),
                 "--beam", "5"]) == 3
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["error"] is None for r in rows] == [True, True, False, True, False]
    assert "not a --json-input line" in rows[2]["error"] and "unknown field 'constraint'" in rows[4]["error"]
    assert rows[2]["text"] == rows[4]["text"] == "" and not rows[2]["constraints_met"] and not rows[4]["constraints_met"]


def test_cli_glossary(tiny_run, tmp_path, capsys):
    glossary, src = tmp_path / "terms.tsv", tmp_path / "in.en"
    glossary.write_text("# term\ttranslation\nchair\tmaison\nold chairs\tle chien\n")
    src.write_text("\n".join(SOURCES[:3]) + "\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--glossary", str(glossary), "--input", str(src),
                 "--beam", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "maison" in out[0].split() and "le chien" in out[2].lower() and "maison" not in _words(out[1])
    glossary.write_text("chair maison\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--glossary", str(glossary), "--input", str(src)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{glossary}:1: expected 'source term<TAB>target term'" in err and "\n" not in err


def test_the_onnx_backend_gives_the_same_constrained_outputs(tiny_run, translator):
    pytest.importorskip("onnxruntime")
    onnx = Translator.from_checkpoint(tiny_run / "best.pt", backend="onnx")
    sources = [Source(SOURCES[0], constraints=("maison",)), SOURCES[1], Source(SOURCES[2], avoid=("chapeau",))]
    settings = translator.search_settings(beam=4)
    assert [t.text for t in onnx.translate(sources, settings)] == [t.text for t in translator.translate(sources, settings)]


def test_a_string_where_a_tuple_of_words_is_asked_is_a_type_error_and_a_refused_line_meets_nothing(translator):
    """``Source(text, constraints="projet")`` was read letter by letter (``o e t j p r``, constraints_met true);
    a line whose constraint the model cannot write came back with constraints_met true beside its error."""
    for bad in (dict(constraints="projet"), dict(avoid="loi"), dict(constraints=("a", 3)), dict(slots=((5, 19),))):
        with pytest.raises(TypeError):
            Source("The bill was passed .", **bad)
    [refused] = translator.translate([Source("The dog sees a cat .", constraints=("zzzunknown",))])
    assert refused.error and not refused.constraints_met


def test_translate_text_takes_any_iterable_of_texts(translator):
    """A generator was used up by the type checks and ``translate_text`` returned ``[]``."""
    from rnnsearch import translate_text
    assert [t.text for t in translate_text(translator, (s for s in ["The dog sees a cat .", "A girl paints ."]))] == \
        [t.text for t in translate_text(translator, ["The dog sees a cat .", "A girl paints ."])]
