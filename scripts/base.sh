#!/bin/bash
# Fetch the pinned linux-source package, check its SHA-256, unpack it into
# out/linux and commit it as branch 'base' with a fixed identity and date,
# so that the base commit id is the same on every machine. out/linux-base
# is a worktree of it at the base (tree 'base' of kbuild.sh).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need apt-get dpkg-deb sha256sum git xz tar

pkg=$(base_var package)
ver=$(base_var version)
sum=$(base_var sha256)
deb=$OUT/dl/${pkg}_${ver}_all.deb

mkdir -p "$OUT/dl"
if [ ! -f "$deb" ]; then
	stage "downloading $pkg $ver"
	(cd "$OUT/dl" && apt-get download "$pkg=$ver") ||
		die "cannot download $pkg=$ver: run 'make deps' (adds trixie-backports)"
fi
echo "$sum  $deb" | sha256sum -c --quiet - ||
	die "checksum mismatch for $deb (expected $sum): wrong or corrupt base, delete it and retry"

# base_worktree: out/linux-base, detached at the base commit.
base_worktree() {
	if [ "$(git -C "$BASETREE" rev-parse -q HEAD 2>/dev/null)" != "$(git -C "$KTREE" rev-parse base)" ]; then
		rm -rf "$BASETREE"
		git -C "$KTREE" worktree prune
		git -C "$KTREE" worktree add -q --detach "$BASETREE" base
	fi
}

if git -C "$KTREE" rev-parse -q --verify refs/heads/base >/dev/null 2>&1; then
	base_worktree
	echo "base: $KTREE already holds branch base ($(git -C "$KTREE" rev-parse --short base))"
	exit 0
fi

stage "unpacking $pkg into $KTREE"
rm -rf "$KTREE" "$OUT/unpack"
mkdir -p "$OUT/unpack"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$OUT/unpack" "./usr/src/$pkg.tar.xz"
tar -xJf "$OUT/unpack/usr/src/$pkg.tar.xz" -C "$OUT/unpack"
mv "$OUT/unpack/$pkg" "$KTREE"
rm -rf "$OUT/unpack"

stage "committing the base"
cd "$KTREE" || exit
git init -q -b base
export GIT_AUTHOR_NAME="$PROJ_NAME" GIT_AUTHOR_EMAIL="$PROJ_EMAIL"
export GIT_COMMITTER_NAME="$PROJ_NAME" GIT_COMMITTER_EMAIL="$PROJ_EMAIL"
export GIT_AUTHOR_DATE="$BASE_DATE" GIT_COMMITTER_DATE="$BASE_DATE"
git config core.autocrlf false
git config user.name "$PROJ_NAME"
git config user.email "$PROJ_EMAIL"
git add -f -A .
git commit -q -m "Linux $ver (Debian $pkg)"
base_worktree
echo "base: $(git rev-parse base)"
