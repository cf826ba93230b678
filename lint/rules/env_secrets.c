/* SPDX-License-Identifier: Apache-2.0 */
/*
 * env_secrets.c - secrets in the executor's environment.
 *
 * Everything in execution.executor.env is readable by the generated code
 * (os.environ) and lives in the policy blob in clear text.  Secrets belong
 * to tools (env_from), which run on the trusted side.  Three heuristics, in
 * the manner of secret scanners: names that say "secret" as a whole word,
 * values that carry a known token format, and values that look random.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "lint/rules/rules.h"

/* Whole words of a name that mark a secret. */
static const char *const secret_words[] = { "PASSWORD", "PASSWORDS", "PASSWD", "PASSPHRASE", "SECRET", "SECRETS",
					    "TOKEN", "TOKENS", "CREDENTIAL", "CREDENTIALS", "APIKEY",
					    "APIKEYS", "PRIVATEKEY" };
/* Two-word forms: API_KEY, PRIVATE_KEY. */
static const char *const secret_pairs[][2] = { { "API", "KEY" },     { "API", "KEYS" },       { "PRIVATE", "KEY" },
					       { "ACCESS", "KEY" },  { "SIGNING", "KEY" },    { "ENCRYPTION", "KEY" },
					       { "MASTER", "KEY" },  { "SESSION", "KEY" } };
/* A last word that makes the name about a secret, not the secret itself
 * (DB_PASSWORD_FILE holds a path). */
static const char *const qualifier_words[] = { "FILE", "PATH", "DIR", "ENDPOINT", "TYPE", "LENGTH",
					       "LEN", "TTL", "EXPIRY", "HEADER", "NAME", "URL", "URI",
					       "ALG", "ALGORITHM" };
/* Words that make the name a setting about a quantity of the thing, not a
 * credential: MAX_TOKENS, NUM_TOKENS, TOKEN_LIMIT, PASSWORD_MIN_LENGTH
 * (LLM and tokenizer settings are the common case here). */
static const char *const quantity_words[] = { "MAX", "MIN", "NUM", "LIMIT", "LIMITS", "COUNT", "BUDGET",
					      "SIZE", "LENGTH", "LEN", "TTL", "TIMEOUT", "RATE" };
/* Names that contain a secret word and are known not to be secrets. */
static const char *const benign_names[] = { "TOKENIZERS_PARALLELISM", "PASSWORD_STORE_DIR",
					    "HF_HUB_DISABLE_IMPLICIT_TOKEN", "PASSWORD_STORE_ENABLE_EXTENSIONS",
					    "PASSWORD_STORE_CLIP_TIME" };
/* Values that cannot be a secret whatever the name says. */
static const char *const trivial_values[] = { "", "0", "1", "true", "false", "yes", "no", "on", "off",
					      "none", "null", "enabled", "disabled" };

#define MAX_WORDS 16
#define WORD_MAX 32

static int in_list(const char *s, const char *const *list, size_t n, int nocase)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((nocase ? strcasecmp(s, list[i]) : strcmp(s, list[i])) == 0)
			return 1;
	return 0;
}

#define IN(s, list, nocase) in_list((s), (list), sizeof(list) / sizeof((list)[0]), (nocase))

/* Split on '_', '-', '.' and a lower-to-upper case change (ServiceToken)
 * into upper-cased words; returns how many. */
static size_t split_words(const char *name, char words[][WORD_MAX], size_t cap)
{
	size_t n = 0, len = 0;
	const char *p;

	for (p = name;; p++) {
		if (p > name && islower((unsigned char)p[-1]) && isupper((unsigned char)*p) && len > 0) {
			if (n < cap) {
				words[n][len < WORD_MAX ? len : WORD_MAX - 1] = '\0';
				n++;
			}
			len = 0;
		}
		if (*p == '\0' || *p == '_' || *p == '-' || *p == '.') {
			if (len > 0 && n < cap) {
				words[n][len < WORD_MAX ? len : WORD_MAX - 1] = '\0';
				n++;
			}
			len = 0;
			if (*p == '\0')
				break;
			continue;
		}
		if (n < cap && len < WORD_MAX - 1)
			words[n][len] = (char)toupper((unsigned char)*p);
		len++;
	}
	return n;
}

