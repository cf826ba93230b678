/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve_fixture.h - for cordon serve's unit tests: policy blobs compiled
 * and signed in-process (the compiler's own functions, as `cordonc compile
 * --sign` does), written into a scratch directory.  Include after
 * <cmocka.h>.
 */
#ifndef CORDON_SERVE_FIXTURE_H
#define CORDON_SERVE_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "compiler/compile.h"
#include "compiler/diag.h"
#include "compiler/sign.h"
#include "cordon/blob.h"
#include "runtime/rmtree.h"

/* The blob of app_yaml with tools_yaml, signed by the secret key file sec
 * unless NULL; *buf malloc'd. */
static inline void fixture_blob(const char *app_yaml, const char *tools_yaml, const char *sec, uint8_t **buf,
				size_t *len)
{
	struct src_file a, t;
	const struct src_file *ts[1] = { &t };
	struct cpol_policy p;
	struct blob_error be;
	struct seckey k;
	struct diags d;
	char err[256];

	diags_init(&d);
	assert_int_equal(src_from_mem("app.yaml", app_yaml, strlen(app_yaml), 1 << 20, &a, &d), 0);
	assert_int_equal(src_from_mem("tools.yaml", tools_yaml, strlen(tools_yaml), 1 << 20, &t, &d), 0);
	if (compile_sources(&a, ts, 1, &p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("the test policy does not compile");
	}
	assert_int_equal(blob_emit(&p, buf, len, &be), 0);
	if (sec != NULL) {
		assert_int_equal(key_read_secret(sec, &k, err, sizeof(err)), 0);
		assert_int_equal(blob_sign(*buf, *len, &k, err, sizeof(err)), 0);
		sodium_memzero(&k, sizeof(k));
	}
	policy_free(&p);
	diags_free(&d);
	src_free(&a);
	src_free(&t);
}

static inline void fixture_file_put(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Removes /tmp/NAME... (path starts with "/tmp/") and all below it. */
static inline void fixture_tmp_drop(const char *path)
{
	char err[512];
	int tmp = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(tmp >= 0);
	assert_int_equal(strncmp(path, "/tmp/", 5), 0);
	if (rmtree_at(tmp, path + 5, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	close(tmp);
}

#endif
