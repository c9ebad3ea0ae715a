"""Fill the token cache of a corpus's training split with Moses tokens on many cores at once (a
lent GPU machine has 16; `rnnsearch train` tokenises on one): the same files, named the same way,
as rnnsearch.data.tokenize.pretokenize_lines writes.

    python recipes/device/pretok.py DATA_DIR CACHE_DIR [--name-only]
"""
import sys
from multiprocessing import Pool

from rnnsearch.data.io import corpus_file, read_parallel
from rnnsearch.data.tokenize import pretokenize, token_cache_path, write_token_cache

CHUNK = 10000  # lines per task


def tokenize_chunk(args):
    lang, lines = args
    return [pretokenize(t, "moses", lang) for t in lines]


def main() -> int:
    data, cache, name_only = sys.argv[1], sys.argv[2], "--name-only" in sys.argv[3:]
    src, tgt = read_parallel(corpus_file(data, "train", "en"), corpus_file(data, "train", "fr"))
    for lang, lines in (("en", src), ("fr", tgt)):
        path = token_cache_path(lines, "moses", lang, cache)
        print(path, len(lines), flush=True)
        if name_only:
            continue
        with Pool() as pool:
            parts = pool.map(tokenize_chunk, [(lang, lines[i:i + CHUNK]) for i in range(0, len(lines), CHUNK)])
        if not write_token_cache(path, [toks for part in parts for toks in part], lang, print):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
