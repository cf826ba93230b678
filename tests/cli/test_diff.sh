#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc diff: pairs of blobs with known widenings and narrowings, each
# change marked and the exit status 1 exactly when something widens; the
# reverse of a pair swaps widening and narrowing; JSON; bad input.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
B="$SRC/tests/lint/base"

# mk NAME SED-FOR-APP SED-FOR-TOOLS: compile the base with edits into $T/NAME.cpol.
mk() {
	sed "$2" "$B/app.yaml" >"$T/$1.app.yaml"
	sed "$3" "$B/tools.yaml" >"$T/$1.tools.yaml"
	"$CORDONC" compile -I "$T" "$T/$1.app.yaml" "$T/$1.tools.yaml" -o "$T/$1.cpol" 2>"$T/$1.err" ||
		{ cat "$T/$1.err"; die "cannot compile pair member $1"; }
}
# change KIND LINE: the last diff printed that line, marked KIND.
change() { grep -qF -- "  $(printf '%-6s' "$1")  $2" "$_out" || { cat "$_out"; die "diff lacks: $1 $2"; }; }

mk base '' ''
expect_rc 0 "$CORDONC" diff "$T/base.cpol" "$T/base.cpol"; expect_out "no change in meaning"

# The done-when check: a widened limit, exit 1.
mk longer 's/timeout: 30s/timeout: 2m/' ''
expect_rc 1 "$CORDONC" diff "$T/base.cpol" "$T/longer.cpol"
change widen "limits.timeout: 30s -> 2m"
expect_out "1 change: 1 widening, 0 narrowing, 0 neutral (widens: ask for a second review)"
expect_rc 0 "$CORDONC" diff "$T/longer.cpol" "$T/base.cpol"
change narrow "limits.timeout: 2m -> 30s"

# Narrowing only passes.
mk tighter 's/pids: 64/pids: 16/; s/memory: 1g/memory: 512m/; s/require: \[cgroup\]/require: [landlock, cgroup]/' ''
expect_rc 0 "$CORDONC" diff "$T/base.cpol" "$T/tighter.cpol"
change narrow "limits.pids: 64 -> 16"
change narrow "limits.memory: 1g -> 512m"
change narrow "executor.require: added landlock"

# The executor's world: network, mounts, identity, landlock.
mk wider 's/network: none/network: loopback/; s/uid: 1001/uid: 1002/; s/landlock: true/landlock: false/; s|^    env:|    mounts:\n      - { source: /usr, target: /usr }\n      - { source: /srv/data, target: /data, rw: true }\n      - { type: tmpfs, target: /tmp, size: 128m }\n    env:|; s/LANG: C.UTF-8/LANG: en_US.UTF-8/' ''
expect_rc 1 "$CORDONC" diff "$T/base.cpol" "$T/wider.cpol"
change widen "executor.network: none -> loopback"
change change "executor.uid: 1001 -> 1002"
change widen "executor.landlock: true -> false"
change widen "mounts[/data]: added bind /srv/data rw"
change widen "mounts[/tmp].size: 64m -> 128m"
change narrow "mounts[/lib]: removed bind /lib ro"
change change "env[LANG]: C.UTF-8 -> en_US.UTF-8"
mk ro 's|^    env:|    mounts:\n      - { source: /usr, target: /usr }\n      - { source: /srv/data, target: /data }\n      - { type: tmpfs, target: /tmp, size: 128m }\n    env:|' ''
expect_rc 0 "$CORDONC" diff "$T/wider.cpol" "$T/ro.cpol"
change narrow "mounts[/data].rw: true -> false"
# A tmpfs that becomes a host path widens; the reverse narrows.
mk tmpbind 's|^    env:|    mounts:\n      - { source: /usr, target: /usr }\n      - { source: /srv/data, target: /data }\n      - { source: /srv/scratch, target: /tmp }\n    env:|' ''
expect_rc 1 "$CORDONC" diff "$T/ro.cpol" "$T/tmpbind.cpol"
change widen "mounts[/tmp]: tmpfs 128m -> bind /srv/scratch ro"
expect_rc 0 "$CORDONC" diff "$T/tmpbind.cpol" "$T/ro.cpol"
change narrow "mounts[/tmp]: bind /srv/scratch ro -> tmpfs 128m"

