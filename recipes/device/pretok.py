"""Fill the token cache of the Hansards training corpus with Moses tokens, in parallel (device prep)."""
import hashlib, sys
from multiprocessing import Pool
from pathlib import Path
import sacremoses
from rnnsearch.data.io import corpus_file, read_parallel
from rnnsearch.data.tokenize import SEPARATOR, pretokenize

def tok(args):
    lang, lines = args
    return [pretokenize(t, "moses", lang) for t in lines]

def digest_path(cache, lang, lines):
    d = hashlib.sha256("\n".join(lines).encode("utf-8"))
    d.update(f"|moses|{lang}|sacremoses {getattr(sacremoses, '__version__', '?')}|{len(lines)}".encode())
    return Path(cache) / f"tokens-{lang}-{d.hexdigest()[:24]}.txt"

if __name__ == "__main__":
    data, cache, only_name = sys.argv[1], sys.argv[2], len(sys.argv) > 3
    src, tgt = read_parallel(corpus_file(data, "train", "en"), corpus_file(data, "train", "fr"))
    for lang, lines in (("en", src), ("fr", tgt)):
        path = digest_path(cache, lang, lines)
        print(path, len(lines), flush=True)
        if only_name:
            continue
        chunks = [(lang, lines[i:i + 10000]) for i in range(0, len(lines), 10000)]
        with Pool(15) as p:
            tokens = [t for part in p.map(tok, chunks) for t in part]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(SEPARATOR.join(t) + "\n" for t in tokens), encoding="utf-8")
