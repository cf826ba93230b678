/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_verify.c - run a generated filter and compare it with the policy
 * (seccomp_verify.h).
 *
 * Why test vectors and not a proof: the filter is a small program over six
 * 64-bit arguments, and the ways libseccomp gets it wrong are all at value
 * boundaries (a 64-bit constant split into two 32-bit words, a shared
 * prefix of several alternatives jumping to the wrong continuation).  So the
 * vectors are the boundaries of every constant the rule uses, on both
 * 32-bit words, plus the values where words wrap, combined across the
 * rule's arguments: exhaustively when the cross product is small, otherwise
 * each alternative's satisfying vector varied one argument at a time and a
 * fixed-seed sample of the rest, so a run is repeatable.
 *
 * The expected answer comes from the checked rules (policy_rule_holds(), the
 * DNF evaluated with 64-bit semantics), not from anything libseccomp said.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/bpf_sim.h"
#include "compiler/seccomp_verify.h"

#define VERIFY_MAX_VALUES 256 /* boundary values kept per argument */
/* The share of the vectors given to alternatives' satisfying vectors
 * varied one argument at a time, when the cross product is too large. */
#define VERIFY_TARGETED (SECCOMP_VERIFY_MAX_VECTORS / 2)
/* Unlisted syscall numbers tried: every x86_64 number has room below it. */
#define VERIFY_NR_LIMIT 1024
#define X32_SYSCALL_BIT 0x40000000u

struct vset {
	uint64_t v[VERIFY_MAX_VALUES];
	unsigned n;
};

struct vctx {
	const struct sc_policy *sp;
	const struct cpol_bpf *prog;
	uint32_t n;
	struct diags *d;
};

static void vset_add(struct vset *s, uint64_t x)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return;
	if (s->n < VERIFY_MAX_VALUES)
		s->v[s->n++] = x;
}

/* The values where atom a changes its answer, on each 32-bit word. */
static void vset_atom(struct vset *s, const struct scmp_arg_cmp *a)
{
	uint64_t c = a->datum_a, hi = c >> 32, lo = c & 0xffffffffu;
	unsigned bit;

	if (a->op == SCMP_CMP_MASKED_EQ) {
		uint64_t m = a->datum_a, v = a->datum_b;

		vset_add(s, v);
		vset_add(s, m);
		vset_add(s, v | ~m); /* bits outside the mask must not matter */
		for (bit = 0; bit < 64; bit++) {
			if (m & (1ull << bit)) {
				vset_add(s, 1ull << bit);
				vset_add(s, v ^ (1ull << bit));
			}
		}
		return;
	}
	vset_add(s, c - 1);
	vset_add(s, c);
	vset_add(s, c + 1);
	vset_add(s, lo);
	vset_add(s, hi << 32);
	vset_add(s, hi << 32 | 0xffffffffu);
	vset_add(s, (hi + 1) << 32 | lo);
	vset_add(s, (hi - 1) << 32 | lo);
	vset_add(s, 0xffffffff00000000ull | lo);
}

/* A value for which atom a holds (any value when none does: a < 0). */
static uint64_t atom_witness(const struct scmp_arg_cmp *a)
{
	switch (a->op) {
	case SCMP_CMP_NE:
	case SCMP_CMP_GT: return a->datum_a + 1;
	case SCMP_CMP_LT: return a->datum_a - 1;
	case SCMP_CMP_MASKED_EQ: return a->datum_b;
	default: return a->datum_a;
	}
}

static const char *act_name(uint32_t act, char *buf, size_t cap)
{
	return bpf_sim_action_name(act, buf, cap);
}

static uint32_t verify_run(const struct vctx *c, int32_t nr, uint32_t arch, const uint64_t args[6])
{
	struct bpf_sim_data sd;
	uint32_t ret;

	memset(&sd, 0, sizeof(sd));
	sd.nr = nr;
	sd.arch = arch;
	memcpy(sd.args, args, sizeof(sd.args));
	if (bpf_sim_exec(c->prog, c->n, &sd, &ret, NULL) != 0)
		return BPF_SIM_INVALID;
	return ret;
}

