"""Text <-> model units for one language: Moses (sacremoses) words or SentencePiece pieces."""
from __future__ import annotations

import io
import os
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from itertools import chain
from pathlib import Path

from rnnsearch.data.vocab import (BOS, BOS_TOKEN, EOS, EOS_TOKEN, PAD, PAD_TOKEN, SPECIALS, UNK, UNK_TOKEN,
                                  Vocab)

SPACE_PIECE = "\u2581"  # SentencePiece's word start (a piece of its own before a slot)


@lru_cache(maxsize=None)
def _moses(lang: str):
    from sacremoses import MosesDetokenizer, MosesTokenizer
    return MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


def pretokenize(text: str, kind: str, lang: str) -> list[str]:
    """Word tokens: Moses (no escaping, no lowercasing) or plain whitespace."""
    if kind == "space":
        return text.split()
    return _moses(lang)[0].tokenize(text, escape=False)


SEPARATOR = "\x1f"  # between the tokens of a line in the token cache (Moses tokens never hold one: checked)


def pretokenize_lines(lines: list[str], kind: str, lang: str, cache_dir: str = "", log=None) -> list[list[str]]:
    """``pretokenize`` of every line. With ``cache_dir``, the result is kept in a file named by
    the lines' content, the tokenizer and the language, and read from there next time (Moses
    tokenises ~12,000 lines/s on one core: a 1M-pair corpus costs minutes at every start)."""
    if not cache_dir or kind == "space":
        return [pretokenize(t, kind, lang) for t in lines]
    path = token_cache_path(lines, kind, lang, cache_dir)
    if path.exists():
        cached = path.read_text(encoding="utf-8").split("\n")[:-1]
        if len(cached) == len(lines):
            return [line.split(SEPARATOR) if line else [] for line in cached]
        if log:
            log(f"{path}: {len(cached)} lines for {len(lines)} sentences; tokenising again")
    tokens = [pretokenize(t, kind, lang) for t in lines]
    write_token_cache(path, tokens, lang, log)
    return tokens


def token_cache_path(lines: list[str], kind: str, lang: str, cache_dir: str | Path) -> Path:
    """The token cache's file for these lines: named by their content, the tokenizer, the language
    and sacremoses' version."""
    import hashlib
    import sacremoses
    digest = hashlib.sha256("\n".join(lines).encode("utf-8"))
    digest.update(f"|{kind}|{lang}|sacremoses {getattr(sacremoses, '__version__', '?')}|{len(lines)}".encode())
    return Path(cache_dir) / f"tokens-{lang}-{digest.hexdigest()[:24]}.txt"


def write_token_cache(path: Path, tokens: list[list[str]], lang: str, log=None) -> bool:
    """Write the tokens of every line to ``path`` (whole or absent); False, writing nothing, when a
    token holds the separator or a newline."""
    if any(SEPARATOR in tok or "\n" in tok for toks in tokens for tok in toks):
        if log:
            log(f"token cache: a token holds U+001F or a newline; {lang} not cached")
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(SEPARATOR.join(toks) + "\n" for toks in tokens), encoding="utf-8")
    os.replace(tmp, path)  # whole or absent, also when two trainers cache the same corpus
    if log:
        log(f"token cache: wrote {path} ({len(tokens)} lines)")
    return True


def _currency(token: str) -> bool:
    """$, €, £, ...: a token of currency signs, which Moses detokenises as a prefix."""
    return all(unicodedata.category(c) == "Sc" for c in token)


def detokenize(tokens: list[str], kind: str, lang: str) -> str:
    """Words -> text. Moses attaches a currency sign to the token after it, which is right for a
    prefix ("$ 5" -> "$5") and wrong where the sign follows the amount, as in French ("5 $ de"
    became "5 $de"): here a sign joins the next token only when that token is a number, and
    otherwise stands as a word of its own (punctuation still attaches to it)."""
    if kind == "space":
        return " ".join(tokens)
    tokens = [QUOTES.get(t, t) if lang == "en" or t in ("``", "''") else t for t in _quote_tokens(tokens)]
    marks: dict[str, str] = {}  # sign -> a private-use character Moses treats as a plain word
    words = [marks.setdefault(t, chr(0xE000 + len(marks)))
             if _currency(t) and not (i + 1 < len(tokens) and tokens[i + 1][:1].isdigit()) else t
             for i, t in enumerate(tokens)]
    text = _moses(lang)[1].detokenize(words)
    for sign, mark in marks.items():
        text = text.replace(mark, sign)
    return text


