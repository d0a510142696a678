#!/bin/bash
# Usage: initramfs.sh TREE
# Pack busybox, guest/init, the guest helpers (guest/ager.c and
# guest/slotzap.c, built static, guest/lockstat and guest/kvmstat) and TREE's KVM
# selftests into out/initramfs/TREE.cpio.gz. The test plan is appended at boot time.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need gcc "${CROSS_COMPILE}gcc" gzip

tree=$1
st=$OUT/selftests/$tree
[ -d "$st" ] || die "no selftests in $st: run scripts/selftests.sh $tree"
"$TOP/scripts/busybox.sh"
gen=$OUT/tools/gen_init_cpio
if [ ! -x "$gen" ]; then
	gcc -O2 -o "$gen" "$KTREE/usr/gen_init_cpio.c"
fi

for h in ager slotzap; do
	if [ ! -x "$OUT/tools/$h" ] || [ "$TOP/guest/$h.c" -nt "$OUT/tools/$h" ]; then
		"${CROSS_COMPILE}gcc" -static -O2 -Wall -Wextra -Werror -o "$OUT/tools/$h" "$TOP/guest/$h.c"
	fi
done

mkdir -p "$OUT/initramfs"
list=$OUT/initramfs/$tree.list
{
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	for d in /bin /proc /sys /tmp /kvm /root; do
		echo "dir $d 0755 0 0"
	done
	echo "file /bin/busybox $OUT/tools/busybox 0755 0 0"
	echo "slink /bin/sh busybox 0777 0 0"
	echo "file /init $TOP/guest/init 0755 0 0"
	echo "file /bin/ager $OUT/tools/ager 0755 0 0"
	echo "file /bin/slotzap $OUT/tools/slotzap 0755 0 0"
	echo "file /bin/lockstat $TOP/guest/lockstat 0755 0 0"
	echo "file /bin/kvmstat $TOP/guest/kvmstat 0755 0 0"
	echo "file /bin/progress $TOP/guest/progress 0755 0 0"
	find "$st" -type f -perm -u+x ! -name '*.o' | sort | while IFS= read -r f; do
		rel=${f#"$st"/}
		case $rel in
		*/*) echo "dir /kvm/${rel%/*} 0755 0 0" ;;
		esac
		echo "file /kvm/$rel $f 0755 0 0"
	done | awk '!seen[$0]++'
} >"$list"
"$gen" "$list" | gzip -1 >"$OUT/initramfs/$tree.cpio.gz"
echo "initramfs: $OUT/initramfs/$tree.cpio.gz ($(du -h "$OUT/initramfs/$tree.cpio.gz" | cut -f1))"
