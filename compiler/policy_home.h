/* SPDX-License-Identifier: Apache-2.0 */
#ifndef CORDON_COMPILER_POLICY_HOME_H
#define CORDON_COMPILER_POLICY_HOME_H

#include <stddef.h>

/* The name of the file make writes beside the binaries of a build tree:
 * one line, the source tree's policies/ directory, relative to the
 * binaries' (so a moved or copied tree still finds its own). */
#define POLICY_HOME_MARKER "cordon-build-tree"

/* The shipped profiles of this very binary, found from its own path
 * (/proc/self/exe), so that neither an install prefix nor a build path is
 * compiled in and one build installs under any PREFIX and DESTDIR:
 *   - a build-tree binary (POLICY_HOME_MARKER beside it): the source
 *     tree's policies/ that the marker names;
 *   - an installed one, PREFIX/bin/NAME: PREFIX/share/cordon/policies.
 * Writes the directory into out; -1 when /proc/self/exe cannot be read
 * (no /proc) or a path does not fit. */
int policy_home_dir(char *out, size_t size);

#endif
