/* SPDX-License-Identifier: Apache-2.0 */
/*
 * paths.h - the sandbox's fixed paths, one table for every part that names
 * them: the plan and the loader (runtime/sandbox.c), the executor's setup
 * (runtime/launch/), the description for the model (agent_doc.c), the
 * compiler's reserved mount targets, and the C client's default socket.
 * The Python client and docs/runtime.md spell the same values.
 */
#ifndef CORDON_PATHS_H
#define CORDON_PATHS_H

#define SANDBOX_WORKSPACE "/workspace"                  /* a private tmpfs, read-only but for: */
#define SANDBOX_WORK SANDBOX_WORKSPACE "/work"          /* cwd, HOME, the program and its inputs */
#define SANDBOX_OUT SANDBOX_WORKSPACE "/out"            /* declared outputs, result.json */
#define SANDBOX_LOGS SANDBOX_WORKSPACE "/logs/executor" /* the program's own logs */
#define SANDBOX_LOADER SANDBOX_WORK "/main.py"          /* cordon's loader */
#define SANDBOX_PROGRAM SANDBOX_WORK "/user_code.py"    /* the program, verbatim */
#define SANDBOX_CLIENT "/cordon"                        /* cordon_tools.py, tools.py, cordon_exit.py */
#define SANDBOX_SOCKET_DIR "/supervisor-socket"
#define SANDBOX_SOCKET SANDBOX_SOCKET_DIR "/tools.sock"

#endif
