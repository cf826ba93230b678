/*
 * describe.h - `cordonc describe`: what the model is told about the
 * sandbox and its tools, written from the blob itself (DESIGN.md §5), so
 * it cannot drift from what the runtime and the supervisor enforce.
 *
 * One JSON document is built from the loaded policy; the Markdown is
 * rendered from that document, never from the policy, so --json and the
 * Markdown cannot say different things either.  --python prints the
 * stubs module that `cordon run` writes (stubs_python()).
 */
#ifndef CORDON_DESCRIBE_H
#define CORDON_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cordon/policy.h"

/* The tools an agent may use (ascending indices; all of them when agent
 * is NULL), malloc'd (*tools NULL when n is 0).  -1 with err when there is
 * no such agent or memory ran out. */
int describe_select(const struct cpol_policy *p, const char *agent, uint32_t **tools, uint32_t *n, char *err,
		    size_t errlen);

/* sys.version of the policy's interpreter, run as `INTERP -I -c ...` with
 * an empty environment, stdin and stderr on /dev/null, and a 10 s limit;
 * newlines become spaces.  -1 with err when it cannot be run or fails. */
int describe_probe_python(const char *interp, char *version, size_t n, char *err, size_t errlen);

/* The description (caller deletes).  version: the probed interpreter
 * version, or NULL with why (probe_err) it is unknown.  NULL when memory
 * ran out. */
cJSON *describe_json(const struct cpol_policy *p, const char *agent, const uint32_t *tools, uint32_t n,
		     const char *version, const char *probe_err);

/* Markdown rendered from describe_json()'s document; malloc'd, or NULL
 * when memory ran out. */
char *describe_markdown(const cJSON *d);

/* The command: argument parsing and output (cordonc.c's table). */
int cmd_describe(int argc, char **argv);
#define DESCRIBE_SYNOPSIS "[--json | --python] [--agent NAME] BLOB"
extern const char describe_help[];

#endif