# Preloading changes memory and start-up, not reach: neutral either way.
mk preload 's/^    uid: 1001$/    uid: 1001\n    preload: [numpy, json]/' ''
expect_rc 0 "$CORDONC" diff "$T/base.cpol" "$T/preload.cpol"
change change "executor.preload: (none) -> numpy json"
expect_out "1 change: 0 widening, 0 narrowing, 1 neutral"
# Packages too: imported before the program and told to the model.
mk packages 's/^    uid: 1001$/    uid: 1001\n    packages: [csv, json]/' ''
expect_rc 0 "$CORDONC" diff "$T/base.cpol" "$T/packages.cpol"
change change "executor.packages: (none) -> csv json"
expect_out "1 change: 0 widening, 0 narrowing, 1 neutral"

# A CPU quota (issue 14): a raised quota and a removed one widen, a lower
# or a new one narrows.
mk cpu1 's/^    pids: 64$/    pids: 64\n    cpu: 1/' ''
mk cpu2 's/^    pids: 64$/    pids: 64\n    cpu: 2.5/' ''
expect_rc 1 "$CORDONC" diff "$T/cpu1.cpol" "$T/cpu2.cpol"
change widen "limits.cpu: 1 -> 2.5"
expect_rc 0 "$CORDONC" diff "$T/cpu2.cpol" "$T/cpu1.cpol"
change narrow "limits.cpu: 2.5 -> 1"
expect_rc 1 "$CORDONC" diff "$T/cpu1.cpol" "$T/base.cpol"
change widen "limits.cpu: 1 -> unlimited"
expect_rc 0 "$CORDONC" diff "$T/base.cpol" "$T/cpu2.cpol"
change narrow "limits.cpu: unlimited -> 2.5"

# Seccomp, judged on the filters themselves: a syscall allowed, and a
# condition loosened to more arguments.
cat >"$T/small.policy" <<'P'
default errno(ENOSYS);
allow { read, write, close, exit_group }
allow socket(domain) { domain == AF_UNIX }
P
cat >"$T/big.policy" <<'P'
default errno(ENOSYS);
allow { read, write, close, exit_group, ptrace }
allow socket(domain) { domain == AF_UNIX || domain == AF_INET }
P
mk small 's/profile: python-compute/profile: small/' ''
mk big 's/profile: python-compute/profile: big/' ''
expect_rc 1 "$CORDONC" diff "$T/small.cpol" "$T/big.cpol"
change widen "seccomp[ptrace]: refused -> allowed"
change widen "seccomp[socket]: allowed for some arguments -> allowed for some arguments"
change change "executor.seccomp.profile: small -> big"
expect_rc 0 "$CORDONC" diff "$T/big.cpol" "$T/small.cpol"
change narrow "seccomp[ptrace]: allowed -> refused"
# A condition that joins two arguments: only the second one changes, so
# no one-argument-at-a-time probe sees it (regression: this was exit 0).
cat >"$T/dgram.policy" <<'P'
default errno(ENOSYS);
allow { read, write, close, exit_group }
allow socket(domain, type) { domain == AF_INET && type == SOCK_DGRAM }
P
sed 's/SOCK_DGRAM/SOCK_STREAM/' "$T/dgram.policy" >"$T/stream.policy"
mk dgram 's/profile: python-compute/profile: dgram/' ''
mk stream 's/profile: python-compute/profile: stream/' ''
expect_rc 1 "$CORDONC" diff "$T/dgram.cpol" "$T/stream.cpol"
change widen "seccomp[socket]: allowed for some arguments -> allowed for some arguments"
change narrow "seccomp[socket]: some arguments allowed -> now refused"
# A flag dropped from a forbidden mask (clone without CLONE_NEWNET in it).
# (The clone rule is in python-common.policy, which the profile includes.)
cp "$SRC/policies/python-compute.policy" "$T/pc.policy"
sed 's/CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP/CLONE_NEWPID | CLONE_NEWCGROUP/' \
	"$SRC/policies/python-common.policy" >"$T/pcnet-common.policy"
