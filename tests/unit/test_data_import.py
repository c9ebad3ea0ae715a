"""``rnnsearch data import`` (data/memories.py): a memory made by translate-toolkit becomes the files
training reads, its languages the file's, its tags out, units without a reviewed translation left out
and counted, split in the file's order; a file it cannot use is one line naming it."""
from __future__ import annotations

import pytest

pytest.importorskip("translate")

from rnnsearch.cli import main  # noqa: E402
from rnnsearch.data.memories import read_memory  # noqa: E402

PAIRS = [(f"Click <uicontrol>Save {n}</uicontrol> &amp; close.", f"Cliquez sur <uicontrol>Enregistrer {n}</uicontrol> "
          "&amp; fermez.") for n in range(6)]


def test_tmx_to_splits(tmp_path, capsys):
    from translate.storage import tmx
    memory = tmx.tmxfile(sourcelanguage="en-US", targetlanguage="fr")
    for en, fr in PAIRS + PAIRS[:1]:
        memory.addtranslation(en, "en-US", fr, "fr-CA")
    (tmp_path / "m.tmx").write_bytes(bytes(memory))
    assert main(["data", "import", str(tmp_path / "m.tmx"), "--out", str(tmp_path / "c"), "--dev", "1", "--test", "2"]) == 0
    out = capsys.readouterr().out
    assert "en->fr, train 3, dev 1, test 2" in out and "1 left out: the same pair again" in out
    assert "--set data.dev=dev" in out
    train = (tmp_path / "c" / "train.en").read_text(encoding="utf-8").splitlines()
    assert train == ["Click Save 0 & close.", "Click Save 1 & close.", "Click Save 2 & close."]
    assert (tmp_path / "c" / "test.fr").read_text(encoding="utf-8").splitlines()[-1] == "Cliquez sur Enregistrer 5 & fermez."


def test_po_and_xliff_leave_out_what_is_not_reviewed(tmp_path):
    from translate.storage import pypo, xliff
    po = pypo.pofile()
    po.init_headers(charset="UTF-8", encoding="8bit", language="fr")
    po.addsourceunit("The dog.").target = "Le chien."
    fuzzy = po.addsourceunit("The cat.")
    fuzzy.target = "Le chat."
    fuzzy.markfuzzy(True)
    po.addsourceunit("The hat.")
    (tmp_path / "m.po").write_bytes(bytes(po))
    memory = read_memory(tmp_path / "m.po")
    assert (memory.src_lang, memory.tgt_lang, memory.pairs) == ("en", "fr", [("The dog.", "Le chien.")])
    assert sum(memory.left_out.values()) == 2
    assert len(read_memory(tmp_path / "m.po", fuzzy=True).pairs) == 2
    store = xliff.xlifffile()
    store.setsourcelanguage("en")
    store.addsourceunit("The <g id='1'>dog</g>.").target = "Le chien."
    (tmp_path / "m.xlf").write_bytes(bytes(store))
    with pytest.raises(ValueError, match="m.xlf: the file does not say its target language"):
        read_memory(tmp_path / "m.xlf")
    assert read_memory(tmp_path / "m.xlf", tgt_lang="fr").pairs == [("The dog.", "Le chien.")]