QUOTES = {"``": '"', "''": '"', "«": '"', "»": '"'}  # the Hansards' English quotes (``so'') and a copied « in
# English, as plain quotes (a reader's "so"; Moses pairs them); ``'' in any language


def _quote_tokens(tokens: list[str]) -> list[str]:
    """The quotes among the tokens: two apostrophes in a row as one closing quote, ``''``
    (the Hansards' English quotes ``like this'', which Moses' tokenizer cuts in two: the model wrote
    ``grounds' '``), and an opening ``````` cut from the word it is glued to (which that tokenizer leaves
    on it: the model wrote ``````We are back' '``)."""
    out: list[str] = []
    for t in tokens:
        if t == "'" and out and out[-1] == "'":
            out[-1] = "''"
        elif t.startswith("``") and len(t) > 2:
            out += ["``", t[2:]]
        else:
            out.append(t)
    return out


def train_sentencepiece(lines: Iterable[str], size: int, model_type: str, seed_sentences: int = 2_000_000) -> bytes:
    """Train a SentencePiece model on raw lines; returns the serialized model.
    Ids 0-3 are our specials, so piece ids are vocabulary ids."""
    import sentencepiece as spm
    from rnnsearch.data.io import DataError
    buf = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(line for line in lines if line.strip()), model_writer=buf,
            vocab_size=size, model_type=model_type, character_coverage=1.0,
            pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS, pad_piece=PAD_TOKEN, unk_piece=UNK_TOKEN,
            bos_piece=BOS_TOKEN, eos_piece=EOS_TOKEN, hard_vocab_limit=False,
            input_sentence_size=seed_sentences, shuffle_input_sentence=True, num_threads=2,
            minloglevel=2)
    except RuntimeError as err:  # SentencePiece's own words, with a C++ file and line before them
        raise DataError(_sentencepiece_error(str(err), size)) from None
    return buf.getvalue()


def _sentencepiece_error(said: str, size: int) -> str:
    """SentencePiece's training error as one line that says what to change."""
    small = re.search(r"Vocabulary size is smaller than required_chars\. \d+ vs (\d+)", said)
    if small:
        return (f"vocab.size {size} is too small for a SentencePiece vocabulary of this text: its {small.group(1)} "
                "distinct characters each need a piece of their own, beside the 4 special ones; give a larger vocab.size")
    if "sentences_.empty()" in said:
        return "no text to train the SentencePiece vocabulary on: the training lines are empty"
    return f"SentencePiece could not train a vocabulary of {size} pieces: {said.splitlines()[-1].strip()}"


class TextCodec:
    """One language's pipeline: ``units(text)`` is what the model reads or writes,
    ``words(text)`` the word tokens used for sentence lengths, ``decode(ids)`` detokenised text."""

    def __init__(self, lang: str, tokenizer: str, vocab: Vocab, sp_proto: bytes | None = None):
        self.lang = lang
        self.tokenizer = tokenizer
        self.vocab = vocab
        self.sp_proto = sp_proto
        self._sp = None
        if sp_proto is not None:
            import sentencepiece as spm
            self._sp = spm.SentencePieceProcessor(model_proto=sp_proto)

    @property
    def mode(self) -> str:
        return "word" if self._sp is None else "sentencepiece"

    def words(self, text: str) -> list[str]:
        if not text.isascii() and not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)  # "é" written e + its accent (macOS, PDFs): the model's é
        return pretokenize(text, self.tokenizer, self.lang)

    def units(self, text: str) -> list[str]:
        if self._sp is None:
            return self.words(text)
        return self._sp.encode(text, out_type=str)

    def units_of(self, lines: list[str], cache_dir: str = "", log=None) -> list[list[str]]:
        """``units`` of every line; word mode reads and fills the token cache in ``cache_dir``."""
        if self._sp is None:
            return pretokenize_lines(lines, self.tokenizer, self.lang, cache_dir, log)
        return [self.units(t) for t in lines]

    def encode(self, text: str) -> list[int]:
        return self.vocab.encode(self.units(text))

    def units_to_text(self, units: list[str]) -> str:
        if self._sp is None:
            return detokenize(units, self.tokenizer, self.lang)
        return self._sp.decode_pieces(units)

    def decode(self, ids) -> str:
        return self.units_to_text(self.vocab.decode(ids))

    def has_unk(self, text: str) -> bool:
        """True when some unit of ``text`` is outside the vocabulary (maps to <unk>)."""
        return self.vocab.has_unk(self.units(text))

    def to_state(self) -> dict:
        return {"lang": self.lang, "tokenizer": self.tokenizer, "itos": self.vocab.itos,
                "sp_proto": self.sp_proto}

    @classmethod
    def from_state(cls, state: dict) -> "TextCodec":
        return cls(state["lang"], state["tokenizer"], Vocab(state["itos"]), state.get("sp_proto"))


