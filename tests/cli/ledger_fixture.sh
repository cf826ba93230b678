# SPDX-License-Identifier: Apache-2.0
# ledger_fixture.sh - the policy of the ledger CLI tests (sourced by
# test_ledger.sh and test_ledger_pg.sh): tool t.count, a side effect that
# appends its message id to $COUNT and answers how many times that id ran;
# app ledgertest (the mail example's limits) whose agent `a` has it; and
# $T/prog.py, which calls it once with the message id in the input mid.txt.
# Needs T (the test's directory), TD (a directory only root can write, for
# the tool's executable: StrictModes, docs/tools.md) and COUNT; leaves
# $T/p.cpol, or stops the test.
cat >"$TD/count-tool" <<'EOF'
#!/bin/sh
cat >/dev/null
echo "$CORDON_MESSAGE_ID" >>"$1"
printf '{"runs": %s}\n' "$(grep -cx -- "$CORDON_MESSAGE_ID" "$1")"
EOF
chmod 755 "$TD/count-tool"
cat >"$T/tools.yaml" <<EOF
version: 1
tools:
  - id: t.count
    description: Count one execution per message id.
    params:
      item: { type: string, max_length: 16, required: true }
    side_effect: true
    timeout: 5s
    exec: [$TD/count-tool, $COUNT]
    run_as: supervisor           # it counts into the test's own 0700 directory
EOF
sed -e 's/^app: mail$/app: ledgertest/' -e '/^  outputs:/,/note.txt/d' \
	-e 's/^  reporter: { tools: \[mail.send\] }$/  a: { tools: [t.count] }/' \
	"$SRC/examples/mail/app.yaml" >"$T/app.yaml"
cat >"$T/prog.py" <<'EOF'
import json, sys
import cordon_tools
mid = open("/workspace/work/mid.txt").read().strip()
r = cordon_tools.tool_call("t.count", {"item": "x"}, message_id=mid)
json.dump({"answer": r}, open("/workspace/out/result.json", "w"))
EOF
chmod 644 "$T/tools.yaml" "$T/app.yaml" "$T/prog.py"
"$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/p.cpol" >"$_out" 2>"$_err" || die "compile"
chmod 644 "$T/p.cpol"
