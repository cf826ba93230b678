#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deploy/kubernetes/ validated offline: every document against the
# vendored Kubernetes 1.36 schema (unknown fields are errors), plus the
# checks of tests/kubernetes/check_manifests.py (selectors, serve's flags,
# probe paths, the least-privilege security context).  Then the checker is
# shown to fail: broken copies of the manifests, one fault each, must each
# be refused with the reason.
set -u
: "${SRC:?}"
BUILD=${BUILD:-$SRC/build}
. "$SRC/tests/cli/lib.sh"

CHECK="/usr/bin/python3 $SRC/tests/kubernetes/check_manifests.py $SRC"
expect_rc 0 $CHECK "$SRC/deploy/kubernetes" "$BUILD/cordon"
n=$(cat "$SRC"/deploy/kubernetes/*.yaml | grep -c '^kind:')
pass "deploy/kubernetes: $n objects valid against Kubernetes 1.36, selectors, flags, probes, security context"

T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
# broken NAME WANT SED_SCRIPT FILE: a copy with one fault must be refused,
# its message containing WANT.
broken() {
	rm -rf "$T/m" && cp -r "$SRC/deploy/kubernetes" "$T/m" || die "copy"
	sed -i "$3" "$T/m/$4"
	cmp -s "$T/m/$4" "$SRC/deploy/kubernetes/$4" && die "$1: the sed changed nothing"
	expect_rc 1 $CHECK "$T/m" "$BUILD/cordon"
	expect_out "$2"
}
broken "misspelt key" "Additional properties are not allowed ('readOnlyRootFilesytem'" \
	's/readOnlyRootFilesystem:/readOnlyRootFilesytem:/' deployment.yaml
broken "wrong type" "is not of type 'integer'" 's/averageUtilization: 70/averageUtilization: "70"/' hpa.yaml
broken "Service selects nothing" "does not select the pods" \
	's/selector: {app.kubernetes.io\/name: cordon-serve}/selector: {app.kubernetes.io\/name: cordon-srv}/' service.yaml
broken "unknown serve flag" "cordon serve has no flag --pools" 's/- --pool=2/- --pools=2/' deployment.yaml
broken "probe path" "is not in docs/openapi.yaml" 's/path: \/v1\/health, port: http}/path: \/healthz, port: http}/' \
	deployment.yaml
broken "a capability" "no capability added" 's/capabilities: {drop: \[ALL\]}/capabilities: {drop: [ALL], add: [SYS_ADMIN]}/' \
	deployment.yaml
broken "open egress" "egress ports" 's/- {protocol: TCP, port: 5432}/- {protocol: TCP, port: 443}/' networkpolicy.yaml
broken "file not in kustomization" "kustomization.yaml: resources" '/- hpa.yaml/d' kustomization.yaml
broken "secret without subPath" "without subPath" 's/, subPath: tokens//' deployment.yaml
pass "a broken copy is refused for each of 9 faults (schema, type, selector, flag, probe, capability, egress, kustomization, subPath)"
