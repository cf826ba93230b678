/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yaml_doc.h - a YAML file as a small tree with source positions.
 *
 * libyaml's event stream is folded into nodes that remember where they
 * started, so every later check can point at the exact key or value.  The
 * loader is deliberately narrow: one document; mappings with scalar keys;
 * no anchors, aliases or explicit tags (no alias bombs, no type tricks);
 * nesting at most YDOC_MAX_DEPTH; at most YDOC_MAX_NODES nodes.  Duplicate
 * keys are errors that name both places.  What it refuses, it reports
 * through diags with file:line:col and keeps going where libyaml lets it.
 */
#ifndef CORDON_YAML_DOC_H
#define CORDON_YAML_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/diag.h"
#include "cordon/arena.h"

#define YDOC_MAX_DEPTH 32
#define YDOC_MAX_NODES 100000
#define YDOC_MAX_BYTES (1024u * 1024u)

enum ynode_kind { YN_SCALAR = 1, YN_MAP = 2, YN_SEQ = 3 };

/* How a plain (unquoted) scalar would resolve under YAML's core schema.
 * Quoted and block scalars are always YR_STRING. */
enum yresolve { YR_STRING = 0, YR_NULL, YR_BOOL, YR_INT, YR_FLOAT };

struct ynode {
	enum ynode_kind kind;
	uint32_t line, col; /* 1-based start of the node */
	/* YN_SCALAR */
	const char *str; /* NUL-terminated, len bytes */
	size_t len;
	int plain;               /* 1: unquoted, plain style */
	enum yresolve resolve;   /* see above */
	/* YN_MAP: n pairs keys[i] -> vals[i], keys are scalars, in file order.
	 * YN_SEQ: n items in vals[]. */
	struct ynode **keys;
	struct ynode **vals;
	size_t n;
};

struct ydoc {
	struct arena arena; /* owns every node */
	const struct src_file *file;
	struct ynode *root; /* NULL when the document is empty or broken */
};

/* Parse f into doc.  Returns 0 when the tree is complete and clean, -1 when
 * any error was reported.  On -1 doc->root is NULL when the parse was cut
 * short (syntax error, node limit, no memory) and kept after refusals that
 * parsing went on past: duplicate key, anchor, tag, NUL in a string, and
 * the parts it leaves out, which are a too-deep collection, an alias, and a
 * pair whose key is a collection or whose value was left out.
 * Always call ydoc_free(). */
int ydoc_parse(const struct src_file *f, struct ydoc *doc, struct diags *d);
void ydoc_free(struct ydoc *doc);

/* Value for key in a mapping, or NULL. */
const struct ynode *ymap_get(const struct ynode *map, const char *key);
/* The key node for key in a mapping, or NULL (for positions). */
const struct ynode *ymap_key(const struct ynode *map, const char *key);

const char *ynode_kind_name(const struct ynode *n); /* "mapping", "sequence", "string", "integer", ... */

#endif
