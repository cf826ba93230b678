#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# --version of both binaries: VERSION, then "+" and the git revision when
# built from a checkout (scripts/revision); VERSION alone outside git; a new
# revision recompiles one small object and relinks the two binaries only.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"

version=$(cat "$SRC/VERSION")
[ -n "$version" ] || die "VERSION is empty"
expected=$version
in_git=0
if [ "$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$SRC" && pwd -P)" ]; then
	in_git=1
	# Without --dirty: the tree may have been edited since the build.
	expected="$version+$(git -C "$SRC" describe --always)"
fi
for b in cordonc cordon; do
	expect_rc 0 "$BUILD/$b" --version
	line=$(head -1 "$_out")
	case "$line" in
	"$b $expected "* | "$b $expected-dirty "*) ;;
	*) die "$b --version says '$line', want '$b $expected[-dirty] (blob format ...)'" ;;
	esac
	expect_out "(blob format "
done

# scripts/revision outside a checkout: VERSION alone.  A copy of the script
# in a fresh directory (not inside any git tree: mktemp's /tmp).
mkdir -p "$T/notgit"
git -C "$T/notgit" rev-parse 2>/dev/null && die "$T/notgit is inside a git tree; cannot test the fallback"
expect_rc 0 sh "$SRC/scripts/revision" "$T/notgit" 9.8.7 "$T/rev.c"
grep -qxF 'const char cordon_version[] = "9.8.7";' "$T/rev.c" || die "outside git: $(cat "$T/rev.c")"

# In a checkout, the revision is there; an unchanged text leaves the file
# alone (its mtime), a changed one rewrites it.
if [ "$in_git" = 1 ]; then
	expect_rc 0 sh "$SRC/scripts/revision" "$SRC" 9.8.7 "$T/rev2.c"
	grep -qF "\"9.8.7+$(git -C "$SRC" describe --always)" "$T/rev2.c" || die "in git: $(cat "$T/rev2.c")"
fi
touch -d '2001-01-01' "$T/rev.c"
expect_rc 0 sh "$SRC/scripts/revision" "$T/notgit" 9.8.7 "$T/rev.c"
[ "$(stat -c %Y "$T/rev.c")" = "$(date -d 2001-01-01 +%s)" ] || die "an unchanged revision rewrote the file"
expect_rc 0 sh "$SRC/scripts/revision" "$T/notgit" 9.8.8 "$T/rev.c"
grep -qF '"9.8.8"' "$T/rev.c" || die "a changed version did not rewrite the file"

# A new revision: make would compile the revision object and link the two
# binaries, and nothing else.
expect_rc 0 make -n -C "$SRC" -W "${BUILD#"$SRC"/}/gen/revision.c" all SAN="${SAN:-0}"
compiles=$(grep -c -- ' -c .* -o ' "$_out")
[ "$compiles" = 1 ] || die "a new revision compiles $compiles files, want 1:
$(grep -- ' -c .* -o ' "$_out")"
grep -q -- "-c $BUILD/gen/revision.c\|-c [^ ]*gen/revision.c" "$_out" || die "the one compile is not revision.c"
links=$(grep -c -- '-o [^ ]*/cordonc\? ' "$_out")
[ "$links" = 2 ] || die "a new revision links $links binaries, want 2 (cordonc, cordon)"
pass "--version says $expected; VERSION alone outside git; a new revision relinks around one object"
