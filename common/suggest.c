/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suggest.c - "did you mean" for the compiler's diagnostics and the
 * runtime's input errors alike (common/suggest.h).
 */
#include "common/suggest.h"

#include <stdint.h>
#include <string.h>

static size_t suggest_min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Optimal string alignment distance: Levenshtein plus swaps of two
 * neighbours, the commonest typo ("netwrok").  Three rows on the stack. */
static size_t suggest_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t rows[3][SUGGEST_MAX_LEN + 1];
	size_t *pp = rows[0], *prev = rows[1], *cur = rows[2], *t;
	size_t i, j, cost;

	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			cost = a[i - 1] == b[j - 1] ? 0 : 1;
			cur[j] = suggest_min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
		}
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *suggest_nearest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t i, lw, lc, dist, best_dist = SIZE_MAX;

	if (word == NULL)
		return NULL;
	lw = strlen(word);
	if (lw > SUGGEST_MAX_LEN)
		return NULL;
	for (i = 0; i < n; i++) {
		if (cands[i] == NULL)
			continue;
		lc = strlen(cands[i]);
		/* The length gap alone is a lower bound on the distance. */
		if (lc > SUGGEST_MAX_LEN || (lc > lw ? lc - lw : lw - lc) > 2)
			continue;
		dist = suggest_distance(word, lw, cands[i], lc);
		if (dist < best_dist) {
			best_dist = dist;
			best = cands[i];
		}
	}
	if (best == NULL || best_dist > 2 || best_dist * 2 >= lw)
		return NULL;
	return best;
}
