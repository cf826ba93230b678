/* SPDX-License-Identifier: Apache-2.0 */
/*
 * describe.c - `cordonc describe` (describe.h): the command around
 * runtime/client/agent_doc.c, which writes the description and the tool
 * definitions (one implementation, shared with `cordon serve`), and
 * runtime/client/stubs.c, which writes the stubs module.  Here: options,
 * reading and loading the blob, asking the interpreter its version, and
 * printing.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/describe.h"
#include "compiler/describe_apis.h"
#include "compiler/sign.h"
#include "cordon/blob.h"
#include "runtime/client/agent_doc.h"
#include "runtime/client/stubs.h"

/* ---- the command --------------------------------------------------------- */

const char describe_help[] =
	"Describe the sandbox and its tools for the model, from the blob itself:\n"
	"the Python version (asked of the policy's interpreter), limits, files,\n"
	"network, preloaded modules and the packages the program can import,\n"
	"the result contract, and each tool with its\n"
	"stub signature, parameters, constraints (decompiled from the verified\n"
	"bytecode), side effect and budget.  Markdown by default.\n\n"
	"  -f, --format FMT    markdown (the default), json (the same content as\n"
	"                      one JSON object), python (the typed stubs module\n"
	"                      tools.py that cordon run writes beside\n"
	"                      cordon_tools.py), or jsonschema (the tools as\n"
	"                      function definitions: a JSON array of {name, id,\n"
	"                      description, parameters}, parameters a JSON Schema\n"
	"                      2020-12 object schema), or the same tools in the\n"
	"                      shape of a model API: openai (a Chat Completions\n"
	"                      tools array, strict only where the schema\n"
	"                      qualifies), anthropic (a Messages tools array) or\n"
	"                      mcp (the Tool objects of a tools/list result, with\n"
	"                      annotations); for openai and anthropic a tool's\n"
	"                      name is its id with '.' as \"__\" (mail.send:\n"
	"                      mail__send; each \"__\" read back as '.' gives the\n"
	"                      id), for mcp the id itself; a side-effect tool\n"
	"                      takes a required message_id argument, the\n"
	"                      request's messageId (docs/describe-apis.md)\n"
	"  -j, --json          --format json\n"
	"  -p, --python        --format python\n"
	"  -a, --agent NAME    only the tools of that agent\n"
	"  -i, --input FILE    name FILE to the model as an input of the run, as\n"
	"                      `cordon run --input FILE` would place it (its last\n"
	"                      path component, in /workspace/work); repeatable,\n"
	"                      markdown and json only; the file is not read\n"
	"  -h, --help          this text\n\n"
	"Exit: 0 written, 1 invalid blob or a selected tool the format cannot\n"
	"name (an id whose name would pass 64 characters or not read back),\n"
	"2 usage error, unknown agent or unreadable file.\n";

enum describe_format {
	DESCRIBE_MARKDOWN,
	DESCRIBE_JSON,
	DESCRIBE_PYTHON,
	DESCRIBE_JSONSCHEMA,
	DESCRIBE_OPENAI,
	DESCRIBE_ANTHROPIC,
	DESCRIBE_MCP
};

static int describe_usage(const char *msg)
{
	fprintf(stderr, "cordonc describe: %s\nTry 'cordonc describe --help'.\n", msg);
	return 2;
}

/* One format per run, however it was asked for. */
static int describe_set_format(int *fmt, int want)
{
	if (*fmt != -1 && *fmt != want)
		return -1;
	*fmt = want;
	return 0;
}