/* Run rule r's syscall on args; -1 after reporting a disagreement. */
static int verify_vector(const struct vctx *c, const struct sc_rule *r, unsigned nshown, const uint64_t args[6])
{
	uint32_t want = policy_rule_holds(r, args) ? r->action : c->sp->def_action;
	uint32_t got = verify_run(c, r->nr, CPOL_ARCH_X86_64, args);
	char shown[6 * 20 + 16], b1[32], b2[32];
	size_t o = 0;
	unsigned i;

	if (got == want)
		return 0;
	for (i = 0; i < nshown; i++)
		o += (size_t)snprintf(shown + o, sizeof(shown) - o, "%s0x%llx", i ? ", " : "",
				      (unsigned long long)args[i]);
	shown[o] = '\0';
	/* Only conditions of several alternatives have been seen to go wrong;
	 * anything else would be a new defect, and is reported plainly. */
	diag_at(c->d, DIAG_ERROR, r->loc.file, r->loc.line, r->loc.col,
		"libseccomp produced a filter that does not match the rule for '%s': %s(%s) gets %s, the rule "
		"says %s%s",
		r->name, r->name, shown, got == BPF_SIM_INVALID ? "an invalid run" : act_name(got, b1, sizeof(b1)),
		act_name(want, b2, sizeof(b2)),
		r->nconj < 2 ? "" :
		"; this is a known libseccomp 2.5 defect with conditions of several alternatives that use '!=', "
		"'<', '<=', '>', '>=' or constants above 32 bits: rewrite the condition with == and masks only, "
		"or as alternatives over one argument with constants below 2^32");
	return -1;
}

/* A deterministic generator (xorshift64), so a failure is repeatable. */
static uint64_t verify_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int verify_rule(const struct vctx *c, const struct sc_rule *r, struct vset *sets)
{
	uint64_t args[6], base[6], seed;
	unsigned idx[6], nshown = 0, mentioned = 0, i, v;
	size_t total = 1, count = 0, k, j;

	for (i = 0; i < 6; i++)
		sets[i].n = 0;
	for (k = 0; k < r->nconj; k++) {
		for (j = 0; j < r->conj[k].n; j++) {
			const struct scmp_arg_cmp *a = &r->conj[k].cmp[j];

			vset_atom(&sets[a->arg], a);
			mentioned |= 1u << a->arg;
			if (a->arg + 1 > nshown)
				nshown = a->arg + 1;
		}
	}
	for (i = 0; i < 6; i++) {
		static const uint64_t edges[] = { 0, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, UINT64_MAX };

		/* An argument no test reads cannot change the answer; one
		 * value keeps it from multiplying the vectors. */
		for (v = 0; v < (mentioned & (1u << i) ? sizeof(edges) / sizeof(edges[0]) : 1); v++)
			vset_add(&sets[i], edges[v]);
		total = total > SECCOMP_VERIFY_MAX_VECTORS ? total : total * sets[i].n;
	}
	if (total <= SECCOMP_VERIFY_MAX_VECTORS) {
		/* Every combination: a mixed-radix counter over the sets. */
		memset(idx, 0, sizeof(idx));
		for (;;) {
			for (i = 0; i < 6; i++)
				args[i] = sets[i].v[idx[i]];
			if (verify_vector(c, r, nshown, args) != 0)
				return -1;
			for (i = 0; i < 6 && ++idx[i] == sets[i].n; i++)
				idx[i] = 0;
			if (i == 6)
				return 0;
		}
	}
	/* Each alternative made true, then moved off its boundaries one
	 * argument at a time: where a wrong jump between alternatives shows. */
	for (k = 0; k < r->nconj && count < VERIFY_TARGETED; k++) {
		memset(base, 0, sizeof(base));
		for (j = 0; j < r->conj[k].n; j++)
			base[r->conj[k].cmp[j].arg] = atom_witness(&r->conj[k].cmp[j]);
		for (i = 0; i < 6 && count < VERIFY_TARGETED; i++) {
			for (v = 0; v < sets[i].n && count < VERIFY_TARGETED; v++, count++) {
				memcpy(args, base, sizeof(args));
				args[i] = sets[i].v[v];
				if (verify_vector(c, r, nshown, args) != 0)
					return -1;
			}
		}
	}
	seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)r->nr;
	for (; count < SECCOMP_VERIFY_MAX_VECTORS; count++) {
		for (i = 0; i < 6; i++)
			args[i] = sets[i].v[verify_rand(&seed) % sets[i].n];
		if (verify_vector(c, r, nshown, args) != 0)
			return -1;
	}
	return 0;
}