def load_sentencepiece(path: str) -> bytes:
    """A trained SentencePiece model file whose ids 0-3 are our specials."""
    import sentencepiece as spm
    from rnnsearch.config import ConfigError
    try:
        proto = Path(path).read_bytes()
        sp = spm.SentencePieceProcessor(model_proto=proto)
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"vocab.sp_model: cannot load {path}: {exc}") from None
    pieces = [sp.id_to_piece(i) for i in range(min(4, sp.get_piece_size()))]
    if pieces != SPECIALS:
        raise ConfigError(f"vocab.sp_model: {path} has {pieces} as ids 0-3, rnnsearch needs {SPECIALS} "
                          "(train it with rnnsearch.tokenize.train_sentencepiece or the same ids)")
    return proto


def build_codecs(vocab_cfg, data_cfg, src_lines: list[str], tgt_lines: list[str], log=None):
    """Build the source and target codecs from training text, as ``vocab_cfg`` says.
    Returns (src_codec, tgt_codec, src_units, tgt_units) with the units of every line."""
    src_lang, tgt_lang, tok = data_cfg.src_lang, data_cfg.tgt_lang, data_cfg.tokenizer
    if vocab_cfg.mode == "word":
        src_units = pretokenize_lines(src_lines, tok, src_lang, data_cfg.token_cache, log)
        tgt_units = pretokenize_lines(tgt_lines, tok, tgt_lang, data_cfg.token_cache, log)
        src = TextCodec(src_lang, tok, Vocab.build(src_units, vocab_cfg.size, vocab_cfg.min_freq))
        tgt = TextCodec(tgt_lang, tok, Vocab.build(tgt_units, vocab_cfg.size, vocab_cfg.min_freq))
        return src, tgt, src_units, tgt_units
    src_proto, tgt_proto = sentencepiece_protos(vocab_cfg, src_lines, tgt_lines)
    src, tgt = sentencepiece_codec(src_lang, tok, src_proto), sentencepiece_codec(tgt_lang, tok, tgt_proto)
    return src, tgt, [src.units(t) for t in src_lines], [tgt.units(t) for t in tgt_lines]


def sentencepiece_protos(vocab_cfg, src_lines: Iterable[str], tgt_lines: Iterable[str]) -> tuple[bytes, bytes]:
    """The source and target SentencePiece models: ``vocab.sp_model``, or trained on the lines
    (each iterable is read once: lists, or lines streamed from the files)."""
    if vocab_cfg.sp_model:
        proto = load_sentencepiece(vocab_cfg.sp_model)
        return proto, proto
    if vocab_cfg.joint:
        proto = train_sentencepiece(chain(src_lines, tgt_lines), vocab_cfg.size, vocab_cfg.sp_type)
        return proto, proto
    return (train_sentencepiece(src_lines, vocab_cfg.size, vocab_cfg.sp_type),
            train_sentencepiece(tgt_lines, vocab_cfg.size, vocab_cfg.sp_type))


def sentencepiece_codec(lang: str, tokenizer: str, proto: bytes) -> TextCodec:
    """A codec whose vocabulary is the model's pieces, in id order."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_proto=proto)
    return TextCodec(lang, tokenizer, Vocab([sp.id_to_piece(i) for i in range(sp.get_piece_size())]), proto)
