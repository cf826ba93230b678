/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secrets.h - where the values of a tool's env_from names come from: a
 * secrets file given to `cordon run --secrets FILE`, then the supervisor's
 * own environment.  Only the trusted side ever holds them; the executor's
 * environment is built without them.
 */
#ifndef CORDON_SECRETS_H
#define CORDON_SECRETS_H

#include <stddef.h>

#include "cordon/policy.h"

struct secrets;

/* path NULL: the environment only.  The file is `NAME=value` lines, `#`
 * comments and blank lines; opened O_NOFOLLOW, a regular file owned by the
 * caller and not readable by group or others; a bad line is an error with
 * its line number.  Returns 0, or -1 with err.
 * (The value is the rest of its line, verbatim; a repeated name, a CR, a
 * NUL, group/other write access and a file over 1 MiB are errors too; no
 * message ever shows a value or a line.  docs/tool-exec.md.) */
int secrets_load(const char *path, struct secrets **out, char *err, size_t n);
/* The same rules on text already in memory (name stands for the file in
 * messages): what secrets_load() applies after its file checks, and what
 * the fuzz target feeds. */
int secrets_parse_text(const char *text, size_t len, const char *name, struct secrets **out, char *err, size_t n);

/* Wipes every value (explicit_bzero) and frees. */
void secrets_free(struct secrets *s);

/* The value of name, or NULL when neither source has it. */
const char *secrets_get(const struct secrets *s, const char *name);

/*
 * Whether every env_from name of the tools sel[0..nsel) (indices into
 * p->tools) has a value: 0, or -1 with err naming the first tool and name
 * without one ("tool mail.send needs the secret SMTP_PASSWORD, which
 * neither --secrets FILE nor the environment sets").  Never a value.
 * Checked before the program starts (sandbox_start), so a missing secret
 * is a harness error, not a tool failure in the middle of a run.
 */
int secrets_check_tools(const struct cpol_policy *p, const uint32_t *sel, uint32_t nsel, const struct secrets *s,
			char *err, size_t n);

/*
 * A tool's environment from scratch: PATH, LANG, the extra "K=V" entries
 * the bridge gives (identity, message id), and NAME=value for each name of
 * t->env_from.  A declared name with no value is an error (the call is
 * tool_failed, the tool never runs half-configured).  *envp is a
 * NULL-terminated malloc'd array; free it with tool_env_free(), which wipes
 * the secret values.
 */
int tool_env_build(const struct cpol_tool *t, const struct secrets *s, const char *const *extra, char ***envp,
		   char *err, size_t n);
void tool_env_free(char **envp);

/*
 * What a tool wrote (its error message, its stderr), made safe to show:
 * a malloc'd, NUL-terminated copy of in[0..len) in *out with every
 * occurrence of the value of each of t->env_from's names - the values
 * tool_env_build() gave it - replaced by "[secret NAME]".  Empty values
 * are not looked for; at each place the longest value that matches wins.
 *
 * limit: the copy stops once it holds at least limit bytes (SIZE_MAX: all
 * of in); what it holds is scrubbed whole, so a caller cuts it afterwards
 * and a value across the cut cannot show a prefix.  head_cut: in is the
 * end of a longer text, so a value may have begun before it and only its
 * end be here: the first (longest value - 1) bytes of in are dropped as
 * well, their count in *cut.  Returns 0, or -1 when out of memory.
 */
int secrets_scrub(const struct cpol_tool *t, const struct secrets *s, const char *in, size_t len, int head_cut,
		  size_t limit, char **out, size_t *out_len, size_t *cut);

#endif
