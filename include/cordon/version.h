/* SPDX-License-Identifier: Apache-2.0 */
/*
 * version.h - the version both binaries print.
 *
 * VERSION, then "+" and the git revision when built from a checkout
 * (0.1.0+474c884-dirty); VERSION alone elsewhere.  Defined in one small
 * generated object (scripts/revision) that only cordonc and cordon link,
 * so a new commit rebuilds that object and relinks, nothing more.
 */
#ifndef CORDON_VERSION_H
#define CORDON_VERSION_H

extern const char cordon_version[];

#endif
