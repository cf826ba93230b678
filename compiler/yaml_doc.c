/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yaml_doc.c - fold libyaml's event stream into a positioned tree.
 *
 * The builder is a recursive descent over events, one C frame per open
 * collection.  Recursion stops at YDOC_MAX_DEPTH: anything deeper is
 * reported once and then consumed by an iterative skip, so hostile nesting
 * costs neither stack nor nodes.  Every event is deleted by the frame that
 * fetched it, on every path, so libyaml's allocations never leak.
 *
 * What libyaml reports about errors (worth knowing when reading positions):
 *  - scanner and parser errors carry problem_mark (0-based line and column,
 *    the column in code points, a leading BOM not counted) and sometimes a
 *    context with its own context_mark;
 *  - reader errors (control characters, bad encodings) carry only a byte
 *    offset, found while decoding ahead, so they can be reported before a
 *    syntax error that sits earlier in the file;
 *  - after any error the parser is stuck: there is no recovery, so a syntax
 *    error ends the parse while the checks made here (anchors, duplicates,
 *    depth) report and carry on.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "compiler/yaml_doc.h"

/* Keys quoted in messages are cut at this many bytes. */
#define YDOC_KEY_SHOWN 60

struct ybuild {
	yaml_parser_t parser;
	const struct src_file *f;
	struct ydoc *doc;
	struct diags *d;
	size_t nnodes;
	uint32_t end_line, end_col; /* position just past the last character */
	int stop; /* the parse cannot go on: syntax error, limit or no memory */
};

/* 1-based position of a mark.  At the end of a file without a final line
 * break libyaml moves its mark to the start of a line that does not exist;
 * such positions are pulled back to the end of the text, where the excerpt
 * can show them. */
static void ymark_pos(const struct ybuild *b, const yaml_mark_t *m, uint32_t *line, uint32_t *col)
{
	*line = m->line < UINT32_MAX - 1 ? (uint32_t)m->line + 1 : UINT32_MAX;
	*col = m->column < UINT32_MAX - 1 ? (uint32_t)m->column + 1 : UINT32_MAX;
	if (*line > b->end_line || (*line == b->end_line && *col > b->end_col)) {
		*line = b->end_line;
		*col = b->end_col;
	}
}

static void yb_error(struct ybuild *b, const yaml_mark_t *m, enum diag_sev sev, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void yb_error(struct ybuild *b, const yaml_mark_t *m, enum diag_sev sev, const char *fmt, ...)
{
	char msg[256];
	uint32_t line = 0, col = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m != NULL)
		ymark_pos(b, m, &line, &col);
	diag_at(b->d, sev, b->f, line, col, "%s", msg);
}

static void yb_oom(struct ybuild *b)
{
	if (!b->stop)
		diag_at(b->d, DIAG_ERROR, b->f, 0, 0, "out of memory while loading YAML");
	b->stop = 1;
}

static void yb_parser_error(struct ybuild *b)
{
	const yaml_parser_t *p = &b->parser;
	const char *problem = p->problem != NULL ? p->problem : "unknown error";
	uint32_t line, col, cline, ccol;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		yb_oom(b);
		return;
	case YAML_READER_ERROR:
		/* Only a byte offset is known; count it the way libyaml would
		 * have counted its mark. */
		src_pos(b->f, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			diag_at(b->d, DIAG_ERROR, b->f, line, col,
				strstr(problem, "octet") != NULL ? "YAML syntax error: %s (byte 0x%02X)"
								 : "YAML syntax error: %s (U+%04X)",
				problem, (unsigned)p->problem_value);
		else
			diag_at(b->d, DIAG_ERROR, b->f, line, col, "YAML syntax error: %s", problem);
		break;
	default:
		ymark_pos(b, &p->problem_mark, &line, &col);
		if (p->context != NULL) {
			ymark_pos(b, &p->context_mark, &cline, &ccol);
			diag_at(b->d, DIAG_ERROR, b->f, line, col, "YAML syntax error: %s (%s at line %u, column %u)",
				problem, p->context, (unsigned)cline, (unsigned)ccol);
		} else {
			diag_at(b->d, DIAG_ERROR, b->f, line, col, "YAML syntax error: %s", problem);
		}
		break;
	}
	b->stop = 1;
}

