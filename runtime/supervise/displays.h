/* SPDX-License-Identifier: Apache-2.0 */
/*
 * displays.h - reduce: the rich outputs (MIME bundles) a program displayed
 * (docs/result.md, "displays").
 *
 * Inside, cordon_display.py writes each bundle as one file,
 * /workspace/work/.cordon-display/NNNNNN.json, {"data": {MIME: value},
 * "truncated": bool}.  The program could have written anything there
 * instead, so after it ended the supervisor reads the directory as it
 * reads out/: one component at a time, never through a link, regular
 * files only, each file bounded and parsed as strict JSON (UTF-8, no
 * duplicate key), and then judges every bundle: known MIME types only,
 * text/plain present, text as strings, images as base64 whose bytes begin
 * with the format's magic.  A bundle that breaks a rule is kept as a
 * marker (empty data, its error's code and message), never a failure of
 * the run and not a violation: displays are not declared outputs, and
 * what the program did to its own displays costs it only those.
 *
 * Error codes, file level: bad_name, symlink, not_regular, foreign_owner
 * (not owned by work/'s owner, the executor: a hard link to a file the
 * program could not read), hard_link (more than one link), changed
 * (replaced between stat and open), too_large, bad_json, unreadable; bundle level: see displays_check(); directory level (name
 * "."): too_many, and symlink / not_regular / unreadable for
 * .cordon-display itself.
 *
 * The bounds are fixed constants, not policy fields: a bundle's file at
 * most DISPLAYS_MAX_BUNDLE_BYTES, at most DISPLAYS_MAX_COUNT bundles read
 * (the first, by name), at most DISPLAYS_MAX_TOTAL_BYTES read in all, at
 * most DISPLAYS_MAX_SCAN directory entries looked at.
 */
#ifndef CORDON_DISPLAYS_H
#define CORDON_DISPLAYS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Relative to the workspace: work/ is the program's, so is this. */
#define DISPLAYS_PARENT "work"
#define DISPLAYS_DIR ".cordon-display"
#define DISPLAYS_MAX_BUNDLE_BYTES (1u << 20)
#define DISPLAYS_MAX_COUNT 32u
#define DISPLAYS_MAX_TOTAL_BYTES (8u << 20)
#define DISPLAYS_MAX_SCAN 4096u

/*
 * The bundles under the workspace open on ws_fd (not closed) as a JSON
 * array, a new tree the caller deletes: [{"name", "data", "truncated",
 * "error"}], in name order, markers included; [] when the program
 * displayed nothing.  NULL only when memory ran out.
 */
cJSON *displays_collect(int ws_fd);

/*
 * Judge one parsed bundle as displays_collect() does after reading it
 * (pure, for tests): *code NULL when it is accepted, else the error code
 * ("bad_bundle", "bad_mime", "bad_text", "bad_base64", "bad_image") with
 * msg[0..n) saying why.
 */
void displays_check(const cJSON *bundle, const char **code, char *msg, size_t n);

#endif
