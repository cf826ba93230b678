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

#include <cjson/cJSON.h>
#include <sodium.h>

#include "compiler/compile.h"
#include "compiler/inspect.h"
#include "compiler/sign.h"
#include "cordon/blob.h"
#include "cordon/keys.h"

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

static int cmd_compile(int argc, char **argv)
{
	static const struct option opts[] = { { "output", required_argument, NULL, 'o' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct compile_inputs in;
	struct cpol_policy p;
	struct blob_error be;
	struct diags d;
	const char *out = NULL;
	uint8_t *blob = NULL;
	size_t blen = 0;
	char err[512];
	int c, rc = EXIT_USAGE;

	while ((c = next_opt(argc, argv, "o:h", opts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h': return print_help("compile");
		default: return usage_error("compile", "bad option");
		}
	}
	if (out == NULL)
		return usage_error("compile", "missing -o OUTPUT");
	if (argc - optind < 2)
		return usage_error("compile", "needs an app descriptor and at least one tool inventory");

	diags_init(&d);
	policy_init(&p);
	if (compile_inputs_read(&in, argv[optind], (const char *const *)argv + optind + 1,
				(size_t)(argc - optind - 1), &d) != 0)
		goto out;
	policy_free(&p);
	if (compile_sources(&in.app, in.refs, in.ntools, &p, &d) != 0)
		goto out;
	if (blob_emit(&p, &blob, &blen, &be) != 0) {
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
	policy_free(&p);
	diags_free(&d);
	compile_inputs_free(&in);
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

static int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct cpol_policy p;
	uint8_t *buf = NULL;
	size_t len = 0;
	int c, json = 0, rc;
	char *text;

	while ((c = next_opt(argc, argv, "jh", opts)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': return print_help("inspect");
		default: return usage_error("inspect", "bad option");
		}
	}
	if (argc - optind != 1)
		return usage_error("inspect", "needs exactly one blob");
	rc = load_blob("inspect", argv[optind], &buf, &len, &p);
	if (rc != 0)
		goto out;
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
		inspect_text(stdout, argv[optind], &p, buf, len);
	}
out:
	policy_free(&p);
	free(buf);
	return rc;
}

static int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = { { "key", required_argument, NULL, 'k' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct cpol_policy p;
	struct pubkey key;
	const char *keypath = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[512], hex[65];
	int c, rc;

	while ((c = next_opt(argc, argv, "k:h", opts)) != -1) {
		switch (c) {
		case 'k': keypath = optarg; break;
		case 'h': return print_help("verify");
		default: return usage_error("verify", "bad option");
		}
	}
	if (argc - optind != 1)
		return usage_error("verify", "needs exactly one blob");
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
	  "  -h, --help          this text\n\n"
	  "Exit: 0 compiled, 2 usage error or input with errors.\n" },
	{ "inspect", cmd_inspect, "[--json] BLOB",
	  "Validate a blob with the runtime's loader and show every section.\n\n"
	  "  -j, --json   machine-readable output\n"
	  "  -h, --help   this text\n\n"
	  "Exit: 0 shown, 1 invalid blob, 2 usage error or unreadable file.\n" },
	{ "verify", cmd_verify, "[--key KEY.pub] BLOB",
	  "Validate a blob (structure and SHA-256); with --key, also require a\n"
	  "valid Ed25519 signature by that key.\n\n"
	  "  -k, --key FILE   trusted public key\n"
	  "  -h, --help       this text\n\n"
	  "Exit: 0 valid, 1 invalid or not signed by the key, 2 usage error.\n" },
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
	fprintf(f, "\nNot built yet: lint, diff, describe, explain (see README).\n"
		   "'cordonc COMMAND --help' and man cordonc(1) have the details.\n");
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
		printf("cordonc %s (blob format %d.%d)\n", CORDON_VERSION, CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR);
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
