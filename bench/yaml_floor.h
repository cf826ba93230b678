/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yaml_floor.h - the floor compile figures are set beside: libyaml's event
 * parse of the same text, every event fetched and dropped (make bench).
 *
 * Header only, like figure.h: each bench is one file and links nothing
 * else of bench/.
 */
#ifndef CORDON_BENCH_YAML_FLOOR_H
#define CORDON_BENCH_YAML_FLOOR_H

#include <stddef.h>

#include <yaml.h>

/* Events in text (a sink, so the parse cannot be optimised away). */
static inline size_t yaml_floor_events(const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	size_t n = 0;
	int done = 0;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && yaml_parser_parse(&parser, &ev)) {
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		n++;
	}
	yaml_parser_delete(&parser);
	return n;
}

#endif