/* The next event into *ev (always safe to yaml_event_delete() after). */
static int yb_next(struct ybuild *b, yaml_event_t *ev)
{
	if (yaml_parser_parse(&b->parser, ev))
		return 0;
	yb_parser_error(b);
	return -1;
}

static struct ynode *yb_node(struct ybuild *b, enum ynode_kind kind, const yaml_mark_t *m)
{
	struct ynode *n;

	if (b->nnodes >= YDOC_MAX_NODES) {
		yb_error(b, m, DIAG_ERROR, "more than %d YAML nodes", YDOC_MAX_NODES);
		b->stop = 1;
		return NULL;
	}
	n = arena_alloc(&b->doc->arena, sizeof(*n));
	if (n == NULL) {
		yb_oom(b);
		return NULL;
	}
	b->nnodes++;
	n->kind = kind;
	ymark_pos(b, m, &n->line, &n->col);
	return n;
}

/* Anchors and tags are refused where they are written: aliases would allow
 * expansion bombs and shared nodes, tags would let a file re-type a value
 * behind the schema's back. */
static void yb_check_props(struct ybuild *b, const yaml_char_t *anchor, const yaml_char_t *tag,
			   const yaml_mark_t *m)
{
	if (anchor != NULL)
		yb_error(b, m, DIAG_ERROR, "YAML anchors are not allowed");
	if (tag != NULL)
		yb_error(b, m, DIAG_ERROR, "YAML tags are not allowed");
}

/* Append item to a growing arena array.  Doubling leaves the old copies in
 * the arena; that bounds the waste at the final size, and nodes are capped. */
static int yb_push(struct ybuild *b, struct ynode ***arr, size_t n, size_t *cap, struct ynode *item)
{
	struct ynode **nv;
	size_t ncap;

	if (n == *cap) {
		ncap = *cap == 0 ? 4 : *cap * 2;
		nv = arena_calloc(&b->doc->arena, ncap, sizeof(*nv));
		if (nv == NULL) {
			yb_oom(b);
			return -1;
		}
		if (n > 0)
			memcpy(nv, *arr, n * sizeof(*nv));
		*arr = nv;
		*cap = ncap;
	}
	(*arr)[n] = item;
	return 0;
}

static int ystr_is(const char *s, size_t len, const char *const *words)
{
	size_t i;

	for (i = 0; words[i] != NULL; i++)
		if (strlen(words[i]) == len && memcmp(s, words[i], len) == 0)
			return 1;
	return 0;
}

static size_t ystr_span(const char *s, size_t len, size_t i, const char *set)
{
	while (i < len && s[i] != '\0' && strchr(set, s[i]) != NULL)
		i++;
	return i;
}

#define YDIGITS "0123456789"

static int ystr_is_int(const char *s, size_t len)
{
	size_t i = 0, j;

	if (len > 2 && s[0] == '0' && s[1] == 'x')
		return ystr_span(s, len, 2, YDIGITS "abcdefABCDEF") == len;
	if (len > 2 && s[0] == '0' && s[1] == 'o')
		return ystr_span(s, len, 2, "01234567") == len;
	if (len > 0 && (s[0] == '-' || s[0] == '+'))
		i = 1;
	j = ystr_span(s, len, i, YDIGITS);
	return j > i && j == len;
}

/* [-+]? ( \.[0-9]+ | [0-9]+ ( \.[0-9]* )? ) ( [eE][-+]?[0-9]+ )?, and the
 * .inf / .nan spellings of the core schema. */
static int ystr_is_float(const char *s, size_t len)
{
	static const char *const special[] = { ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf",
					       "+.Inf", "+.INF", ".nan", ".NaN", ".NAN", NULL };
	size_t i = 0, j;

	if (ystr_is(s, len, special))
		return 1;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	if (i < len && s[i] == '.') {
		j = ystr_span(s, len, i + 1, YDIGITS);
		if (j == i + 1)
			return 0;
		i = j;
	} else {
		j = ystr_span(s, len, i, YDIGITS);
		if (j == i)
			return 0;
		i = j;
		if (i < len && s[i] == '.')
			i = ystr_span(s, len, i + 1, YDIGITS);
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		j = ystr_span(s, len, i, YDIGITS);
		if (j == i)
			return 0;
		i = j;
	}
	return i == len;
}

