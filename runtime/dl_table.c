/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dl_table.c - functions of a library loaded on demand (dl_table.h).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "runtime/dl_table.h"

int dl_table_load(const char *soname, const struct dl_sym *syms, size_t count, const char *hint, char *err,
		  size_t n)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (h == NULL) {
		snprintf(err, n, "%s (%s)", dlerror(), hint);
		return -1;
	}
	for (i = 0; i < count; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (*syms[i].slot == NULL) {
			snprintf(err, n, "%s: no symbol %s", soname, syms[i].name);
			/* the handle stays: dlclose of a half-used library is
			 * not worth the risk */
			for (i = 0; i < count; i++)
				*syms[i].slot = NULL;
			return -1;
		}
	}
	return 0;
}
