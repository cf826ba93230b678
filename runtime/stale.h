/*
 * stale.h - names that carry the pid of the supervisor that made them
 * (cordon-<pid>-<id> cgroups, cordon-run.<pid>.XXXXXX run directories), so a
 * later run can tell what a killed supervisor left behind.
 *
 * run.c calls stale_sweep_rundirs(tmpdir, err, sizeof(err)) where it
 * called rundir_sweep_stale(tmp) (before mkdtemp); a failure is not the
 * run's: report err on the supervisor log and go on.
 */
#ifndef CORDON_STALE_H
#define CORDON_STALE_H

#include <stddef.h>

/* 1 when name is prefix, a pid, then sep, and no process has that pid
 * (kill(pid, 0) says ESRCH); 0 otherwise, including for a live pid or one
 * we may not signal. */
int stale_pid_name(const char *name, const char *prefix, char sep);

/* Removes each cordon-run.<pid>.* entry of tmpdir whose supervisor is gone
 * and that is a directory this euid owns, by rmtree_at() (no path walk:
 * the sandbox could have written below it).  Anything else (a symlink, a
 * file, another user's directory, a live run's) is left alone.  Every
 * stale directory is tried; -1 with err naming the first that could not
 * be removed fully (and how many failed). */
int stale_sweep_rundirs(const char *tmpdir, char *err, size_t n);

#endif
