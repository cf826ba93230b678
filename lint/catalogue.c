/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalogue.c - every lint rule: id, name, severity, texts and its check.
 *
 * One table entry a rule, sorted by id; ids are grouped by family (0xx the
 * linter's own, 1xx isolation, 2xx identity, 3xx mounts, 4xx limits, 5xx
 * kernel filters, 6xx secrets, 7xx tools).  An id is never reused for a
 * different check: baselines and suppressions name it.  Retired, never to
 * be given out again: CDN201 uid-root and CDN202 gid-root (uid or gid 0 is
 * a compile error since issue 12, so they could no longer fire).  docs/rules.md is
 * generated from this table (`cordonc explain --all --markdown`), and
 * tests/cli/test_lint.sh checks that it is.
 */
#include <string.h>

#include "lint/lint.h"
#include "lint/rules/rules.h"

static const struct lint_rule catalogue[] = {
	{ "CDN001", "suppression-without-reason", "An inline suppression gives no reason", LINT_WARNING, "3.0",
	  "Write why the finding is acceptable after '--': # cordon: allow CDN301 -- read-only cache, reviewed",
	  "A `# cordon: allow ID` comment must carry a reason after `--` (or an em dash). A suppression "
	  "without one does not suppress anything: the finding it meant stays, and this finding points at "
	  "the comment.",
	  "A reason is what a reviewer reads a year later to decide whether the exception still holds; "
	  "without it a suppression is just a way to make the linter quiet.",
	  NULL },
	{ "CDN002", "suppression-expired", "An inline suppression is past its `until` date", LINT_WARNING, "3.0",
	  "Fix the finding, or renew the suppression with a new date and a reason that still holds",
	  "`# cordon: allow ID until YYYY-MM-DD -- reason` suppresses through the given day (UTC). After it, "
	  "the suppression stops working: the finding it covered is reported again, and this finding says "
	  "that the exception ran out.",
	  "Temporary exceptions are the ones that become permanent by being forgotten; a date makes the "
	  "linter bring them back.",
	  NULL },
	{ "CDN003", "suppression-malformed", "An inline suppression cannot be read", LINT_WARNING, "3.0",
	  "Write it as: # cordon: allow CDN301[, CDN302] [until YYYY-MM-DD] -- reason",
	  "A comment that starts with `# cordon:` is a directive. It must be `allow`, followed by one or more "
	  "known rule ids, an optional `until` date that exists, and a reason. A directive that breaks any "
	  "of these suppresses nothing.",
	  "A typo in a rule id would otherwise look like a working suppression while the finding it aimed "
	  "at stays hidden from nobody but the author.",
	  NULL },
	{ "CDN004", "suppression-unused", "An inline suppression matches no finding", LINT_NOTE, "1.0",
	  "Remove the suppression, or move it onto the line of the finding it is for (or the line before)",
	  "A suppression applies to findings of its rules on its own line, or, written on a line of its "
	  "own, on the next line. One that matched nothing in this run is reported as a note.",
	  "Stale exceptions hide the next real finding that lands on that line.",
	  NULL },
	{ "CDN101", "executor-network", "The executor has a network", LINT_WARNING, "5.0",
	  "Set execution.executor.network: none and reach the outside through a governed tool",
	  "Fires when `execution.executor.network` is anything but `none`. With `loopback` the executor gets "
	  "its own network namespace with `lo` up: code inside can open TCP and UDP sockets to itself and "
	  "to any local service started in the sandbox, as far as the seccomp profile lets it create them "
	  "(the shipped `python-compute` allows `AF_UNIX` sockets only, so under it `loopback` has no "
	  "effect).",
	  "Generated code should reach the world only through governed tools, where parameters, roles and "
	  "budgets are checked. Every socket the code can open is a channel no policy sees; keep the "
	  "network off unless the program itself needs a local server.",
	  rule_network_enabled },
	{ "CDN102", "local-mode", "Runs without namespaces (`mode: local`)", LINT_WARNING, "8.0",
	  "Set execution.runtime.mode: isolated (the default)",
	  "Fires when `execution.runtime.mode` is `local`. That mode runs the interpreter without user, "
	  "mount, pid or network namespaces, without the read-only root and without the executor's own "
	  "identity; it exists for development on machines where namespaces are not available.",
	  "Untrusted code in local mode runs with the caller's identity and sees the caller's files and "
	  "network. A descriptor headed for release must not carry it.",
	  rule_mode_local },
	{ "CDN203", "uid-host-account", "The executor's uid is an account on this host", LINT_NOTE, "3.0",
	  "Pick a uid that no host account uses, so the number names nobody on the host",
	  "Looks up `execution.executor.uid` in the account database of the host that runs lint "
	  "(getpwuid). When an account has that uid, the finding names it. The answer depends on the host: "
	  "lint on the machine that will run the policy, or on one set up like it. Since host ids are "
	  "leased per run (docs/runtime.md, \"Host identity\"), the number is the executor's inside the "
	  "sandbox only: as root it runs as a leased host id that no account has, rootless as the caller. "
	  "That is why this stays a note.",
	  "Files in the sandbox's mounts and the names its programs see are read by the number: one that "
	  "is also a host account's is easy to mistake for that account in logs, listings and reviews.",
	  rule_uid_host_account },
	{ "CDN204", "gid-host-group", "The executor's gid is a group on this host", LINT_NOTE, "2.0",
	  "Pick a gid that no host group uses",
	  "Looks up `execution.executor.gid` in the group database of the host that runs lint (getgrgid). "
	  "The answer depends on the host, as for CDN203; as there, the gid maps to a leased host id (as "
	  "root) or the caller's gid (rootless), not to this group.",
	  "A gid that is also a host group's is easy to mistake for that group's access in reviews.",
	  rule_gid_host_group },
	{ "CDN301", "writable-host-mount", "A host directory is mounted writable", LINT_WARNING, "6.0",
	  "Drop rw: true and write results under /workspace/out, or use a tmpfs for scratch space",
	  "Fires on every bind mount with `rw: true`. tmpfs mounts are not host paths and are not flagged.",
	  "A writable host mount is a way for untrusted code to leave something behind for the next run, "
	  "the host or another tenant: planted files, replaced scripts, filled disks. The workspace and its "
	  "declared outputs are the contract for what a program produces.",
	  rule_mount_writable },
	{ "CDN302", "sensitive-host-mount", "A sensitive host path is mounted", LINT_ERROR, "8.5",
	  "Mount only what the interpreter needs (/usr, /lib, /lib64, /etc/alternatives), or narrower paths",
	  "Fires when a bind mount's source is, contains, or (for /proc, /sys, /dev, /root, /boot, /home, "
	  "/var/lib/docker and a few more) lies inside a sensitive host path: `/`, `/etc` (its own files; "
	  "`/etc/alternatives` and `/etc/ssl/certs` are fine; `/etc/shadow`, `/etc/ssh`, `/etc/sudoers`, "
	  "`/etc/ssl/private`, `/etc/kubernetes` and `/etc/docker` are not), `/proc`, `/sys`, `/dev`, "
	  "`/root`, `/home` and everything in it, `/boot`, `/var/lib/docker`, `/var/lib/containerd`, "
	  "`/var/lib/containers`, `/var/lib/kubelet`, `/run/secrets`. A parent counts: `/var` contains "
	  "`/var/lib/docker`. Paths are canonicalised first (`//`, `.`, `..`, `/var/run` as `/run`) and, "
	  "when the path exists on the linting host, resolved with realpath, since a bind mount follows a "
	  "symlink.",
	  "These paths hold credentials, kernel interfaces or other tenants' data; read-only access is "
	  "enough to steal keys or learn the host.",
	  rule_mount_sensitive },
	{ "CDN303", "container-runtime-socket", "A container runtime's API socket is mounted", LINT_ERROR, "9.8",
	  "Remove the mount; a tool on the trusted side can do the one thing the program needs",
	  "Fires when a bind mount's source is a Docker, containerd, CRI-O, podman, cri-dockerd or BuildKit "
	  "socket, a directory that holds one (`/run`, `/var/run`, `/run/user`, a rootless user's "
	  "`/run/user/UID`...), anything inside a runtime's own directory (`/run/containerd`, `/run/docker`, "
	  "`/run/crio`, `/run/podman`, `/run/buildkit`: the ttrpc twin `containerd.sock.ttrpc` and the shim "
	  "sockets are control too), or any file named like one (`docker.sock`, `containerd.sock`, ...). Paths are "
	  "canonicalised as for CDN302, so `/var/run/docker.sock`, `/run//docker.sock` and a symlink to "
	  "the socket are all caught.",
	  "Whoever can talk to a container runtime's socket can start a privileged container with the "
	  "host's root file system mounted: it is root on the host, read-only mount or not.",
	  rule_mount_runtime_socket },
	{ "CDN401", "limits-unset", "Core limits are left to defaults", LINT_NOTE, "1.0",
	  "Write timeout, memory, pids, max_file_bytes and max_exec_workspace_delta_bytes in "
	  "execution.runtime, even when the defaults suit you",
	  "Fires when `execution.runtime` does not set one of `timeout`, `memory`, `pids`, "
	  "`max_file_bytes` or `max_exec_workspace_delta_bytes`. The defaults (30s, 1g, 64, 100m, 250m) "
	  "still apply; the finding lists what was left out.",
	  "Limits written in the descriptor are reviewed with it and do not move when a default changes "
	  "in a later cordon release.",
	  rule_limits_unset },
	{ "CDN402", "timeout-excessive", "The execution timeout is over an hour", LINT_WARNING, "4.0",
	  "Lower execution.runtime.timeout; long jobs belong in several executions",
	  "Fires when `execution.runtime.timeout` is above 1h (the compiler accepts up to 24h).",
	  "A runaway or hostile program holds a CPU, memory and its tool budget for the whole timeout.",
	  rule_limit_timeout },
	{ "CDN403", "memory-excessive", "The memory limit is above 16g", LINT_WARNING, "4.0",
	  "Lower execution.runtime.memory to what the program needs",
	  "Fires when `execution.runtime.memory` is above 16g.",
	  "Memory is the resource a hostile program exhausts first; a limit near the host's size is no "
	  "limit for the other tenants.",
	  rule_limit_memory },
	{ "CDN404", "pids-excessive", "The process limit is above 1024", LINT_WARNING, "4.0",
	  "Lower execution.runtime.pids (64 fits most data programs)",
	  "Fires when `execution.runtime.pids` is above 1024.",
	  "The pids limit is what stops a fork bomb; thousands of processes are a denial of service on a "
	  "shared host.",
	  rule_limit_pids },
	{ "CDN405", "file-size-excessive", "The largest file may be above 10g", LINT_WARNING, "3.0",
	  "Lower execution.runtime.max_file_bytes",
	  "Fires when `execution.runtime.max_file_bytes` (RLIMIT_FSIZE) is above 10g.",
	  "One file that size fills most disks the workspace lives on.",
	  rule_limit_file_bytes },
	{ "CDN406", "workspace-excessive", "The workspace may grow past a sane size", LINT_WARNING, "3.0",
	  "Lower max_exec_workspace_delta_bytes (and max_exec_workspace_bytes)",
	  "Fires when `execution.runtime.max_exec_workspace_delta_bytes` is above 16g or "
	  "`max_exec_workspace_bytes` is above 64g.",
	  "The workspace lives on the host's disk; a program that may write that much can fill it for "
	  "everyone.",
	  rule_limit_workspace },
	{ "CDN407", "memory-per-process", "The memory limit may hold each process, not the total", LINT_WARNING,
	  "4.0",
	  "Add cgroup to execution.executor.require, so a host that cannot give a memory cgroup refuses the run",
	  "Fires when `execution.executor.require` does not list `cgroup`, whether `execution.runtime.memory` "
	  "is written or left at its default (1g). cordon holds the memory limit with a memory cgroup where "
	  "the host gives one to the caller (cgroup v2 delegated to it, or a cgroup v1 hierarchy it may write; "
	  "docs/cgroups.md). Without one it falls back to RLIMIT_AS, which bounds the address space of each "
	  "process and not their total: a program that starts several processes holds several times the "
	  "limit (six processes held 2.4 GiB under `memory: 512m`). The result's `enforcement.memory` says "
	  "which applied (`rlimit-as`). With `require: [cgroup]` such a host is a harness error instead. "
	  "Rootless callers without a delegated cgroup are the usual case; a descriptor that must run there "
	  "can suppress this with its reason.",
	  "A limit read as a total while it holds per process is no limit for the host's other tenants, and "
	  "RLIMIT_AS also counts address space that was never touched, so it is both too loose and too tight.",
	  rule_limit_memory_cgroup },
	{ "CDN501", "seccomp-profile-unnamed", "No seccomp profile is named", LINT_NOTE, "1.0",
	  "Name the profile: execution.executor.seccomp: { profile: python-compute }",
	  "Fires when the descriptor has no `execution.executor.seccomp.profile`. The default profile "
	  "(python-compute) applies; the finding says which.",
	  "The filter is the executor's last layer; a reviewer should see which one without knowing the "
	  "compiler's defaults.",
	  rule_seccomp_unnamed },
	{ "CDN502", "seccomp-default-allow", "The seccomp policy allows what it does not name", LINT_ERROR, "8.0",
	  "Make the default a refusal: default errno(ENOSYS); and allow what the program needs",
	  "Fires when the policy's `default` action (in the profile, or in the descriptor's extra policy "
	  "file) is `allow` or `log`. A default from the extra file is pointed at there; one from the "
	  "profile at the profile's name in the descriptor.",
	  "A default-allow filter lets every new or forgotten syscall through, including those added to "
	  "future kernels. Allowlists fail closed.",
	  rule_seccomp_default_allow },
	{ "CDN503", "seccomp-dangerous-syscall", "The seccomp policy allows a dangerous syscall", LINT_ERROR, "8.5",
	  "Remove the allow rule, or refuse the call: errno(EPERM) { NAME }",
	  "Fires for each of ptrace, process_vm_readv/writev, bpf, mount, umount2, pivot_root, the new "
	  "mount API (open_tree, move_mount, fsopen, fsmount), unshare, setns, keyctl, add_key, "
	  "request_key, perf_event_open, io_uring_setup/enter/register, userfaultfd, kexec_load, "
	  "kexec_file_load, init_module, finit_module and open_by_handle_at that the policy allows (or "
	  "logs), by a rule or by its default. A conditional allow counts: the message says so. A rule in "
	  "the descriptor's extra policy file is pointed at in that file; one from the profile at the "
	  "profile's name, with the profile's file:line:col in the message.",
	  "These calls are how sandboxed code inspects other processes, changes the mount tree, enters "
	  "namespaces, or reaches the kernel code with the longest CVE record (BPF, io_uring, perf, "
	  "keyrings). base.policy refuses them all.",
	  rule_seccomp_dangerous },
	{ "CDN504", "landlock-off", "Landlock is turned off", LINT_WARNING, "5.0",
	  "Set execution.executor.landlock: true (the default) and add require: [landlock]",
	  "Fires when `execution.executor.landlock` is false.",
	  "Landlock restricts file access by path from inside the kernel, independently of the mount "
	  "tree; without it one mistake in the mounts is the whole defence.",
	  rule_landlock_off },
	{ "CDN601", "env-secret-name", "A secret-looking name in the executor's environment", LINT_WARNING, "6.5",
	  "Give the secret to the tool that needs it (env_from) instead of the executor",
	  "Fires when a name in `execution.executor.env` contains PASSWORD, PASSWD, PASSPHRASE, SECRET, "
	  "TOKEN, CREDENTIAL, APIKEY, or API, ACCESS, PRIVATE, SIGNING, ENCRYPTION, MASTER or SESSION "
	  "followed by KEY, as a whole word (split on `_`, `-`, `.` and a lower-to-upper case change, any "
	  "case; plurals too), or ends in the word PASS or PWD (`DB_PASS`), and its value is not trivially "
	  "a flag (`0`, `1`, `true`, `off`...). Not flagged: names whose last word says they hold no "
	  "secret (`_FILE`, `_PATH`, `_DIR`, `_ENDPOINT`, `_URL`, `_TYPE`, `_TTL`, `_LEN`...); names with a "
	  "word of quantity (`MAX`, `MIN`, `NUM`, `LIMIT`, `COUNT`, `BUDGET`, `SIZE`, `RATE`...), which "
	  "size the thing rather than hold it (`MAX_TOKENS`, `NUM_TOKENS`, `TOKEN_LIMIT`, "
	  "`PASSWORD_MIN_LEN`); and known benign names (`TOKENIZERS_PARALLELISM`, `PASSWORD_STORE_DIR`, "
	  "`HF_HUB_DISABLE_IMPLICIT_TOKEN`). A credential under such a name is still caught by its value "
	  "(CDN602, CDN603).",
	  "The executor's environment is readable by the generated program and stored in clear text in "
	  "the policy blob. Secrets belong on the trusted side, in a tool's env_from.",
	  rule_env_secret_name },
	{ "CDN602", "env-secret-value", "A credential in the executor's environment", LINT_ERROR, "9.0",
	  "Remove the value, revoke the credential, and give it to a tool through env_from",
	  "Fires when a value in `execution.executor.env` holds a known credential format: a "
	  "`-----BEGIN ... PRIVATE KEY-----` block, GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, "
	  "`github_pat_`), GitLab (`glpat-`), Slack (`xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-`), AWS "
	  "access key ids (`AKIA`, `ASIA`), `sk-` API keys, Stripe (`sk_live_`, `rk_live_`), Google "
	  "(`AIza`), npm (`npm_`) and Hugging Face (`hf_`) tokens with their usual lengths, JSON Web "
	  "Tokens, HTTP Authorization values (`Bearer ...`, `Basic ...` with at least 16 characters), and "
	  "URLs with a password (`scheme://user:pass@host`).",
	  "A credential in a descriptor is in version control, in every compiled blob and in the "
	  "environment of code written by a model: treat it as leaked.",
	  rule_env_secret_value },
	{ "CDN603", "env-high-entropy", "A random-looking value in the executor's environment", LINT_WARNING, "5.0",
	  "If it is a key or token, move it to a tool's env_from; if not, suppress with a reason",
	  "Fires when a value in `execution.executor.env` is one token of at least 20 characters with "
	  "letters and digits, a Shannon entropy of at least 3.8 bits a character and at least 85% of "
	  "log2 of its length (capped at 64) (hex strings: at least 32 characters and 3.5 bits), and is "
	  "neither a path nor a URL. Not flagged: values that CDN602 recognises (left to it), UUIDs "
	  "(8-4-4-4-12 hex digits: run and dataset ids far more often than keys), and hex values under "
	  "a name whose last word says it is a digest or a pin (`_SHA`, `_SHA256`, `_HASH`, `_DIGEST`, "
	  "`_CHECKSUM`, `_COMMIT`, `_REVISION`, `_REV`, `_MD5`). Ordinary long paths, model names "
	  "(`sentence-transformers/all-MiniLM-L6-v2`) and versions fall well below the threshold.",
	  "Keys and tokens of unknown formats still look random; names and paths do not.",
	  rule_env_high_entropy },
	{ "CDN604", "env-tool-secret", "A tool's secret is also in the executor's environment", LINT_ERROR, "8.5",
	  "Remove it from execution.executor.env: only the tool should see it",
	  "Fires when a name in `execution.executor.env` is also in some tool's `env_from`.",
	  "env_from exists so that a secret stays on the trusted side with the one tool that uses it; "
	  "setting the same name for the executor hands it to the generated program.",
	  rule_env_tool_secret },
	{ "CDN701", "side-effect-without-replay", "A side-effect tool has replay protection off", LINT_WARNING,
	  "6.0", "Remove replay: false unless the tool is idempotent, and say why in a suppression",
	  "Fires on a tool with `side_effect: true` and `replay: false`.",
	  "With replay on, the ledger records each message id and answers a retried call from the record; "
	  "off, a retry or a replayed request runs the side effect again: a second mail, a second "
	  "payment.",
	  rule_tool_no_replay },
	{ "CDN702", "unbounded-parameter", "A tool parameter has no size bound", LINT_WARNING, "5.0",
	  "Add max_length (or an enum) to strings and max_items to arrays",
	  "Fires on each string parameter without `max_length` or `enum`, and each array without "
	  "`max_items`, at any depth: inside arrays (`items`) and objects (`properties`), named by their "
	  "path (`equations[].coefficients`). Objects are closed (unknown properties are refused), so an "
	  "object is bounded when its properties are.",
	  "Parameters are the input of code on the trusted side. Unbounded ones let generated code send "
	  "megabytes to a tool, or smuggle data out through a field nobody sized.",
	  rule_tool_unbounded_param },
	{ "CDN703", "tool-without-roles", "A tool names no roles", LINT_WARNING, "5.0",
	  "Add allow: { roles: [ROLE] } with the roles that may call it",
	  "Fires on a tool without `allow.roles`. Such a tool may be called by any caller whose agent "
	  "lists it, whatever roles the request context carries.",
	  "Roles are the second key on every tool; without them, listing a tool for an agent is enough "
	  "to hand it to every user of that agent.",
	  rule_tool_no_roles },
	{ "CDN704", "wildcard-role", "A tool allows a catch-all role", LINT_WARNING, "5.0",
	  "Name the roles that need the tool instead of one every caller has",
	  "Fires on a role in `allow.roles` named `*`, `any`, `all`, `everyone`, `anyone`, `public`, "
	  "`anonymous`, `default` or `authenticated` (any case). cordon compares roles literally; these "
	  "names are the ones platforms give to every caller.",
	  "A catch-all role looks like a restriction in review and is none in practice.",
	  rule_tool_wildcard_role },
	{ "CDN705", "tool-exec-writable", "A tool implementation lies where others can write", LINT_ERROR, "8.0",
	  "Install the implementation under a root-owned directory (/usr/local/libexec/...) and give its "
	  "absolute path",
	  "Fires on an `exec` entry that is code to run: the program (`exec[0]`), the first operand after "
	  "an interpreter (python3, sh, bash, node, perl, ruby; not after `-m` or `-c`), and any argument or "
	  "`--opt=VALUE` naming a script (.py, .sh, .js, .rb, .pl), when it is relative or lies under "
	  "`/workspace`, `/tmp`, `/var/tmp`, `/dev/shm` or `/supervisor-socket`. Other arguments are data "
	  "(an outbox directory, an address) and are not judged; URLs are not paths.",
	  "Tools run on the trusted side with their secrets. An implementation that the sandboxed program, "
	  "or any local user, can write is an implementation they can replace.",
	  rule_tool_exec_writable },
	{ "CDN706", "tool-timeout-above-execution", "A tool may outlive the execution", LINT_WARNING, "2.0",
	  "Lower the tool's timeout below execution.runtime.timeout",
	  "Fires when a tool's `timeout` (10s when not written) is longer than `execution.runtime.timeout`.",
	  "The execution ends at its timeout and cancels its tool calls; a longer tool timeout is never "
	  "reached and misleads whoever sizes the tool.",
	  rule_tool_timeout },
	{ "CDN707", "unused-tool-secret", "A secret is held for a tool no agent can call", LINT_WARNING, "4.0",
	  "List the tool for the agent that needs it, or drop the tool (and its secret) from the inventory",
	  "Fires for each `env_from` name of a tool that no agent in the descriptor lists. Skipped when "
	  "the descriptor has no agents. Inventories have no list of secrets apart from the tools' "
	  "`env_from`, so a secret is declared exactly where a tool takes it; the useful reading of "
	  "\"a secret no tool uses\" is then a secret only tools nobody can call take, which is what "
	  "this checks.",
	  "Every configured secret is exposure; one configured for a tool nobody may call buys nothing.",
	  rule_tool_unused_secret },
	{ "CDN708", "tool-runs-as-supervisor", "A tool runs with the supervisor's identity", LINT_WARNING, "7.0",
	  "Leave run_as out (a dedicated unprivileged identity), or name an unprivileged user with "
	  "run_as: { user: NAME }",
	  "Fires on `run_as: supervisor`. The tool then runs as the user that runs `cordon`: as root, with "
	  "uid 0 and every capability, and in no user namespace. Other tools get a dedicated uid and gid "
	  "of the run, no supplementary groups, no capabilities and no_new_privs.",
	  "A tool runs code on the sandbox's behalf with the sandbox's chosen parameters; a bug in it "
	  "run as root is a host compromise, the same bug run as an unprivileged user is not.",
	  rule_tool_run_as_supervisor },
	{ "CDN709", "constraint-unsatisfiable", "A tool constraint can never hold", LINT_ERROR, "4.0",
	  "Fix the constraint or the parameter's bounds: as written, every call of the tool is denied",
	  "Judges each of a tool's `constraints` against the bounds the bridge enforces before it runs them "
	  "(`min`/`max`, `min_length`/`max_length`, `max_items`, `enum`, `required`). Every comparison of "
	  "a parameter or `len()` with a literal, another parameter or `len()` is judged on intervals; `==`, "
	  "`!=`, `in`, `starts_with` and `ends_with` on a string with an `enum` or length bounds by its "
	  "possible values. `&&`, `||` and `!` are followed at any depth, with `has(p)` guards: "
	  "`has(p) && E` and `!has(p) || E` judge `E` with `p` given. Fires when no call the signature "
	  "accepts can make the constraint true: `amount > 500` with `max: 100`, `len(to) < 2` with "
	  "`min_length: 3`, `priority == \"urgent\"` with `enum: [low, high]`. The finding points at the "
	  "smallest part that decides (one side of an `&&`). The analysis is sound, not complete: each "
	  "comparison is judged alone, so `x > 7 && x < 5` over an unbounded `x` is not found, while a "
	  "constraint that some call can satisfy is never reported.",
	  "A constraint that cannot hold turns a tool off without saying so: every call is denied as "
	  "`tool_denied`, usually because a bound and a constraint were edited apart.",
	  rule_constraint_unsatisfiable },
	{ "CDN710", "constraint-always-true", "A tool constraint always holds (dead constraint)", LINT_WARNING, "2.0",
	  "Tighten the constraint to what it was meant to restrict, or remove it",
	  "The same analysis as CDN709; fires when every call the signature accepts makes the constraint "
	  "true: `amount <= 1000` with `max: 100`, `has(to)` with `to` required, `priority in [...]` "
	  "listing the whole `enum`. A constraint that reads an optional parameter without `has()` is not "
	  "dead: it denies calls that leave the parameter out (CDN711).",
	  "A reviewer reads a constraint as a restriction; one that never denies anything restricts "
	  "nothing, and often means the bound it was meant to mirror was changed.",
	  rule_constraint_always_true },
	{ "CDN711", "constraint-unguarded-optional", "A constraint reads an optional parameter without has()",
	  LINT_WARNING, "2.0",
	  "Guard the read: !has(p) || ... to allow calls without p, has(p) && ... to require it",
	  "Fires for each parameter that is not `required` and that a constraint reads (compares, measures "
	  "with `len()`, tests with `starts_with`...) where the constraint does not already know it is "
	  "given: on the right of `has(p) &&` or `!has(p) ||`, at any depth. The finding points at the "
	  "first such read. Reading an absent parameter makes the constraint fail and the call is denied "
	  "(docs/constraints.md), so the unguarded read silently makes the parameter required.",
	  "The signature says the parameter may be left out, and the constraint says it may not: the "
	  "model reads the first, the bridge enforces the second, and calls fail in ways neither explains.",
	  rule_constraint_unguarded_optional },
	{ "CDN712", "tool-unlisted", "No agent lists the tool", LINT_WARNING, "3.0",
	  "List the tool for the agent that needs it, or remove it from the inventory",
	  "Fires on each tool that no agent in the descriptor's `agents` lists. Skipped when the "
	  "descriptor has no agents (then it does not say who calls what). CDN707 adds one finding for "
	  "each secret such a tool takes.",
	  "A tool no agent may call is authority compiled into the policy for nobody: dead today, and "
	  "one line in an agent's list away from being live without review of the tool itself.",
	  rule_tool_unlisted },
	{ "CDN713", "side-effect-without-budget", "A side-effect tool has no call budget", LINT_WARNING, "4.0",
	  "Add max_calls (per execution) or max_calls_per_day (per tenant, user and day, in the ledger)",
	  "Fires on a tool with `side_effect: true` and neither `max_calls` nor `max_calls_per_day` "
	  "(docs/tools.md; the daily budget is counted in the ledger, docs/ledger.md).",
	  "Generated code loops. A tool that sends, pays or deletes should run a bounded number of times "
	  "per run and per day, not as often as a loop can call it before the timeout.",
	  rule_tool_unbudgeted },
	{ "CDN714", "tool-exec-shell", "A tool runs a shell, or code given as a string", LINT_WARNING, "5.0",
	  "Put the tool's code in a file (/usr/local/libexec/...) and run it directly or with its interpreter",
	  "Fires when a tool's program (`exec[0]`, or the program after `env` and its options) is a shell "
	  "(sh, bash, dash, zsh, ksh, mksh, ash, yash, fish, csh, tcsh, or busybox running one of them), "
	  "with or without `-c`; or an interpreter given its program as a string: python -c, perl -e/-E, "
	  "ruby -e, node -e/-p/--eval, php -r, lua -e, Rscript -e, deno eval (also at the end of a cluster "
	  "such as `-Sc` or `-ne`), before the first operand. `python3 /opt/tools/x.py` is not flagged: "
	  "after a script, arguments are the script's.",
	  "Code written as a string in the inventory is reviewed as configuration, not as code, and a "
	  "shell re-parses whatever reaches it: a parameter passed through a shell is one quoting mistake "
	  "from running as a command on the trusted side, with the tool's secrets.",
	  rule_tool_exec_shell },
	{ "CDN715", "tool-exec-host-writable", "On this host, others may change a tool's code", LINT_ERROR, "8.0",
	  "Make the file and every directory above it owned by root and writable by nobody else "
	  "(chown root:root, chmod go-w)",
	  "Walks each path CDN705 reads as code (the program, an interpreter's script, an argument naming "
	  "a script) on the host that runs lint, one component at a time with lstat, following symlinks "
	  "to their targets and checking those too, as the supervisor does for `exec[0]` before each call "
	  "(common/tool_path.c). Fires when the file or a directory on the way is owned by an ordinary "
	  "user, or is writable by its group or by others, sticky bit or not (anyone may create a name in "
	  "a sticky directory). Ordinary means anyone but root and the account named `cordon` (the service "
	  "account, when the host has one): system accounts count as ordinary too. The compiler already "
	  "refuses an unsafe `exec[0]` by the same walk but trusts the compiling user as well; this rule "
	  "does not, and it also judges scripts, which the supervisor does not check. A path that does "
	  "not exist on this host is not reported, but the existing directories above it are judged. The "
	  "answer depends on the host: lint where the tools are installed.",
	  "Tools run on the trusted side with their secrets. A file that an ordinary user can replace, "
	  "or that lies in a directory they can write, is code they can run with those secrets.",
	  rule_tool_exec_host_writable },
};

const struct lint_rule *lint_catalogue(size_t *n)
{
	*n = sizeof(catalogue) / sizeof(catalogue[0]);
	return catalogue;
}

const struct lint_rule *lint_rule_find(const char *id)
{
	size_t i;

	for (i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (strcasecmp(catalogue[i].id, id) == 0 || strcmp(catalogue[i].name, id) == 0)
			return &catalogue[i];
	return NULL;
}

const char *lint_sev_name(enum lint_sev s)
{
	switch (s) {
	case LINT_ERROR: return "error";
	case LINT_WARNING: return "warning";
	case LINT_NOTE: return "note";
	case LINT_OFF: break;
	}
	return "off";
}

int lint_sev_parse(const char *s, enum lint_sev *out)
{
	if (strcmp(s, "error") == 0)
		*out = LINT_ERROR;
	else if (strcmp(s, "warning") == 0)
		*out = LINT_WARNING;
	else if (strcmp(s, "note") == 0)
		*out = LINT_NOTE;
	else if (strcmp(s, "off") == 0)
		*out = LINT_OFF;
	else
		return -1;
	return 0;
}
