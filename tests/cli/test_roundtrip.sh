#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Wrapper so `make cli` runs the Python round-trip check like the others.
exec python3 "$SRC/tests/cli/test_roundtrip.py"
