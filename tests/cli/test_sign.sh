#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Signatures: cordon check-policy --trusted-key accepts only a blob signed by
# that key, and refuses an unsigned blob, another key's signature, a blob
# changed after signing (with its hash recomputed, so only the signature can
# catch it), and a truncated or corrupted signature - each for its own reason.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
BT="python3 $SRC/tests/cli/blobtool.py"

"$CORDONC" compile "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" -o "$T/a.cpol" || die "compile"
"$CORDONC" keygen -p "$T/k.pub" -s "$T/k.sec" || die "keygen"
"$CORDONC" keygen -p "$T/o.pub" -s "$T/o.sec" || die "keygen 2"

# keygen: secret key 0600, never overwrites.
[ "$(stat -c %a "$T/k.sec")" = 600 ] || die "secret key mode is $(stat -c %a "$T/k.sec")"
expect_rc 2 "$CORDONC" keygen -p "$T/k.pub" -s "$T/k.sec"
expect_err "k.sec: cannot create key file: File exists"

# Unsigned.
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/a.cpol"
expect_err "refused: policy is not signed"
expect_rc 0 "$CORDON" check-policy "$T/a.cpol"

# Signed: the hash does not change, the signature verifies.
h0=$($BT hash "$T/a.cpol")
cp "$T/a.cpol" "$T/s.cpol"
"$CORDONC" sign -s "$T/k.sec" "$T/s.cpol" || die "sign"
[ "$($BT hash "$T/s.cpol")" = "$h0" ] || die "signing changed the hash"
expect_rc 0 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/s.cpol"
expect_out "signature verified"
expect_rc 0 "$CORDONC" verify --key "$T/k.pub" "$T/s.cpol"

# Wrong key: refused by key id before any cryptography.
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/o.pub" "$T/s.cpol"
expect_err_re "refused: policy is signed by key [0-9a-f]{16}, not by the trusted key [0-9a-f]{16}"

# Tampered after signing: timeout doubled, hash recomputed so the blob is
# self-consistent; only the signature can tell.
cp "$T/s.cpol" "$T/t.cpol"
set -- $($BT section "$T/t.cpol" limits)
$BT poke "$T/t.cpol" "$1" "60ea000000000000"
$BT rehash "$T/t.cpol"
expect_rc 0 "$CORDON" check-policy "$T/t.cpol"
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/t.cpol"
expect_err "refused: signature verification failed: the policy was changed after signing, or the signature is corrupt"

# Tampered without rehash: the loader's hash check refuses it first.
cp "$T/s.cpol" "$T/u.cpol"
$BT poke "$T/u.cpol" "$1" "60ea000000000000"
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/u.cpol"
expect_err_re "invalid policy blob: .*\[field header.sha256"

# Truncated signature: the file ends early.
sz=$(stat -c %s "$T/s.cpol")
head -c $((sz - 10)) "$T/s.cpol" >"$T/tr.cpol"
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/tr.cpol"
expect_err_re "invalid policy blob: "

# Corrupted signature bytes (last 8 bytes of the Ed25519 signature zeroed).
cp "$T/s.cpol" "$T/c.cpol"
$BT poke "$T/c.cpol" $((sz - 8)) "0000000000000000"
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/c.cpol"
expect_err "refused: signature verification failed: the policy was changed after signing, or the signature is corrupt"

# A public key file that is not one.
echo "garbage" >"$T/bad.pub"
expect_rc 2 "$CORDON" check-policy --trusted-key "$T/bad.pub" "$T/s.cpol"
expect_err_re "bad.pub: not a cordon public key"

# Re-signing with another key replaces the signature.
"$CORDONC" sign -s "$T/o.sec" -o "$T/r.cpol" "$T/s.cpol" || die "re-sign"
expect_rc 0 "$CORDON" check-policy --trusted-key "$T/o.pub" "$T/r.cpol"
expect_rc 1 "$CORDON" check-policy --trusted-key "$T/k.pub" "$T/r.cpol"
pass "signatures"
