# SPDX-License-Identifier: Apache-2.0
# cordon - policy compiler toolchain and thin runtime.
#
#   make            build cordonc and cordon into build/
#   make demo       install deps, build, compile the cafe example, run it with a tool call
#                   (DEMO=full: also a notebook-style code-interpreter session, examples/notebook)
#   make check      install deps, build, run every test (SAN=1: ASan+UBSan,
#                   TSAN=1: ThreadSanitizer, the tests that make sense under it)
#   make faults     the fault suite in full (tests/faults/README.md)
#   make fuzz       run the libFuzzer targets longer (FUZZ_SECONDS each)
#   make bench      benchmark figures as one report (docs/bench.md)
#   make compat     CPython's own tests inside python-compute: the share that passes
#   make soak       thousands of runs through cordon run and cordon serve, then nothing left (not in check)
#   make install    PREFIX=/usr/local, DESTDIR supported (make uninstall undoes it)
#   make package    Debian packages into build/deb/ (check-package tests them installed)
#
# Source files are found by folder, so a new file in compiler/ or runtime/
# needs no Makefile edit.  Objects of the sanitizer builds live apart
# (build-san/, build-tsan/) so the builds never mix.

SAN ?= 0
TSAN ?= 0
CC ?= cc
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 600
CHECK_FUZZ_SECONDS ?= 20

ifeq ($(TSAN),1)
# ThreadSanitizer cannot be combined with ASan: a build of its own.
B := build-tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT := -O1
else ifeq ($(SAN),1)
B := build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT := -O1
else
B := build
SANFLAGS :=
OPT := -O2
endif

PKGS_COMPILER := yaml-0.1 libseccomp libsodium libcjson
PKGS_RUNTIME := libsodium libcjson sqlite3

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
CPPFLAGS_ALL := -D_GNU_SOURCE -Iinclude -I. -I$(B)/gen
CFLAGS_ALL := -std=c11 -g $(OPT) $(WARN) $(SANFLAGS) -pthread -fstack-protector-strong $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) -pthread $(LDFLAGS)

LIBS_COMPILER := $(shell pkg-config --libs $(PKGS_COMPILER) 2>/dev/null)
LIBS_RUNTIME := $(shell pkg-config --libs $(PKGS_RUNTIME) 2>/dev/null)
LIBS_TEST := $(shell pkg-config --libs cmocka 2>/dev/null)
LIBS_SERVE := $(shell pkg-config --libs libmicrohttpd 2>/dev/null)

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
CPPFLAGS_ALL += -DCORDON_VERSION='"$(VERSION)"'
# Seccomp profiles: cordonc finds its own from /proc/self/exe
# (compiler/policy_home.h): PREFIX/share/cordon/policies when installed,
# this tree's policies/ when a marker make writes beside the binaries says
# it is a build tree.  So no build path is compiled in and one build
# installs under any PREFIX; PREFIX below is only the fallback when /proc
# is not mounted.  CORDON_POLICY_PATH comes first.
CPPFLAGS_ALL += -DCORDON_POLICY_DIRS='"$(PREFIX)/share/cordon/policies"'
# The system trust directory (docs/provenance.md): when it holds *.pub keys,
# cordon run and serve demand a signature by one of them.
TRUST_DIR ?= /etc/cordon/trusted-keys
CPPFLAGS_ALL += -DCORDON_TRUST_DIR='"$(TRUST_DIR)"'