grep -q 'CLONE_NEWNET' "$T/pcnet-common.policy" && die "pcnet-common.policy still names CLONE_NEWNET"
sed 's/include "python-common.policy"/include "pcnet-common.policy"/' \
	"$SRC/policies/python-compute.policy" >"$T/pcnet.policy"
grep -q 'pcnet-common' "$T/pcnet.policy" || die "python-compute.policy no longer includes python-common.policy"
mk pc 's/profile: python-compute/profile: pc/' ''
mk pcnet 's/profile: python-compute/profile: pcnet/' ''
expect_rc 1 "$CORDONC" diff "$T/pc.cpol" "$T/pcnet.cpol"
change widen "seccomp[clone]: allowed for some arguments -> allowed for some arguments"
expect_rc 0 "$CORDONC" diff "$T/pcnet.cpol" "$T/pc.cpol"
change narrow "seccomp[clone]: allowed for some arguments -> allowed for some arguments"

# Tools: added, roles, budgets, secrets, parameters, agents.
mk tools 's/analyst: { tools: \[report.fetch, mail.send\] }/analyst: { tools: [report.fetch, mail.send, report.list] }/' \
	'/^    max_calls: 10$/d; s/^    max_calls: 5$/    max_calls: 50\n    max_calls_per_day: 100/; s/roles: \[analyst\] }/roles: [analyst, guest] }/; s/max_length: 64, required: true/max_length: 4096, required: true/; s/env_from: \[SMTP_PASSWORD\]/env_from: [SMTP_PASSWORD, SMTP_USER]/; $a\
\
  - id: report.list\
    description: List report names.\
    exec: [/usr/local/libexec/lint-base/report-list]\
    allow: { roles: [analyst] }\
    max_calls: 5'
expect_rc 1 "$CORDONC" diff "$T/base.cpol" "$T/tools.cpol"
change widen "tools[report.list]: added List report names."
change widen "tools[report.fetch].max_calls: 10 -> unlimited"
change widen "tools[mail.send].max_calls: 5 -> 50"
change narrow "tools[mail.send].max_calls_per_day: unlimited -> 100"
change widen "tools[report.fetch].roles: added guest"
change widen "tools[report.fetch].params.name.max_length: 64 -> 4096"
change widen "tools[mail.send].env_from: added SMTP_USER"
change widen "agents[analyst].tools: added report.list"
expect_rc 1 "$CORDONC" diff "$T/tools.cpol" "$T/base.cpol"
change narrow "tools[report.list]: removed List report names."
change widen "tools[mail.send].max_calls_per_day: 100 -> unlimited"

# A tool's identity and its cgroup's limits; the workspace's entry count.
mk ident 's/    pids: 64/    pids: 64\n    max_exec_workspace_entries: 50000/' \
	's/^    max_calls: 5$/    max_calls: 5\n    run_as: supervisor\n    memory: 1g\n    pids: 8/'
expect_rc 1 "$CORDONC" diff "$T/base.cpol" "$T/ident.cpol"
change widen "limits.max_exec_workspace_entries: 20000 -> 50000"
change widen "tools[mail.send].run_as: dedicated -> supervisor"
change widen "tools[mail.send].memory: 256m -> 1g"
change narrow "tools[mail.send].pids: 32 -> 8"
# Only the identity differs from here on: supervisor -> a named account
# narrows, dedicated -> a named account widens, one account -> another is
# a change.
mk named '' 's/^    max_calls: 5$/    max_calls: 5\n    run_as: { user: mailer }/'
mk namedx 's/    pids: 64/    pids: 64\n    max_exec_workspace_entries: 50000/' \
	's/^    max_calls: 5$/    max_calls: 5\n    run_as: { user: mailer }\n    memory: 1g\n    pids: 8/'
