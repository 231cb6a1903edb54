#!/usr/bin/env python3
"""
An independent reading of an audit log's condition clocks and echoes, for the tests (standard library only).

For each object of the resources named (`--resource httproutes.policy.linkerd.io`), its successful writes whose answer
is the object, in the order the API server received them: a write answered with a version an earlier one was answered
with is an echo; any other made that version and is compared with the version before it (the one made by the write
received just before, or the create): per condition (keyed by where it sits and its type) a status change with the
lastTransitionTime kept is frozen, with it moved is moved, a moved time with the status kept is restamped; a condition
the write set or changed whose time is older than the object predates it; a write whose versions differ only in those
times (and resourceVersion, managedFields, generation) is clock-only.

With `--series Ready`, also each object's versions' status of that condition (absent: ""), in the order they were
made, each at the time its write was received: "series": {"namespace/name": [[ms, status], …]}.

Prints JSON: {"writes": {user: {"echo": n, "clockOnly": n, "made": n}}, "clocks": {"kind|type|finding|user": [writes, objects]},
"objects": {"namespace/name": {"echo": n, "clockOnly": n, "frozen": n, "restamped": n}}, "series": {…}}.
"""
import gzip
import json
import sys
from datetime import datetime

WRITES = {"create", "update", "patch"}


def ms(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def conditions(obj):
    """Every condition below status: {(where, type): condition}."""
    out = {}

    def walk(node, where, depth):
        if not isinstance(node, dict) or depth > 3:
            return
        for key, value in node.items():
            if isinstance(value, dict):
                walk(value, where + "." + key, depth + 1)
            elif isinstance(value, list):
                if key == "conditions" and value and all(isinstance(c, dict) and isinstance(c.get("type"), str) and isinstance(c.get("status"), str) for c in value):
                    for c in value:
                        out[(where, c["type"])] = c
                    continue
                for i, item in enumerate(value):
                    if isinstance(item, dict) and isinstance(item.get("name"), str):
                        name = item["name"]
                    elif isinstance(item, dict) and isinstance(item.get("parentRef"), dict):
                        name = json.dumps(item["parentRef"], sort_keys=True) + "|" + str(item.get("controllerName", ""))
                    else:
                        name = "#" + str(i)
                    walk(item, where + "." + key + "[" + name + "]", depth + 1)

    walk((obj or {}).get("status"), "status", 0)
    return out


def without_clocks(node):
    if isinstance(node, list):
        return [without_clocks(i) for i in node]
    if isinstance(node, dict):
        return {k: without_clocks(v) for k, v in node.items() if k != "lastTransitionTime"}
    return node


def rest(obj):
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields", "generation")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def main(argv):
    resources = set()
    series_type = None
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--resource":
            resources.add(argv[i + 1])
            i += 2
        elif argv[i] == "--series":
            series_type = argv[i + 1]
            i += 2
        else:
            files.append(argv[i])
            i += 1
    writes = {}
    order = 0
    for path in files:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for line in f:
                if not line.strip():
                    continue
                e = json.loads(line)
                ref = e.get("objectRef") or {}
                qualified = ref.get("resource", "") + ("." + ref["apiGroup"] if ref.get("apiGroup") else "")
                code = (e.get("responseStatus") or {}).get("code", 0)
                response = e.get("responseObject")
                if e.get("stage") != "ResponseComplete" or e.get("verb") not in WRITES or qualified not in resources or not (200 <= code < 300):
                    continue
                if not isinstance(response, dict) or response.get("kind") in (None, "Status"):
                    continue
                order += 1
                key = (ref.get("namespace", ""), ref.get("name") or response["metadata"]["name"])
                writes.setdefault(key, []).append((ms(e["requestReceivedTimestamp"]), order, e["user"]["username"], response))
    by_user = {}
    clocks = {}
    objects = {}
    series = {}
    for key, ws in writes.items():
        ws.sort(key=lambda w: (w[0], w[1]))
        seen = set()
        before = None
        per = objects.setdefault("/".join(key), {"echo": 0, "clockOnly": 0, "frozen": 0, "restamped": 0})
        for received, _, user, obj in ws:
            u = by_user.setdefault(user, {"echo": 0, "clockOnly": 0, "made": 0})
            rv = obj["metadata"]["resourceVersion"]
            if rv in seen:
                u["echo"] += 1
                per["echo"] += 1
                continue
            seen.add(rv)
            u["made"] += 1
            if series_type:
                status = next((c["status"] for (_, t), c in conditions(obj).items() if t == series_type), "")
                series.setdefault("/".join(key), []).append([received, status])
            created = ms(obj["metadata"]["creationTimestamp"])
            then = conditions(before) if before is not None else {}
            found = set()
            moved = False
            for where, c in conditions(obj).items():
                old = then.get(where)
                clock = c.get("lastTransitionTime")
                if old is not None:
                    same = old.get("lastTransitionTime") == clock
                    moved = moved or not same
                    if old["status"] != c["status"] and same and clock is not None:
                        found.add(("frozen", c["type"]))
                    elif old["status"] != c["status"] and not same:
                        found.add(("moved", c["type"]))
                    elif old["status"] == c["status"] and not same and old.get("lastTransitionTime") is not None and clock is not None:
                        found.add(("restamped", c["type"]))
                touched = old is None or without_clocks(old) != without_clocks(c)
                if touched and isinstance(clock, str) and ms(clock) < created:
                    found.add(("predates", c["type"]))
            for finding, ctype in found:
                entry = clocks.setdefault("|".join((obj["kind"], ctype, finding, user)), [0, set()])
                entry[0] += 1
                entry[1].add("/".join(key))
                if finding in ("frozen", "restamped"):
                    per[finding] += 1
            if before is not None and moved and without_clocks(before.get("status")) == without_clocks(obj.get("status")) and rest(before) == rest(obj):
                u["clockOnly"] += 1
                per["clockOnly"] += 1
            before = obj
    print(json.dumps({"writes": by_user, "clocks": {k: [v[0], len(v[1])] for k, v in clocks.items()}, "objects": objects, "series": series}))


if __name__ == "__main__":
    main(sys.argv[1:])
