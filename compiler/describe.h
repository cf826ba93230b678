/* SPDX-License-Identifier: Apache-2.0 */
/*
 * describe.h - `cordonc describe`: what the model is told about the
 * sandbox and its tools, written from the blob itself (docs/client.md), so
 * it cannot drift from what the runtime and the supervisor enforce.
 *
 * The text and the tool definitions come from runtime/client/agent_doc.h,
 * which `cordon serve` uses too, so the command and the server cannot say
 * different things; --python prints the stubs module that `cordon run`
 * writes (stubs_python()).
 */
#ifndef CORDON_DESCRIBE_H
#define CORDON_DESCRIBE_H

/* The command: argument parsing and output (cordonc.c's table). */
int cmd_describe(int argc, char **argv);
#define DESCRIBE_SYNOPSIS "[--format markdown|json|python|jsonschema|openai|anthropic|mcp | --json | --python] [--agent NAME] [--input FILE]... BLOB"
extern const char describe_help[];

#endif