int secret_name_like(const char *name)
{
	char w[MAX_WORDS][WORD_MAX];
	size_t n, i, j;

	if (IN(name, benign_names, 1))
		return 0;
	n = split_words(name, w, MAX_WORDS);
	if (n > 1 && IN(w[n - 1], qualifier_words, 0))
		return 0;
	for (i = 0; n > 1 && i < n; i++)
		if (IN(w[i], quantity_words, 0))
			return 0;
	for (i = 0; i < n; i++) {
		/* DB_PASS, SMTP_PWD: only as the last word (PASS_THROUGH is not one). */
		if (n > 1 && i == n - 1 && (strcmp(w[i], "PASS") == 0 || strcmp(w[i], "PWD") == 0))
			return 1;
		if (IN(w[i], secret_words, 0))
			return 1;
		for (j = 0; i + 1 < n && j < sizeof(secret_pairs) / sizeof(secret_pairs[0]); j++)
			if (strcmp(w[i], secret_pairs[j][0]) == 0 && strcmp(w[i + 1], secret_pairs[j][1]) == 0)
				return 1;
	}
	return 0;
}

/* Known token formats: prefix, then at least min characters of its
 * alphabet ("A" upper-case letters and digits, "a" letters, digits, '_'
 * and '-'). */
static const struct {
	const char *prefix;
	size_t min;
	char alphabet;
	const char *kind;
} token_formats[] = {
	{ "ghp_", 30, 'a', "a GitHub token" },       { "gho_", 30, 'a', "a GitHub token" },
	{ "ghu_", 30, 'a', "a GitHub token" },       { "ghs_", 30, 'a', "a GitHub token" },
	{ "ghr_", 30, 'a', "a GitHub token" },       { "github_pat_", 20, 'a', "a GitHub token" },
	{ "glpat-", 20, 'a', "a GitLab token" },     { "xoxb-", 10, 'a', "a Slack token" },
	{ "xoxa-", 10, 'a', "a Slack token" },       { "xoxp-", 10, 'a', "a Slack token" },
	{ "xoxr-", 10, 'a', "a Slack token" },       { "xoxs-", 10, 'a', "a Slack token" },
	{ "AKIA", 16, 'A', "an AWS access key id" }, { "ASIA", 16, 'A', "an AWS access key id" },
	{ "sk_live_", 20, 'a', "a Stripe secret key" }, { "rk_live_", 20, 'a', "a Stripe secret key" },
	{ "sk-", 20, 'a', "an API secret key" },     { "AIza", 35, 'a', "a Google API key" },
	{ "npm_", 36, 'a', "an npm token" },         { "hf_", 30, 'a', "a Hugging Face token" },
};

static int in_alphabet(char ch, char alphabet)
{
	if (alphabet == 'A')
		return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-';
}

