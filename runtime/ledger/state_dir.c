/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_dir.c - where the ledger lives when --state-dir is not given
 * (ledger.h): one rule for `cordon run` and `cordon ledger`, so that the
 * records an operator inspects are the ones the runs wrote.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/ledger/ledger.h"

int ledger_state_dir(const char *given, int rootless, char *dir, size_t n, char *err, size_t en)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_STATE_HOME");
	int w;

	if (given != NULL)
		w = snprintf(dir, n, "%s", given);
	else if (!rootless)
		w = snprintf(dir, n, "/var/lib/cordon");
	else if (xdg != NULL && xdg[0] == '/')
		w = snprintf(dir, n, "%s/cordon", xdg);
	else if (home != NULL && home[0] == '/')
		w = snprintf(dir, n, "%s/.local/state/cordon", home);
	else
		/* No place for it: a run that makes no budgeted or side-effect
		 * call does not need one, and such a call is refused then
		 * (bridge.c), so nothing runs without its ledger. */
		w = snprintf(dir, n, "%s", "");
	if (w < 0 || (size_t)w >= n) {
		snprintf(err, en, "state directory path too long");
		return -1;
	}
	return 0;
}

int ledger_default_parents(const char *state_dir, int rootless, char *err, size_t n)
{
	char def[PATH_MAX], p[PATH_MAX], e[64];
	size_t len;

	if (state_dir == NULL || state_dir[0] != '/')
		return 0;
	/* Only the place no one typed: a named directory's parent must
	 * exist, and ledger_open() says so when it does not. */
	if (ledger_state_dir(NULL, rootless, def, sizeof(def), e, sizeof(e)) != 0 || def[0] == '\0' ||
	    strcmp(def, state_dir) != 0)
		return 0;
	len = strlen(state_dir);
	memcpy(p, state_dir, len + 1);
	for (char *s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			snprintf(err, n, "ledger: cannot create %s, a parent of the state directory %s: %s", p,
				 state_dir, strerror(errno));
			return -1;
		}
		*s = '/';
	}
	return 0;
}
