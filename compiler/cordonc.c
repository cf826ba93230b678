/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cordonc.c - main() and argument parsing of the policy compiler.
 *
 * Each command parses its flags, calls library code that returns errors
 * instead of printing them, and decides the exit status here:
 *   0  success
 *   1  the answer is "no": a blob was rejected, a signature did not verify
 *   2  usage error, unreadable input, or input with errors (compile)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include <errno.h>
#include <seccomp.h>

#include "compiler/bpf_disasm.h"
#include "compiler/bpf_sim.h"
#include "compiler/compile.h"
#include "compiler/constants.h"
#include "compiler/describe.h"
#include "compiler/inspect.h"
#include "compiler/sign.h"
#include "cordon/blob.h"
#include "cordon/keys.h"
#include "cordon/version.h"
#include "lint/cli.h"
#include "lint/provenance.h"

#define EXIT_NO 1
#define EXIT_USAGE 2

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
	const char *help;
};

static const struct command *command_find(const char *name);

static int usage_error(const char *cmd, const char *msg)
{
	fprintf(stderr, "cordonc %s: %s", cmd, msg);
	fprintf(stderr, "\nTry 'cordonc %s --help'.\n", cmd);
	return EXIT_USAGE;
}

static int print_help(const char *name)
{
	const struct command *c = command_find(name);

	if (c == NULL)
		return EXIT_USAGE;
	printf("usage: cordonc %s %s\n\n%s", c->name, c->synopsis, c->help);
	return 0;
}

/* Shared option loop for the commands: returns the option, -1 at the end,
 * or '?' after printing a usage error. */
static int next_opt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

/* --- compile ------------------------------------------------------------ */

/* The day a suppression's `until` is judged against: SOURCE_DATE_EPOCH when
 * set (reproducible builds: the same sources then give the same blob on any
 * day), else today, in days since 1970-01-01 UTC. */
static long compile_today(void)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long t;

	if (e != NULL && *e != '\0') {
		errno = 0;
		t = strtoll(e, &end, 10);
		if (errno == 0 && *end == '\0' && t >= 0)
			return (long)(t / 86400);
	}
	return (long)(time(NULL) / 86400);
}