static const struct sc_rule *rule_for(const struct sc_policy *sp, int nr)
{
	size_t lo = 0, hi = sp->nrules;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->rules[mid].nr == nr)
			return &sp->rules[mid];
		if (sp->rules[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* What no rule decides: another arch and x32 numbers are killed, a syscall
 * without a rule gets the default whatever its arguments.  A failure here
 * is the generator's (the prelude is ours), so it has no place in a file. */
static int verify_paths(const struct vctx *c)
{
	static const uint32_t archs[] = { 0x40000003u /* i386 */, 0xc00000b7u /* aarch64 */,
					  0x4000003eu /* x86_64 without the 64-bit flag */, 0, 0xffffffffu };
	static const uint64_t zero[6] = { 0 }, ones[6] = { UINT64_MAX, UINT64_MAX, UINT64_MAX,
							    UINT64_MAX, UINT64_MAX, UINT64_MAX };
	char b1[32], b2[32];
	uint32_t got, want;
	size_t a;
	int nr;

	for (nr = 0; nr <= VERIFY_NR_LIMIT; nr++) {
		/* The last round is the highest number the prelude lets by. */
		int n = nr < VERIFY_NR_LIMIT ? nr : (int)X32_SYSCALL_BIT - 1;

		for (a = 0; a < sizeof(archs) / sizeof(archs[0]); a++) {
			if ((got = verify_run(c, n, archs[a], zero)) != SCMP_ACT_KILL_PROCESS) {
				diag_at(c->d, DIAG_ERROR, NULL, 0, 0,
					"seccomp: the generated filter gives %s for syscall %d of arch 0x%08x; another "
					"arch must kill the process", act_name(got, b1, sizeof(b1)), n, archs[a]);
				return -1;
			}
		}
		if ((got = verify_run(c, (int32_t)((uint32_t)n | X32_SYSCALL_BIT), CPOL_ARCH_X86_64, zero)) !=
		    SCMP_ACT_KILL_PROCESS) {
			diag_at(c->d, DIAG_ERROR, NULL, 0, 0,
				"seccomp: the generated filter gives %s for x32 syscall %d; x32 must kill the process",
				act_name(got, b1, sizeof(b1)), n);
			return -1;
		}
		if (rule_for(c->sp, n) != NULL)
			continue;
		want = c->sp->def_action;
		if ((got = verify_run(c, n, CPOL_ARCH_X86_64, zero)) != want ||
		    (got = verify_run(c, n, CPOL_ARCH_X86_64, ones)) != want) {
			diag_at(c->d, DIAG_ERROR, NULL, 0, 0,
				"seccomp: the generated filter gives %s for syscall %d, which has no rule; the "
				"default is %s", act_name(got, b1, sizeof(b1)), n, act_name(want, b2, sizeof(b2)));
			return -1;
		}
	}
	return 0;
}

int seccomp_verify(const struct sc_policy *sp, const struct cpol_bpf *prog, uint32_t n, struct diags *d)
{
	struct vctx c = { sp, prog, n, d };
	struct vset *sets = NULL;
	size_t i;
	int rc = -1;

	/* Six sets of 2 KiB each: too large for a library function's stack. */
	sets = calloc(6, sizeof(*sets));
	if (sets == NULL) {
		diag_at(d, DIAG_ERROR, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (verify_paths(&c) != 0)
		goto out;
	for (i = 0; i < sp->nrules; i++)
		if (verify_rule(&c, &sp->rules[i], sets) != 0)
			goto out;
	rc = 0;
out:
	free(sets);
	return rc;
}
