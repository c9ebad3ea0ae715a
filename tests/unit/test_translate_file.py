"""``rnnsearch translate-file`` (text/files.py, text/file_formats.py): each format made by its own library,
translated by the tiny model and read back by that library: the same units, tags and attributes kept,
units already translated untouched, every piece translated; a file it cannot read is one line of error
and no output."""
from __future__ import annotations

import re

import pytest
from lxml import etree

from rnnsearch.cli import main

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
SENTENCES = ["The dog sees a cat.", "A old blue hat takes a hat.", "The tired table calls the pretty letter."]


def run(tiny_run, source, out, *extra):
    return main(["translate-file", str(tiny_run / "best.pt"), str(source), str(out), "--beam", "2", *extra])


def test_po(tiny_run, tmp_path):
    from translate.storage import pypo
    store = pypo.pofile()
    store.init_headers(charset="UTF-8", encoding="8bit")
    for s in SENTENCES[:2]:
        store.addsourceunit(s)
    store.addsourceunit(SENTENCES[2]).target = "déjà traduit"
    (tmp_path / "in.po").write_bytes(bytes(store))
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    units = [u for u in pypo.pofile.parsefile(str(tmp_path / "out.po")).units if not u.isheader()]
    assert [u.source for u in units] == SENTENCES and units[2].target == "déjà traduit" and not units[2].isfuzzy()
    assert all(u.target and u.isfuzzy() for u in units[:2])  # machine translated: marked for review


def test_a_po_accelerator_comes_back_once_and_the_headers_fuzzy_stays(tiny_run, tmp_path):
    """``Press &Quit to exit.`` came out ``Press and Quit de exit.``; the header's ``#, fuzzy`` was dropped."""
    from translate.filters.checks import CheckerConfig, StandardChecker
    from translate.storage import pypo
    store = pypo.pofile()
    store.init_headers(charset="UTF-8", encoding="8bit")
    store.units[0].markfuzzy(True)
    for s in ("The &dog sees a cat.", "_A old blue hat takes a hat.", "The tired table & the pretty letter."):
        store.addsourceunit(s)
    (tmp_path / "in.po").write_bytes(bytes(store))
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    out = pypo.pofile.parsefile(str(tmp_path / "out.po"))
    units = [u for u in out.units if not u.isheader()]
    assert out.units[0].isheader() and out.units[0].isfuzzy()
    assert [u.target.count(m) for u, m in zip(units, "&_&")] == [1, 1, 1], [u.target for u in units]
    for unit, marker in zip(units[:2], "&_"):  # translate-toolkit's own check (pofilter's)
        assert StandardChecker(CheckerConfig(accelmarkers=[marker])).accelerators(unit.source, unit.target)


def test_a_fuzzy_msgstr_is_a_translation_left_alone(tiny_run, tmp_path):
    """A fuzzy unit's msgstr (a person's draft, or a translation to review) was overwritten, and a second run
    translated again everything the first had marked fuzzy."""
    from translate.storage import pypo
    store = pypo.pofile()
    store.init_headers(charset="UTF-8", encoding="8bit")
    draft = store.addsourceunit(SENTENCES[0])
    draft.target = "Le chien voit un chat (à revoir)."
    draft.markfuzzy(True)
    store.addsourceunit(SENTENCES[1])
    (tmp_path / "in.po").write_bytes(bytes(store))
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    units = [u for u in pypo.pofile.parsefile(str(tmp_path / "out.po")).units if not u.isheader()]
    assert units[0].target == "Le chien voit un chat (à revoir)." and units[1].target and units[1].isfuzzy()
    assert run(tiny_run, tmp_path / "out.po", tmp_path / "again.po") == 0
    assert (tmp_path / "again.po").read_bytes() == (tmp_path / "out.po").read_bytes()
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "re.po", "--retranslate") == 0
    redone = [u for u in pypo.pofile.parsefile(str(tmp_path / "re.po")).units if not u.isheader()]
    assert redone[0].target != "Le chien voit un chat (à revoir)."


@pytest.mark.parametrize("version", ["1.2", "2.0"])
def test_xliff_inline_elements_and_translated_units(tiny_run, tmp_path, version):
    if version == "1.2":
        from translate.storage import xliff
        store = xliff.xlifffile()
        store.setsourcelanguage("en")
    else:
        from translate.storage import xliff2
        store = xliff2.Xliff2File()
        store.setsourcelanguage("en")
    unit = store.addsourceunit("x")
    source = unit.get_source_dom()
    ns = etree.QName(source).namespace
    source.text = "The "
    g = etree.SubElement(source, f"{{{ns}}}{'g' if version == '1.2' else 'pc'}", id="1")
    g.text, g.tail = "dog", " sees a cat"
    etree.SubElement(source, f"{{{ns}}}{'x' if version == '1.2' else 'ph'}", id="2").tail = "."
    store.addsourceunit(SENTENCES[1])
    store.addsourceunit(SENTENCES[2]).target = "déjà traduit"
    (tmp_path / "in.xlf").write_bytes(bytes(store))
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf") == 0
    root = etree.parse(str(tmp_path / "out.xlf")).getroot()
    targets = root.findall(".//{*}target")
    assert len(targets) == 3 and targets[2].text == "déjà traduit"
    tags = [(etree.QName(e).localname, e.get("id")) for e in targets[0]]
    assert tags == [(g.tag.split("}")[1], "1"), ("x" if version == "1.2" else "ph", "2")]
    assert "".join(targets[0].itertext()).strip()
    assert targets[1].text and len(root.findall(".//{*}source")) == 3
    if version == "2.0":  # machine output nobody has reviewed
        assert [s.get("state") for s in root.findall(".//{*}segment")][:2] == ["initial", "initial"]