def test_what_it_cannot_use_is_named(tmp_path, capsys):
    (tmp_path / "m.tmx").write_text("not a memory", encoding="utf-8")
    assert main(["data", "import", str(tmp_path / "m.tmx"), "--out", str(tmp_path / "c")]) == 2
    assert "m.tmx: translate-toolkit cannot read it" in capsys.readouterr().err
    assert main(["data", "import", str(tmp_path / "m.csv"), "--out", str(tmp_path / "c")]) == 2
    assert "data import reads .tmx" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_a_memory_of_several_languages_gives_the_pair_asked_for(tmp_path):
    tuvs = "".join(f'<tuv xml:lang="{lang}"><seg>{text}</seg></tuv>' for lang, text in
                   (("en", "The dog."), ("fr", "Le chien."), ("de", "Der Hund.")))
    (tmp_path / "m.tmx").write_text(f'<?xml version="1.0"?><tmx version="1.4"><header srclang="*all*" datatype="plaintext" '
                                    f'segtype="sentence" adminlang="en" o-tmf="x" creationtool="x" creationtoolversion="1"/>'
                                    f"<body><tu>{tuvs}</tu></body></tmx>", encoding="utf-8")
    assert read_memory(tmp_path / "m.tmx", "en", "de").pairs == [("The dog.", "Der Hund.")]
    assert read_memory(tmp_path / "m.tmx", "de", "fr").pairs == [("Der Hund.", "Le chien.")]
    with pytest.raises(ValueError, match="no es segment in it"):
        read_memory(tmp_path / "m.tmx", "en", "es")
    with pytest.raises(ValueError, match=r"it holds de, en, fr: give the source language \(--src-lang one of those\)"):
        read_memory(tmp_path / "m.tmx")


def test_an_earlier_corpus_in_the_folder_is_not_mixed_with_this_one(tmp_path, capsys):
    """A second import into the folder of a first with --dev and --test left the first's dev and test files beside
    the second's train files, silently."""
    from translate.storage import tmx
    memory = tmx.tmxfile(sourcelanguage="en", targetlanguage="fr")
    for en, fr in PAIRS:
        memory.addtranslation(en, "en", fr, "fr")
    (tmp_path / "m.tmx").write_bytes(bytes(memory))
    assert main(["data", "import", str(tmp_path / "m.tmx"), "--out", str(tmp_path / "c"), "--dev", "1", "--test", "1"]) == 0
    before = {f.name: f.read_bytes() for f in (tmp_path / "c").iterdir()}
    assert main(["data", "import", str(tmp_path / "m.tmx"), "--out", str(tmp_path / "c")]) == 2
    assert "holds dev.en, dev.fr, test.en, test.fr, which this import would not write" in capsys.readouterr().err
    assert {f.name: f.read_bytes() for f in (tmp_path / "c").iterdir()} == before
    assert main(["data", "import", str(tmp_path / "m.tmx"), "--out", str(tmp_path / "c"), "--dev", "2", "--test", "1"]) == 0


@pytest.mark.parametrize("states, kept", [(("translated", "final", "signed-off"), 3),
                                          (("needs-review-translation", "new", "translated"), 1)])
def test_xliff_states_say_what_is_reviewed(tmp_path, states, kept):
    body = "".join(f'<trans-unit id="{n}"><source>The dog {n}.</source><target state="{s}">Le chien {n}.</target>'
                   "</trans-unit>" for n, s in enumerate(states))
    ns = "urn:oasis:names:tc:xliff:document:1.2"
    (tmp_path / "m.xlf").write_text(f'<?xml version="1.0"?><xliff version="1.2" xmlns="{ns}"><file original="a" '
                                    f'source-language="en" target-language="fr" datatype="plaintext"><body>{body}'
                                    "</body></file></xliff>", encoding="utf-8")
    assert len(read_memory(tmp_path / "m.xlf").pairs) == kept
    with pytest.raises(ValueError, match="the file says fr, not de"):
        read_memory(tmp_path / "m.xlf", tgt_lang="de")


