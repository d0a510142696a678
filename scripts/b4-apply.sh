#!/bin/bash
# Apply the postings as a maintainer would: each posting of patches/ is
# threaded into an mbox as git send-email sends it (every patch a reply
# to its cover letter), b4 am (offline) turns it into an am-ready mbox,
# and git am applies the postings in order onto a fresh worktree at the
# base. Fails if b4 reports a problem or drops a patch, if a posting does
# not apply, or if the result differs from branch series in its tree or
# in any commit message (so b4 kept every trailer as it was).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git b4

cd "$KTREE" || exit
git rev-parse -q --verify refs/heads/series >/dev/null || die "no branch series: run 'make tree'"
work=$OUT/b4
wt=$work/tree
git worktree remove --force "$wt" >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work"
git worktree add -q --detach "$wt" base
trap 'git -C "$KTREE" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
export XDG_CACHE_HOME=$work/cache GIT_COMMITTER_NAME="$PROJ_NAME" GIT_COMMITTER_EMAIL="$PROJ_EMAIL"

fails=0
for posting in "${POSTINGS[@]}"; do
	mbox=$work/$posting.mbox cover="<v$VERSION-$posting-0000@kvm-gstage.example.org>"
	pats=("$TOP/patches/$posting"/[0-9][0-9][0-9][0-9]-*.patch)
	for p in "${pats[@]}"; do
		id="<v$VERSION-$posting-$(basename "$p" | cut -c1-4)@kvm-gstage.example.org>"
		awk -v id="$id" -v cover="$cover" '
			!done && /^Subject: / {
				print "Message-Id: " id
				if (id != cover)
					print "In-Reply-To: " cover "\nReferences: " cover
				done = 1
			}
			{ print }' "$p"
	done >"$mbox"
	want=$((${#pats[@]} - 1))
	if ! b4 --offline-mode am -C -m "$mbox" -o "$work/$posting" "$cover" >"$work/$posting.log" 2>&1; then
		echo "FAIL b4/$posting: b4 am failed: $(tail -n 1 "$work/$posting.log")"
		fails=$((fails + 1))
		continue
	fi
	if report=$(grep -m1 -E '✗|ERROR|WARNING|NOTE:|Traceback|ignored' "$work/$posting.log"); then
		echo "FAIL b4/$posting: b4 reports: $report"
		fails=$((fails + 1))
		continue
	fi
	if ! grep -qx "Total patches: $want" "$work/$posting.log"; then
		echo "FAIL b4/$posting: b4 did not find all $want patches: $(grep -m1 'Total patches' "$work/$posting.log")"
		fails=$((fails + 1))
		continue
	fi
	if ! git -C "$wt" am -q --committer-date-is-author-date "$work/$posting"/*.mbx >"$work/$posting.am.log" 2>&1; then
		echo "FAIL b4/$posting: b4's mbox does not apply after the postings before it: $(grep -m1 -E '^(error|Patch failed)' "$work/$posting.am.log")"
		fails=$((fails + 1))
		git -C "$wt" am --abort >/dev/null 2>&1 || true
		break
	fi
	echo "PASS b4/$posting: $want patches, b4 am (offline) and git am onto the postings before it"
done

if [ "$fails" -eq 0 ]; then
	bad=0
	if [ "$(git -C "$wt" rev-parse 'HEAD^{tree}')" != "$(git rev-parse 'series^{tree}')" ]; then
		echo "FAIL b4/result: the tree from b4's mboxes differs from branch series"
		bad=1
	fi
	mine=$(git log --reverse --format='%an <%ae>%n%B' base..series | sha256sum)
	theirs=$(git -C "$wt" log --reverse --format='%an <%ae>%n%B' base..HEAD | sha256sum)
	if [ "$mine" != "$theirs" ]; then
		echo "FAIL b4/result: b4 changed an author or a commit message (trailers)"
		bad=1
	fi
	[ "$bad" -eq 1 ] || echo "PASS b4/result: same tree, authors and messages as branch series"
	fails=$((fails + bad))
fi
[ "$fails" -eq 0 ]
