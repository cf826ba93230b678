#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc describe of an agent that may hold code-interpreter sessions
# (docs/serve.md, "Sessions"): the model must be told that state persists
# between cells and what the session's limits are, and those must be the
# blob's.
#  - describe --json --agent: "session" equals inspect --json's
#    sessions[agent], field by field (and fits describe.schema.json);
#  - the Markdown says globals persist between cells and names every
#    limit, and a change of each limit in the descriptor changes its line;
#  - an agent without `session:` is told nothing of sessions (null, no
#    section).
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
APP="$SRC/examples/notebook/app.yaml"
TOOLS="$SRC/examples/notebook/tools.yaml"

# describe_of NAME APP: compiles APP to $T/NAME.cpol and leaves
# $T/NAME.{inspect.json,describe.json,md} for the analyst agent.
describe_of() {
	expect_rc 0 "$CORDONC" compile "$2" "$TOOLS" -o "$T/$1.cpol"
	expect_rc 0 "$CORDONC" inspect --json "$T/$1.cpol"; cp "$_out" "$T/$1.inspect.json"
	expect_rc 0 "$CORDONC" describe --json --agent analyst "$T/$1.cpol"; cp "$_out" "$T/$1.describe.json"
	schema_ok describe "$T/$1.describe.json"
	expect_rc 0 "$CORDONC" describe --agent analyst "$T/$1.cpol"; cp "$_out" "$T/$1.md"
}

# same_session NAME: describe's session is inspect's, every field.
same_session() {
	/usr/bin/python3 - "$T/$1.describe.json" "$T/$1.inspect.json" >"$T/cmp.out" 2>&1 <<'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))["session"]
i = json.load(open(sys.argv[2])).get("sessions", {}).get("analyst")
keys = ("idleTimeoutMs", "lifetimeMs", "maxCells", "cpuMs", "workspaceBytes")
if not isinstance(d, dict) or not isinstance(i, dict):
    sys.exit("describe %r, inspect %r" % (d, i))
bad = ["%s: describe %r, inspect %r" % (k, d.get(k), i.get(k)) for k in keys if d.get(k) != i.get(k) or k not in d]
bad += ["describe has %s, inspect does not" % k for k in d if k not in keys]
sys.exit("; ".join(bad) if bad else 0)
EOF
		die "$1: describe's session disagrees with inspect's: $(cat "$T/cmp.out")"
}

# The section's line for a limit: "- **NAME**: ..." from the Markdown.
limit_line() { sed -n "/^## Sessions/,/^## /{/^- \*\*$2\*\*: /p}" "$T/$1.md"; }

describe_of nb "$APP"
same_session nb
grep -q '^## Sessions' "$T/nb.md" || die "the Markdown has no Sessions section"
grep -q 'globals persist from cell to cell' "$T/nb.md" || die "the Markdown does not say that state persists"
for l in Idle Lifetime Cells CPU Workspace; do
	[ -n "$(limit_line nb "$l")" ] || die "the Sessions section names no $l limit"
done
pass "describe --agent: state persists between cells; the session's limits are inspect's"

# Each limit changed alone in the descriptor changes describe's JSON to the
# blob's new value and its Markdown line: the text follows the blob.
for v in "idle_timeout: 5m/idle_timeout: 7m/Idle" "lifetime: 30m/lifetime: 45m/Lifetime" \
	"max_cells: 50/max_cells: 7/Cells" "cpu: 2m/cpu: 3m/CPU" "workspace_bytes: 64m/workspace_bytes: 32m/Workspace"; do
	from=${v%%/*}; rest=${v#*/}; to=${rest%%/*}; name=${rest#*/}
	grep -q "$from" "$APP" || die "the notebook's app.yaml no longer says '$from'"
	sed "s#$from#$to#" "$APP" >"$T/v.yaml"
	describe_of v "$T/v.yaml"
	same_session v
	[ "$(limit_line v "$name")" != "$(limit_line nb "$name")" ] ||
		die "$from -> $to: the $name line did not change: $(limit_line v "$name")"
done
pass "each session limit changed in the descriptor changes what describe says of it"

# Without `session:` the agent holds no session: nothing to tell.
sed '/^    session:/d' "$APP" >"$T/none.yaml"
grep -q 'session:' "$T/none.yaml" && die "the session line was not removed"
describe_of none "$T/none.yaml"
/usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["session"] is not None)' \
	"$T/none.describe.json" || die "an agent without session: has a session in describe --json"
grep -q '^## Sessions' "$T/none.md" && die "an agent without session: is told of sessions"
pass "an agent without session: is told nothing of sessions"