@pytest.mark.parametrize("version", ["1.2", "2.0"])
def test_retranslate_leaves_a_target_signed_off_alone(tiny_run, tmp_path, capsys, version):
    """--retranslate replaced a target marked final (a person's approved translation)."""
    from translate.storage import xliff, xliff2
    store = xliff.xlifffile() if version == "1.2" else xliff2.Xliff2File()
    store.setsourcelanguage("en")
    store.addsourceunit(SENTENCES[0]).target = "brouillon"
    store.addsourceunit(SENTENCES[1]).target = "approuvé"
    store.addsourceunit(SENTENCES[2]).target = "validé"
    data = bytes(store).decode()
    if version == "1.2":
        data = data.replace('state="translated">approuvé', 'state="final">approuvé').replace(
            'state="translated">validé', 'state="signed-off">validé')
    else:
        plain, final = '<segment xml:space="preserve">', '<segment xml:space="preserve" state="final">'
        data = data.replace(plain, final).replace(final, plain, 1)
    (tmp_path / "in.xlf").write_text(data, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf", "--retranslate") == 0
    assert "2 units already translated left as they were" in capsys.readouterr().err
    targets = [t.text for t in etree.parse(str(tmp_path / "out.xlf")).getroot().iter("{*}target")]
    assert targets[0] != "brouillon" and targets[1:] == ["approuvé", "validé"], targets

def test_xliff_native_code_comes_back_as_written(tiny_run, tmp_path):
    (tmp_path / "in.xlf").write_text(
        '<?xml version="1.0" encoding="UTF-8"?><xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
        '<file original="a" source-language="en" datatype="plaintext"><body><trans-unit id="1"><source>The '
        '<bpt id="1">&lt;b class="x"&gt;</bpt>dog<ept id="1">&lt;/b&gt;</ept> sees <ph id="2">{0}</ph> cat.</source>'
        '</trans-unit></body></file></xliff>', encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf") == 0
    (target,) = etree.parse(str(tmp_path / "out.xlf")).getroot().findall(".//{*}target")
    codes = [(etree.QName(e).localname, e.get("id"), e.text, sorted(e.attrib)) for e in target]
    assert sorted(codes) == [("bpt", "1", '<b class="x">', ["id"]), ("ept", "1", "</b>", ["id"]),
                             ("ph", "2", "{0}", ["id"])]


def test_po_placeholders_come_through(tiny_run, tmp_path):
    (tmp_path / "in.po").write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                                    '#, c-format\nmsgid "The dog sees %s and %1$d cats."\nmsgstr ""\n\n'
                                    'msgid "A {count} hat takes %(name)s."\nmsgstr ""\n', encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    from translate.storage import pypo
    units = [u for u in pypo.pofile.parsefile(str(tmp_path / "out.po")).units if not u.isheader()]
    assert "%s" in units[0].target and "%1$d" in units[0].target
    assert "{count}" in units[1].target and "%(name)s" in units[1].target


def test_subtitles_keep_their_cues_times_and_lines(tiny_run, tmp_path):
    import pysrt
    import webvtt
    pysrt.SubRipFile([pysrt.SubRipItem(1, start="00:00:01,000", end="00:00:03,000", text="The dog sees\na cat."),
                      pysrt.SubRipItem(2, start="00:00:04,000", end="00:00:05,500", text="<i>A old blue hat.</i>")]
                     ).save(str(tmp_path / "in.srt"), encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.srt", tmp_path / "out.srt") == 0
    subs = pysrt.open(str(tmp_path / "out.srt"), encoding="utf-8")
    assert [(s.index, str(s.start), str(s.end)) for s in subs] == [(1, "00:00:01,000", "00:00:03,000"),
                                                                     (2, "00:00:04,000", "00:00:05,500")]
    assert len(subs[0].text.splitlines()) == 2 and subs[1].text.startswith("<i>") and subs[1].text.endswith("</i>")
    vtt = webvtt.WebVTT()
    vtt.captions.append(webvtt.Caption("00:00:01.000", "00:00:02.000", SENTENCES[0]))
    vtt.save(str(tmp_path / "in.vtt"))
    assert run(tiny_run, tmp_path / "in.vtt", tmp_path / "out.vtt") == 0
    (caption,) = webvtt.read(str(tmp_path / "out.vtt")).captions
    assert caption.start == "00:00:01.000" and caption.text and caption.text != SENTENCES[0]
    (tmp_path / "in.vtt").write_text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Roger>The <i>dog</i> sees a cat.\n",
                                     encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.vtt", tmp_path / "out.vtt") == 0
    (caption,) = webvtt.read(str(tmp_path / "out.vtt")).captions
    assert caption.raw_text.startswith("<v Roger>") and caption.raw_text.count("<i>") == 1 == caption.raw_text.count("</i>")


def test_a_vtt_cues_timestamps_and_classed_spans_come_through(tiny_run, tmp_path, capsys):
    """``The <00:00:05.500>dog`` came out ``&lt;00 5,500``: a timestamp was read as words; ``<c.loud>`` was an
    element never closed (``</c>`` closed nothing)."""
    import webvtt
    (tmp_path / "in.vtt").write_text("WEBVTT\n\n00:00:05.000 --> 00:00:08.000\nThe <00:00:05.500>dog <00:00:06.500>sees "
                                     "<c.loud.red>a cat</c>.\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.vtt", tmp_path / "out.vtt") == 0
    assert "warning" not in capsys.readouterr().err
    (caption,) = webvtt.read(str(tmp_path / "out.vtt")).captions
    text = caption.raw_text
    assert "<00:00:05.500>" in text and "<00:00:06.500>" in text and "&lt;" not in text, text
    assert text.count("<c.loud.red>") == 1 == text.count("</c>") and "vtt" not in text, text


def test_vtt_tags_read_as_html_and_back():
    from rnnsearch.text.subtitles import vtt_as_html, vtt_from_html
    for cue in ["a <01:02:03.400>b", "<c.x.y-z>a</c> <v.loud Roger Smith>b</v>",
                "<lang.q en>a</lang> <ruby>b<rt>c</rt></ruby>"]:  # a ruby's annotation: kept as written
        assert vtt_from_html(vtt_as_html(cue)) == cue and not re.search(r"<\w+\.|<\d", vtt_as_html(cue))
    assert '<rt translate="no">c</rt>' in vtt_as_html("<ruby>b<rt>c</rt></ruby>")


@pytest.mark.parametrize("suffix", [".srt", ".vtt"])
def test_a_cue_of_dialogue_keeps_each_turn_on_its_line_after_its_dash(tiny_run, tmp_path, suffix):
    """``- Is it agreed?`` ``- Agreed.`` came out ``Est-ce d'accord`` ``? D'accord.``: the turns were joined and cut
    again by length, their dashes lost."""
    times = "00:00:01,000 --> 00:00:03,000" if suffix == ".srt" else "00:00:01.000 --> 00:00:03.000"
    head = "1\n" if suffix == ".srt" else "WEBVTT\n\n"
    (tmp_path / f"in{suffix}").write_text(f"{head}{times}\n- The dog sees a cat.\n-A old blue hat.\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 0
    text = (tmp_path / f"out{suffix}").read_text(encoding="utf-8")
    lines = text.strip().splitlines()[-2:]
    assert lines[0].startswith("- ") and lines[1].startswith("-") and not lines[1].startswith("- "), text


def test_turns_and_lines_never_begin_with_a_closing_mark():
    from rnnsearch.text.subtitles import _rewrapped, turns
    assert turns("- Is it agreed?\n- Agreed.") == [("- ", "Is it agreed?", 1, ""), ("- ", "Agreed.", 1, "")]
    assert turns("Mr. Speaker, I rise\n- Agreed, on\nthe motion.") == [("", "Mr. Speaker, I rise", 1, ""),
                                                                    ("- ", "Agreed, on the motion.", 2, "")]
    assert turns("-10 degrees\ntoday.") == [("", "-10 degrees today.", 2, "")]  # a dash on the first line alone
    assert turns("<v Anna>Where were you?</v>\n<v Ben>At the office.</v>") == [  # a voice a line: a turn each
        ("<v Anna>", "Where were you?", 1, "</v>"), ("<v Ben>", "At the office.", 1, "</v>")]
    assert turns("<v Anna>Where were you?\nAt home.") == [("", "<v Anna>Where were you? At home.", 2, "")]
    from rnnsearch.text.subtitles import written
    assert written(turns("<v Anna>Where?</v>\n<v Ben>At the office, until 9.</v>"), ["Où ?", "Au bureau, jusqu'à 9."]) \
        == "<v Anna>Où ?</v>\n<v Ben>Au bureau, jusqu'à 9.</v>"  # came out "<v Ben>Au\nbureau": wrapped across voices
    assert _rewrapped("Est-ce d'accord ? D'accord.", 2).splitlines()[1][0] not in "?!:;"
    assert _rewrapped("« Oui » dit-il ; « non » : fin !", 3).count("\n") <= 2


def test_a_subtitle_file_read_in_part_is_refused(tiny_run, tmp_path, capsys):
    (tmp_path / "in.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nThe dog.\n\nnot a subtitle\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.srt", tmp_path / "out.srt") == 2
    assert "in.srt: the srt reader cannot read it" in capsys.readouterr().err and not (tmp_path / "out.srt").exists()


def test_docx_runs_keep_their_formatting(tiny_run, tmp_path):
    import docx
    document = docx.Document()
    paragraph = document.add_paragraph("The ")
    paragraph.add_run("dog").bold = True
    paragraph.add_run(" sees a cat.")
    document.add_table(rows=1, cols=1).cell(0, 0).text = SENTENCES[1]
    document.save(str(tmp_path / "in.docx"))
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 0
    out = docx.Document(str(tmp_path / "out.docx"))
    runs = out.paragraphs[0].runs
    assert len(runs) == 3 and runs[1].bold and runs[1].text.strip() and not runs[0].bold
    assert out.tables[0].cell(0, 0).text and out.tables[0].cell(0, 0).text != SENTENCES[1]


def _docx_with_every_story(path):
    """A document with a footnote, a comment, a tracked insertion and a text box Word writes twice (a drawing
    and its VML fallback), made with python-docx and its OPC parts."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import parse_xml
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    mc = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    document = docx.Document()
    paragraph = document.add_paragraph("The dog sees a cat.")
    paragraph._p.append(parse_xml(f'<w:r {w}><w:footnoteReference w:id="1"/></w:r>'))
    document.add_comment(paragraph.runs[0], text=SENTENCES[2], author="reviewer")
    document.add_paragraph()._p.extend([
        parse_xml(f'<w:r {w}><w:t xml:space="preserve">The dog </w:t></w:r>'),
        parse_xml(f'<w:ins {w} w:id="7" w:author="a" w:date="2026-01-01T00:00:00Z"><w:r><w:t>sees a cat.</w:t></w:r>'
                  '</w:ins>'),
        parse_xml(f'<w:del {w} w:id="8" w:author="a" w:date="2026-01-01T00:00:00Z"><w:r><w:delText>a hat</w:delText>'
                  '</w:r></w:del>')])
    box = f'<w:txbxContent><w:p><w:r><w:t>{SENTENCES[1]}</w:t></w:r></w:p></w:txbxContent>'
    document.add_paragraph()._p.append(parse_xml(
        f'<w:r {w} {mc}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>{box}</w:drawing></mc:Choice>'
        f'<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback></mc:AlternateContent></w:r>'))
    notes = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes {w}><w:footnote w:type="separator" '
             f'w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:t>'
             f'{SENTENCES[0]}</w:t></w:r></w:p></w:footnote></w:footnotes>')
    part = Part(PackURI("/word/footnotes.xml"), "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes"
                "+xml", notes.encode(), document.part.package)
    document.part.relate_to(part, RELATIONSHIP_TYPE.FOOTNOTES)
    document.save(str(path))


def test_docx_footnotes_comments_text_boxes_and_insertions_are_translated(tiny_run, tmp_path, capsys):
    """A footnote, a comment, a text box and a tracked insertion were left in English and the file reported
    translated whole; a deletion stays as it was."""
    import docx
    from lxml import etree
    _docx_with_every_story(tmp_path / "in.docx")
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 0
    assert "5 of 5 units translated" in capsys.readouterr().err
    out = docx.Document(str(tmp_path / "out.docx"))
    body = out.element.body
    texts = lambda root, tag: ["".join(t.text for t in p.iter(tag)) for p in root.iter(W + "p")]  # noqa: E731
    inserted = "".join(t.text for t in body.iter(W + "ins") for t in t.iter(W + "t"))
    assert inserted and inserted != "sees a cat." and "".join(t.text for t in body.iter(W + "delText")) == "a hat"
    boxes = [texts(b, W + "t") for b in body.iter(W + "txbxContent")]
    assert len(boxes) == 2 and boxes[0] == boxes[1] and boxes[0][0] not in ("", SENTENCES[1]), boxes
    (comment,) = out.comments
    assert comment.text and comment.text != SENTENCES[2]
    (notes,) = [p for p in out.part.package.iter_parts() if p.partname == "/word/footnotes.xml"]
    note = texts(etree.fromstring(notes.blob), W + "t")
    assert note[0] == "" and note[1] and note[1] != SENTENCES[0], note


def test_text_and_html(tiny_run, tmp_path):
    (tmp_path / "in.txt").write_text(f"{SENTENCES[0]}\n\n{SENTENCES[1]}\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "out.txt") == 0
    lines = (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and lines[1] == "" and lines[0] and lines[2]
    (tmp_path / "in.html").write_text(f"<html><body><ul><li>{SENTENCES[0]}</li><li>{SENTENCES[1]}</li></ul>"
                                      "<!-- kept --></body></html>\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html") == 0
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert page.count("<li>") == 2 and "<!-- kept -->" in page and SENTENCES[0] not in page
    (tmp_path / "in.html").write_text(f'<html lang="en"><body><p>{SENTENCES[0]}</p></body></html>', encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html") == 0
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert 'lang="en"' not in page and page.count("lang=") == 1


@pytest.mark.parametrize("bom, ends, last", [("", ["\r\n", "\r\n", "\r\n"], "\r\n"), ("\ufeff", ["\n", "\r\n", "\n"], ""),
                                             ("\ufeff", ["\r\n", "\n", "\n"], "\n")])
def test_a_text_file_keeps_its_byte_order_mark_and_line_endings(tiny_run, tmp_path, bom, ends, last):
    """Windows' CRLF, mixed endings, a BOM, no newline at the end, a U+2028 inside a line: the output has
    the same lines, each ended as its source line was, and the BOM where the source had it."""
    lines = [SENTENCES[0], "", f"{SENTENCES[1]}\u2028{SENTENCES[2]}", SENTENCES[2]]
    raw = bom + "".join(line + end for line, end in zip(lines, ends + [last]))
    (tmp_path / "in.txt").write_bytes(raw.encode("utf-8"))
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "out.txt") == 0
    out = (tmp_path / "out.txt").read_bytes().decode("utf-8")
    assert out.startswith("\ufeff") == bool(bom) and out.count("\ufeff") == len(bom)
    got = out[len(bom):].split("\n")
    assert len(got) == len(raw[len(bom):].split("\n"))  # no line gained or lost
    assert [g.endswith("\r") for g in got[:-1]] == [e == "\r\n" for e in (ends + [last])[:len(got) - 1]]
    assert got[1] in ("", "\r") and all(g.strip() for g in (got[0], got[2], got[3]))
    assert out.endswith(last) if last else not out.endswith("\n")


@pytest.mark.parametrize("suffix", [".txt", ".srt", ".html", ".po"])
def test_an_empty_file_says_there_is_nothing_to_translate(tiny_run, tmp_path, capsys, suffix):
    (tmp_path / f"in{suffix}").write_text("")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 0
    err = capsys.readouterr().err
    assert f"in{suffix} holds nothing to translate" in err and "0 of 0 units translated" in err
    assert (tmp_path / f"out{suffix}").exists()


def test_paths_it_cannot_use_are_refused_and_the_input_kept(tiny_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text(SENTENCES[0], encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "in.txt") == 2
    assert "would overwrite the input" in capsys.readouterr().err
    assert (tmp_path / "in.txt").read_text(encoding="utf-8") == SENTENCES[0]
    assert run(tiny_run, tmp_path / "no.txt", tmp_path / "out.txt") == 2
    assert "no.txt: no such file" in capsys.readouterr().err
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "none" / "out.txt") == 2
    assert "to write it in" in capsys.readouterr().err


def test_a_file_it_cannot_read_is_one_line_and_no_output(tiny_run, tmp_path, capsys):
    (tmp_path / "in.docx").write_text("not a document")
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 2
    assert "in.docx: the docx reader cannot read it" in capsys.readouterr().err
    assert not (tmp_path / "out.docx").exists()
    (tmp_path / "in.pdf").write_text("x")
    assert run(tiny_run, tmp_path / "in.pdf", tmp_path / "out.pdf") == 2
    assert "translate-file reads .docx" in capsys.readouterr().err
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.po") == 2


@pytest.mark.parametrize("suffix, content, hint", [
    (".vtt", "00:00:01.000 --> 00:00:02.000\nHello.\n", "begins with the line WEBVTT"),
    (".srt", "1\n00:00:01,000 --> 00:00:02,000\nHi.\n\n2\nnot a timing\nNo.\n", "a timing line"),
    (".po", "msgid \"a\"\nmsgstr \"b\"\n" + "garbage \x01\x02 " * 40 + "\n", "msgid/msgstr pairs")])
def test_a_file_its_library_refuses_is_one_short_line_saying_what_it_should_be(tiny_run, tmp_path, capsys, suffix,
                                                                                 content, hint):
    (tmp_path / f"in{suffix}").write_text(content, encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and hint in err and len(err) < 400 and all(c.isprintable() for c in err), err
    assert not (tmp_path / f"out{suffix}").exists()


@pytest.mark.parametrize("suffix", [".srt", ".txt", ".vtt", ".html"])
def test_a_file_not_in_utf8_is_named_with_the_line_and_byte_where_it_stops(tiny_run, tmp_path, capsys, suffix):
    """Latin-1 after a few lines: the error counts from the file's start, not from where its reader
    was decoding (pysrt decodes line by line). (A PO file is translate-toolkit's to decode: it reads
    the charset the header declares.)"""
    head = {".srt": "1\n00:00:01,000 --> 00:00:02,000\n", ".vtt": "WEBVTT\n\n00:01.000 --> 00:02.000\n",
            ".txt": "The dog.\nThe cat.\n", ".html": "<html>\n<body>\n"}[suffix]
    data = head.encode() + "<p>The caf\u00e9 .</p>\n".encode("latin-1")
    (tmp_path / f"in{suffix}").write_bytes(data)
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 2
    err = capsys.readouterr().err.strip()
    at = data.index(0xe9)
    in_line = at - data.rfind(10, 0, at) - 1  # the byte of its line (it was the file's, beside "line 3")
    assert f"line {data.count(10, 0, at) + 1}, byte {in_line} of the line ({at} of the file) is 0xe9" in err, err
    assert "save it as UTF-8" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / f"out{suffix}").exists()


def test_trial_cases(tiny_run, tmp_path, capsys):
    """What a new user's trial found: a .vtt block without its timing refused (it was dropped), an SRT
    cue's override code kept in front, an XLIFF 1.2 target marked needs-translation translated, an
    element of another namespace kept in it, a DOCX hyperlink's text translated in place."""
    (tmp_path / "in.vtt").write_text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nThe dog.\n\n00:00:03.000 -> 00:00:04.000\n"
                                     "A cat.\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.vtt", tmp_path / "out.vtt") == 2
    assert "in.vtt: line 6: no cue timing" in capsys.readouterr().err
    (tmp_path / "in.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\n{\\an8}The dog sees a cat.\n\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.srt", tmp_path / "out.srt") == 0
    assert "\n{\\an8}" in (tmp_path / "out.srt").read_text(encoding="utf-8")
    ns = "urn:oasis:names:tc:xliff:document:1.2"
    (tmp_path / "in.xlf").write_text(
        f'<?xml version="1.0"?><xliff version="1.2" xmlns="{ns}" xmlns:my="urn:my"><file original="a" '
        'source-language="en" datatype="plaintext"><body><trans-unit id="1"><source>The <my:b>dog</my:b> sees a cat.'
        '</source><target state="needs-translation">x</target></trans-unit></body></file></xliff>', encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf") == 0
    (target,) = etree.parse(str(tmp_path / "out.xlf")).getroot().findall(".//{*}target")
    assert target.get("state") == "needs-review-translation" and [e.tag for e in target] == ["{urn:my}b"]
    import docx
    from docx.oxml.ns import qn
    document = docx.Document()
    paragraph = document.add_paragraph("The ")
    link = paragraph._p.makeelement(qn("w:hyperlink"), {})
    link.append(paragraph.add_run("dog")._r)
    paragraph._p.append(link)
    paragraph.add_run(" sees a cat.")
    document.save(str(tmp_path / "in.docx"))
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 0
    out = docx.Document(str(tmp_path / "out.docx")).paragraphs[0]
    assert out.hyperlinks and out.hyperlinks[0].text and "The dog" not in out.text


def test_an_xliff_file_keeps_its_declaration_and_its_last_line_end(tiny_run, tmp_path):
    declaration = '<?xml version="1.0" encoding="UTF-8"?>\n'
    (tmp_path / "in.xlf").write_text(declaration + '<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
                                     '<file original="x" source-language="en" datatype="plaintext"><body>'
                                     f'<trans-unit id="1"><source>{SENTENCES[0]}</source></trans-unit>'
                                     "</body></file></xliff>\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf") == 0
    out = (tmp_path / "out.xlf").read_text(encoding="utf-8")
    assert out.startswith(declaration) and out.endswith("</xliff>\n") and "<target" in out


def test_html_attributes_a_reader_sees_are_translated_on_request(tiny_run, tmp_path):
    """``alt``, ``title``, ``placeholder`` and the page's description stayed English (a translator expects them
    translated); another ``<meta>``'s content stays as written."""
    page = ('<p>The dog sees a <img src="cat.png" alt="The big dog sees a cat." width="3"> and '
            "<a href=\"x.html\" title='A girl paints the red car.'>a hat</a>.</p>\n"
            '<input placeholder="The tired table calls the pretty letter." name="The dog sees a cat.">\n')
    page = ('<html><head><meta name="description" content="A girl sees the dog.">'
            '<meta property="og:title" content="The red car."><meta name="author" content="The big dog.">'
            '<meta name="keywords" content="dog, cat"></head><body>' + page + "</body></html>\n")
    (tmp_path / "in.html").write_text(page, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "plain.html") == 0
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html", "--translate-attributes") == 0
    plain, out = (tmp_path / "plain.html").read_text(), (tmp_path / "out.html").read_text()
    for kept in ('alt="The big dog sees a cat."', "title='A girl paints the red car.'",
                 'placeholder="The tired table calls the pretty letter."', 'content="A girl sees the dog."',
                 'content="The red car."'):
        assert kept in plain and kept not in out
    for same in ('src="cat.png"', 'width="3"', 'href="x.html"', 'name="The dog sees a cat."', 'content="The big dog."',
                 'content="dog, cat"'):
        assert same in out  # every other attribute as written
    assert out.replace("alt=", "").count("=") == plain.replace("alt=", "").count("=")


def test_a_po_msgid_with_html_keeps_its_tags(tiny_run, tmp_path):
    """``Click <a href="x.html">here</a> to vote.`` came out ``J'imagine qu'il s'agit d'un x.html de href =.``"""
    from translate.storage import pypo
    store = pypo.pofile()
    store.init_headers(charset="UTF-8", encoding="8bit")
    store.addsourceunit('The <b>dog</b> sees a <a href="cat.html">cat</a>.')
    (tmp_path / "in.po").write_bytes(bytes(store))
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    [unit] = [u for u in pypo.pofile.parsefile(str(tmp_path / "out.po")).units if not u.isheader()]
    target = str(unit.target)
    assert target.count("<b>") == target.count("</b>") == 1 and '<a href="cat.html">' in target, target


def test_a_po_msgid_with_html_and_placeholders_keeps_both_and_brackets_that_are_no_html_stay_text(tiny_run, tmp_path):
    """``See the <a href="%s">report</a>`` skipped the markup path for its placeholder: the tag became words and an
    orphan ``</a>``; ``Send it to <members@example.org>`` went the markup path and lost its brackets."""
    from translate.storage import pypo
    store = pypo.pofile()
    store.init_headers(charset="UTF-8", encoding="8bit")
    store.addsourceunit('The <b>%s</b> sees a <a href="%s" title="A cat">cat</a>.')
    store.addsourceunit("The dog sees <a@b.org> and {0}.")
    (tmp_path / "in.po").write_bytes(bytes(store))
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    first, second = [str(u.target) for u in pypo.pofile.parsefile(str(tmp_path / "out.po")).units if not u.isheader()]
    assert first.count("<b>%s</b>") == 1 and '<a href="%s" title="A cat">' in first and first.count("</a>") == 1, first
    assert "<a@b.org>" in second and "{0}" in second, second


@pytest.mark.parametrize("suffix,text", [
    (".txt", "The dog sees a cat.\n"), (".html", "<p>The dog sees a cat.</p><p>A old blue hat.</p>"),
    (".srt", "1\n00:00:01,000 --> 00:00:02,000\n<i>The dog sees a cat.</i>\n"),
    (".vtt", "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nThe <b>dog</b> sees a cat.\n")])
def test_every_format_flags_a_unit_below_min_confidence(tiny_run, tmp_path, capsys, suffix, text):
    """The HTML, subtitle, XLIFF and DOCX paths ignored --min-confidence and never named words left out."""
    (tmp_path / f"in{suffix}").write_text(text, encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}", "--min-confidence", "0") == 0
    err = capsys.readouterr().err
    flagged = err.count("low confidence")
    assert flagged == (2 if suffix == ".html" else 1) and "below --min-confidence 0" in err, err
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 0
    assert "low confidence" not in capsys.readouterr().err


def test_a_docx_chart_left_untranslated_is_named(tiny_run, tmp_path, capsys):
    import docx
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    document = docx.Document()
    document.add_paragraph(SENTENCES[0])
    chart = Part(PackURI("/word/charts/chart1.xml"), "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
                 b'<c:chartSpace xmlns:c="c" xmlns:a="a"><a:t>Sales</a:t></c:chartSpace>', document.part.package)
    document.part.relate_to(chart, "http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart")
    document.save(str(tmp_path / "in.docx"))
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 0
    assert "/word/charts/chart1.xml: text this reader does not translate" in capsys.readouterr().err


@pytest.mark.parametrize("suffix,text", [
    (".txt", "Le comité s'est réuni hier.\nIl a adopté le budget de l'année prochaine sans débat.\n"),
    (".html", '<html lang="fr"><p>Le comité s\'est réuni hier.</p><p>Il a adopté le budget sans débat.</p></html>'),
    (".srt", "1\n00:00:01,000 --> 00:00:02,000\nDer Ausschuss hat gestern getagt und den Haushalt angenommen.\n")])
def test_a_file_in_another_language_than_the_models_source_is_refused(tiny_run, tmp_path, capsys, suffix, text):
    """A file translated already (the model's own output given back) or one for the other direction's model came
    out as garbage, reported translated."""
    (tmp_path / f"in{suffix}").write_text(text, encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 2
    err = capsys.readouterr().err
    expected = "German (de" if suffix == ".srt" else "French (fr"
    assert f"reads as {expected}" in err and "not English" in err and "--any-language" in err, err
    assert ("translated already?" in err) == (suffix != ".srt") and not (tmp_path / f"out{suffix}").exists()
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}", "--any-language") == 0


def test_read_as_other_is_sure_or_silent():
    from rnnsearch.text.language import read_as_other
    assert read_as_other("The committee met yesterday and passed the budget.", "en") is None
    assert read_as_other("Click Save.", "en") is None and read_as_other("", "en") is None
    assert read_as_other("Le comité s'est réuni hier et a adopté le budget.", "en")[0] == "fr"
    assert read_as_other("The committee met yesterday and passed the budget.", "fr")[0] == "en"
    assert read_as_other("anything at all", "qq") is None  # a language the identifier does not know


def test_an_html_element_in_another_language_is_left_as_written(tiny_run, tmp_path, capsys):
    """``<p lang="fr">`` in a page given to an English model was translated as English."""
    page = ('<p>The dog sees a cat.</p><p lang="fr">Le chien voit un chat.</p><q lang="de-AT">Der Hund</q>'
            f'<div lang="fr"><p lang="en-GB">{SENTENCES[1]}</p></div><p>{SENTENCES[2]}</p>')
    (tmp_path / "in.html").write_text(page, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html") == 0
    assert "3 of 3 units translated" in capsys.readouterr().err
    out = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert '<p lang="fr">Le chien voit un chat.</p><q lang="de-AT">Der Hund</q>' in out
    assert SENTENCES[1] not in out and '<div lang="fr"><p lang="fr">' in out  # translated: the target's now


def test_an_html_pages_own_lang_is_not_read_and_nothing_translated_writes_the_page_as_it_was(tiny_run, tmp_path,
                                                                                                 capsys):
    """``<html lang="en_US">`` (or a template's ``de`` on an English page) left the page untranslated but stamped
    ``lang="fr"``; a block of ``lang="en_CA"`` was skipped."""
    page = f'<html lang="en_US"><p>{SENTENCES[0]}</p><p lang="en_CA">{SENTENCES[1]}</p><p lang="de">Der Hund.</p></html>'
    (tmp_path / "in.html").write_text(page, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html") == 0
    err = capsys.readouterr().err
    assert "2 of 2 units translated" in err and "1 element in another language than en left as written" in err
    out = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert out.startswith('<html lang="fr">') and '<p lang="fr">' in out and '<p lang="de">Der Hund.</p>' in out
    (tmp_path / "in.html").write_text('<html lang="en"><p lang="de">Der Hund.</p></html>', encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html", "--any-language") == 0
    assert (tmp_path / "out.html").read_text(encoding="utf-8") == '<html lang="en"><p lang="de">Der Hund.</p></html>'


def test_an_xliff_target_goes_after_the_seg_source_as_the_schema_orders(tiny_run, tmp_path):
    """The target was written between ``<source>`` and ``<seg-source>``, which XLIFF 1.2's schema refuses."""
    xlf = ('<?xml version="1.0"?><xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="x" '
           f'source-language="en" datatype="plaintext"><body><trans-unit id="1"><source>{SENTENCES[0]}</source><seg-source>'
           f'<mrk mtype="seg" mid="1">{SENTENCES[0]}</mrk></seg-source><note>n</note></trans-unit><trans-unit id="2">'
           f'<source>{SENTENCES[1]}</source><note>a</note><target state="new"/><note>b</note></trans-unit></body></file>'
           '</xliff>')
    (tmp_path / "in.xlf").write_text(xlf, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf") == 0
    units = list(etree.parse(str(tmp_path / "out.xlf")).getroot().iter("{*}trans-unit"))
    assert [[etree.QName(c).localname for c in u] for u in units] == [["source", "seg-source", "target", "note"],
                                                                      ["source", "note", "target", "note"]]
    (mark,) = units[0].find("{*}target")  # a segmented unit's target segmented as its seg-source (a CAT tool's)
    assert etree.QName(mark).localname == "mrk" and mark.get("mid") == "1" and mark.text and mark.text != SENTENCES[0]


def test_an_element_around_a_slot_alone_goes_around_its_copy_alone(tiny_run, tmp_path):
    """``<span translate="no">House of Commons</span>`` came out ``<span translate="no">House of Commons
    opposition</span>``: the model's words placed inside what was not to be translated."""
    page = ('<p>The dog sees <span translate="no">Bill C-45</span> today.</p><p>The <b>%s</b> sees a '
            '<code>x_y</code> cat.</p>')
    (tmp_path / "in.html").write_text(page, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.html", tmp_path / "out.html") == 0
    out = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert '<span translate="no">Bill C-45</span>' in out and "<b>%s</b>" in out and "<code>x_y</code>" in out, out


def test_a_docx_runs_picture_page_break_and_symbol_stay_with_its_new_text(tiny_run, tmp_path):
    """Writing a run's text cleared the whole run: a picture, a page break and a symbol sharing a run with words
    were lost, the file reported translated whole."""
    import struct
    import zlib

    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import parse_xml

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    (tmp_path / "p.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
                                     + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))
    document = docx.Document()
    document.add_paragraph().add_run("The dog sees a cat: ").add_picture(str(tmp_path / "p.png"))
    document.add_paragraph().add_run(SENTENCES[1]).add_break(WD_BREAK.PAGE)
    paragraph = document.add_paragraph("The ")
    paragraph.add_run("dog").bold = True
    paragraph.add_run(" sees a cat.")._r.append(parse_xml(f'<w:sym xmlns:w="{W[1:-1]}" w:font="Wingdings" w:char="F04A"/>'))
    document.save(str(tmp_path / "in.docx"))
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 0
    out = docx.Document(str(tmp_path / "out.docx"))
    first = out.paragraphs[0].text
    assert len(out.inline_shapes) == 1 and first.strip() and first != "The dog sees a cat: "
    body = out.element.body
    assert [b.get(W + "type") for b in body.iter(W + "br")] == ["page"] and len(list(body.iter(W + "sym"))) == 1


def test_an_srt_cues_ampersand_and_brackets_are_text(tiny_run, tmp_path):
    """``Procter & Gamble`` came out ``Procter &amp; Gamble`` and ``5 < 6`` as ``5 &lt; 6``: SubRip has no entities."""
    import pysrt
    (tmp_path / "in.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nThe dog & a cat see 5 < 6 <i>hats</i>.\n",
                                     encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.srt", tmp_path / "out.srt") == 0
    (cue,) = pysrt.open(str(tmp_path / "out.srt"), encoding="utf-8")
    assert "&amp;" not in cue.text and "&lt;" not in cue.text and "&" in cue.text and "<" in cue.text, cue.text
    assert cue.text.count("<i>") == 1 == cue.text.count("</i>"), cue.text


@pytest.mark.parametrize("suffix,head,error,regional", [
    (".xlf", 'source-language="fr-FR" target-language="en"', "its source-language is fr-FR",
     'source-language="en-GB" target-language="fr-CA"'),
    (".xlf", 'source-language="en" target-language="de"', "its target-language is de",
     'source-language="en" target-language="fr-CA"'),
    (".po", "Language: de_DE", "its Language is de_DE", "Language: fr_CA")])
def test_a_file_declaring_other_languages_than_the_models_is_refused(tiny_run, tmp_path, capsys, suffix, head, error,
                                                                      regional):
    """A French XLIFF was translated as English by an En->Fr model and its target-language rewritten to fr; a German
    catalogue was given French msgstrs."""
    def text(declared: str) -> str:
        if suffix == ".xlf":
            return (f'<?xml version="1.0"?><xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file '
                    f'original="x" {declared} datatype="plaintext"><body><trans-unit id="1"><source>{SENTENCES[0]}'
                    '</source></trans-unit></body></file></xliff>')
        return (f'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"{declared}\\n"\n\n'
                f'msgid "{SENTENCES[0]}"\nmsgstr ""\n')
    (tmp_path / f"in{suffix}").write_text(text(head), encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 2
    assert error in capsys.readouterr().err and not (tmp_path / f"out{suffix}").exists()
    (tmp_path / f"in{suffix}").write_text(text(regional), encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}") == 0
    assert ("fr-CA" if suffix == ".xlf" else "fr_CA") in (tmp_path / f"out{suffix}").read_text(encoding="utf-8")


def test_a_text_files_lines_of_spacing_and_a_lines_own_spacing_stay(tiny_run, tmp_path):
    """A line of a tab came out empty and a form feed before a line was lost."""
    (tmp_path / "in.txt").write_text(f"\t\n   \n\f{SENTENCES[0]}\n  {SENTENCES[1]}\t\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "out.txt") == 0
    lines = (tmp_path / "out.txt").read_text(encoding="utf-8").split("\n")
    assert lines[:2] == ["\t", "   "] and lines[2].startswith("\f") and lines[2][1:2].isalpha()
    assert lines[3].startswith("  ") and lines[3].endswith("\t") and lines[3].strip() != SENTENCES[1]


def test_a_vtt_file_is_written_as_it_was_but_its_cues_text(tiny_run, tmp_path):
    """webvtt-py's writer wrote CRLF as LF, dropped the byte-order mark and a note's text, reordered the header's
    blocks and rewrote timings (00:01.000 as 00:00:01.000)."""
    head = ("\ufeffWEBVTT\r\n\r\nSTYLE\r\n::cue { color: red }\r\n\r\nNOTE a note\r\nof two lines\r\n\r\n"
            "REGION\r\nid:r\r\n\r\n")
    cues = f"c1\r\n00:01.000 --> 00:04.000 line:0\r\n{SENTENCES[0]}\r\n\r\n00:05.000 --> 00:08.000\r\n{SENTENCES[1]}\r\n"
    (tmp_path / "in.vtt").write_bytes((head + cues).encode("utf-8"))
    assert run(tiny_run, tmp_path / "in.vtt", tmp_path / "out.vtt") == 0
    out = (tmp_path / "out.vtt").read_bytes().decode("utf-8")
    assert out.startswith(head) and "c1\r\n00:01.000 --> 00:04.000 line:0\r\n" in out
    assert "\n00:05.000 --> 00:08.000\r\n" in out
    assert SENTENCES[0] not in out and SENTENCES[1] not in out and out.count("\r\n") == (head + cues).count("\r\n")


def test_a_unit_in_another_language_is_left_as_it_was_and_named(tiny_run, tmp_path, capsys):
    """A French line among English ones was translated as English (``La motion est adoptée`` -> ``La motion est donc
    à l'écoute``) and counted translated."""
    french = "La motion est adoptée à l'unanimité."
    english = ["The dog sees a cat and the tired table calls the pretty letter.", SENTENCES[1], SENTENCES[2]]
    (tmp_path / "in.txt").write_text("\n".join([english[0], french, *english[1:]]) + "\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "out.txt") == 0
    err = capsys.readouterr().err
    assert "line 2: reads as French (fr" in err and "3 of 3 units translated; 1 unit in another language" in err
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").split("\n")[1] == french
    assert run(tiny_run, tmp_path / "in.txt", tmp_path / "out.txt", "--any-language") == 0
    assert "4 of 4 units translated" in capsys.readouterr().err


def test_a_latin1_catalogue_is_written_in_utf8_that_reads_back(tiny_run, tmp_path):
    """A catalogue in ISO-8859-1 was written in it with a '#, fuzzy' translate-toolkit could not read back."""
    from translate.storage import pypo
    (tmp_path / "in.po").write_bytes(b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=ISO-8859-1\\n"\n\n'
                                     b'msgid "The dog sees a caf\xe9."\nmsgstr ""\n')
    assert run(tiny_run, tmp_path / "in.po", tmp_path / "out.po") == 0
    out = pypo.pofile.parsefile(str(tmp_path / "out.po"))
    assert "charset=UTF-8" in str(out.units[0].target) and "café" in str(out.units[1].source) and out.units[1].target


def test_an_output_folder_it_cannot_write_in_is_refused_before_the_work(tiny_run, tmp_path, capsys):
    """An output in /proc failed after the whole file was translated."""
    (tmp_path / "in.txt").write_text(SENTENCES[0] + "\n", encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.txt", "/proc/out.txt") == 2
    assert "/proc/out.txt: cannot write in /proc" in capsys.readouterr().err


@pytest.mark.parametrize("suffix,text", [(".txt", "The dog sees a cat.\n"), (".html", "<p>The <b>dog</b> sees a cat.</p>")])
def test_a_glossary_s_terms_are_in_each_units_translation(tiny_run, tmp_path, suffix, text):
    """translate-file had no --glossary: a translator could not give a document its terminology."""
    (tmp_path / "g.tsv").write_text("dog\tmaison\n", encoding="utf-8")
    (tmp_path / f"in{suffix}").write_text(text, encoding="utf-8")
    assert run(tiny_run, tmp_path / f"in{suffix}", tmp_path / f"out{suffix}", "--glossary", str(tmp_path / "g.tsv")) == 0
    assert "maison" in (tmp_path / f"out{suffix}").read_text(encoding="utf-8")


def test_an_xliff_span_marked_not_to_translate_comes_through_verbatim(tiny_run, tmp_path):
    """``<mrk mtype="protected">House of Commons</mrk>`` came out ``<mrk ...>Chambre des communes ont</mrk>``."""
    xlf = ('<?xml version="1.0"?><xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2" '
           'xmlns:its="http://www.w3.org/2005/11/its"><file original="x" source-language="en" datatype="plaintext">'
           '<body><trans-unit id="1"><source>The <mrk mtype="protected">dog</mrk> sees a cat.</source></trans-unit>'
           '<trans-unit id="2"><source>The dog sees a <mrk mtype="x" its:translate="no">cat</mrk>.</source>'
           '</trans-unit></body></file></xliff>')
    (tmp_path / "in.xlf").write_text(xlf, encoding="utf-8")
    assert run(tiny_run, tmp_path / "in.xlf", tmp_path / "out.xlf") == 0
    marks = [(m.text, "".join(t.itertext())) for t in etree.parse(str(tmp_path / "out.xlf")).getroot().iter("{*}target")
             for m in t.iter("{*}mrk")]
    assert [m for m, _ in marks] == ["dog", "cat"] and all(whole.strip() not in ("dog", "cat") for _, whole in marks)


def test_a_docx_runs_language_mark_names_the_target_once_translated(tiny_run, tmp_path):
    """Translated runs kept ``w:lang w:val="en-US"``: Word spell-checked the French as English."""
    import docx
    from docx.oxml import parse_xml
    document = docx.Document()
    run_ = document.add_paragraph().add_run(SENTENCES[0])
    run_._r.get_or_add_rPr().append(parse_xml(f'<w:lang xmlns:w="{W[1:-1]}" w:val="en-US" w:eastAsia="ja-JP"/>'))
    document.save(str(tmp_path / "in.docx"))
    assert run(tiny_run, tmp_path / "in.docx", tmp_path / "out.docx") == 0
    (mark,) = docx.Document(str(tmp_path / "out.docx")).element.body.iter(W + "lang")
    assert mark.get(W + "val") == "fr" and mark.get(W + "eastAsia") == "ja-JP"


def test_a_translated_attribute_escapes_only_its_own_quote():
    """``aujourd'hui`` in a double-quoted ``content`` came out ``aujourd&#x27;hui``."""
    from rnnsearch.text.attributes import quoted
    assert quoted("aujourd'hui & « x < y »", '"') == '"aujourd\'hui &amp; « x &lt; y »"'
    assert quoted('aujourd\'hui "oui"', "'") == "'aujourd&#x27;hui \"oui\"'"
    assert quoted('dit "oui"', '"') == '"dit &quot;oui&quot;"'