expect_rc 0 "$CORDONC" diff "$T/ident.cpol" "$T/namedx.cpol"
change narrow "tools[mail.send].run_as: supervisor -> user mailer"
expect_out "1 change: 0 widening, 1 narrowing"
expect_rc 1 "$CORDONC" diff "$T/base.cpol" "$T/named.cpol"
change widen "tools[mail.send].run_as: dedicated -> user mailer"
mk ids '' 's/^    max_calls: 5$/    max_calls: 5\n    run_as: { uid: 2001, gid: 2001 }/'
expect_rc 0 "$CORDONC" diff "$T/named.cpol" "$T/ids.cpol"
change change "tools[mail.send].run_as: user mailer -> uid 2001 gid 2001"

# The reverse of a pair swaps widening and narrowing, change for change.
for pair in "base wider" "base tools" "small big" "base tighter" "base ident"; do
	set -- $pair
	"$CORDONC" diff --json "$T/$1.cpol" "$T/$2.cpol" >"$T/fw.json"
	"$CORDONC" diff --json "$T/$2.cpol" "$T/$1.cpol" >"$T/bw.json"
	schema_ok diff "$T/fw.json" "$T/bw.json"
	python3 - "$T/fw.json" "$T/bw.json" <<'PY' || die "reverse of $pair is not the mirror image"
import json, sys
f, b = (json.load(open(p)) for p in sys.argv[1:3])
assert f["schema"] == "cordon-diff/1" and len(f["old"]["sha256"]) == 64
assert f["widening"] == b["narrowing"] and f["narrowing"] == b["widening"], (f, b)
assert f["widens"] == (f["widening"] > 0)
assert len(f["changes"]) == f["widening"] + f["narrowing"] + f["neutral"]
PY
done
pass "widenings and narrowings of limits, executor, mounts, seccomp, tools and agents"

# Bad input.
expect_rc 2 "$CORDONC" diff "$T/base.cpol"
expect_rc 2 "$CORDONC" diff "$T/base.cpol" "$T/missing.cpol"; expect_err "missing.cpol"
# Sessions (format 3.6): allowing them widens, and so does each larger limit.
mk sess 's/analyst: { tools: \[report.fetch, mail.send\] }/analyst: { tools: [report.fetch, mail.send], session: { max_cells: 5, cpu: 10s } }/' ''
expect_rc 1 "$CORDONC" diff "$T/base.cpol" "$T/sess.cpol"
change widen "agents[analyst].session: false -> true"
expect_rc 0 "$CORDONC" diff "$T/sess.cpol" "$T/base.cpol"
change narrow "agents[analyst].session: true -> false"
mk sess2 's/analyst: { tools: \[report.fetch, mail.send\] }/analyst: { tools: [report.fetch, mail.send], session: { max_cells: 9, cpu: 10s } }/' ''
expect_rc 1 "$CORDONC" diff "$T/sess.cpol" "$T/sess2.cpol"
change widen "agents[analyst].session.max_cells: 5 -> 9"
expect_out "1 change: 1 widening"
pass "sessions: allowed and their limits"

head -c 100 "$T/base.cpol" >"$T/cut.cpol"
expect_rc 2 "$CORDONC" diff "$T/cut.cpol" "$T/base.cpol"; expect_err "invalid policy blob"
expect_rc 2 "$CORDONC" diff --bogus "$T/base.cpol" "$T/base.cpol"
expect_rc 0 "$CORDONC" diff --help; expect_out "usage: cordonc diff"
pass "usage and bad blobs"