static int cmd_compile(int argc, char **argv)
{
	static const struct option opts[] = { { "output", required_argument, NULL, 'o' },
					      { "policy-dir", required_argument, NULL, 'I' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct compile_options copt = { NULL, 0 };
	const char *idirs[16];
	char **defdirs = NULL, **alldirs = NULL;
	size_t nidirs = 0, ndef = 0, i;
	struct compile_inputs in;
	struct lint_options lopt;
	struct lint_ctx lc;
	struct blob_error be;
	struct diags d;
	const char *out = NULL;
	uint8_t *blob = NULL;
	size_t blen = 0;
	char err[512];
	int c, rc = EXIT_USAGE;

	while ((c = next_opt(argc, argv, "o:I:h", opts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'I':
			if (nidirs == sizeof(idirs) / sizeof(idirs[0]))
				return usage_error("compile", "too many -I options");
			idirs[nidirs++] = optarg;
			break;
		case 'h': return print_help("compile");
		default: return usage_error("compile", "bad option");
		}
	}
	if (out == NULL)
		return usage_error("compile", "missing -o OUTPUT");
	if (argc - optind < 2)
		return usage_error("compile", "needs an app descriptor and at least one tool inventory");

	diags_init(&d);
	memset(&lc, 0, sizeof(lc));
	policy_init(&lc.p);
	/* -I directories come before the default policy path. */
	defdirs = compile_default_policy_dirs(&ndef);
	alldirs = calloc(nidirs + ndef + 1, sizeof(*alldirs));
	if (alldirs == NULL) {
		diag_at(&d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		memset(&in, 0, sizeof(in));
		goto out;
	}
	for (i = 0; i < nidirs; i++)
		alldirs[i] = (char *)idirs[i];
	for (i = 0; i < ndef; i++)
		alldirs[nidirs + i] = defdirs[i];
	copt.policy_dirs = (const char *const *)alldirs;
	copt.npolicy_dirs = nidirs + ndef;
	if (compile_inputs_read(&in, argv[optind], (const char *const *)argv + optind + 1,
				(size_t)(argc - optind - 1), &d) != 0)
		goto out;
	policy_free(&lc.p);
	/* The compile is lint's own first stage; the catalogue then runs at
	 * its default levels with the sources' inline suppressions, so the
	 * recorded verdict follows from the recorded sources alone. */
	memset(&lopt, 0, sizeof(lopt));
	lopt.policy_dirs = copt.policy_dirs;
	lopt.npolicy_dirs = copt.npolicy_dirs;
	lopt.today = compile_today();
	if (lint_run(&lc, &lopt, &in.app, in.refs, in.ntools, &d) != 0)
		goto out;
	if (provenance_record(&lc, err, sizeof(err)) != 0) {
		diag_at(&d, DIAG_ERROR, NULL, 0, 0, "cannot record provenance: %s", err);
		goto out;
	}
	if (blob_emit(&lc.p, &blob, &blen, &be) != 0) {
		diag_at(&d, DIAG_ERROR, NULL, 0, 0, "cannot encode the policy: %s (%s)", be.msg, be.field);
		goto out;
	}
	if (outfile_write_atomic(out, blob, blen, 0644, err, sizeof(err)) != 0) {
		diag_at(&d, DIAG_ERROR, NULL, 0, 0, "%s", err);
		goto out;
	}
	rc = 0;
out:
	diags_print(&d, stderr);
	if (rc != 0 && d.nerrors > 0)
		fprintf(stderr, "cordonc: %zu error%s; no output written\n", d.nerrors, d.nerrors == 1 ? "" : "s");
	free(blob);
	lint_ctx_free(&lc);
	diags_free(&d);
	compile_inputs_free(&in);
	compile_dirs_free(defdirs, ndef);
	free(alldirs);
	return rc;
}

/* --- loading a blob for inspect / verify / sign ------------------------- */

/* Read and validate path.  Unreadable: EXIT_USAGE; invalid: EXIT_NO. */
static int load_blob(const char *cmd, const char *path, uint8_t **buf, size_t *len, struct cpol_policy *p)
{
	struct blob_error be;
	char err[512];

	policy_init(p);
	if (file_read_all(path, CPOL_MAX_BLOB_SIZE, buf, len, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc %s: %s\n", cmd, err);
		return EXIT_USAGE;
	}
	if (blob_load(*buf, *len, BLOB_ANY_ARCH, p, &be) != 0) {
		fprintf(stderr, "cordonc %s: %s: invalid policy blob: %s [field %s, byte %llu]\n", cmd, path, be.msg,
			be.field, (unsigned long long)be.offset);
		return EXIT_NO;
	}
	return 0;
}

/* "--syscall NAME [ARG...]": what the blob's filter does with that call. */
static int inspect_syscall(const struct cpol_policy *p, const char *name, char **args, int nargs)
{
	struct bpf_sim_data d;
	char buf[64], *end;
	uint32_t ret, steps = 0;
	int nr, i;

	memset(&d, 0, sizeof(d));
	nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
	if (nr < 0) {
		fprintf(stderr, "cordonc inspect: unknown syscall '%s' for x86_64\n", name);
		return EXIT_USAGE;
	}
	if (nargs > 6) {
		fprintf(stderr, "cordonc inspect: a syscall has at most 6 arguments\n");
		return EXIT_USAGE;
	}
	for (i = 0; i < nargs; i++) {
		uint64_t v;

		errno = 0;
		v = strtoull(args[i], &end, 0);
		if (errno != 0 || end == args[i] || *end != '\0') {
			if (const_lookup(args[i], &v) != 0) {
				fprintf(stderr, "cordonc inspect: argument '%s' is neither a number nor a known constant\n",
					args[i]);
				return EXIT_USAGE;
			}
		}
		d.args[i] = v;
	}
	d.nr = nr;
	d.arch = CPOL_ARCH_X86_64;
	if (p->nseccomp == 0) {
		printf("%s: no seccomp filter in this blob\n", name);
		return EXIT_NO;
	}
	if (bpf_sim_exec(p->seccomp, p->nseccomp, &d, &ret, &steps) != 0) {
		fprintf(stderr, "cordonc inspect: the filter could not be run\n");
		return EXIT_NO;
	}
	printf("%s(", name);
	for (i = 0; i < nargs; i++)
		printf("%s%s", i ? ", " : "", args[i]);
	printf(") -> %s (%u instructions run)\n", bpf_sim_action_name(ret, buf, sizeof(buf)), steps);
	return 0;
}

static int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "syscall", required_argument, NULL, 's' },
					      { "disasm", no_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct cpol_policy p;
	const char *sys = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	int c, json = 0, disasm = 0, rc, nblob;
	char *text;

	/* "+": options first, so "--syscall ioctl 0 TIOCSTI app.cpol" keeps
	 * its arguments in order. */
	while ((c = next_opt(argc, argv, "+js:dh", opts)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': sys = optarg; break;
		case 'd': disasm = 1; break;
		case 'h': return print_help("inspect");
		default: return usage_error("inspect", "bad option");
		}
	}
	nblob = argc - 1; /* the blob is the last argument */
	if (argc - optind < 1 || (sys == NULL && argc - optind != 1))
		return usage_error("inspect", "needs exactly one blob (last)");
	rc = load_blob("inspect", argv[nblob], &buf, &len, &p);
	if (rc != 0)
		goto out;
	if (sys != NULL) {
		rc = inspect_syscall(&p, sys, argv + optind, nblob - optind);
		goto out;
	}
	if (disasm) {
		bpf_disasm(stdout, p.seccomp, p.nseccomp);
		goto out;
	}
	if (json) {
		text = inspect_json(&p, buf, len);
		if (text == NULL) {
			fprintf(stderr, "cordonc inspect: out of memory\n");
			rc = EXIT_NO;
			goto out;
		}
		printf("%s\n", text);
		cJSON_free(text);
	} else {
		inspect_text(stdout, argv[nblob], &p, buf, len);
	}
out:
	policy_free(&p);
	free(buf);
	return rc;
}

/* "--sources": one line per source, then the verdict.  Exit 0 only when
 * the files are exactly the recorded ones. */
static int verify_sources(const char *blob, const struct cpol_policy *p, const char *const *files, size_t nfiles,
			  const char *const *idirs, size_t nidirs)
{
	struct prov_report r;
	char **defdirs = NULL, err[256], want[65], got[65];
	const char **dirs = NULL;
	size_t ndef = 0, i;
	int rc = EXIT_NO;

	memset(&r, 0, sizeof(r));
	if (!p->prov.has) {
		fprintf(stderr,
			"cordonc verify: %s: the blob records no sources (format %u.%u; provenance came in 3.5): compile it again\n",
			blob, p->major, p->minor);
		return EXIT_NO;
	}
	defdirs = compile_default_policy_dirs(&ndef);
	dirs = calloc(nidirs + ndef + 1, sizeof(*dirs));
	if (dirs == NULL) {
		fprintf(stderr, "cordonc verify: out of memory\n");
		goto out;
	}
	for (i = 0; i < nidirs; i++)
		dirs[i] = idirs[i];
	for (i = 0; i < ndef; i++)
		dirs[nidirs + i] = defdirs[i];
	if (provenance_check(&p->prov, files, nfiles, dirs, nidirs + ndef, &r, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc verify: %s\n", err);
		goto out;
	}
	for (i = 0; i < r.n; i++) {
		const struct prov_item *it = &r.v[i];

		printf("%-10s %-10s %s", prov_status_name(it->status), policy_src_role_name(it->role), it->name);
		if (it->path != NULL && (it->found || strcmp(it->path, it->name) != 0))
			printf(" (%s%s)", it->found ? "found at " : "", it->path);
		if (it->status == PROV_CHANGED) {
			sodium_bin2hex(want, sizeof(want), it->want, 32);
			sodium_bin2hex(got, sizeof(got), it->got, 32);
			printf(": recorded sha256 %s, file has %s", want, got);
		} else if (it->status == PROV_UNREADABLE) {
			printf(": %s", it->why);
		}
		putchar('\n');
	}
	if (r.mismatches == 0) {
		printf("%s: built from exactly these %zu sources\n", blob, r.n);
		rc = 0;
	} else {
		printf("%s: %zu of %zu sources do not match\n", blob, r.mismatches, r.n);
	}
out:
	prov_report_free(&r);
	free(dirs);
	compile_dirs_free(defdirs, ndef);
	return rc;
}

static int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = { { "key", required_argument, NULL, 'k' },
					      { "sources", no_argument, NULL, 'S' },
					      { "policy-dir", required_argument, NULL, 'I' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct cpol_policy p;
	struct pubkey key;
	const char *keypath = NULL, *idirs[16];
	uint8_t *buf = NULL;
	size_t len = 0, nidirs = 0;
	char err[512], hex[65];
	int c, rc, sources = 0;

	while ((c = next_opt(argc, argv, "k:SI:h", opts)) != -1) {
		switch (c) {
		case 'k': keypath = optarg; break;
		case 'S': sources = 1; break;
		case 'I':
			if (nidirs == sizeof(idirs) / sizeof(idirs[0]))
				return usage_error("verify", "too many -I options");
			idirs[nidirs++] = optarg;
			break;
		case 'h': return print_help("verify");
		default: return usage_error("verify", "bad option");
		}
	}
	if (sources && argc - optind < 3)
		return usage_error("verify", "--sources needs the blob, then the descriptor and at least one inventory");
	if (!sources && argc - optind != 1)
		return usage_error("verify", "needs exactly one blob (and source files only with --sources)");
	if (keypath != NULL && key_read_public(keypath, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc verify: %s\n", err);
		return EXIT_USAGE;
	}
	rc = load_blob("verify", argv[optind], &buf, &len, &p);
	if (rc != 0)
		goto out;
	sodium_bin2hex(hex, sizeof(hex), p.sha256, 32);
	if (keypath != NULL && sig_verify_policy(&p, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc verify: %s: %s\n", argv[optind], err);
		rc = EXIT_NO;
		goto out;
	}
	printf("%s: valid policy blob, sha256 %s%s\n", argv[optind], hex,
	       keypath ? ", signature verified" : (p.signature.algo ? ", signed (signature not checked: no --key)"
								  : ", unsigned"));
	if (sources)
		rc = verify_sources(argv[optind], &p, (const char *const *)argv + optind + 1,
				    (size_t)(argc - optind - 1), idirs, nidirs);
out:
	policy_free(&p);
	free(buf);
	return rc;
}

static int cmd_keygen(int argc, char **argv)
{
	static const struct option opts[] = { { "public", required_argument, NULL, 'p' },
					      { "secret", required_argument, NULL, 's' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	const char *pub = NULL, *sec = NULL;
	char err[512];
	int c;

	while ((c = next_opt(argc, argv, "p:s:h", opts)) != -1) {
		switch (c) {
		case 'p': pub = optarg; break;
		case 's': sec = optarg; break;
		case 'h': return print_help("keygen");
		default: return usage_error("keygen", "bad option");
		}
	}
	if (pub == NULL || sec == NULL || optind != argc)
		return usage_error("keygen", "needs -p PUBLIC and -s SECRET, and nothing else");
	if (key_generate(pub, sec, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc keygen: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}

static int cmd_sign(int argc, char **argv)
{
	static const struct option opts[] = { { "secret", required_argument, NULL, 's' },
					      { "output", required_argument, NULL, 'o' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct seckey key;
	const char *sec = NULL, *out = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[512];
	int c, rc = EXIT_USAGE;

	memset(&key, 0, sizeof(key));
	while ((c = next_opt(argc, argv, "s:o:h", opts)) != -1) {
		switch (c) {
		case 's': sec = optarg; break;
		case 'o': out = optarg; break;
		case 'h': return print_help("sign");
		default: return usage_error("sign", "bad option");
		}
	}
	if (sec == NULL || argc - optind != 1)
		return usage_error("sign", "needs -s SECRET and exactly one blob");
	if (out == NULL)
		out = argv[optind];
	if (key_read_secret(sec, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc sign: %s\n", err);
		goto out;
	}
	if (file_read_all(argv[optind], CPOL_MAX_BLOB_SIZE, &buf, &len, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc sign: %s\n", err);
		goto out;
	}
	if (blob_sign(buf, len, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc sign: %s: %s\n", argv[optind], err);
		rc = EXIT_NO;
		goto out;
	}
	if (outfile_write_atomic(out, buf, len, 0644, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc sign: %s\n", err);
		goto out;
	}
	rc = 0;
out:
	sodium_memzero(&key, sizeof(key));
	free(buf);
	return rc;
}

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{ "compile", cmd_compile, "APP.yaml TOOLS.yaml [TOOLS.yaml...] -o OUT.cpol",
	  "Compile an app descriptor and its tool inventories into a policy blob.\n"
	  "Every error is reported as file:line:col with the source line; on any\n"
	  "error no output file is written.  The output is deterministic.\n\n"
	  "  -o, --output FILE   where to write the blob (written atomically)\n"
	  "  -I, --policy-dir DIR  look for seccomp profiles and includes here first\n"
	  "                      (then $CORDON_POLICY_PATH, then cordonc's own:\n"
	  "                      PREFIX/share/cordon/policies when installed,\n"
	  "                      the source tree's policies/ in a build tree)\n"
	  "  -h, --help          this text\n\n"
	  "Exit: 0 compiled, 2 usage error or input with errors.\n" },
	{ "inspect", cmd_inspect, "[--json | --disasm | --syscall NAME [ARG...]] BLOB",
	  "Validate a blob with the runtime's loader and show every section.\n\n"
	  "  -j, --json            machine-readable output\n"
	  "  -d, --disasm          disassemble the seccomp filter\n"
	  "  -s, --syscall NAME    run the filter on one call of NAME with the\n"
	  "                        given arguments (numbers or constants such as\n"
	  "                        AF_ALG) and print its action\n"
	  "  -h, --help            this text\n\n"
	  "Exit: 0 shown, 1 invalid blob, 2 usage error or unreadable file.\n" },
	{ "describe", cmd_describe, DESCRIBE_SYNOPSIS, describe_help },
	{ "verify", cmd_verify, "[--key KEY.pub] BLOB [--sources APP.yaml TOOLS.yaml... [POLICY...]]",
	  "Validate a blob (structure and SHA-256); with --key, also require a\n"
	  "valid Ed25519 signature by that key; with --sources, also require that\n"
	  "it was compiled from exactly these files (format 3.5 records the SHA-256\n"
	  "of every source).  Each recorded source is reported matched, changed,\n"
	  "missing or unreadable, each file given that the blob does not record as\n"
	  "extra.  A recorded seccomp policy file not given is looked for where the\n"
	  "compile found it (beside the descriptor, then on the policy path).\n\n"
	  "  -k, --key FILE        trusted public key\n"
	  "  -S, --sources         the arguments after BLOB are its sources: the\n"
	  "                        descriptor first, then inventories and policy files\n"
	  "  -I, --policy-dir DIR  look for unnamed policy files here first\n"
	  "  -h, --help            this text\n\n"
	  "Exit: 0 valid (and built from exactly these sources), 1 invalid, not\n"
	  "signed by the key, or a source that does not match, 2 usage error.\n" },
	{ "keygen", cmd_keygen, "-p KEY.pub -s KEY.sec",
	  "Create an Ed25519 key pair.  Neither file may exist; the secret key is\n"
	  "created with mode 0600.\n\n"
	  "  -p, --public FILE   public key to create\n"
	  "  -s, --secret FILE   secret key to create\n"
	  "  -h, --help          this text\n" },
	{ "sign", cmd_sign, "-s KEY.sec [-o OUT.cpol] BLOB",
	  "Sign a blob in place (or into -o).  The blob's SHA-256 does not change.\n\n"
	  "  -s, --secret FILE   secret key\n"
	  "  -o, --output FILE   write the signed blob here instead\n"
	  "  -h, --help          this text\n\n"
	  "Exit: 0 signed, 1 invalid blob, 2 usage error or unreadable file.\n" },
	{ "lint", lint_cmd_lint, LINT_SYNOPSIS, LINT_HELP },
	{ "explain", lint_cmd_explain, EXPLAIN_SYNOPSIS, EXPLAIN_HELP },
	{ "diff", lint_cmd_diff, DIFF_SYNOPSIS, DIFF_HELP },
	{ "help", cmd_help, "[COMMAND]", "Show help for cordonc or one of its commands.\n" },
};

static const struct command *command_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_overview(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cordonc COMMAND [ARGS]\n\n"
		   "cordon's policy compiler: app descriptors and tool inventories in,\n"
		   "validated, hashed, optionally signed policy blobs out.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].synopsis);
	fprintf(f, "\n'cordonc COMMAND --help' and man cordonc(1) have the details.\n");
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return print_help("help");
	if (command_find(argv[1]) == NULL) {
		fprintf(stderr, "cordonc help: unknown command '%s'\n", argv[1]);
		return EXIT_USAGE;
	}
	return print_help(argv[1]);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (sodium_init() < 0) {
		fprintf(stderr, "cordonc: libsodium failed to initialise\n");
		return EXIT_USAGE;
	}
	if (argc < 2) {
		print_overview(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_overview(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cordonc %s (blob format %d.%d)\n", cordon_version, CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR);
		return 0;
	}
	c = command_find(argv[1]);
	if (c == NULL) {
		fprintf(stderr, "cordonc: unknown command '%s'\n", argv[1]);
		print_overview(stderr);
		return EXIT_USAGE;
	}
	/* getopt sees the command's own argv: argv[0] is the command name. */
	return c->run(argc - 1, argv + 1);
}
