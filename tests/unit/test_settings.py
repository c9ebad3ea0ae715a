"""SearchSettings: every unset field is the model's decode section's, the rules are checked in one
place and name the field as the edge calls it; search functions take resolved settings only;
flags made from settings models carry those models' defaults."""
from __future__ import annotations

import pytest

from rnnsearch.cli import build_parser
from rnnsearch.cli.common import flag
from rnnsearch.config import DecodeConfig
from rnnsearch.decoding.sampling import Sampling
from rnnsearch.decoding.search import beam_search
from rnnsearch.decoding.settings import SearchSettings, SettingsError
from rnnsearch.training.align_head import HeadSettings


def test_a_setting_for_every_field_of_the_decode_section():
    assert set(SearchSettings.model_fields) == set(DecodeConfig.model_fields) | {"sampling"}
    assert all(field.default is None for field in SearchSettings.model_fields.values())  # no default of its own


def test_unset_fields_are_the_models_given_ones_win():
    decode = DecodeConfig(beam=12, length_penalty=0.5, batch_size=7)
    got = SearchSettings(beam=3, max_len_ratio=1.5).resolve(decode)
    assert got.resolved and got.beam == 3 and got.max_len_ratio == 1.5
    assert (got.length_penalty, got.batch_size, got.n_best, got.max_src_len) == (0.5, 7, 1, decode.max_src_len)
    assert got.resolve(DecodeConfig(beam=2)) == got  # resolving twice changes nothing
    assert SearchSettings().resolve(decode).model_dump(exclude={"sampling"}) == decode.model_dump()


@pytest.mark.parametrize("given, field, words", [
    ({"beam": 0}, "beam", "--beam must be at least 1 (1 = greedy search), got 0"),
    ({"n_best": 0}, "n_best", "--n-best must be at least 1, got 0"),
    ({"beam": 2, "n_best": 3}, "n_best", "--n-best 3 is larger than --beam 2"),
    ({"length_penalty": -1.0}, "length_penalty", "--length-penalty: must be >= 0"),
    ({"max_len_ratio": 0.0}, "max_len_ratio", "--max-len-ratio: must be > 0"),
    ({"batch_size": 0}, "batch_size", "--batch-size: must be > 0"),
    ({"beam": 4, "sampling": Sampling()}, "beam", "sampling draws each output token by token: it takes no --beam"),
    ({"beam": 1000000}, "beam", "--beam must be at most 1000, got 1000000"),  # a bare allocation error, or the OOM killer
])
def test_impossible_settings_name_the_field_as_the_edge_calls_it(given, field, words):
    with pytest.raises(SettingsError, match=words.replace("(", r"\(").replace(")", r"\)")) as caught:
        SearchSettings(**given).resolve(DecodeConfig(), flag)
    assert caught.value.field == field
    with pytest.raises(SettingsError) as plain:  # the HTTP API names the request's field
        SearchSettings(**given).resolve()
    assert "--" not in str(plain.value)


def test_sampling_searches_with_beam_1_and_draws_n_best():
    got = SearchSettings(n_best=4, sampling=Sampling(temperature=0.5)).resolve(DecodeConfig(beam=12))
    assert (got.beam, got.n_best, got.sampling.temperature) == (1, 4, 0.5)


def test_search_functions_refuse_settings_not_resolved():
    with pytest.raises(ValueError, match="resolve them"):
        beam_search(None, None, None, SearchSettings(beam=3))


def test_settings_are_hashable_so_equal_requests_share_a_batch():
    a, b = SearchSettings(beam=3).resolve(), SearchSettings(beam=3).resolve()
    assert a == b and hash(a) == hash(b) and a != SearchSettings(beam=4).resolve()


def test_train_align_head_flags_come_from_head_settings(capsys):
    args = build_parser().parse_args(["train-align-head", "ckpt", "--links", "l", "--out", "o"])
    assert {name: getattr(args, name) for name in HeadSettings.model_fields} == HeadSettings().model_dump()
    args = build_parser().parse_args(["train-align-head", "ckpt", "--links", "l", "--out", "o", "--size", "64"])
    assert args.att == 64


def test_bad_flag_values_are_one_line_naming_the_flag(tmp_path, capsys):
    from rnnsearch.cli import main
    assert main(["train-align-head", "x.pt", "--links", "l", "--out", str(tmp_path / "o"), "--epochs", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--epochs: must be >= 1, got 0" in err


def test_evaluate_offers_no_n_best():
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["evaluate", "ckpt", "--src", "s", "--ref", "r", "--n-best", "2"])
    helps = {a.dest: a.help for a in parser._subparsers._group_actions[0].choices["evaluate"]._actions}
    assert "--n-best" not in helps["sample"]


def test_settings_of_another_type_are_refused_in_one_line(tiny_run):
    """``translator.translate(texts, {"beam": 2})`` failed deep inside with an AttributeError."""
    from rnnsearch import Translator
    from rnnsearch.text.documents import translate_units
    from rnnsearch.text.settings import TextSettings
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    with pytest.raises(TypeError, match="search settings must be a SearchSettings .*, not dict"):
        translator.translate(["The dog sees a cat."], {"beam": 2})
    with pytest.raises(TypeError, match="text settings must be a TextSettings .*, not SearchSettings"):
        translate_units(translator, [], None, SearchSettings(beam=2))
    assert TextSettings.given(None) == TextSettings() and SearchSettings.given(None) == SearchSettings()


def test_the_python_api_reads_any_iterable_and_names_what_is_not_a_sentence(tiny_run):
    """``translate(generator)`` had no len(), ``Source(None)`` failed later on ``.strip``, ``score("a", "b")`` scored
    letters, and a lone surrogate raised a UnicodeEncodeError deep in the text stage."""
    from rnnsearch import Source, Translator, translate_text
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    assert translator.translate(s for s in ["The dog sees a cat."])[0].text
    assert translate_text(translator, (s for s in ["The dog sees a cat."]))[0].text
    for call, words in [(lambda: Source(None), "Source text must be a string, not NoneType"),
                        (lambda: translator.translate([None]), r"texts\[0\] is a NoneType, not a sentence"),
                        (lambda: translator.score("The dog", "Le chien"), "sources must be a list of sentences, not one"),
                        (lambda: translator.translate(5), "texts must be a list of sentences, not int")]:
        with pytest.raises(TypeError, match=words):
            call()
    with pytest.raises(ValueError, match=r"texts\[1\] holds a lone surrogate \(character 4"):
        translate_text(translator, ["The dog.", "The \ud800 dog."])
    assert len(translator.score((s for s in ["The dog ."]), (t for t in ["Le chien ."]))) == 1
