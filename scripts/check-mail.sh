#!/bin/bash
# Check the mail-ready step: it must refuse to run without a sender
# identity, and with one it must re-sign every patch (the project's
# patches: author and Signed-off-by; others keep their author and get the
# sender's Signed-off-by) and leave no trace of the project identity.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty"
if GIT_CONFIG_GLOBAL=$tmp/empty "$TOP/scripts/mail.sh" >"$tmp/out" 2>&1; then
	echo "FAIL mail/no-identity: mail.sh ran without a sender identity"
elif grep -q 'no sender identity' "$tmp/out"; then
	echo "PASS mail/no-identity refused"
else
	echo "FAIL mail/no-identity: unexpected error: $(tail -n 2 "$tmp/out")"
fi

printf '[user]\n\tname = Test Sender\n\temail = sender@example.com\n' >"$tmp/gitconfig"
if ! GIT_CONFIG_GLOBAL=$tmp/gitconfig "$TOP/scripts/mail.sh" >"$tmp/out" 2>&1; then
	echo "FAIL mail/re-sign: $(grep -m1 ERROR "$tmp/out")"
	exit 0
fi
bad=0 kept=0
n=0
for p in "$OUT"/mail/[1-9]*/[0-9][0-9][0-9][0-9]-*.patch; do
	case $p in */0000-*) continue ;; esac
	n=$((n + 1))
	# The author as exported in patches/: the project's, or someone else's.
	author=$(sed -n '0,/^From: /s/^From: //p' "$TOP/patches/${p#"$OUT"/mail/}")
	want="Test Sender <sender@example.com>"
	if [ "$author" != "$PROJ_NAME <$PROJ_EMAIL>" ]; then
		want=$author kept=$((kept + 1))
		grep -q "^Signed-off-by: $author\$" "$p" || {
			echo "FAIL mail/re-sign: $(basename "$p") lost its author's Signed-off-by"
			bad=1
		}
	fi
	if ! grep -q "^From: $want\$" "$p" ||
	   ! grep -q '^Signed-off-by: Test Sender <sender@example.com>' "$p" ||
	   grep -q "$PROJ_EMAIL" "$p" || ! grep -q '^To: ' "$p"; then
		echo "FAIL mail/re-sign: $(basename "$p") not re-signed (From: should be $want)"
		bad=1
	fi
done
want=$(find "$TOP/patches" -name '[0-9]*.patch' ! -name '0000-*' | wc -l)
if [ "$n" -ne "$want" ]; then
	echo "FAIL mail/re-sign: $n patches in out/mail, $want in patches/"
	bad=1
fi
[ "$bad" -eq 1 ] || echo "PASS mail/re-sign every patch ($n) signed by the sender ($kept keep their own author), To/Cc from get_maintainer.pl"

# The security fixes go on their own to security@kernel.org and no list.
sec=("$OUT"/mail/0-security/0001-*.patch)
# The recipients git send-email --dry-run gave, as mail.sh sends it.
rcpt=$(grep '^RCPT TO:' "$OUT/mail/0-security/send-email-dry-run.txt" 2>/dev/null | tr '\n' ' ' || true)
nsec=$(find "$OUT/mail/0-security" -name '*.patch' | wc -l)
if [ "${#SECURITY_FIRST[@]}" -ne "$nsec" ]; then
	echo "FAIL mail/security: $nsec patches in out/mail/0-security, want ${#SECURITY_FIRST[@]}"
elif [[ $rcpt != *'<security@kernel.org>'* ]] || grep -qE 'lists\.|vger\.kernel\.org' <<<"$rcpt"; then
	echo "FAIL mail/security: $(basename "${sec[0]}") is not sent to security@kernel.org without a list: $rcpt"
else
	echo "PASS mail/security ${#SECURITY_FIRST[@]} patch(es) to security@kernel.org and the maintainers, no list"
fi

# The generic patches go to kvm@ on their own too: a [PATCH] of its own,
# not a patch of a posting.
rcpt=$(grep '^RCPT TO:' "$OUT/mail/0-kvm/send-email-dry-run.txt" 2>/dev/null | tr '\n' ' ' || true)
ngen=$(find "$OUT/mail/0-kvm" -name '*.patch' | wc -l)
nalone=$(grep -l '^Subject: \[PATCH\] ' "$OUT"/mail/0-kvm/*.patch 2>/dev/null | wc -l)
if [ "${#GENERIC_ALONE[@]}" -ne "$ngen" ] || [ "$nalone" -ne "$ngen" ]; then
	echo "FAIL mail/generic: $ngen patches in out/mail/0-kvm ($nalone alone), want ${#GENERIC_ALONE[@]}"
elif [[ $rcpt != *'<kvm@vger.kernel.org>'* ]] || [[ $rcpt == *'<kvm-riscv@'* ]]; then
	echo "FAIL mail/generic: out/mail/0-kvm does not go to kvm@vger.kernel.org on its own: $rcpt"
else
	echo "PASS mail/generic ${#GENERIC_ALONE[@]} patch(es) alone to kvm@vger.kernel.org and their maintainers"
fi
