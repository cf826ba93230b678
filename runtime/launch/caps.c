/*
 * caps.c - empty all five capability sets and prove they are empty.
 *
 * The child entered its user namespace holding every capability there and
 * changed uid from an unmapped one, which the kernel does not treat as
 * leaving root, so nothing was cleared for us: it is done here, explicitly,
 * and checked afterwards rather than trusted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "runtime/launch/launch.h"

int caps_drop_all(char *msg, size_t n)
{
	cap_t caps = NULL;
	int rc = -1;

	/* Bounding set before the rest: dropping it needs CAP_SETPCAP. */
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL) {
			snprintf(msg, n, "drop bounding capability %d: %s", c, strerror(errno));
			return -1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
		snprintf(msg, n, "clear ambient capabilities: %s", strerror(errno));
		return -1;
	}
	caps = cap_init(); /* all three sets clear */
	if (caps == NULL || cap_set_proc(caps) != 0) {
		snprintf(msg, n, "clear capabilities: %s", strerror(errno));
		goto out;
	}
	cap_free(caps);
	caps = cap_get_proc();
	if (caps == NULL) {
		snprintf(msg, n, "read capabilities: %s", strerror(errno));
		goto out;
	}
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		cap_flag_value_t e, p, i;

		if (cap_get_flag(caps, c, CAP_EFFECTIVE, &e) != 0 || cap_get_flag(caps, c, CAP_PERMITTED, &p) != 0 ||
		    cap_get_flag(caps, c, CAP_INHERITABLE, &i) != 0 || e || p || i ||
		    prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0) {
			snprintf(msg, n, "capability %d still held after the drop", c);
			goto out;
		}
	}
	rc = 0;
out:
	if (caps != NULL)
		cap_free(caps);
	return rc;
}
