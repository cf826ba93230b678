#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""check_manifests.py SRC MANIFEST_DIR CORDON: validates deploy/kubernetes.

Every document of every *.yaml in MANIFEST_DIR against the vendored
Kubernetes 1.36 schema (tests/kubernetes/k8s-1.36.schema.json: unknown
fields are errors), then what a schema cannot say:
  - kustomization.yaml lists exactly the other files;
  - the Deployment's selector matches its pod labels, and the Service,
    PodDisruptionBudget and NetworkPolicy select those pods; the HPA
    scales that Deployment;
  - the serve container's arguments are flags `CORDON serve --help` lists;
  - probe paths are paths of docs/openapi.yaml; every volumeMount names a
    volume;
  - the security context is the least privilege tests/image/test_image.sh
    proves (non-root 10001, no capability, no privilege escalation,
    procMount Unmasked, the Localhost seccomp profile that
    deploy/seccomp/ holds), and a Secret mounted for a key or token file
    uses subPath (cordon opens those O_NOFOLLOW; a Secret's files are links).
Prints one line per problem; exit 1 when there is any.
"""
import glob
import json
import os
import re
import subprocess
import sys

import jsonschema
import yaml


def main():
    src, mdir, cordon = sys.argv[1:4]
    problems = []

    def bad(where, msg):
        problems.append("%s: %s" % (where, msg))

    with open(os.path.join(src, "tests/kubernetes/k8s-1.36.schema.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    objs = {}
    files = sorted(glob.glob(os.path.join(mdir, "*.yaml")))
    kust = None
    for path in files:
        name = os.path.basename(path)
        with open(path) as f:
            try:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                bad(name, "not YAML: %s" % e)
                continue
        if name == "kustomization.yaml":
            kust = docs[0] if docs else {}
            continue
        for i, d in enumerate(docs):
            where = "%s[%d] %s/%s" % (name, i, d.get("kind") if isinstance(d, dict) else "?",
                                      (d.get("metadata") or {}).get("name") if isinstance(d, dict) else "?")
            errs = sorted(validator.iter_errors(d), key=lambda e: list(e.absolute_path))
            for e in errs[:5]:
                bad(where, "schema: at /%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message[:200]))
            if isinstance(d, dict):
                objs.setdefault(d.get("kind"), []).append((where, d))

    listed = set((kust or {}).get("resources") or [])
    have = set(os.path.basename(p) for p in files) - {"kustomization.yaml"}
    if kust is None:
        bad("kustomization.yaml", "missing")
    elif listed != have:
        bad("kustomization.yaml", "resources %s, files %s" % (sorted(listed), sorted(have)))

    def one(kind):
        got = objs.get(kind) or []
        if len(got) != 1:
            bad(kind, "want exactly one, found %d" % len(got))
            return None, {}
        return got[0]

    dw, dep = one("Deployment")
    if not dep:
        return report(problems)
    tmpl = dep.get("spec", {}).get("template", {})
    labels = tmpl.get("metadata", {}).get("labels") or {}

    def selects(sel, where):
        ml = (sel or {}).get("matchLabels") or {}
        if not ml or any(labels.get(k) != v for k, v in ml.items()):
            bad(where, "selector %s does not select the pods (labels %s)" % (ml, labels))

    selects(dep["spec"].get("selector"), dw)
    sw, svc = one("Service")
    if svc:
        sel = svc.get("spec", {}).get("selector") or {}
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            bad(sw, "selector %s does not select the pods" % sel)
    pw, pdb = one("PodDisruptionBudget")
    if pdb:
        selects(pdb.get("spec", {}).get("selector"), pw)
    nw, np = one("NetworkPolicy")
    if np:
        selects(np.get("spec", {}).get("podSelector"), nw)
        if "Egress" not in (np["spec"].get("policyTypes") or []):
            bad(nw, "no Egress policy type: egress would be open")
        ports = sorted(p.get("port") for r in np["spec"].get("egress") or [] for p in r.get("ports") or [])
        if ports != [53, 53, 5432]:
            bad(nw, "egress ports %s, want PostgreSQL 5432 and DNS 53 only" % ports)
    hw, hpa = one("HorizontalPodAutoscaler")
    if hpa:
        ref = hpa.get("spec", {}).get("scaleTargetRef") or {}
        if ref.get("kind") != "Deployment" or ref.get("name") != dep["metadata"].get("name"):
            bad(hw, "scaleTargetRef %s is not the Deployment" % ref)
        if not any(m.get("type") == "Resource" and m.get("resource", {}).get("name") == "cpu"
                   for m in hpa["spec"].get("metrics") or []):
            bad(hw, "does not scale on CPU")

    pod = tmpl.get("spec") or {}
    cs = [c for c in pod.get("containers") or [] if c.get("name") == "serve"]
    if len(cs) != 1:
        bad(dw, "no container named serve")
        return report(problems)
    c = cs[0]

    helptext = subprocess.run([cordon, "serve", "--help"], capture_output=True, text=True).stdout
    i = helptext.find("  serve ")
    j = helptext.find("\n  ", helptext.find("Exit 0 after a drain", i))
    flags = set(re.findall(r"--[a-z][a-z-]*", helptext[i:j if j > 0 else None]))
    if not flags:
        bad(dw, "could not read serve's flags from %s serve --help" % cordon)
    for a in c.get("args") or []:
        flag = a.split("=", 1)[0]
        if flag.startswith("--") and flag not in flags:
            bad(dw, "argument %s: cordon serve has no flag %s" % (a, flag))

    with open(os.path.join(src, "docs/openapi.yaml")) as f:
        paths = set((yaml.safe_load(f).get("paths") or {}).keys())
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        p = c.get(probe)
        if not p:
            bad(dw, "no %s" % probe)
            continue
        if "httpGet" in p:
            if p["httpGet"].get("path") not in paths:
                bad(dw, "%s path %s is not in docs/openapi.yaml" % (probe, p["httpGet"].get("path")))
        else:
            text = " ".join(p.get("exec", {}).get("command") or [])
            used = re.findall(r"(/v1/[a-z]+)", text)
            if not used or any(u not in paths for u in used):
                bad(dw, "%s asks %s, not a path of docs/openapi.yaml" % (probe, used))

    vols = {v.get("name"): v for v in pod.get("volumes") or []}
    for m in c.get("volumeMounts") or []:
        v = vols.get(m.get("name"))
        if v is None:
            bad(dw, "volumeMount %s names no volume" % m.get("name"))
        elif "secret" in v and not m.get("subPath"):
            bad(dw, "Secret volume %s mounted without subPath: its files are links, refused O_NOFOLLOW"
                % m.get("name"))

    psc, csc = pod.get("securityContext") or {}, c.get("securityContext") or {}
    want = [
        (psc.get("runAsNonRoot") is True, "pod runAsNonRoot true"),
        (psc.get("runAsUser") == 10001, "pod runAsUser 10001 (the image's cordon user, as tested)"),
        (csc.get("allowPrivilegeEscalation") is False, "container allowPrivilegeEscalation false"),
        (csc.get("privileged") in (None, False), "container not privileged"),
        ((csc.get("capabilities") or {}).get("drop") == ["ALL"], "capabilities drop [ALL]"),
        (not (csc.get("capabilities") or {}).get("add"), "no capability added"),
        (csc.get("procMount") == "Unmasked", "procMount Unmasked"),
        (pod.get("hostUsers") is False, "hostUsers false (procMount Unmasked needs it)"),
        (pod.get("automountServiceAccountToken") is False, "no service account token"),
    ]
    sp = psc.get("seccompProfile") or {}
    prof = sp.get("localhostProfile") or ""
    want.append((sp.get("type") == "Localhost" and prof.startswith("profiles/")
                 and os.path.exists(os.path.join(src, "deploy/seccomp", os.path.basename(prof))),
                 "seccompProfile Localhost profiles/NAME with deploy/seccomp/NAME in the repository"))
    for ok, what in want:
        if not ok:
            bad(dw, "security context: want %s" % what)
    return report(problems)


def report(problems):
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
