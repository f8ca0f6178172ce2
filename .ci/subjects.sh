#!/usr/bin/env bash
# Fails when a commit subject is longer than 72 characters, the width
# `git log --oneline` and most review tools show without cutting.
#
#   .ci/subjects.sh [BASE]    # checks BASE..HEAD; BASE defaults to 91f39bc
#
# The history before 91f39bc holds long subjects that stay, as rewriting
# commits already on main is not an option; every commit after it is held
# to the limit, merges included.
set -euo pipefail
cd "$(dirname "$0")/.."
# Count characters, not bytes, whatever locale CI runs in.
export LC_ALL=C.UTF-8

base="${1:-91f39bc}"
max=72

if ! git rev-parse --quiet --verify "$base^{commit}" >/dev/null; then
	# A shallow clone may not reach the base: check what it has of the
	# newest commit rather than fail on history that is not there.
	echo "subjects: $base is not in this clone's history; checking HEAD only" >&2
	range=(-1 HEAD)
else
	range=("$base..HEAD")
fi

bad=$(git log --format='%h %s' "${range[@]}" |
	while IFS= read -r line; do
		subject="${line#* }"
		if ((${#subject} > max)); then
			printf '  %s (%d characters)\n' "$line" "${#subject}"
		fi
	done)
if [[ -n $bad ]]; then
	printf 'commit subjects over %d characters (reword them, e.g. with git rebase -i):\n%s\n' "$max" "$bad" >&2
	exit 1
fi
