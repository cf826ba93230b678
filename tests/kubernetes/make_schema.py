#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""make_schema.py MODELS_DIR > tests/kubernetes/k8s-1.36.schema.json

One JSON Schema (2020-12) for the kinds deploy/kubernetes/ uses, made from
the models of the Kubernetes JavaScript client (npm @kubernetes/client-node
2.0.1, Apache-2.0, generated from the Kubernetes OpenAPI spec of
release-1.36): every field each object may have, with its type, and no
other (additionalProperties false: a misspelt key is an error, as
`kubectl --validate=strict` makes it).  The models say no "required"; the
few fields the API server requires of these kinds are added from REQUIRED
below (the API reference's "required" marks).  The output is committed, so
the test runs offline; tests/kubernetes/README.md says how to remake it.
"""
import json
import os
import re
import sys

ROOTS = {
    ("apps/v1", "Deployment"): "V1Deployment",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("v1", "Secret"): "V1Secret",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("v1", "Namespace"): "V1Namespace",
    ("networking.k8s.io/v1", "NetworkPolicy"): "V1NetworkPolicy",
    ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "V2HorizontalPodAutoscaler",
}
# Fields the API reference marks required, for the types these kinds reach.
REQUIRED = {
    "V1DeploymentSpec": ["selector", "template"],
    "V1PodSpec": ["containers"],
    "V1Container": ["name"],
    "V1ContainerPort": ["containerPort"],
    "V1ServicePort": ["port"],
    "V1Volume": ["name"],
    "V1VolumeMount": ["name", "mountPath"],
    "V1KeyToPath": ["key", "path"],
    "V1EnvVar": ["name"],
    "V1SecretKeySelector": ["key"],
    "V1ConfigMapKeySelector": ["key"],
    "V1HTTPGetAction": ["port"],
    "V1ExecAction": [],
    "V1NetworkPolicySpec": [],
    "V2HorizontalPodAutoscalerSpec": ["scaleTargetRef", "maxReplicas"],
    "V2CrossVersionObjectReference": ["kind", "name"],
    "V2MetricSpec": ["type"],
    "V2ResourceMetricSource": ["name", "target"],
    "V2MetricTarget": ["type"],
    "V1SeccompProfile": ["type"],
    "V1AppArmorProfile": ["type"],
    "V1LabelSelectorRequirement": ["key", "operator"],
    "V1Toleration": [],
}
ENTRY = re.compile(r'\{\s*"name": "([^"]+)",\s*"baseName": "([^"]+)",\s*"type": "([^"]+)",\s*"format": "([^"]*)"\s*\}')


def load(models, name):
    path = os.path.join(models, name + ".js")
    with open(path) as f:
        text = f.read()
    i = text.find(name + ".attributeTypeMap = [")
    if i < 0:
        return None  # an enum or alias type: a string
    j = text.index("];", i)
    return ENTRY.findall(text[i:j])


def type_schema(t, fmt, queue):
    m = re.fullmatch(r"Array<(.+)>", t)
    if m:
        return {"type": "array", "items": type_schema(m.group(1), "", queue)}
    m = re.fullmatch(r"\{ \[key: string\]: (.+); \}", t)
    if m:
        return {"type": "object", "additionalProperties": type_schema(m.group(1), "", queue)}
    if t == "string":
        return {"type": "string"}
    if t == "number":
        return {"type": "integer"} if fmt.startswith("int") else {"type": "number"}
    if t == "boolean":
        return {"type": "boolean"}
    if t == "Date":
        return {"type": "string"}
    if t == "any":
        return {}
    if t == "IntOrString":
        return {"type": ["integer", "string"]}
    queue.append(t)
    return {"$ref": "#/$defs/" + t}


def main():
    models = sys.argv[1]
    defs, queue = {}, list(ROOTS.values())
    while queue:
        name = queue.pop()
        if name in defs:
            continue
        entries = load(models, name)
        if entries is None:
            defs[name] = {"type": "string"}
            continue
        props = {}
        for _, base, t, fmt in entries:
            props[base] = type_schema(t, fmt, queue)
        d = {"type": "object", "additionalProperties": False, "properties": props}
        if REQUIRED.get(name):
            d["required"] = REQUIRED[name]
        defs[name] = d
    # Quantities (resources.limits/requests) are int-or-string in the API.
    for q in ("V1ResourceRequirements",):
        for k in ("limits", "requests"):
            defs[q]["properties"][k] = {"type": "object", "additionalProperties": {"type": ["string", "integer"]}}
    one = []
    for (api, kind), ref in sorted(ROOTS.items()):
        one.append({
            "if": {"properties": {"apiVersion": {"const": api}, "kind": {"const": kind}}, "required": ["apiVersion", "kind"]},
            "then": {"$ref": "#/$defs/" + ref, "required": ["apiVersion", "kind", "metadata"]},
        })
    known = [{"properties": {"apiVersion": {"const": a}, "kind": {"const": k}}} for a, k in sorted(ROOTS)]
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Kubernetes release-1.36 objects used by deploy/kubernetes (from @kubernetes/client-node 2.0.1)",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "anyOf": known,
        "allOf": one,
        "$defs": dict(sorted(defs.items())),
    }
    json.dump(schema, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
