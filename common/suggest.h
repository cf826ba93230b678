/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suggest.h - the nearest of a few known words to one that is not known.
 */
#ifndef CORDON_SUGGEST_H
#define CORDON_SUGGEST_H

#include <stddef.h>

/* Words longer than this get no suggestion: no key or name in a descriptor
 * is that long, and it keeps the distance rows on the stack. */
#define SUGGEST_MAX_LEN 64

/* The closest candidate to word by edit distance, or NULL when none is close
 * enough to be a plausible typo (distance <= 2, and less than half the
 * word's length).  For "did you mean" hints. */
const char *suggest_nearest(const char *word, const char *const *cands, size_t n);

#endif
