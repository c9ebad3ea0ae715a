#!/usr/bin/env bash
# What a submission's diffs add up to, as the workplace counts them: every commit since BASE as text
# (`git show --text`), plus what is changed, staged or untracked but not committed yet. A submission
# takes at most 256 MiB of them, and a binary file replaced counts twice (its old bytes removed, its
# new ones added): a release replaced under models/ counts twice, so check it before stopping.
# Usage: recipes/diff_size.sh BASE   (BASE: the commit the session started from, the newest landed)
set -euo pipefail
base=${1:?usage: recipes/diff_size.sh BASE (the commit this session started from)}
limit_mib=${LIMIT_MIB:-256}  # the workplace's limit; a test sets a smaller one
limit=$((limit_mib * 1024 * 1024))
mib() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1048576 }'; }
committed=0
for c in $(git rev-list "$base"..HEAD); do
  n=$(git show --text --format= "$c" | wc -c)
  committed=$((committed + n))
  printf '%10s MiB  %s\n' "$(mib "$n")" "$(git log -1 --format='%h %s' "$c" | cut -c1-90)"
done
pending=$(git diff --text HEAD | wc -c)
untracked=$(git ls-files --others --exclude-standard -z | xargs -0 -r cat | wc -c)
total=$((committed + pending + untracked))
echo "committed since $(git rev-parse --short "$base"): $(mib $committed) MiB; not committed: $(mib $pending) MiB changed," \
  "$(mib $untracked) MiB untracked; in all $(mib $total) MiB ($total bytes) of $limit_mib MiB"
if [ "$total" -gt "$limit" ]; then
  echo "over the limit: a submission of this is refused whole" >&2
  exit 1
fi
