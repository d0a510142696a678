#!/bin/bash
# Re-export patches/ from out/linux, one folder a posting (POSTINGS in
# lib.sh), deterministically: git format-patch of each posting's range
# with a cover letter (subject and text from cover/NAME.txt, dated as
# the posting's last commit, and IDENTITY_NOTE below the text, which
# 'make mail' leaves out). The cover letters name the upstream base;
# no base-commit: line, which would name a commit only this rig has.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git

cd "$KTREE" || exit
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "out/linux has uncommitted changes: commit them first"
export GIT_COMMITTER_NAME="$PROJ_NAME" GIT_COMMITTER_EMAIL="$PROJ_EMAIL"
IDENTITY_NOTE="[These files carry the project's placeholder identity, \"$PROJ_NAME
<$PROJ_EMAIL>\", as author and in Signed-off-by: by design: 'make mail'
re-signs every patch with the sender's git identity and refuses to run
without one. The mails as sent carry no such note.]"
tmp=$OUT/export
rm -rf "$tmp"
total=0
for posting in "${POSTINGS[@]}"; do
	from=$(posting_from "$posting") to=$(posting_ref "$posting")
	git rev-parse -q --verify "refs/heads/$to" >/dev/null ||
		die "no branch $to in out/linux: run 'make tree'"
	git merge-base --is-ancestor "$from" "$to" || die "$from is not an ancestor of $to"
	n=$(git rev-list --count "$from..$to")
	[ "$n" -gt 0 ] || die "posting $posting ($from..$to) has no commits"
	[ -f "$TOP/cover/$posting.txt" ] || die "no cover letter text cover/$posting.txt"
	GIT_COMMITTER_DATE=$(git log -1 --format=%cI "$to") \
		git -c branch."$to".description="$(cat "$TOP/cover/$posting.txt"; echo; echo "$IDENTITY_NOTE")" \
		-c diff.noprefix=false -c format.signature= -c format.useAutoBase=false \
		format-patch -q --cover-letter --cover-from-description=subject --no-base \
		--subject-prefix="$(posting_prefix "$posting")" -o "$tmp/$posting" "$from..$to"
	total=$((total + n))
done
[ "$(git rev-list --count base..series)" -eq "$total" ] ||
	die "the postings do not cover base..series"
rm -rf "$TOP/patches"
mv "$tmp" "$TOP/patches"
git rev-parse series >"$OUT/series.applied"
echo "export: $total patches in ${#POSTINGS[@]} postings (${POSTINGS[*]}) in patches/"