/* Plain scalars only.  The YAML 1.1 booleans (yes, no, on, off, y, n) are
 * kept as booleans so that a string field can refuse "country: no" instead
 * of silently meaning something other than what another tool would read. */
static enum yresolve ystr_resolve(const char *s, size_t len)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
	static const char *const bools[] = { "true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes",
					     "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
					     "y", "Y", "n", "N", NULL };

	if (ystr_is(s, len, nulls))
		return YR_NULL;
	if (ystr_is(s, len, bools))
		return YR_BOOL;
	if (ystr_is_int(s, len))
		return YR_INT;
	if (ystr_is_float(s, len))
		return YR_FLOAT;
	return YR_STRING;
}

static struct ynode *yb_scalar(struct ybuild *b, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct ynode *n;

	yb_check_props(b, ev->data.scalar.anchor, ev->data.scalar.tag, &ev->start_mark);
	/* src_read() refuses NUL bytes, but a "\0" escape makes one; a string
	 * cut short by its first NUL must never reach a path or a name. */
	if (memchr(v, '\0', len) != NULL)
		yb_error(b, &ev->start_mark, DIAG_ERROR, "NUL character in string");
	n = yb_node(b, YN_SCALAR, &ev->start_mark);
	if (n == NULL)
		return NULL;
	n->str = arena_strndup(&b->doc->arena, v, len);
	if (n->str == NULL) {
		yb_oom(b);
		return NULL;
	}
	n->len = len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->resolve = n->plain ? ystr_resolve(n->str, len) : YR_STRING;
	return n;
}

/* Consume the rest of a collection whose start event was just seen,
 * without building anything: a counter, not recursion.  Past another
 * YDOC_MAX_DEPTH levels the parse stops instead: libyaml checks every open
 * flow level on every token, so a megabyte of '[' would cost it minutes,
 * and a file nested that deep has nothing more worth reporting. */
static void yb_skip(struct ybuild *b)
{
	yaml_event_t ev;
	size_t level = 1;

	while (level > 0 && !b->stop) {
		if (yb_next(b, &ev) != 0)
			break;
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++level > YDOC_MAX_DEPTH)
				b->stop = 1;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			level--;
			break;
		case YAML_STREAM_END_EVENT:
			level = 0; /* cannot happen inside a collection; be safe */
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
}

static struct ynode *yb_parse(struct ybuild *b, const yaml_event_t *ev, unsigned depth);

static struct ynode *yb_seq(struct ybuild *b, const yaml_event_t *start, unsigned depth)
{
	yaml_event_t ev;
	struct ynode *n, *item;
	size_t cap = 0;

