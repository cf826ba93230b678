/*
 * cordon.c - main() and argument parsing of the runtime.
 *
 * The runtime never parses policy text or YAML: it maps a compiled blob,
 * validates it completely (runtime/blob_load.c) and, with --trusted-key,
 * refuses anything not signed by that key.  `run` executes one program under
 * the policy (runtime/run.c); `check-policy` takes the same loading path so
 * an operator can test an artifact on the host that will run it.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "cordon/blob.h"
#include "cordon/keys.h"
#include "runtime/run.h"

#define EXIT_NO 1
#define EXIT_USAGE 2

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon COMMAND [ARGS]\n\n"
		   "cordon's runtime: enforces a compiled policy blob.\n\n"
		   "commands:\n"
		   "  run --policy BLOB --code FILE [--input FILE]... [--context CTX.json]\n"
		   "      [--agent NAME] [--run-dir DIR] [--trusted-key KEY.pub]\n"
		   "      [--state-dir DIR] [--secrets FILE]\n"
		   "                 run FILE (Python) in the sandbox the policy describes and\n"
		   "                 print one result JSON.  The program calls the tools of\n"
		   "                 --agent (narrowed by the context's \"tools\") through the\n"
		   "                 supervisor; budgets and replay records live in the\n"
		   "                 ledger under --state-dir (default /var/lib/cordon as root,\n"
		   "                 ~/.local/state/cordon otherwise); --secrets is a NAME=value\n"
		   "                 file for the tools' env_from (else the environment).\n"
		   "                 Exit 0 succeeded, 1 failed or a\n"
		   "                 limit was hit, 124 timed out, 125 harness error,\n"
		   "                 130 cancelled, 2 usage error\n"
		   "  check-policy [--trusted-key KEY.pub] BLOB\n"
		   "                 load and validate BLOB exactly as a run would: format,\n"
		   "                 arch of this host, every field, SHA-256, and with\n"
		   "                 --trusted-key an Ed25519 signature by that key\n"
		   "  --help         this text\n"
		   "  --version      version and blob format\n\n"
		   "Not built yet: serve (see README).\n"
		   "Exit (check-policy): 0 valid, 1 rejected, 2 usage error or unreadable file.\n");
}

static int cmd_check_policy(int argc, char **argv)
{
	static const struct option opts[] = { { "trusted-key", required_argument, NULL, 'k' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct blob_map m = { NULL, 0 };
	struct cpol_policy p;
	struct blob_error be;
	struct pubkey key;
	const char *keypath = NULL;
	char err[512], hex[65];
	int c, rc = EXIT_USAGE;

	policy_init(&p);
	while ((c = getopt_long(argc, argv, "k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': keypath = optarg; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'cordon --help'.\n"); return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "cordon check-policy: needs exactly one blob\nTry 'cordon --help'.\n");
		return EXIT_USAGE;
	}
	if (keypath != NULL && key_read_public(keypath, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon check-policy: %s\n", err);
		return EXIT_USAGE;
	}
	if (blob_map_file(argv[optind], &m, &be) != 0) {
		fprintf(stderr, "cordon check-policy: %s: %s\n", argv[optind], be.msg);
		goto out;
	}
	rc = EXIT_NO;
	if (blob_load(m.data, m.len, CPOL_ARCH_X86_64, &p, &be) != 0) {
		fprintf(stderr, "cordon check-policy: %s: invalid policy blob: %s [field %s, byte %llu]\n",
			argv[optind], be.msg, be.field, (unsigned long long)be.offset);
		goto out;
	}
	if (keypath != NULL && sig_verify_policy(&p, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordon check-policy: %s: refused: %s\n", argv[optind], err);
		goto out;
	}
	sodium_bin2hex(hex, sizeof(hex), p.sha256, 32);
	printf("%s: ok: app %s, sha256 %s, %s\n", argv[optind], p.meta.app, hex,
	       keypath ? "signature verified" : (p.signature.algo ? "signed (not checked)" : "unsigned"));
	rc = 0;
out:
	policy_free(&p);
	blob_unmap(&m);
	return rc;
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = { { "policy", required_argument, NULL, 'p' },
					      { "code", required_argument, NULL, 'c' },
					      { "input", required_argument, NULL, 'i' },
					      { "context", required_argument, NULL, 'x' },
					      { "agent", required_argument, NULL, 'a' },
					      { "run-dir", required_argument, NULL, 'd' },
					      { "trusted-key", required_argument, NULL, 'k' },
					      { "state-dir", required_argument, NULL, 's' },
					      { "secrets", required_argument, NULL, 'S' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct run_opts o;
	int c;

	memset(&o, 0, sizeof(o));
	while ((c = getopt_long(argc, argv, "+p:c:i:x:a:d:k:s:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o.policy = optarg; break;
		case 'c': o.code = optarg; break;
		case 'i':
			if (o.ninputs == RUN_MAX_INPUTS) {
				fprintf(stderr, "cordon run: at most %d --input files\n", RUN_MAX_INPUTS);
				return EXIT_USAGE;
			}
			o.inputs[o.ninputs++] = optarg;
			break;
		case 'x': o.context = optarg; break;
		case 'a': o.agent = optarg; break;
		case 'd': o.run_dir = optarg; break;
		case 'k': o.trusted_key = optarg; break;
		case 's': o.state_dir = optarg; break;
		case 'S': o.secrets = optarg; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'cordon --help'.\n"); return EXIT_USAGE;
		}
	}
	if (optind != argc || o.policy == NULL || o.code == NULL) {
		fprintf(stderr, "cordon run: needs --policy BLOB and --code FILE, and no other arguments\n"
				"Try 'cordon --help'.\n");
		return EXIT_USAGE;
	}
	return run_execute(&o);
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0) {
		fprintf(stderr, "cordon: libsodium failed to initialise\n");
		return EXIT_USAGE;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cordon %s (blob format %d.%d)\n", CORDON_VERSION, CPOL_VERSION_MAJOR, CPOL_VERSION_MINOR);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "check-policy") == 0)
		return cmd_check_policy(argc - 1, argv + 1);
	fprintf(stderr, "cordon: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
