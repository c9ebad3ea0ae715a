#!/bin/bash
# Stage the Hansards experiment for a lent GPU machine (the workplace's device tool, which sends the
# working tree and the ignored folders named in `carry`, 64 MiB in all, and reaches no registry):
# .gpu/ gets the wheels that machine's image lacks, the corpus xz-compressed (40 MB; gzip's 64 MB
# would not fit), dev/test/newstest/WPT, the two scripts, and the last 447 lines of eflomal's links
# from an earlier `experiments/aer.py` run (runs/aer), for `aer.py --reuse`.
# Then, on the device: `bash .gpu/go.sh TESTS(0|1) MINUTES "hansards newstest2014" [BATCH_SIZES]` with carry [".gpu"].
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -q '^/.gpu/' "$(git rev-parse --git-dir)/info/exclude" 2>/dev/null || echo /.gpu/ >> "$(git rev-parse --git-dir)/info/exclude"
mkdir -p .gpu/whl .gpu/data/hansards .gpu/aer
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/whl \
  pydantic==2.14.3 pydantic_core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5 sacremoses==0.2.0 typing_extensions
cp ../shared/data/hansards/{dev,test}.* .gpu/data/hansards/
cp -r ../shared/data/wmt14 ../shared/data/alignment .gpu/data/
for lang in en fr; do zcat "../shared/data/hansards/train.$lang.gz" | xz -6 -T2 > ".gpu/data/hansards/train.$lang.xz"; done
cp recipes/device/go.sh recipes/device/pretok.py .gpu/
if [ -f runs/aer/fwd ]; then
  tail -n 447 runs/aer/fwd > .gpu/aer/fwd; tail -n 447 runs/aer/rev > .gpu/aer/rev; cp runs/aer/eflomal.200000.seconds .gpu/aer/
fi
du -sh .gpu
