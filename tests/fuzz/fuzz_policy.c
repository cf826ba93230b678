/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy.c - libFuzzer target for the seccomp side of the policy
 * language: lexer, grammar, semantic pass and libseccomp generation.
 *
 * Beyond "no crash, no leak, no hang": whatever the front end accepts must
 * generate a program that passes the runtime's BPF verifier, since the
 * runtime will refuse anything else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/bpf_check.h"
#include "compiler/seccomp_gen.h"
#include "grammar/policy_check.h"
#include "grammar/policy_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Includes resolve in the shipped profiles' folder only. */
	static const char *const dirs[] = { "policies" };
	struct policy_search search = { dirs, 1 };
	struct policy_srcs srcs = { 0 };
	struct cpol_policy p;
	struct pol_file pf;
	struct sc_policy sp;
	struct diags d;

	diags_init(&d);
	policy_init(&p);
	memset(&pf, 0, sizeof(pf));
	if (policy_parse_mem("fuzz.policy", (const char *)data, size, &search, &p.arena, &srcs, &pf, &d) == 0 &&
	    policy_check(&pf, &p.arena, &sp, &d) == 0 && seccomp_gen(&sp, &p, &d) == 0) {
		uint32_t bad = 0;
		const char *why = NULL;

		if (bpf_check(p.seccomp, p.nseccomp, &bad, &why) != 0)
			abort();
	}
	{
		FILE *null = fopen("/dev/null", "w");

		if (null != NULL) {
			diags_print(&d, null);
			fclose(null);
		}
	}
	policy_srcs_free(&srcs);
	diags_free(&d);
	policy_free(&p);
	return 0;
}