	yb_check_props(b, start->data.sequence_start.anchor, start->data.sequence_start.tag, &start->start_mark);
	n = yb_node(b, YN_SEQ, &start->start_mark);
	if (n == NULL)
		return NULL;
	while (!b->stop) {
		if (yb_next(b, &ev) != 0)
			break;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		item = yb_parse(b, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (item != NULL && yb_push(b, &n->vals, n->n, &cap, item) == 0)
			n->n++;
	}
	return n;
}

struct ykey_ref {
	const struct ynode *key;
	size_t idx;
};

static int ykey_cmp(const void *pa, const void *pb)
{
	const struct ykey_ref *a = pa, *b = pb;
	int c;

	if (a->key->len != b->key->len)
		return a->key->len < b->key->len ? -1 : 1;
	c = memcmp(a->key->str, b->key->str, a->key->len);
	if (c != 0)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int ykey_same(const struct ynode *a, const struct ynode *b)
{
	return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
}

/* Bytes of key to quote: at most YDOC_KEY_SHOWN, cut on a code point. */
static int ykey_shown(const struct ynode *k)
{
	size_t n = k->len;

	if (n <= YDOC_KEY_SHOWN)
		return (int)n;
	n = YDOC_KEY_SHOWN;
	while (n > 0 && ((unsigned char)k->str[n] & 0xC0) == 0x80)
		n--;
	return (int)n;
}

/* Duplicate keys, reported in file order at the second key with a note at
 * the first.  Sorting keeps a mapping with many keys O(n log n); a file
 * is attacker-shaped input to a fuzzer if to no one else. */
static void yb_check_dups(struct ybuild *b, const struct ynode *map)
{
	struct ykey_ref *refs = NULL;
	size_t *first = NULL;
	size_t i, g;

	if (map->n < 2)
		return;
	refs = malloc(map->n * sizeof(*refs));
	first = malloc(map->n * sizeof(*first));
	if (refs == NULL || first == NULL) {
		yb_oom(b);
		goto out;
	}
	for (i = 0; i < map->n; i++) {
		refs[i].key = map->keys[i];
		refs[i].idx = i;
		first[i] = SIZE_MAX;
	}
	qsort(refs, map->n, sizeof(*refs), ykey_cmp);
	/* Ties sort by index, so each run of equal keys starts at the first
	 * occurrence in the file. */
	for (g = 0, i = 1; i < map->n; i++) {
		if (ykey_same(refs[g].key, refs[i].key))
			first[refs[i].idx] = refs[g].idx;
		else
			g = i;
	}
	for (i = 0; i < map->n; i++) {
		const struct ynode *k, *p;

		if (first[i] == SIZE_MAX)
			continue;
		k = map->keys[i];
		p = map->keys[first[i]];
		diag_at(b->d, DIAG_ERROR, b->f, k->line, k->col, "duplicate key '%.*s%s'", ykey_shown(k), k->str,
			(size_t)ykey_shown(k) < k->len ? "..." : "");
		diag_at(b->d, DIAG_NOTE, b->f, p->line, p->col, "previous definition of '%.*s%s' is here",
			ykey_shown(p), p->str, (size_t)ykey_shown(p) < p->len ? "..." : "");
	}
out:
	free(refs);
	free(first);
}

static struct ynode *yb_map(struct ybuild *b, const yaml_event_t *start, unsigned depth)
{
	yaml_event_t ev;
	struct ynode *n, *key, *val;
	size_t kcap = 0, vcap = 0;

	yb_check_props(b, start->data.mapping_start.anchor, start->data.mapping_start.tag, &start->start_mark);
	n = yb_node(b, YN_MAP, &start->start_mark);
	if (n == NULL)
		return NULL;
	while (!b->stop) {
		if (yb_next(b, &ev) != 0)
			break;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
			yb_error(b, &ev.start_mark, DIAG_ERROR, "mapping keys must be plain strings");
		key = yb_parse(b, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (b->stop || yb_next(b, &ev) != 0)
			break;
		val = yb_parse(b, &ev, depth + 1);
		yaml_event_delete(&ev);
		/* A pair is kept only whole and with a scalar key, so later
		 * passes never meet a NULL value or a collection as a key. */
		if (key == NULL || val == NULL || key->kind != YN_SCALAR)
			continue;
		if (yb_push(b, &n->keys, n->n, &kcap, key) != 0 || yb_push(b, &n->vals, n->n, &vcap, val) != 0)
			break;
		n->n++;
	}
	if (!b->stop)
		yb_check_dups(b, n);
	return n;
}

/* Build the node that starts with ev; depth counts the collections around
 * it.  NULL when nothing was built (refused, too deep, or stopped). */
static struct ynode *yb_parse(struct ybuild *b, const yaml_event_t *ev, unsigned depth)
{
	if (b->stop)
		return NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return yb_scalar(b, ev);
	case YAML_ALIAS_EVENT:
		yb_error(b, &ev->start_mark, DIAG_ERROR, "YAML aliases are not allowed");
		return NULL;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (depth >= YDOC_MAX_DEPTH) {
			yb_error(b, &ev->start_mark, DIAG_ERROR, "nesting is deeper than %d levels", YDOC_MAX_DEPTH);
			yb_skip(b);
			return NULL;
		}
		if (ev->type == YAML_SEQUENCE_START_EVENT)
			return yb_seq(b, ev, depth);
		return yb_map(b, ev, depth);
	default:
		/* libyaml only sends node events here; stop rather than
		 * misread the stream if that ever changes. */
		yb_error(b, &ev->start_mark, DIAG_ERROR, "YAML syntax error: unexpected event");
		b->stop = 1;
		return NULL;
	}
}

int ydoc_parse(const struct src_file *f, struct ydoc *doc, struct diags *d)
{
	struct ybuild b;
	yaml_event_t ev;
	size_t errors_before = d->nerrors;
	int parser_ready = 0;

	memset(&b, 0, sizeof(b));
	memset(&ev, 0, sizeof(ev));
	arena_init(&doc->arena);
	doc->file = f;
	doc->root = NULL;
	b.f = f;
	b.doc = doc;
	b.d = d;
	src_pos(f, f->len, &b.end_line, &b.end_col);

	if (f->len > YDOC_MAX_BYTES) {
		diag_at(d, DIAG_ERROR, f, 0, 0, "file is too large (%zu bytes; the limit is %u)", f->len,
			(unsigned)YDOC_MAX_BYTES);
		goto out;
	}
	if (!yaml_parser_initialize(&b.parser)) {
		yb_oom(&b);
		goto out;
	}
	parser_ready = 1;
	/* The encoding is left to libyaml's detection on purpose: forcing
	 * UTF-8 keeps a leading BOM in its buffer, where the scanner skips it
	 * but counts it as a column, and every mark on line 1 would be one
	 * off from what src_pos() and the printed excerpt assume.  Detection
	 * can only find UTF-8 here: src_read() refuses the bytes a UTF-16 BOM
	 * starts with. */
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)(f->text != NULL ? f->text : ""),
				     f->text != NULL ? f->len : 0);