COMMON_SRC := $(wildcard common/*.c)
# runtime/ has one folder a part (launch/, supervise/, ...); all of it is
# library code but main().
RUNTIME_LIB_SRC := $(filter-out runtime/cordon.c runtime/serve/%,$(wildcard runtime/*.c runtime/*/*.c))
# runtime/serve/ (cordon serve: libmicrohttpd) links into cordon alone:
# neither cordonc nor the unit tests of other modules carry an HTTP server.
SERVE_SRC := $(wildcard runtime/serve/*.c)
PKGS_SERVE := libmicrohttpd
# lint/ (the rule catalogue and its writers) is compiler-side code: cordonc only.
COMPILER_LIB_SRC := $(filter-out compiler/cordonc.c,$(wildcard compiler/*.c)) $(wildcard grammar/*.c) \
	$(wildcard lint/*.c lint/*/*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

COMMON_OBJ := $(call obj,$(COMMON_SRC))
RUNTIME_LIB_OBJ := $(call obj,$(RUNTIME_LIB_SRC))
# The grammar: bison and flex write into $(B)/gen/grammar/, compiled with
# warnings relaxed (generated code is not ours to keep -Wextra clean); the
# hand-written helpers in grammar/ get the full set.
GEN := $(B)/gen/grammar
GEN_OBJ := $(B)/obj/gen/policy.tab.o $(B)/obj/gen/lex.yy.o
GEN_CFLAGS := -std=c11 -g $(OPT) $(SANFLAGS) -fstack-protector-strong -Wall -Werror -Wno-unused-function -Wno-sign-compare \
	-Wno-unused-but-set-variable $(CFLAGS)
COMPILER_LIB_OBJ := $(call obj,$(COMPILER_LIB_SRC)) $(GEN_OBJ)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

.PHONY: all deps demo check unit cli fuzz-check fuzz bench install uninstall clean
all: $(B)/cordonc $(B)/cordon $(B)/cordon-build-tree

# The build-tree marker (compiler/policy_home.h): the source tree's
# policies/ relative to the binaries, so a moved or copied tree still works.
$(B)/cordon-build-tree:
	@mkdir -p $(B) && echo ../policies >$@

# --- the executor side of the tool bridge (runtime/client/, docs/client.md).
# cordon_tools.py is embedded in the runtime library through a generated C
# file (cordon writes it into every run; scripts/embed needs only sh and
# od).  The C client is executor code, not runtime code: it stays out of the
# runtime library and ships as libcordon_tools.a with its header.  The fuzz
# targets compile sources directly, so the generated file joins
# RUNTIME_LIB_SRC after the objects are listed.
CLIENT_PY_C := $(B)/gen/client/cordon_tools_py.c
CLIENT_PY_OBJ := $(B)/obj/gen/client/cordon_tools_py.o
CLIENT_C_OBJ := $(call obj,runtime/client/cordon_tools.c)
RUNTIME_LIB_SRC := $(filter-out runtime/client/cordon_tools.c,$(RUNTIME_LIB_SRC))
RUNTIME_LIB_OBJ := $(call obj,$(RUNTIME_LIB_SRC)) $(CLIENT_PY_OBJ)
RUNTIME_LIB_SRC += $(CLIENT_PY_C)

$(CLIENT_PY_C): runtime/client/cordon_tools.py scripts/embed
	@mkdir -p $(dir $@)
	sh scripts/embed stubs_client_py $< $@

$(CLIENT_PY_OBJ): $(CLIENT_PY_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

# cordon_display.py (rich MIME outputs, docs/result.md "displays") is
# embedded the same way and written beside cordon_tools.py.
DISPLAY_PY_C := $(B)/gen/client/cordon_display_py.c
DISPLAY_PY_OBJ := $(B)/obj/gen/client/cordon_display_py.o
RUNTIME_LIB_OBJ += $(DISPLAY_PY_OBJ)
RUNTIME_LIB_SRC += $(DISPLAY_PY_C)

$(DISPLAY_PY_C): runtime/client/cordon_display.py scripts/embed
	@mkdir -p $(dir $@)
	sh scripts/embed display_client_py $< $@

$(DISPLAY_PY_OBJ): $(DISPLAY_PY_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

$(B)/libcordon_tools.a: $(CLIENT_C_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

all: $(B)/libcordon_tools.a
$(B)/tests/test_client: $(CLIENT_C_OBJ)

# Installed with a pkg-config file (cordon-tools.pc, from
# packaging/pkgconfig/cordon-tools.pc.in); LIBDIR for Debian's multiarch.
LIBDIR ?= $(PREFIX)/lib
.PHONY: install-client uninstall-client
install: install-client
install-client: $(B)/libcordon_tools.a
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 0644 $(B)/libcordon_tools.a $(DESTDIR)$(LIBDIR)/
	install -m 0644 runtime/client/cordon_tools.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's#@PREFIX@#$(PREFIX)#' -e 's#@LIBDIR@#$(LIBDIR)#' -e 's#@VERSION@#$(VERSION)#' \
		packaging/pkgconfig/cordon-tools.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/cordon-tools.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/cordon-tools.pc
uninstall: uninstall-client
uninstall-client:
	rm -f $(DESTDIR)$(LIBDIR)/libcordon_tools.a $(DESTDIR)$(LIBDIR)/pkgconfig/cordon-tools.pc \
		$(DESTDIR)$(PREFIX)/include/cordon_tools.h
# --- end of the tool client block.

# --- the version both binaries print (include/cordon/version.h): VERSION,
# then "+" and `git describe --always --dirty` in a checkout.  scripts/revision
# runs as the Makefile is read and rewrites $(B)/gen/revision.c only when
# the text changes, so a commit recompiles that one file and relinks the two
# binaries; nothing else depends on it (not even the unit tests), and a
# built tree stays up to date for make -q.
REVISION_C := $(B)/gen/revision.c
REVISION_OBJ := $(B)/obj/gen/revision.o
REVISION_STATUS := $(shell sh scripts/revision $(CURDIR) $(VERSION) $(REVISION_C) || echo failed)
ifneq ($(REVISION_STATUS),)
$(error scripts/revision could not write $(REVISION_C))
endif
$(REVISION_OBJ): $(REVISION_C) include/cordon/version.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@
$(B)/cordonc $(B)/cordon: $(REVISION_OBJ)
# --- end of the version block.

deps:
	@scripts/install-deps

# One bison run makes both files (a grouped target): with two ordinary
# targets, make -j ran bison twice and the second run made the header
# newer than the objects built from the first, so the next make rebuilt
# them all.
$(GEN)/policy.tab.c $(GEN)/policy.tab.h &: grammar/policy.y
	@mkdir -p $(GEN)
	bison -Wall -Werror --defines=$(GEN)/policy.tab.h -o $(GEN)/policy.tab.c $<

$(GEN)/lex.yy.c: grammar/policy.l $(GEN)/policy.tab.h
	@mkdir -p $(GEN)
	flex -o $@ $<

$(B)/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(GEN_CFLAGS) -MMD -MP -c $< -o $@

# Everything may include the generated header.
$(call obj,$(COMPILER_LIB_SRC) compiler/cordonc.c $(wildcard tests/unit/*.c)): $(GEN)/policy.tab.h

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(B)/cordonc: $(call obj,compiler/cordonc.c) $(COMPILER_LIB_OBJ) $(RUNTIME_LIB_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_COMPILER) $(LIBS_RUNTIME)

# The runtime links neither libyaml nor libseccomp: it never parses policy
# text and never compiles BPF (tests/cli/test_ldd.sh holds it to that).
# libmicrohttpd is not linked: serve loads it (runtime/serve/mhd.h), so
# `cordon run` does not pay for GnuTLS's load and constructor.
$(B)/cordon: $(call obj,runtime/cordon.c) $(call obj,$(SERVE_SRC)) $(RUNTIME_LIB_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_RUNTIME)

# Unit tests of serve's modules (tests/unit/test_serve_*.c) link them too:
# the modules a test names in SERVE_UNIT_SRC_<test>, else all of serve.
# test_serve_http brings a fake engine (its own engine_*), so it must not
# link the real one.
SERVE_UNIT_BIN := $(filter $(B)/tests/test_serve_%,$(UNIT_BIN))
SERVE_UNIT_SRC_test_serve_tokens := runtime/serve/tokens.c
SERVE_UNIT_SRC_test_serve_exec_request := runtime/serve/exec_request.c
SERVE_UNIT_SRC_test_serve_metrics := runtime/serve/metrics.c
SERVE_UNIT_SRC_test_serve_gate := runtime/serve/gate.c
SERVE_UNIT_SRC_test_serve_stream := runtime/serve/stream.c
SERVE_UNIT_SRC_test_serve_http := $(addprefix runtime/serve/,http.c mhd.c tokens.c exec_request.c metrics.c stream.c)
$(foreach t,$(SERVE_UNIT_BIN),$(eval $(t): $(call obj,$(or $(SERVE_UNIT_SRC_$(notdir $(t))),$(SERVE_SRC)))))
$(SERVE_UNIT_BIN): LIBS_TEST += $(LIBS_SERVE)

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(COMPILER_LIB_OBJ) $(RUNTIME_LIB_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_COMPILER) $(LIBS_RUNTIME) $(LIBS_TEST)

# Under TSan the unit tests that load seccomp filters into the kernel are
# left out (CORDON_NO_KERNEL_TESTS): a child killed by its filter's
# SECCOMP_RET_KILL_THREAD leaves TSan's background thread behind, so the
# child never ends and the test waits for it forever; they run no threads
# of ours anyway.
# ledger-pg: test_ledger's semantic tests again on PostgreSQL, plus its
# PostgreSQL-only ones, on a private server tests/lib/pgtmp starts (a Unix
# socket in a fresh directory; as root the server runs as cordon-test) and
# stops whatever the result.  Under TSAN=1 a child forked from the test
# (whose handle renews its lease from a thread) may start threads of its
# own: die_after_fork=0 lets it, as separate processes would.
# test_ledger talks to the server itself (to forge rows, kill its
# connection); the runtime loads libpq only when a ledger URL is opened
# (runtime/ledger/pq.h).
$(B)/tests/test_ledger: LIBS_TEST += $(shell pkg-config --libs libpq 2>/dev/null)
.PHONY: ledger-pg
ledger-pg: $(B)/tests/test_ledger
	@set -e; d=$$(mktemp -d /tmp/cordon-ledger-pg.XXXXXX); chmod 755 $$d; \
	url=$$(tests/lib/pgtmp start $$d) || { rm -rf $$d; exit 1; }; \
	echo "== $< on $$url"; rc=0; \
	$(if $(filter 1,$(TSAN)),TSAN_OPTIONS="$$TSAN_OPTIONS die_after_fork=0") \
	CORDON_SRC=$(CURDIR) CORDON_TEST_LEDGER_URL="$$url" CORDON_TEST_PGTMP=$$d $< || rc=$$?; \
	tests/lib/pgtmp stop $$d || rc=1; rm -rf $$d; exit $$rc
check: ledger-pg

UNIT_ENV := $(if $(filter 1,$(TSAN)),CORDON_NO_KERNEL_TESTS=1)
unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; \
		$(UNIT_ENV) CORDON_SRC=$(CURDIR) CORDON_POLICY_PATH=$(CURDIR)/policies $$t; done

cli: all
	@set -e; for t in tests/cli/test_*.sh; do echo "== $$t"; \
		BUILD=$(CURDIR)/$(B) SRC=$(CURDIR) SAN=$(SAN) CORDON_POLICY_PATH=$(CURDIR)/policies sh $$t; done

# libFuzzer targets: clang only, their own sanitizer build.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRC))
FUZZ_FLAGS := -std=c11 -g -O1 -pthread -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(CPPFLAGS_ALL)
FUZZ_LIB_SRC := $(COMMON_SRC) $(RUNTIME_LIB_SRC) $(COMPILER_LIB_SRC)
# Extra read-only seed folders per target: the broken-input corpus is a
# ready-made set of near-miss descriptors for the front end.
FUZZ_SEEDS_compile := tests/corpus/compile tests/corpus/good

# A target that needs sources outside FUZZ_LIB_SRC (runtime/serve/ is not
# in it) names them in FUZZ_EXTRA_SRC_<target>.
FUZZ_EXTRA_SRC_fuzz_serve_request := runtime/serve/exec_request.c
FUZZ_EXTRA_SRC_fuzz_serve_tokens := runtime/serve/tokens.c

.SECONDEXPANSION:
build-fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) $$(FUZZ_EXTRA_SRC_$$*) $(GEN)/policy.tab.c $(GEN)/lex.yy.c \
		$(wildcard include/cordon/*.h compiler/*.h runtime/*.h runtime/*/*.h grammar/*.h lint/*.h lint/*/*.h)
	@mkdir -p build-fuzz
	clang $(FUZZ_FLAGS) -Wno-unused-function -o $@ $< $(FUZZ_LIB_SRC) $(FUZZ_EXTRA_SRC_$*) $(GEN)/policy.tab.c \
		$(GEN)/lex.yy.c $(LIBS_COMPILER) $(LIBS_RUNTIME)

fuzz-check: $(FUZZ_BIN)
	@set -e; for f in $(FUZZ_BIN); do n=$$(basename $$f); echo "== $$n ($(CHECK_FUZZ_SECONDS)s)"; \
		case $$n in fuzz_compile) seeds="$(FUZZ_SEEDS_compile)";; *) seeds="";; esac; \
		mkdir -p build-fuzz/corpus-$$n; \
		$$f -max_total_time=$(CHECK_FUZZ_SECONDS) -max_len=65536 -print_final_stats=0 -close_fd_mask=3 \
			build-fuzz/corpus-$$n tests/fuzz/corpus/$${n#fuzz_} $$seeds >build-fuzz/$$n.log 2>&1 \
			|| { tail -50 build-fuzz/$$n.log; exit 1; }; done

fuzz: $(FUZZ_BIN)
	@set -e; for f in $(FUZZ_BIN); do n=$$(basename $$f); echo "== $$n ($(FUZZ_SECONDS)s)"; \
		case $$n in fuzz_compile) seeds="$(FUZZ_SEEDS_compile)";; *) seeds="";; esac; \
		mkdir -p build-fuzz/corpus-$$n; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -close_fd_mask=3 \
			build-fuzz/corpus-$$n tests/fuzz/corpus/$${n#fuzz_} $$seeds; done

# Real seccomp enforcement (tests/seccomp/README.md).  attack is built
# without sanitizers whatever SAN says: ASan needs syscalls an allowlist
# refuses.  The shipped profile is checked through a compiled blob of the
# cafe example against its expectation file, and the Python programs that
# the allowlist was derived from must run under it.
SECCOMP_BIN := $(B)/tests/seccomp/apply_filter $(B)/tests/seccomp/attack $(B)/tests/seccomp/mkblob

$(B)/tests/seccomp/attack: tests/seccomp/attack.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -std=c11 -g -O2 $(WARN) -o $@ $<

$(B)/tests/seccomp/apply_filter: $(B)/obj/tests/seccomp/apply_filter.o $(RUNTIME_LIB_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_RUNTIME)

$(B)/tests/seccomp/mkblob: $(B)/obj/tests/seccomp/mkblob.o $(COMPILER_LIB_OBJ) $(RUNTIME_LIB_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_COMPILER) $(LIBS_RUNTIME)

.PHONY: enforce
enforce: all $(SECCOMP_BIN)
	@$(B)/cordonc compile examples/cafe/app.yaml examples/cafe/tools.yaml -o $(B)/cafe.cpol
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/seccomp/test_enforce.sh \
		$(B)/cafe.cpol tests/seccomp/expect/python-compute.txt
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/seccomp/test_programs.sh $(B)/cafe.cpol

# Boundary tests (tests/boundary/README.md): one attack a program inside
# `cordon run`, each asserting which layer stopped it; as root, then again as
# the unprivileged user cordon-test.  They run this build's cordon, so with
# SAN=1 the supervisor and the executor's setup up to execve are the ASan
# build (python runs the attacks, never ASan code).
.PHONY: boundary
boundary: all
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/boundary/run.sh

# Tool bridge tests (tests/bridge/README.md): programs inside `cordon run`
# call the supervisor's tool socket, and each check asserts the (code,
# check) of the answer and the call's audit line; as root, then again as
# cordon-test.
.PHONY: bridge
bridge: all
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/bridge/run.sh

# cordon serve's own suites (tests/serve/README.md): isolation between
# concurrent and successive executions of one server (run.sh), and the HTTP
# API through curl and the Python client, bad input and faults (api.sh).
# Both run whatever the first says.
.PHONY: serve-tests
serve-tests: all
	@rc=0; BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/serve/run.sh || rc=1; \
		BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/serve/api.sh || rc=1; exit $$rc

# Exactly-once across cordon serve replicas (tests/fleet/README.md): two
# servers on one ledger (one SQLite --state-dir; one private PostgreSQL
# when --ledger and the server are there), side-effect calls with the same
# message ids, a shared daily budget, a replica SIGKILLed mid-call.  Root.
.PHONY: fleet
fleet: all
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/fleet/run.sh

# The soak (tests/soak/README.md): SOAK_SECONDS (200) of executions, up to
# SOAK_CONCURRENCY (32) at once, through `cordon run` as root and as
# cordon-test and one `cordon serve`, then the leftover, flatness and
# ledger invariants.  About 5 minutes: not part of check.
.PHONY: soak
soak: all
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/soak/run.sh

# The fault suite (tests/faults/README.md): the supervisor and the ledger
# with each write failing (ENOSPC, EIO, EROFS) or SIGKILLed there, at
# random moments, on a full tmpfs, and cordon serve killed mid-call; as
# root, then as cordon-test.  shim.so is an LD_PRELOAD library, built
# without sanitizers (run.py preloads an ASan runtime ahead of it).
FAULTS_SHIM := $(B)/tests/faults/shim.so
$(FAULTS_SHIM): tests/faults/shim.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -std=c11 -g -O2 $(WARN) -fPIC -shared -o $@ $< -ldl -pthread

.PHONY: faults check-faults
faults: all $(FAULTS_SHIM)
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/faults/run.sh
check-faults: all $(FAULTS_SHIM)
	@FAULTS_SHORT=1 BUILD=$(abspath $(B)) SRC=$(CURDIR) sh tests/faults/run.sh

ifeq ($(TSAN),1)
# ThreadSanitizer (docs/testing.md): the tests whose supervisors run
# threads (unit, cli, bridge, serve) and the fault suite's short form.
# Not enforce (its filter tests need the plain build's syscalls), boundary
# (attacks from inside, no threads of ours involved), fuzz-check (its own
# clang build).  Every report goes to a file under $(B)/tsan/ (a sandbox's
# setup closes stderr; a report there would be lost), and tsan-reports
# fails the check when there is one, whatever the suites said; the
# suites' own timed bounds are the plain build's, so some of their checks
# fail from TSan's slowdown alone (docs/testing.md).
TSAN_REPORTS := $(abspath $(B))/tsan
export TSAN_OPTIONS ?= log_path=$(TSAN_REPORTS)/report second_deadlock_stack=1
.PHONY: tsan-clean tsan-reports
tsan-clean:
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS) && chmod 1777 $(TSAN_REPORTS)
tsan-reports:
	@n=$$(ls $(TSAN_REPORTS) 2>/dev/null | wc -l); if [ "$$n" -ne 0 ]; then \
		echo "FAIL ThreadSanitizer: $$n report file(s) in $(TSAN_REPORTS):"; \
		grep -h -A12 "^WARNING: ThreadSanitizer\|^==.*ThreadSanitizer" $(TSAN_REPORTS)/* | head -300; exit 1; \
	else echo "ok ThreadSanitizer: no report"; fi
check: deps all tsan-clean
	@rc=0; for t in unit cli bridge serve-tests fleet check-faults; do \
		$(MAKE) --no-print-directory TSAN=1 $$t || { echo "FAIL make TSAN=1 $$t"; rc=1; }; done; \
		$(MAKE) --no-print-directory TSAN=1 tsan-reports || rc=1; exit $$rc
else ifeq ($(SAN),1)
check: deps all unit cli enforce boundary bridge serve-tests fleet check-faults
else
check: deps all unit cli enforce boundary bridge serve-tests fleet check-faults fuzz-check
endif
	@echo "make check: all tests passed ($(B))"

demo: deps all
	@DEMO="$(DEMO)" sh scripts/demo $(B)

BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
$(B)/bench/%: $(B)/obj/bench/%.o $(COMPILER_LIB_OBJ) $(RUNTIME_LIB_OBJ) $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_COMPILER) $(LIBS_RUNTIME)

# One report (docs/bench.md): bench/report.py runs the C benches, then
# start-up of `cordon run` beside bare python and the peer sandboxes
# (bench/bench_run.sh: installs missing peers as root, skips what cannot run),
# then cordon serve beside the same cold starts (bench/bench_serve.py), their
# text into bench/bench.log; it prints one table and writes
# bench/results.json and bench/results.svg.  Its own tests run first, so a
# broken report fails before the benches' minutes.  BENCH_QUICK=1,
# BENCH_BASELINE=old.json, BENCH_THRESHOLD=10, BENCH_STRICT=1.
bench: deps all $(BENCH_BIN)
	@/usr/bin/python3 bench/test_report.py -q
	@/usr/bin/python3 bench/report.py $(abspath $(B)) $(CURDIR) $(CC)

# CPython's own regression tests, bare and inside python-compute: the share
# that still passes (docs/profiles.md).  Needs Debian's
# libpython3.11-testsuite, installed here when missing (as root).
.PHONY: compat
compat: deps all
	@dpkg -s libpython3.11-testsuite >/dev/null 2>&1 || { [ "$$(id -u)" -eq 0 ] && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q libpython3.11-testsuite >/dev/null; } || \
		{ echo "make compat: needs libpython3.11-testsuite (apt-get install it as root)"; exit 1; }
	@BUILD=$(abspath $(B)) SRC=$(CURDIR) /usr/bin/python3 tests/compat/run.py

# --- make install / uninstall (a package's debian/rules drives the same).
# PREFIX/bin and PREFIX/share stay together: an installed cordonc finds its
# profiles from its own path (compiler/policy_home.h).  INSTALL_STRIP=-s
# strips; INSTALL_STRIP= keeps the symbols (dh_strip makes -dbgsym from
# them).  SYSTEMDUNITDIR: Debian 12 wants /lib/systemd/system.  uninstall
# removes exactly these files, then share/cordon if it is left empty.
INSTALL_STRIP ?= -s
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL_POLICIES := $(wildcard policies/*.policy)
INSTALL_MAN := $(wildcard docs/man/*.1)
INSTALL_COMPLETIONS := packaging/bash-completion/cordonc packaging/bash-completion/cordon
INSTALL_UNIT := packaging/systemd/cordon-serve.service
COMPLETIONDIR := $(PREFIX)/share/bash-completion/completions
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/cordon/policies \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 0755 $(INSTALL_STRIP) $(B)/cordonc $(B)/cordon $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 $(INSTALL_POLICIES) $(DESTDIR)$(PREFIX)/share/cordon/policies/
	install -m 0644 $(INSTALL_MAN) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(INSTALL_COMPLETIONS) $(DESTDIR)$(COMPLETIONDIR)/
	sed 's#/usr/local/bin/cordon#$(PREFIX)/bin/cordon#' $(INSTALL_UNIT) \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/cordon-serve.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/cordon-serve.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cordonc $(DESTDIR)$(PREFIX)/bin/cordon \
		$(addprefix $(DESTDIR)$(PREFIX)/share/cordon/policies/,$(notdir $(INSTALL_POLICIES))) \
		$(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,$(notdir $(INSTALL_MAN))) \
		$(addprefix $(DESTDIR)$(COMPLETIONDIR)/,$(notdir $(INSTALL_COMPLETIONS))) \
		$(DESTDIR)$(SYSTEMDUNITDIR)/cordon-serve.service
	-rmdir $(DESTDIR)$(PREFIX)/share/cordon/policies $(DESTDIR)$(PREFIX)/share/cordon 2>/dev/null
# --- end of make install.

# --- Debian packages (debian/).  make package: the .debs, built from a
# clean export of the tree, into build/deb/ (a stable path: container
# images install from there).  check-package: tests/package/test_deb.sh
# installs them into a minimal Debian root (cached in build/deb-root/).
# Their own target, not in check: they need packages check does not
# (install-deps --package) and minutes.
.PHONY: package check-package
package:
	@scripts/install-deps --package
	@sh scripts/build-deb $(CURDIR)/build/deb
check-package: package
	@SRC=$(CURDIR) DEB=$(CURDIR)/build/deb CACHE=$(CURDIR)/build/deb-root sh tests/package/test_deb.sh
# --- end of the Debian packages block.

clean:
	rm -rf build build-san build-tsan build-fuzz

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
.SECONDARY:

# --- container images (docs/image.md): two OCI archives built offline from
# Debian packages (mmdebstrap, buildah) into build/image/, and their test
# with podman.  Not in check: they need `scripts/install-deps --image`
# (podman, buildah, mmdebstrap) and root; .ci/run calls check-image.
.PHONY: image check-image
image:
	@scripts/install-deps --image
	@scripts/build-image
check-image: image
	@SRC=$(CURDIR) sh tests/image/test_image.sh
# --- end of the container image block.
