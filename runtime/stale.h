/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stale.h - names that carry the pid of the supervisor that made them
 * (cordon-<pid>-<id> cgroups), so a later run can tell what a killed
 * supervisor left behind.  (Runs no longer make temporary run
 * directories, so there are none to sweep.)
 */
#ifndef CORDON_STALE_H
#define CORDON_STALE_H

#include <stddef.h>

/* 1 when name is prefix, a pid, then sep, and no process has that pid
 * (kill(pid, 0) says ESRCH); 0 otherwise, including for a live pid or one
 * we may not signal. */
int stale_pid_name(const char *name, const char *prefix, char sep);

#endif
