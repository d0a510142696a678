#!/bin/bash
# Usage: privapt.sh SUITE ARCH apt-get-args...
# Run apt-get against Debian SUITE for ARCH with a private configuration
# under out/apt/, so that the host's dpkg and apt state stay untouched
# (no foreign dpkg architecture, no new host sources).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need apt-get

suite=$1 arch=$2
shift 2
dir=$OUT/apt/$suite-$arch
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/etc"
cat >"$dir/etc/sources.list" <<SRC
deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
SRC
opts=(-o "Dir::Etc::SourceList=$dir/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
      -o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
      -o Dir::State::status=/dev/null -o Dir::Etc::Preferences=/dev/null
      -o Dir::Etc::PreferencesParts=/dev/null -o APT::Sandbox::User=root)
if [ ! -f "$dir/lists/.updated" ]; then
	apt-get -q "${opts[@]}" update >"$dir/update.log" 2>&1 ||
		die "apt-get update for $suite/$arch failed, see $dir/update.log"
	touch "$dir/lists/.updated"
fi
apt-get -q "${opts[@]}" "$@"