def test_a_code_between_two_words_leaves_a_space_and_kept_tags_are_the_files(tmp_path):
    """``The file<x id="1"/>is saved.`` was imported as ``The fileis saved.``; with --keep-tags an XLIFF's
    ``<g>`` and ``<x/>`` were lost."""
    tmx = ('<?xml version="1.0"?><tmx version="1.4"><header srclang="en" datatype="plaintext" segtype="sentence" '
           'adminlang="en" creationtool="t" creationtoolversion="1" o-tmf="t"/><body>'
           '<tu><tuv xml:lang="en"><seg>Click<ph x="1">&lt;br/&gt;</ph>Save now.</seg></tuv>'
           '<tuv xml:lang="fr"><seg>Cliquez<ph x="1">&lt;br/&gt;</ph>Enregistrer.</seg></tuv></tu>'
           '<tu><tuv xml:lang="en"><seg>The file<ph x="2"/>is <bpt i="1">&lt;b&gt;</bpt>saved<ept i="1">&lt;/b&gt;</ept>.'
           '</seg></tuv><tuv xml:lang="fr"><seg>Le fichier<ph x="2"/>est enregistré.</seg></tuv></tu></body></tmx>')
    (tmp_path / "m.tmx").write_text(tmx, encoding="utf-8")
    assert read_memory(tmp_path / "m.tmx").pairs == [("Click Save now.", "Cliquez Enregistrer."),
                                                     ("The file is saved.", "Le fichier est enregistré.")]
    assert read_memory(tmp_path / "m.tmx", keep_tags=True).pairs[1][0] == 'The file<ph x="2"/>is <b>saved</b>.'
    xlf = ('<?xml version="1.0"?><xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="x" '
           'source-language="en" target-language="fr" datatype="plaintext"><body><trans-unit id="1"><source>The file'
           '<x id="1"/>is <g id="2">saved</g>.</source><target state="translated">Le fichier<x id="1"/>est '
           '<g id="2">enregistré</g>.</target></trans-unit></body></file></xliff>')
    (tmp_path / "m.xlf").write_text(xlf, encoding="utf-8")
    assert read_memory(tmp_path / "m.xlf").pairs == [("The file is saved.", "Le fichier est enregistré.")]
    assert read_memory(tmp_path / "m.xlf", keep_tags=True).pairs == [
        ('The file<x id="1"/>is <g id="2">saved</g>.', 'Le fichier<x id="1"/>est <g id="2">enregistré</g>.')]
    po = tmp_path / "m.po"
    po.write_text('msgid ""\nmsgstr ""\n"Language: fr\\n"\n\nmsgid "Click<br/>Save."\nmsgstr "Cliquez<br/>Enregistrer."\n',
                  encoding="utf-8")
    assert read_memory(po).pairs == [("Click Save.", "Cliquez Enregistrer.")]


def test_brackets_that_are_no_markup_stay(tmp_path):
    """``The value x&lt;y and a&gt;b is wrong.`` was imported as ``The value xb is wrong.``"""
    tmx = ('<?xml version="1.0"?><tmx version="1.4"><header srclang="en" datatype="plaintext" segtype="sentence" '
           'adminlang="en" creationtool="t" creationtoolversion="1" o-tmf="t"/><body>'
           '<tu><tuv xml:lang="en"><seg>The value x&lt;y and a&gt;b is wrong.</seg></tuv>'
           '<tuv xml:lang="fr"><seg>La valeur x&lt;y et a&gt;b est fausse.</seg></tuv></tu>'
           '<tu><tuv xml:lang="en"><seg>Click &lt;b&gt;Save&lt;/b&gt; &amp; go.</seg></tuv>'
           '<tuv xml:lang="fr"><seg>Cliquez sur &lt;b&gt;Enregistrer&lt;/b&gt; &amp; partez.</seg></tuv></tu></body></tmx>')
    (tmp_path / "m.tmx").write_text(tmx, encoding="utf-8")
    assert read_memory(tmp_path / "m.tmx").pairs == [
        ("The value x<y and a>b is wrong.", "La valeur x<y et a>b est fausse."),
        ("Click Save & go.", "Cliquez sur Enregistrer & partez.")]


def test_the_command_it_prints_can_be_pasted(tmp_path, capsys):
    """Without a dev split the printed command held "(no dev split: ...)" between its flags: a shell refused it."""
    from translate.storage import tmx
    memory = tmx.tmxfile(sourcelanguage="en", targetlanguage="fr")
    for en, fr in PAIRS:
        memory.addtranslation(en, "en", fr, "fr")
    (tmp_path / "m.tmx").write_bytes(bytes(memory))
    assert main(["data", "import", str(tmp_path / "m.tmx"), "--out", str(tmp_path / "c")]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("train on it: ")]
    assert line.endswith("--out RUN") and "(" not in line
