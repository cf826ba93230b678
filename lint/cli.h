/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h - the lint, explain and diff commands of cordonc.  compiler/cordonc.c
 * lists them in its command table; their flags, output and exit status are
 * handled here, in the same manner as the other commands there.
 */
#ifndef CORDON_LINT_CLI_H
#define CORDON_LINT_CLI_H

int lint_cmd_lint(int argc, char **argv);
int lint_cmd_explain(int argc, char **argv);
int lint_cmd_diff(int argc, char **argv);

#define LINT_SYNOPSIS "APP.yaml TOOLS.yaml [TOOLS.yaml...] [--format FMT] [--config FILE] [OPTIONS]"
#define LINT_HELP                                                                                             \
	"Compile the inputs and run the rule catalogue over them.  Each finding points\n"                     \
	"at the exact key or value: file:line:col: severity: message [ID], the line,\n"                       \
	"a caret and a hint.  'cordonc explain ID' tells what a rule checks and why.\n\n"                      \
	"  -f, --format FMT         text (default), json, sarif (SARIF 2.1.0), junit,\n"                     \
	"                           github (workflow commands), gitlab (Code Quality)\n"                     \
	"                           or checkstyle\n"                                                         \
	"  -c, --config FILE        read settings from FILE, not .cordonlint.yaml\n"                         \
	"      --no-config          read no config file\n"                                                   \
	"      --ignore GLOB        drop findings in files matching GLOB\n"                                  \
	"      --inline-suppressions  honour '# cordon: allow' (over a config's false)\n"                    \
	"      --color[=WHEN]       auto (default: at a terminal, not with NO_COLOR),\n"                     \
	"                           always or never\n"                                                       \
	"  -l, --fail-level LEVEL   exit 1 on a finding at or above LEVEL: error,\n"                            \
	"                           warning (default) or note\n"                                               \
	"  -b, --baseline FILE      report only findings the baseline does not know\n"                          \
	"  -w, --write-baseline FILE  write the current findings as a baseline, exit 0\n"                       \
	"  -n, --no-inline-suppressions  ignore '# cordon: allow' comments (strict CI)\n"                       \
	"  -r, --rule ID=LEVEL      change a rule's severity, or turn it off (ID or name)\n"                 \
	"  -o, --output FILE        write the report here instead of standard output\n"                        \
	"  -I, --policy-dir DIR     look for seccomp profiles here first\n"                                    \
	"  -e, --explain ID         print what rule ID checks, and exit\n"                                      \
	"  -h, --help               this text\n\n"                                                             \
	"Settings come from .cordonlint.yaml, found in the working directory or a\n"                        \
	"parent up to the one holding .git (docs/lint.md); a flag beats the file.\n\n"                     \
	"Suppress one finding with a reason on its line or the line before:\n"                                 \
	"  # cordon: allow CDN301 [until YYYY-MM-DD] -- why this is acceptable\n\n"                            \
	"Exit: 0 clean, 1 findings at or above the fail level, 2 usage error,\n"                               \
	"unreadable input, or input that does not compile.\n"

#define EXPLAIN_SYNOPSIS "ID|NAME | --all [--markdown]"
#define EXPLAIN_HELP                                                                                          \
	"Print what a lint rule checks, why it matters and how to fix it.\n\n"                                 \
	"  -a, --all        every rule\n"                                                                      \
	"  -m, --markdown   as Markdown (docs/rules.md is this, for --all)\n"                                   \
	"  -h, --help       this text\n\n"                                                                     \
	"Exit: 0 shown, 2 unknown rule or usage error.\n"

#define DIFF_SYNOPSIS "OLD.cpol NEW.cpol [--json]"
#define DIFF_HELP                                                                                             \
	"Compare two policy blobs by meaning and mark each change as widening (more\n"                        \
	"authority: a new mount, network, a looser limit, a syscall allowed, a tool,\n"                       \
	"role or secret added, a budget raised) or narrowing, or as a neutral change.\n\n"                     \
	"  -j, --json   machine-readable output\n"                                                             \
	"  -h, --help   this text\n\n"                                                                         \
	"Exit: 0 nothing widens, 1 something widens (ask for a second review),\n"                              \
	"2 usage error, unreadable file or invalid blob.\n"

#endif