const char *secret_value_kind(const char *v)
{
	const char *p, *at, *slash;
	size_t i, k;

	if ((p = strstr(v, "-----BEGIN ")) != NULL && strstr(p, "PRIVATE KEY-----") != NULL)
		return "a private key";
	for (p = v; *p != '\0'; p++) {
		/* A token starts a word: "Bearer ghp_..." counts, "xghp_" not. */
		if (p > v && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		for (i = 0; i < sizeof(token_formats) / sizeof(token_formats[0]); i++) {
			size_t pl = strlen(token_formats[i].prefix);

			if (strncmp(p, token_formats[i].prefix, pl) != 0)
				continue;
			for (k = 0; p[pl + k] != '\0' && in_alphabet(p[pl + k], token_formats[i].alphabet); k++)
				;
			if (k >= token_formats[i].min)
				return token_formats[i].kind;
		}
		/* A JSON Web Token: header and payload are base64url JSON. */
		if (strncmp(p, "eyJ", 3) == 0 && (at = strstr(p, ".eyJ")) != NULL && strchr(at + 4, '.') != NULL)
			return "a JSON Web Token";
	}
	/* An Authorization header value: "Bearer <token>", "Basic <base64>". */
	for (i = 0; i < 2; i++) {
		static const char *const schemes[2] = { "Bearer ", "Basic " };
		size_t sl = strlen(schemes[i]);

		if (strncasecmp(v, schemes[i], sl) == 0) {
			for (k = 0; v[sl + k] != '\0' && !isspace((unsigned char)v[sl + k]); k++)
				;
			if (k >= 16 && v[sl + k] == '\0')
				return "an HTTP Authorization credential";
		}
	}
	/* scheme://user:password@host */
	if ((p = strstr(v, "://")) != NULL) {
		p += 3;
		at = strchr(p, '@');
		slash = strchr(p, '/');
		if (at != NULL && (slash == NULL || at < slash) && memchr(p, ':', (size_t)(at - p)) != NULL)
			return "a URL with a password";
	}
	return NULL;
}

/* log2 of x > 0, without libm (cordonc does not link it): x = m * 2^k
 * with m in [1, 2), and ln m = 2 atanh((m - 1) / (m + 1)), whose series
 * converges fast for z <= 1/3.  Accurate to 1e-12, far more than a
 * threshold on entropy needs. */
static double log2_of(double x)
{
	double z, z2, term, sum = 0;
	int k = 0, i;

	while (x >= 2) {
		x /= 2;
		k++;
	}
	while (x < 1) {
		x *= 2;
		k--;
	}
	z = (x - 1) / (x + 1);
	z2 = z * z;
	term = z;
	for (i = 1; i < 40; i += 2) {
		sum += term / i;
		term *= z2;
	}
	return k + 2 * sum / 0.69314718055994530942;
}

double secret_entropy(const char *v, size_t len)
{
	size_t count[256] = { 0 }, i;
	double h = 0;

	for (i = 0; i < len; i++)
		count[(unsigned char)v[i]]++;
	for (i = 0; i < 256; i++) {
		double q;

		if (count[i] == 0)
			continue;
		q = (double)count[i] / (double)len;
		h -= q * log2_of(q);
	}
	return h;
}

/* 8-4-4-4-12 hex digits: an identifier (a run id, a dataset id) far more
 * often than a key, so not judged by entropy (a key of a known format is
 * still CDN602's). */
static int is_uuid(const char *v)
{
	size_t i;

	if (strlen(v) != 36)
		return 0;
	for (i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? v[i] != '-' : !isxdigit((unsigned char)v[i]))
			return 0;
	return 1;
}

/* A value that looks like random key material: long, one token, letters
 * and digits, and close to the entropy of random text of its alphabet. */
static int high_entropy(const char *v)
{
	size_t len = strlen(v), i, digits = 0, letters = 0, hex = 0;
	double h;

	if (len < 20 || v[0] == '/' || strstr(v, "://") != NULL || is_uuid(v))
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (isspace(ch))
			return 0;
		digits += isdigit(ch) != 0;
		letters += isalpha(ch) != 0;
		hex += isxdigit(ch) != 0;
	}
	if (digits == 0 || letters == 0)
		return 0;
	h = secret_entropy(v, len);
	if (hex == len)
		return len >= 32 && h >= 3.5;
	/* Random text of n characters from a large alphabet has close to
	 * log2(n) bits a character; words, names and versions repeat
	 * letters and fall well short of it. */
	return h >= 3.8 && h >= 0.85 * log2_of((double)(len < 64 ? len : 64));
}

