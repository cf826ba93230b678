/*
 * compile.c - the front-end pipeline; see compile.h for the stages.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"

int compile_sources(const struct src_file *app, const struct src_file *const *tools, size_t ntools,
		    struct cpol_policy *p, struct diags *d)
{
	struct ydoc app_doc;
	struct ydoc *tool_docs = NULL;
	struct inventory inv = { NULL, 0, 0, 0 };
	struct schema_ctx c = { d, app, NULL };
	const struct ynode *agents = NULL;
	size_t errors0 = d->nerrors, i, parsed = 0;
	int app_ok, inv_ok = 1;

	policy_init(p);
	c.a = &p->arena;
	p->major = CPOL_VERSION_MAJOR;
	p->minor = CPOL_VERSION_MINOR;
	p->arch = CPOL_ARCH_X86_64;
	memset(&app_doc, 0, sizeof(app_doc));
	tool_docs = calloc(ntools ? ntools : 1, sizeof(*tool_docs));
	if (tool_docs == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		goto out;
	}

	/* Stage 1: every file parses on its own, so a syntax error in the
	 * inventory is reported even when the descriptor is broken too.  A
	 * tree that came back whole despite errors (a duplicate key, an
	 * anchor) is still checked, so one run reports those errors and the
	 * descriptor's own; a tree cut short by a syntax error is not, since
	 * its missing half would only produce noise. */
	ydoc_parse(app, &app_doc, d);
	app_ok = app_doc.root != NULL;
	for (i = 0; i < ntools; i++, parsed++) {
		ydoc_parse(tools[i], &tool_docs[i], d);
		if (tool_docs[i].root == NULL)
			inv_ok = 0;
	}

	/* Stage 2: the descriptor's own keys. */
	if (app_ok) {
		c.f = app;
		descriptor_load(&c, app_doc.root, p, &agents);
	}

	/* Stage 3: inventories, then tools sorted and checked as one set. */
	if (inv_ok) {
		for (i = 0; i < ntools; i++) {
			c.f = tools[i];
			if (inventory_load(&c, tool_docs[i].root, &inv) != 0)
				inv_ok = 0;
		}
		c.f = app;
		if (inventory_finish(&c, &inv, p) != 0)
			inv_ok = 0;
	}

	/* Stage 4: agents name tools; with a broken inventory every name would
	 * look unknown, so they are only resolved against a complete one. */
	if (app_ok && inv_ok && agents != NULL) {
		c.f = app;
		agents_resolve(&c, agents, p);
	}
out:
	inventory_free(&inv);
	ydoc_free(&app_doc);
	for (i = 0; i < parsed; i++)
		ydoc_free(&tool_docs[i]);
	free(tool_docs);
	return d->nerrors > errors0 ? -1 : 0;
}

int compile_inputs_read(struct compile_inputs *in, const char *app_path, const char *const *tool_paths,
			size_t ntools, struct diags *d)
{
	size_t i;
	int rc = 0;

	memset(in, 0, sizeof(*in));
	in->tools = calloc(ntools ? ntools : 1, sizeof(*in->tools));
	in->refs = calloc(ntools ? ntools : 1, sizeof(*in->refs));
	if (in->tools == NULL || in->refs == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		return -1;
	}
	/* Every file is read even after one fails, so one run names every
	 * unreadable or malformed input. */
	if (src_read(app_path, YDOC_MAX_BYTES, &in->app, d) != 0)
		rc = -1;
	for (i = 0; i < ntools; i++) {
		if (src_read(tool_paths[i], YDOC_MAX_BYTES, &in->tools[i], d) != 0)
			rc = -1;
		in->refs[i] = &in->tools[i];
	}
	in->ntools = ntools;
	return rc;
}

void compile_inputs_free(struct compile_inputs *in)
{
	size_t i;

	src_free(&in->app);
	for (i = 0; i < in->ntools; i++)
		src_free(&in->tools[i]);
	free(in->tools);
	free(in->refs);
	memset(in, 0, sizeof(*in));
}
