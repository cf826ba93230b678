/*
 * state_dir.c - where the ledger lives when --state-dir is not given
 * (ledger.h): one rule for `cordon run` and `cordon ledger`, so that the
 * records an operator inspects are the ones the runs wrote.
 */
#include <stdio.h>
#include <stdlib.h>

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
