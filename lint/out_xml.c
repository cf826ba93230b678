/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_xml.c - text as XML character data, for the JUnit and checkstyle
 * writers.  One escaper serves attributes and element text alike: it
 * escapes the five markup characters and writes line breaks and tabs as
 * character references, so an attribute keeps them (XML normalises a raw
 * newline in an attribute to a space).  The other C0 controls cannot
 * appear in XML 1.0 at all, not even as references; they become U+FFFD.
 * Input is UTF-8 already (src_read() checked the files the messages quote).
 */
#include "lint/out.h"

void lint_xml_put(FILE *out, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		case '\n': fputs("&#10;", out); break;
		case '\r': fputs("&#13;", out); break;
		case '\t': fputs("&#9;", out); break;
		default:
			if (ch < 0x20 || ch == 0x7f)
				fputs("\xef\xbf\xbd", out);
			else
				fputc(ch, out);
		}
	}
}

const char *lint_finding_path(const struct lint_finding *f)
{
	const char *p = f->pos.file != NULL && f->pos.file->path != NULL ? f->pos.file->path : "";

	/* "./app.yaml" and "app.yaml" are one file to a CI system. */
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return p;
}
