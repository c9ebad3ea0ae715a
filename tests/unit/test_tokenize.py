import pytest

from rnnsearch.config import from_dict
from rnnsearch.data.tokenize import TextCodec, build_codecs, detokenize, pretokenize
from rnnsearch.data.vocab import SPECIALS

EN = ["A man rides a bike down the street.", "Two dogs play in the green grass.",
      "A woman is reading a book in the park.", "Children run on the beach at sunset."] * 30
FR = ["Un homme fait du vélo dans la rue.", "Deux chiens jouent dans l'herbe verte.",
      "Une femme lit un livre dans le parc.", "Des enfants courent sur la plage au coucher du soleil."] * 30


def test_moses_round_trip():
    tokens = pretokenize("Un homme, dans l'herbe verte.", "moses", "fr")
    assert tokens[-1] == "." and "," in tokens
    assert detokenize(tokens, "moses", "fr") == "Un homme, dans l'herbe verte."


def test_word_codecs_and_state_round_trip():
    cfg = from_dict({"vocab": {"mode": "word", "size": 30}})
    src, tgt, src_units, tgt_units = build_codecs(cfg.vocab, cfg.data, EN, FR)
    assert len(src.vocab) == 30 and src.vocab.itos[:4] == SPECIALS
    assert src_units[0] == pretokenize(EN[0], "moses", "en")
    again = TextCodec.from_state(tgt.to_state())
    ids = tgt.encode(FR[1])
    assert again.decode(ids) == tgt.decode(ids)


def test_a_word_codec_reads_decomposed_accents_as_the_composed_letters():
    """``é`` written as ``e`` and its combining accent (macOS, some PDFs) came out ``comite ́ ́``."""
    import unicodedata
    cfg = from_dict({"vocab": {"mode": "word", "size": 60}})
    _, tgt, _, _ = build_codecs(cfg.vocab, cfg.data, EN, FR)
    text = "Un homme fait du vélo."
    assert tgt.units(unicodedata.normalize("NFD", text)) == tgt.units(text)
    assert tgt.encode(unicodedata.normalize("NFD", text)) == tgt.encode(text) and "vélo" in tgt.units(text)


@pytest.mark.parametrize("joint", [True, False])
def test_sentencepiece_codecs(joint):
    cfg = from_dict({"vocab": {"mode": "sentencepiece", "size": 120, "joint": joint}})
    src, tgt, src_units, tgt_units = build_codecs(cfg.vocab, cfg.data, EN, FR)
    assert src.mode == tgt.mode == "sentencepiece"
    assert src.vocab.itos[:4] == SPECIALS and tgt.vocab.itos[:4] == SPECIALS
    if joint:
        assert src.vocab.itos == tgt.vocab.itos
    assert tgt.decode(tgt.encode(FR[0])) == FR[0]  # pieces map back to the raw text
    assert src_units[1] == src.units(EN[1])
    restored = TextCodec.from_state(src.to_state())
    assert restored.units(EN[2]) == src.units(EN[2])
    assert not src.has_unk(EN[0])


# Output words of the released RNNsearch-50 on the Hansards test (its test.hyp.fr of 2026-11-26), whose
# detokenised lines glued the dollar sign to the next word ("200 000 $à l'", "<unk> 000 $pour le")
GLUED = [(["a", "dépensé", "200", "000", "$", "à", "l'", "intérieur", "."], "a dépensé 200 000 $ à l'intérieur."),
         (["de", "<unk>", "000", "$", "pour", "le", "programme"], "de <unk> 000 $ pour le programme"),
         (["plus", "de", "315", "$", "de", "plus"], "plus de 315 $ de plus"),
         (["900", "$", "au", "PQ"], "900 $ au PQ"),
         (["des", "<unk>", "$", "en", "2004"], "des <unk> $ en 2004"),
         (["est", "passée", "à", "5", "$", ","], "est passée à 5 $,")]


@pytest.mark.parametrize("tokens, text", GLUED)
def test_a_currency_sign_after_the_amount_stands_apart(tokens, text):
    assert detokenize(tokens, "moses", "fr") == text


def test_a_currency_sign_before_a_number_still_joins_it():
    assert detokenize(["It", "cost", "$", "5", ",", "or", "5", "%", "."], "moses", "en") == "It cost $5, or 5%."
    assert detokenize(["5", "%", "de", "plus", "et", "10", "€", "."], "moses", "fr") == "5 % de plus et 10 €."


def test_the_hansards_references_keep_their_currency_spacing():
    """Every reference line of the Hansards test with a currency sign, tokenised and detokenised:
    no sign comes out glued to a word, and every 'N $ word' of the references survives."""
    import re

    from conftest import SHARED_DATA
    lines = [line for line in (SHARED_DATA / "hansards" / "test.fr").read_text(encoding="utf-8").splitlines()
             if "$" in line or "€" in line]
    assert len(lines) >= 10
    for line in lines:
        out = detokenize(pretokenize(line, "moses", "fr"), "moses", "fr")
        assert not re.search(r"[$€£]\w", out), (line, out)
        assert re.findall(r"\d [$€] \w+", out) == re.findall(r"\d [$€] \w+", line), (line, out)


def test_the_hansards_quotes_come_out_as_plain_quotes():
    """The Hansards' English quotes ``like this'' (which a model trained on them writes, and Moses' tokenizer
    cuts '' in two: ``grounds' '``) and a « copied into English are written as a reader writes them, "so";
    an apostrophe alone stays one (``the members' rights``)."""
    words = ["So", "``", "reasonable", "grounds", "'", "'", ",", "said", "he", "."]
    assert detokenize(words, "moses", "en") == 'So "reasonable grounds", said he.'
    assert detokenize(["The", "``", "report", "''", "is", "out", "."], "moses", "en") == 'The "report" is out.'
    assert detokenize(["The", "«", "report", "»", "is", "out", "."], "moses", "en") == 'The "report" is out.'
    assert detokenize(["Le", "«", "rapport", "»", "."], "moses", "fr") == "Le « rapport »."
    assert detokenize(["the", "members", "'", "rights"], "moses", "en") == "the members' rights"
    # the tokenizer leaves `` on its word (``we is one unit of the Hansards' English): the model wrote ``We
    assert detokenize(["``We", "are", "back", "'", "'", "."], "moses", "en") == '"We are back".'
