#!/bin/bash
# Make the series mail-ready in out/mail, one folder a posting as in
# patches/: re-sign every patch with the sender's own git identity (the
# project's patches: author and Signed-off-by; a patch someone else wrote
# keeps its author and trailers and gets the sender's Signed-off-by, and
# its [note] names the sender), add To/Cc from scripts/get_maintainer.pl,
# and check the result with checkpatch and git send-email --dry-run.
# Refuses to run without a sender identity.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git perl

name=$(git config --global user.name || true)
email=$(git config --global user.email || true)
if [ -z "$name" ] || [ -z "$email" ]; then
	die "no sender identity: set 'git config --global user.name' and user.email first"
fi
if [ "$email" = "$PROJ_EMAIL" ]; then
	die "the sender identity is the project's ($PROJ_EMAIL): use your own"
fi

wt=$OUT/mail-tree
mail=$OUT/mail
git -C "$KTREE" worktree remove --force "$wt" >/dev/null 2>&1 || true
git -C "$KTREE" worktree add -q --detach "$wt" series
trap 'git -C "$KTREE" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
cd "$wt" || exit
export GIT_AUTHOR_NAME="$name" GIT_AUTHOR_EMAIL="$email"
export GIT_COMMITTER_NAME="$name" GIT_COMMITTER_EMAIL="$email"
git checkout -q -B mail base
for posting in "${POSTINGS[@]}"; do
	for c in $(git rev-list --reverse "$(posting_from "$posting")..$(posting_ref "$posting")"); do
		git cherry-pick "$c" >/dev/null
		msg=$(git log -1 --format=%B | sed -e "/^Signed-off-by: $PROJ_NAME <$PROJ_EMAIL>\$/d" \
			-e "s/^\[$PROJ_EMAIL: /[$email: /")
		if [ "$(git log -1 --format='%an <%ae>')" = "$PROJ_NAME <$PROJ_EMAIL>" ]; then
			git commit -q --amend --reset-author -s -m "$msg"
		else
			git commit -q --amend -s -m "$msg"
		fi
	done
	git branch -f "mail-$posting" HEAD
done

# address PATCH...: adds to each PATCH a To: header, the first maintainer
# that get_maintainer.pl names for them all, and a Cc: header, the others
# it names (reviewers and lists included); prints the To: address.
address() {
	local who to cc p
	who=$(scripts/get_maintainer.pl --no-rolestats --no-git --no-git-fallback "$@")
	to=$(sed -n 1p <<<"$who")
	cc=$(sed 1d <<<"$who" | paste -sd, -)
	for p in "$@"; do
		sed -i "0,/^Subject: /s//To: $to\nCc: $cc\nSubject: /" "$p"
	done
	echo "$to"
}

# One folder a posting, as in patches/, each with its own To/Cc from
# get_maintainer.pl and a git send-email --dry-run.
[ -x "$(git --exec-path)/git-send-email" ] || die "git send-email is missing: run 'make deps' (git-email)"
rm -rf "$mail"
from=base
for posting in "${POSTINGS[@]}"; do
	out=$mail/$posting
	git -c "branch.mail-$posting.description=$(cat "$TOP/cover/$posting.txt")" \
		format-patch -q --cover-letter --cover-from-description=subject --no-base \
		--subject-prefix="$(posting_prefix "$posting")" -o "$out" "$from..mail-$posting"
	from=mail-$posting
	to=$(address "$out"/*.patch)
	pats=("$out"/[0-9][0-9][0-9][0-9]-*.patch) # the cover letter (0000) first
	printf '%s\n' "${pats[@]:1}" |
		xargs -P "$JOBS" -n 4 scripts/checkpatch.pl --strict --quiet --ignore "$CHECKPATCH_IGNORE" ||
		die "re-signed patches of $posting fail checkpatch"
	git send-email --dry-run --confirm=never --suppress-cc=all --to="$to" \
		"$out"/*.patch >"$out/send-email-dry-run.txt" 2>&1 ||
		die "git send-email --dry-run failed, see $out/send-email-dry-run.txt"
done

# alone_patch LIST SUBJECT DIR: writes the re-signed patch with SUBJECT
# (named in LIST of lib.sh) on its own to DIR and prints its path.
alone_patch() {
	local c
	c=$(git log --format='%H%x09%s' "base..mail-${POSTINGS[-1]}" | awk -F '\t' -v s="$2" '$2 == s { print $1 }')
	[ -n "$c" ] || die "$1: no patch with subject '$2'"
	mkdir -p "$3"
	git format-patch --no-base --subject-prefix=PATCH -o "$3" -1 "$c"
}

# The security fixes on their own, first: to security@kernel.org and the
# maintainers, no list (SECURITY_FIRST in lib.sh).
sec=$mail/0-security
for subj in "${SECURITY_FIRST[@]}"; do
	p=$(alone_patch SECURITY_FIRST "$subj" "$sec")
	cc=$(scripts/get_maintainer.pl --no-rolestats --no-git --no-git-fallback --no-l --no-r "$p" | paste -sd, -)
	sed -i "0,/^Subject: /s//To: security@kernel.org\nCc: $cc\nSubject: /" "$p"
	# As it is to be sent: the header's To/Cc, none of the body's Cc:
	# tags (Cc: stable is a list).
	git send-email --dry-run --confirm=never --suppress-cc=bodycc \
		"$p" >>"$sec/send-email-dry-run.txt" 2>&1 ||
		die "git send-email --dry-run failed, see $sec/send-email-dry-run.txt"
done

# The patches that are not riscv-specific on their own too (GENERIC_ALONE
# in lib.sh), each to the maintainers and lists of what it touches.
gen=$mail/0-kvm
for subj in "${GENERIC_ALONE[@]}"; do
	p=$(alone_patch GENERIC_ALONE "$subj" "$gen")
	address "$p" >/dev/null
	git send-email --dry-run --confirm=never --suppress-cc=bodycc \
		"$p" >>"$gen/send-email-dry-run.txt" 2>&1 ||
		die "git send-email --dry-run failed, see $gen/send-email-dry-run.txt"
done
n=$(find "$mail" -name '*.patch' | wc -l)
echo "mail: $n files in ${#POSTINGS[@]} postings, $sec and $gen in $mail, signed by $name <$email>"
echo "mail: first 'git send-email --suppress-cc=bodycc $sec/*.patch'; the postings once the security team agrees"