/* Each entry of execution.executor.env with its key and value nodes. */
static void env_each(struct lint_ctx *c, const struct lint_rule *r,
		     void (*fn)(struct lint_ctx *, const struct lint_rule *, const struct ynode *, const struct ynode *))
{
	const struct ynode *env = lint_get(c->app_doc.root, "execution.executor.env");
	size_t i;

	if (env == NULL || env->kind != YN_MAP)
		return;
	for (i = 0; i < env->n; i++)
		if (env->keys[i]->kind == YN_SCALAR && env->vals[i]->kind == YN_SCALAR)
			fn(c, r, env->keys[i], env->vals[i]);
}

static void check_name(struct lint_ctx *c, const struct lint_rule *r, const struct ynode *k, const struct ynode *v)
{
	char subject[128];

	if (!secret_name_like(k->str) || IN(v->str, trivial_values, 1))
		return;
	snprintf(subject, sizeof(subject), "env:%.100s", k->str);
	lint_report(c, r, c->app, k, subject, "the executor's environment sets %s, a name that holds a secret",
		    k->str);
}

static void check_value(struct lint_ctx *c, const struct lint_rule *r, const struct ynode *k, const struct ynode *v)
{
	const char *kind = secret_value_kind(v->str);
	char subject[128];

	if (kind == NULL)
		return;
	snprintf(subject, sizeof(subject), "env:%.100s", k->str);
	lint_report(c, r, c->app, v, subject, "the value of %s in the executor's environment looks like %s", k->str,
		    kind);
}

/* A name whose last word says the value is a digest or a version pin
 * (MODEL_REVISION, DATA_SHA256, GIT_COMMIT): a hex value there is a hash,
 * public by nature. */
static int digest_named_hex(const char *name, const char *v)
{
	static const char *const digest_words[] = { "SHA", "SHA1", "SHA256", "SHA512", "HASH", "DIGEST",
						    "CHECKSUM", "COMMIT", "REVISION", "REV", "MD5" };
	char w[MAX_WORDS][WORD_MAX];
	size_t n = split_words(name, w, MAX_WORDS), i;

	for (i = 0; v[i] != '\0'; i++)
		if (!isxdigit((unsigned char)v[i]))
			return 0;
	return n > 0 && IN(w[n - 1], digest_words, 0);
}

static void check_entropy(struct lint_ctx *c, const struct lint_rule *r, const struct ynode *k,
			  const struct ynode *v)
{
	char subject[128];

	if (secret_value_kind(v->str) != NULL || !high_entropy(v->str) || digest_named_hex(k->str, v->str))
		return;
	snprintf(subject, sizeof(subject), "env:%.100s", k->str);
	lint_report(c, r, c->app, v, subject,
		    "the value of %s in the executor's environment looks random (%.1f bits a character over %zu)",
		    k->str, secret_entropy(v->str, v->len), v->len);
}

static void check_tool_secret(struct lint_ctx *c, const struct lint_rule *r, const struct ynode *k,
			      const struct ynode *v)
{
	uint32_t i, j;
	char subject[128];

	(void)v;
	for (i = 0; i < c->p.ntools; i++) {
		const struct cpol_tool *t = &c->p.tools[i];

		for (j = 0; j < t->env_from.n; j++) {
			if (strcmp(t->env_from.v[j], k->str) != 0)
				continue;
			snprintf(subject, sizeof(subject), "env:%.100s", k->str);
			lint_report(c, r, c->app, k, subject,
				    "%s is a secret of tool %s (env_from), and the executor's environment sets it too",
				    k->str, t->id);
			return;
		}
	}
}

void rule_env_secret_name(struct lint_ctx *c, const struct lint_rule *r)
{
	env_each(c, r, check_name);
}

void rule_env_secret_value(struct lint_ctx *c, const struct lint_rule *r)
{
	env_each(c, r, check_value);
}

void rule_env_high_entropy(struct lint_ctx *c, const struct lint_rule *r)
{
	env_each(c, r, check_entropy);
}

void rule_env_tool_secret(struct lint_ctx *c, const struct lint_rule *r)
{
	env_each(c, r, check_tool_secret);
}
