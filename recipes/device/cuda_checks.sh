#!/bin/bash
# The CUDA checks of the features that came after the first GPU runs (guided alignment, the
# alignment head, the posterior and Shift-Att readings, prefix decoding, sampling, scoring), on a lent
# GPU machine (the workplace's device tool). Stage here, with network:
#   mkdir -p .gpu/whl .gpu/data && python3 -m pip download --no-deps --only-binary=:all: \
#     --python-version 3.12 --implementation cp --platform manylinux_2_17_x86_64 -d .gpu/whl \
#     pydantic pydantic_core annotated-types typing-inspection sacremoses typing_extensions
#   cp -r ../shared/data/alignment .gpu/data/
# then there, with carry [".gpu"]: `bash recipes/device/cuda_checks.sh`. Writes $OUT/cuda_tests.txt.
# RNNSEARCH_TEST_DEVICE=cuda makes CUDA the tests' default device (tests/conftest.py), and the
# trainer's `train.device: auto` puts the tests' training runs on the GPU.
set -u
say() { echo "[cuda $(date -u +%H:%M:%S)] $*" | tee -a "$OUT/cuda.log"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
mkdir -p /tmp/bin
printf '#!/bin/sh\nexec python3 -m rnnsearch "$@"\n' > /tmp/bin/rnnsearch; chmod +x /tmp/bin/rnnsearch
export PATH=/tmp/bin:$PATH
mkdir -p ../shared && ln -sfn "$PWD/.gpu/data" ../shared/data
say "$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader); $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)')"
TESTS="tests/unit/test_guided.py tests/unit/test_align_head.py tests/unit/test_alignment.py
  tests/property/test_posterior.py tests/property/test_prefix.py tests/property/test_sampling.py
  tests/property/test_scoring.py tests/unit/test_speedups.py tests/property/test_attention.py
  tests/property/test_search.py"
say "tests on cuda: $(echo $TESTS | wc -w) files"
# shellcheck disable=SC2086
RNNSEARCH_TEST_DEVICE=cuda timeout "${LIMIT:-360}" python3 -m pytest -q -p no:cacheprovider -rfE \
  --durations=8 $TESTS > "$OUT/cuda_tests.txt" 2>&1
say "tests exit $?: $(tail -n 1 "$OUT/cuda_tests.txt")"