static int describe_parse_format(const char *s)
{
	static const char *const names[] = { "markdown", "json", "python", "jsonschema", "openai", "anthropic", "mcp" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

int cmd_describe(int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "json", no_argument, NULL, 'j' },
					      { "python", no_argument, NULL, 'p' },
					      { "agent", required_argument, NULL, 'a' },
					      { "input", required_argument, NULL, 'i' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	struct cpol_policy p;
	struct blob_error be;
	const char *agent = NULL;
	char **inputs = NULL;
	unsigned ninputs = 0;
	uint32_t *tools = NULL, n = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[512], version[AGENT_DOC_VERSION_MAX], perr[512];
	char *text = NULL;
	cJSON *d = NULL, *api = NULL;
	enum describe_api kind;
	int c, fmt = -1, want, newline = 0, rc = 2;

	policy_init(&p);
	while ((c = getopt_long(argc, argv, "f:jpa:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((want = describe_parse_format(optarg)) < 0)
				return describe_usage(
					"--format takes markdown, json, python, jsonschema, openai, anthropic or mcp");
			if (describe_set_format(&fmt, want) != 0)
				return describe_usage("give one output format: --format, --json and --python exclude each other");
			break;
		case 'j':
			if (describe_set_format(&fmt, DESCRIBE_JSON) != 0)
				return describe_usage("give one output format: --format, --json and --python exclude each other");
			break;
		case 'p':
			if (describe_set_format(&fmt, DESCRIBE_PYTHON) != 0)
				return describe_usage("give one output format: --format, --json and --python exclude each other");
			break;
		case 'a': agent = optarg; break;
		case 'i': {
			char **more = realloc(inputs, (ninputs + 1) * sizeof(*inputs));

			if (more == NULL) {
				free(inputs);
				return describe_usage("out of memory");
			}
			inputs = more;
			inputs[ninputs++] = optarg;
			break;
		}
		case 'h':
			printf("usage: cordonc describe %s\n\n%s", DESCRIBE_SYNOPSIS, describe_help);
			return 0;
		default: return describe_usage("bad option");
		}
	}
	if (fmt == -1)
		fmt = DESCRIBE_MARKDOWN;
	if (argc - optind != 1 || (ninputs > 0 && fmt != DESCRIBE_MARKDOWN && fmt != DESCRIBE_JSON)) {
		free(inputs);
		return describe_usage(argc - optind != 1 ? "needs exactly one blob"
							 : "--input goes with the markdown and json formats");
	}
	if (file_read_all(argv[optind], CPOL_MAX_BLOB_SIZE, &buf, &len, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc describe: %s\n", err);
		goto out;
	}
	if (blob_load(buf, len, BLOB_ANY_ARCH, &p, &be) != 0) {
		fprintf(stderr, "cordonc describe: %s: invalid policy blob: %s [field %s, byte %" PRIu64 "]\n",
			argv[optind], be.msg, be.field, be.offset);
		rc = 1;
		goto out;
	}
	/* The agent is checked here, once, so every format refuses an unknown
	 * one with the list of those there are. */
	if (agent_doc_select(&p, agent, &tools, &n, err, sizeof(err)) != 0) {
		fprintf(stderr, "cordonc describe: %s\n", err);
		goto out;
	}
	switch (fmt) {
	case DESCRIBE_PYTHON:
		text = stubs_python(&p, agent, tools, n, &len);
		break;
	case DESCRIBE_JSONSCHEMA:
		d = agent_doc_tools_json(&p, agent);
		text = d ? cJSON_Print(d) : NULL;
		newline = 1;
		break;
	case DESCRIBE_OPENAI:
	case DESCRIBE_ANTHROPIC:
	case DESCRIBE_MCP:
		if ((d = agent_doc_tools_json(&p, agent)) == NULL)
			break;
		kind = fmt == DESCRIBE_OPENAI ? DESCRIBE_API_OPENAI
		       : fmt == DESCRIBE_ANTHROPIC ? DESCRIBE_API_ANTHROPIC
						   : DESCRIBE_API_MCP;
		api = describe_api_tools(&p, d, kind, err, sizeof(err));
		if (api == NULL) {
			fprintf(stderr, "cordonc describe: %s: %s\n", argv[optind], err);
			rc = 1;
			goto out;
		}
		text = cJSON_Print(api);
		newline = 1;
		break;
	default: {
		int probed = agent_doc_probe_python(p.exec.interpreter, version, sizeof(version), perr, sizeof(perr));

		/* The Markdown is rendered from the document (as
		 * agent_doc_markdown() does), so the inputs reach both forms. */
		d = agent_doc_json(&p, agent, tools, n, probed == 0 ? version : NULL, perr);
		if (d != NULL && ninputs > 0 && agent_doc_add_inputs(d, inputs, ninputs, err, sizeof(err)) != 0) {
			fprintf(stderr, "cordonc describe: %s\n", err);
			goto out;
		}
		if (fmt == DESCRIBE_MARKDOWN) {
			text = d ? agent_doc_render(d) : NULL;
			break;
		}
		text = d ? cJSON_Print(d) : NULL;
		newline = 1;
		break;
	}
	}
	if (text == NULL) {
		fprintf(stderr, "cordonc describe: out of memory\n");
		goto out;
	}
	fputs(text, stdout);
	if (newline)
		fputc('\n', stdout);
	rc = fflush(stdout) == 0 ? 0 : 2;
out:
	free(text);
	cJSON_Delete(api);
	cJSON_Delete(d);
	free(tools);
	free(inputs);
	free(buf);
	policy_free(&p);
	return rc;
}
