#!/bin/bash
# Re-export patches/ from branch 'series' of out/linux, deterministically:
# git format-patch with a cover letter (subject and text from
# cover-letter.txt) and base-commit:, the cover letter dated as the tip.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git

cd "$KTREE" || exit
git rev-parse -q --verify refs/heads/series >/dev/null || die "no branch series: run 'make tree'"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "out/linux has uncommitted changes: commit them first"
n=$(git rev-list --count base..series)
[ "$n" -gt 0 ] || die "branch series has no commits on base"

export GIT_COMMITTER_NAME="$PROJ_NAME" GIT_COMMITTER_EMAIL="$PROJ_EMAIL"
GIT_COMMITTER_DATE=$(git log -1 --format=%cI series)
export GIT_COMMITTER_DATE
tmp=$OUT/export
rm -rf "$tmp"
git -c branch.series.description="$(cat "$TOP/cover-letter.txt")" \
	-c diff.noprefix=false -c format.signature= \
	format-patch -q --cover-letter --cover-from-description=subject \
	--base=base --subject-prefix=PATCH -o "$tmp" base..series
rm -f "$TOP"/patches/*.patch
mkdir -p "$TOP/patches"
mv "$tmp"/*.patch "$TOP/patches/"
rmdir "$tmp"
git rev-parse series >"$OUT/series.applied"
echo "export: $n patches and a cover letter in patches/"
