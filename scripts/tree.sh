#!/bin/bash
# Build the working tree: out/linux on branch 'series' = base + 'git am' of
# each posting of patches/ in order (cover letters skipped; branch
# posting/NAME marks where each but the last ends), committed with the project
# identity and each patch's own date so that the commit ids are
# reproducible. Refuses to throw away commits or changes that were not
# exported (FORCE=1 overrides).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git

"$TOP/scripts/base.sh"
cd "$KTREE" || exit
export GIT_COMMITTER_NAME="$PROJ_NAME" GIT_COMMITTER_EMAIL="$PROJ_EMAIL"

stamp=$OUT/series.applied
if git rev-parse -q --verify refs/heads/series >/dev/null && [ "${FORCE:-0}" != 1 ]; then
	if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
		die "out/linux has uncommitted changes: commit them and run 'make export', or FORCE=1"
	fi
	if [ "$(git rev-parse series)" != "$(cat "$stamp" 2>/dev/null)" ] &&
	   ! git diff --quiet "$(cat "$stamp" 2>/dev/null || echo base)" series; then
		die "branch series has commits that are not in patches/: run 'make export' first, or FORCE=1"
	fi
fi

git am --abort >/dev/null 2>&1 || true
prev=$(git rev-parse -q --verify series || git rev-parse base)
git checkout -q -f -B series base
shopt -s nullglob
for posting in "${POSTINGS[@]}"; do
	pats=("$TOP/patches/$posting"/[0-9][0-9][0-9][0-9]-*.patch)
	[ "${#pats[@]}" -gt 1 ] || die "no patches in patches/$posting"
	for p in "${pats[@]}"; do
		[ "${p##*/}" != 0000-cover-letter.patch ] || continue
		if ! git am -q --committer-date-is-author-date "$p" >"$OUT/am.log" 2>&1; then
			git am --abort >/dev/null 2>&1 || true
			git checkout -q -f -B series "$prev"
			die "patch $posting/$(basename "$p") does not apply (branch series left as it was): $(grep -m1 -E '^(error|Patch failed)' "$OUT/am.log")"
		fi
	done
	[ "$(posting_ref "$posting")" = series ] || git branch -f "posting/$posting" HEAD
done
git rev-parse series >"$stamp"
echo "tree: $(git rev-list --count base..series) patches in ${#POSTINGS[@]} postings on base $(git rev-parse --short base) in $KTREE"
