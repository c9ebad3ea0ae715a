"""The checks of a request against the server's limits (serve/settings.py), each refusal a ServeError
naming the limit or field."""
from __future__ import annotations

from rnnsearch.serve.errors import ServeError
from rnnsearch.serve.schemas import TranslateRequest
from rnnsearch.serve.settings import ServeSettings


def check(texts: list[str], field: str, s: ServeSettings, where=None, blank: bool = False) -> None:
    """The request's size and its source texts; ``where(i)`` names text i (default text / texts[i]);
    ``blank``: a blank text is allowed (it gets an empty translation)."""
    where = where or (lambda i: field if field == "text" else f"{field}[{i}]")
    if not texts:
        raise ServeError(422, "invalid_request", f"'{field}' is empty: give at least one", field=field)
    if len(texts) > s.max_texts:
        raise ServeError(413, "max_texts", f"{len(texts)} texts in one request; at most {s.max_texts}",
                         "max_texts", s.max_texts, field)
    for i, text in enumerate(texts):
        if not text.strip() and not blank:
            raise ServeError(422, "empty_text", f"{where(i)} is empty", field=where(i))
        check_text(text, where(i), s)


def check_search(search, s: ServeSettings) -> None:
    """The server's limit on the search (resolved SearchSettings, which check themselves)."""
    if search.beam > s.max_beam:
        raise ServeError(422, "max_beam", f"beam {search.beam} is over the limit {s.max_beam}", "max_beam",
                         s.max_beam, "beam")
    if search.sampling and search.n_best > s.max_beam:
        raise ServeError(422, "max_beam", f"n_best {search.n_best} draws per sentence are over the limit "
                         f"{s.max_beam}", "max_beam", s.max_beam, "n_best")


def prefixes(req: TranslateRequest, count: int, s: ServeSettings) -> list[str] | None:
    """The request's prefixes, one per text, checked (None: none)."""
    if req.prefix is None and req.prefixes is None:
        return None
    if req.prefix is not None:
        check_text(req.prefix, "prefix", s)
        return [req.prefix]
    if len(req.prefixes) != count:
        raise ServeError(422, "invalid_request", f"{len(req.prefixes)} prefixes for {count} texts: give one "
                         "per text ('' for none)", field="prefixes")
    for i, prefix in enumerate(req.prefixes):
        check_text(prefix, f"prefixes[{i}]", s)
    return req.prefixes


def check_text(text: str, where: str, s: ServeSettings) -> None:
    bad = next((i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:  # JSON escapes can carry them; they are not text and cannot be encoded
        raise ServeError(422, "invalid_text", f"{where} holds a lone surrogate (U+{ord(text[bad]):04X}) at "
                         f"character {bad}: not Unicode text", field=where)
    if len(text) > s.max_chars:
        raise ServeError(413, "max_chars", f"{where} has {len(text)} characters; at most {s.max_chars}",
                         "max_chars", s.max_chars, where)


def check_targets(targets: list[str], one: bool, s: ServeSettings) -> None:
    """A target may be blank (it scores p(</s> | source)), but not over the limits."""
    for i, text in enumerate(targets):
        check_text(text, "target" if one else f"pairs[{i}].target", s)


def check_units(units: list[list[str]], field: str, limit: int, where=None) -> None:
    where = where or (lambda i: field if field == "text" else f"{field}[{i}]")
    for i, u in enumerate(units):
        if len(u) > limit:
            raise ServeError(413, "max_src_len", f"{where(i)} has {len(u)} source tokens; the model reads at "
                             f"most {limit} (decode.max_src_len)", "decode.max_src_len", limit, where(i))
