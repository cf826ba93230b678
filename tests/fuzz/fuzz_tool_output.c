/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_tool_output.c - the check of a tool's answer (runtime/supervise/
 * tool_exec.c, tool_exec_parse_output): tools are trusted code, but their
 * answers carry what the world sent them (a mail server's reply, a web
 * page), and the answer goes on to the sandbox.  Any input gives one JSON
 * value with no duplicate key, or a reason; never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/supervise/request.h"
#include "runtime/supervise/tool_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256] = "";
	cJSON *v = tool_exec_parse_output((const char *)data, size, why, sizeof(why));

	if (v == NULL) {
		if (memchr(why, '\0', sizeof(why)) == NULL || why[0] == '\0')
			abort(); /* every refusal says why */
		return 0;
	}
	if (memchr(data, '\0', size) != NULL || request_has_duplicate_key(v))
		abort();
	cJSON_Delete(v);
	return 0;
}
