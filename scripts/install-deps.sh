#!/bin/bash
# Install every host package the rig needs, on Debian 12 (bookworm).
# Extra suites are added with apt pinning at priority 100 for backports and
# 1 for trixie, so that nothing already on the host is upgraded; only the
# packages named below are taken from them, explicitly.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
src=/etc/apt/sources.list.d/kvm-gstage-rig.sources
pin=/etc/apt/preferences.d/kvm-gstage-rig

cat >"$src" <<'SRC'
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports trixie-backports trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC

cat >"$pin" <<'PIN'
Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100

Package: *
Pin: release n=trixie-backports
Pin-Priority: 1

Package: *
Pin: release n=trixie
Pin-Priority: 1
PIN

stamp=/var/lib/apt/kvm-gstage-rig.updated
if [ ! -e "$stamp" ] || [ "$src" -nt "$stamp" ]; then
	apt-get update -q
	touch "$stamp"
fi

pkgs=(gcc-riscv64-linux-gnu binutils-riscv64-linux-gnu libc6-dev-riscv64-cross
      flex bison bc libssl-dev libelf-dev cpio kmod rsync patch dwarves xz-utils
      make gcc git perl python3 build-essential ccache gnuplot-nox
      valgrind liburcu-dev dpkg-dev git-email libmailtools-perl libauthen-sasl-perl python3-docutils python3-ply shellcheck)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

for p in qemu-system-riscv opensbi; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		apt-get install -y -q --no-install-recommends -t bookworm-backports qemu-system-riscv opensbi
		break
	fi
done

# b4 from trixie (bookworm's 0.12 cannot read format-patch's folded
# Subject: lines); its dependencies stay bookworm's.
case "$(dpkg-query -W -f='${Version}' b4 2>/dev/null)" in
0.14.*) ;;
*) apt-get install -y -q --no-install-recommends b4/trixie python3-requests/bookworm python3-dkim/bookworm ;;
esac

# libc6 must stay bookworm's.
case "$(dpkg-query -W -f='${Version}' libc6)" in
2.36-*) ;;
*) echo "install-deps: libc6 is no longer bookworm's ($(dpkg-query -W -f='${Version}' libc6))" >&2; exit 1 ;;
esac
echo "install-deps: ok"
