#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Rich outputs (issue 19, part 3; docs/displays.md): programs under
# tests/cli/displays/ call display() with every MIME type, show_last(),
# make the calls a session's cell loop makes, draw matplotlib figures
# (PNG checked, size = figsize * dpi), pass each
# bound (count, a bundle, the total) and plant what a hostile program
# would (a symlink to /etc/shadow, a fifo, a hard link, a 100 GiB sparse
# file, a directory, lying and malformed bundles, an odd name, a linked
# directory); tests/cli/displays/check.py says what each result's
# displays must be.  Without matplotlib (app-nompl.yaml hides it) the
# other displays come back and nothing fails.  As root, and again as the
# unprivileged user cordon-test (created here) when run as root.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
D="$SRC/tests/cli/displays"

mkdir "$T/bin" && cp "$CORDONC" "$CORDON" "$T/bin/" && cp "$D"/*.py "$D"/*.yaml "$T/"
chmod 755 "$T" "$T/bin" "$T/bin/"* && chmod 644 "$T/"*.*
for app in app app-nompl; do
	"$CORDONC" compile "$T/$app.yaml" "$T/tools.yaml" -o "$T/$app.cpol" >"$_out" 2>"$_err" || die "compile $app"
	chmod 644 "$T/$app.cpol"
done
if $PY -c 'import matplotlib' 2>/dev/null; then mpl=mpl; else
	mpl=; echo "skip $(basename "$0"): matplotlib figures (python3-matplotlib is not installed: scripts/install-deps)"; fi

modes_set
for mode in $modes; do
	W=$(mktemp -d "$T/w.XXXXXX"); chmod 1777 "$W"
	export TMPDIR="$W"
	for k in kinds $mpl nompl cells count big total attacks dirlink; do
		app=app; [ "$k" = nompl ] && app=app-nompl
		# timeout: a supervisor that blocked on a planted fifo would
		# hang the suite; this only bounds the damage.
		expect_rc 0 as_user timeout 300 "$T/bin/cordon" run --policy "$T/$app.cpol" --code "$T/$k.py"
		cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
		$PY "$T/check.py" "$k" "$T/r.json" >"$T/.check" 2>&1 || die "$mode: $(head -c 1500 "$T/.check")"
	done
	pass "$mode: every MIME type, show_last, ${mpl:+matplotlib figures, }no matplotlib, cells, the count, bundle" \
		"and total bounds, planted links, fifo, hard link, sparse file, directory and lying bundles"
done
