#!/usr/bin/env python3
"""k8s_check.py - deploy/k8s/*.yaml parse and hang together (no Kubernetes schema validator
is packaged in Debian 12, so this checks what one would and what ours needs): every document
has apiVersion, kind and a name, namespaced ones are in `warden`; the DaemonSet's selector
matches its pods' labels; every volumeMount names a volume and the configMap volume names the
ConfigMap; the containers add no capability the service unit's CapabilityBoundingSet lacks
and drop ALL; the ConfigMap's gateway.yaml is a valid gateway config (the real parser:
`warden nft render --config`); the gateway runs the packaged /usr/sbin/warden-gateway.
Controls: a manifest with a mismatched selector and one with an extra capability are
refused. Exit 0, 1 with the findings, 2 when a tool is missing (a test error).

Usage: k8s_check.py K8S_DIR UNIT WARDEN_BIN
"""
import copy
import glob
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("FAIL - python3-yaml is missing (deploy/debian-packages; test error)")
    print("0 passed, 1 failed")
    sys.exit(2)

NAMESPACED = {"ConfigMap", "DaemonSet"}


def unit_caps(unit):
    for line in open(unit):
        if line.startswith("CapabilityBoundingSet="):
            return {c.removeprefix("CAP_") for c in line.split("=", 1)[1].split()}
    return set()


def findings(docs, caps, warden):
    out = []
    kinds = {}
    for d in docs:
        if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind"):
            out.append(f"a document without apiVersion/kind: {str(d)[:60]}")
            continue
        name = (d.get("metadata") or {}).get("name")
        if not name:
            out.append(f"{d['kind']} has no metadata.name")
        if d["kind"] in NAMESPACED and d["metadata"].get("namespace") != "warden":
            out.append(f"{d['kind']} {name} is not in namespace warden")
        kinds.setdefault(d["kind"], []).append(d)
    for k in ("Namespace", "ConfigMap", "DaemonSet"):
        if k not in kinds:
            out.append(f"no {k}")
    if out:
        return out
    cms = {c["metadata"]["name"]: c for c in kinds["ConfigMap"]}
    for ds in kinds["DaemonSet"]:
        if ds["apiVersion"] != "apps/v1":
            out.append("DaemonSet apiVersion is not apps/v1")
        spec = ds["spec"]
        sel = spec["selector"]["matchLabels"]
        labels = spec["template"]["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in sel.items()):
            out.append(f"the selector {sel} does not match the pods' labels {labels}")
        pod = spec["template"]["spec"]
        if not pod.get("hostNetwork"):
            out.append("the gateway must run in the node's network namespace (hostNetwork)")
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        for v in vols.values():
            if "configMap" in v and v["configMap"]["name"] not in cms:
                out.append(f"volume {v['name']} names ConfigMap {v['configMap']['name']}, which is not defined")
        for c in pod.get("initContainers", []) + pod["containers"]:
            for m in c.get("volumeMounts", []):
                if m["name"] not in vols:
                    out.append(f"container {c['name']} mounts volume {m['name']}, which is not defined")
            sc = c.get("securityContext", {})
            cp = sc.get("capabilities", {})
            if cp.get("drop") != ["ALL"]:
                out.append(f"container {c['name']} does not drop ALL capabilities")
            extra = set(cp.get("add", [])) - caps
            if extra:
                out.append(f"container {c['name']} adds {sorted(extra)}, which the unit's CapabilityBoundingSet lacks")
            if sc.get("privileged"):
                out.append(f"container {c['name']} is privileged")
        gw = pod["containers"][0]
        if gw["command"][0] != "/usr/sbin/warden-gateway":
            out.append(f"the gateway container runs {gw['command'][0]}, not the packaged /usr/sbin/warden-gateway")
    for name, cm in cms.items():
        text = cm.get("data", {}).get("gateway.yaml")
        if text is None:
            out.append(f"ConfigMap {name} has no gateway.yaml")
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text)
        try:
            r = subprocess.run([warden, "nft", "render", "--config", f.name],
                               capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        if r.returncode != 0:
            out.append(f"ConfigMap {name}'s gateway.yaml is refused: {r.stderr.strip()}")
    return out


def main():
    kdir, unit, warden = sys.argv[1:4]
    passed = failed = 0
    if not os.access(warden, os.X_OK):
        print(f"FAIL - {warden} is not built (test error)")
        print("0 passed, 1 failed")
        sys.exit(2)
    caps = unit_caps(unit)
    if not caps:
        print(f"FAIL - no CapabilityBoundingSet in {unit} (test error)")
        print("0 passed, 1 failed")
        sys.exit(2)
    files = sorted(glob.glob(os.path.join(kdir, "*.yaml")))
    if not files:
        print(f"FAIL - no manifests in {kdir} (test error)")
        print("0 passed, 1 failed")
        sys.exit(2)
    for path in files:
        try:
            docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
        except yaml.YAMLError as e:
            print(f"FAIL - {path} is not YAML: {e}")
            failed += 1
            continue
        print(f"ok - {os.path.basename(path)} parses ({len(docs)} documents)")
        passed += 1
        f = findings(docs, caps, warden)
        if f:
            failed += 1
            print(f"FAIL - {os.path.basename(path)}:")
            for x in f:
                print(f"    | {x}")
        else:
            passed += 1
            print(f"ok - {os.path.basename(path)} hangs together (selector, volumes, capabilities, gateway.yaml)")
        # the controls: the checker sees a broken selector and an extra capability
        for what, mutate in (
            ("a mismatched selector", lambda ds: ds["spec"]["selector"]["matchLabels"].update(x="y")),
            ("an extra capability", lambda ds: ds["spec"]["template"]["spec"]["containers"][0]
             ["securityContext"]["capabilities"]["add"].append("SYS_MODULE")),
            ("a bad gateway.yaml", None),
        ):
            bad = copy.deepcopy(docs)
            for d in bad:
                if d.get("kind") == "DaemonSet" and mutate:
                    mutate(d)
                if d.get("kind") == "ConfigMap" and not mutate:
                    d["data"]["gateway.yaml"] += "nonsense_key: 1\n"
            if findings(bad, caps, warden):
                passed += 1
                print(f"ok - control: {what} is refused")
            else:
                failed += 1
                print(f"FAIL - control: {what} was not noticed (test error)")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