	if (yb_next(&b, &ev) != 0) /* STREAM-START */
		goto out;
	yaml_event_delete(&ev);
	if (yb_next(&b, &ev) != 0)
		goto out;
	if (ev.type != YAML_DOCUMENT_START_EVENT) {
		diag_at(d, DIAG_ERROR, f, 1, 1, "empty document");
		goto out;
	}
	yaml_event_delete(&ev);
	if (yb_next(&b, &ev) != 0)
		goto out;
	doc->root = yb_parse(&b, &ev, 0);
	yaml_event_delete(&ev);
	if (b.stop)
		goto out;
	/* "---" alone, or comments after it, yields one empty plain scalar. */
	if (doc->root != NULL && doc->root->kind == YN_SCALAR && doc->root->plain && doc->root->len == 0) {
		diag_at(d, DIAG_ERROR, f, 1, 1, "empty document");
		doc->root = NULL;
		goto out;
	}
	if (yb_next(&b, &ev) != 0) /* DOCUMENT-END */
		goto out;
	yaml_event_delete(&ev);
	if (yb_next(&b, &ev) != 0)
		goto out;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		yb_error(&b, &ev.start_mark, DIAG_ERROR, "only one YAML document is allowed");
out:
	/* A tree cut short would only make later passes report what is
	 * missing from it.  Refusals that libyaml parsed past (duplicates,
	 * anchors, tags, aliases, a too-deep part) keep it, so one run
	 * reports those and the schema's own errors. */
	if (b.stop)
		doc->root = NULL;
	yaml_event_delete(&ev);
	if (parser_ready)
		yaml_parser_delete(&b.parser);
	return d->nerrors > errors_before ? -1 : 0;
}

void ydoc_free(struct ydoc *doc)
{
	arena_free(&doc->arena);
	doc->root = NULL;
}

const struct ynode *ymap_key(const struct ynode *map, const char *key)
{
	size_t i, len;

	if (map == NULL || map->kind != YN_MAP || key == NULL)
		return NULL;
	len = strlen(key);
	for (i = 0; i < map->n; i++)
		if (map->keys[i]->len == len && memcmp(map->keys[i]->str, key, len) == 0)
			return map->keys[i];
	return NULL;
}

const struct ynode *ymap_get(const struct ynode *map, const char *key)
{
	size_t i, len;

	if (map == NULL || map->kind != YN_MAP || key == NULL)
		return NULL;
	len = strlen(key);
	for (i = 0; i < map->n; i++)
		if (map->keys[i]->len == len && memcmp(map->keys[i]->str, key, len) == 0)
			return map->vals[i];
	return NULL;
}

const char *ynode_kind_name(const struct ynode *n)
{
	if (n == NULL)
		return "nothing";
	switch (n->kind) {
	case YN_MAP:
		return "mapping";
	case YN_SEQ:
		return "sequence";
	case YN_SCALAR:
		break;
	}
	switch (n->resolve) {
	case YR_NULL:
		return "null";
	case YR_BOOL:
		return "boolean";
	case YR_INT:
		return "integer";
	case YR_FLOAT:
		return "number";
	case YR_STRING:
		break;
	}
	return "string";
}
