#!/usr/bin/env python3
"""Check key.json and score the sample replies in samples.json.

Usage: python3 suites/screenshots/check_key.py [key.json] [samples.json]

It implements the scoring rules of the screenshot suite (see README.md):

  * An empty (or whitespace-only) reply scores 0.
  * Reply and facts are lowercased and whitespace runs collapse to one space;
    a fact is present when it is a substring of the reply. A fact that is a
    list is present when any one of its alternatives is.
  * Every "full" fact present: 1. Else every "half" fact present: 0.5. Else 0.
  * Critical entries: the pattern is searched case-insensitively in the reply
    (leftmost match, first capture group). If it matches and the captured
    value, normalised, differs from "expect", normalised, the item scores 0.
    Normalising: lowercase, remove thousands separators (a comma between
    digits), strip surrounding whitespace and currency symbols.

It also checks the key's shape (counts, ids, image files and their pixel
sizes, regexes with exactly one group and nothing Rust's regex crate lacks)
and that each critical pattern gives the same verdict whether it runs on the
raw reply or on the lowercased, whitespace-collapsed one. Exits 1 on any
problem.
"""
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CURRENCY = "$£€¥₹"


def norm_text(s):
    return " ".join(s.lower().split())


def norm_value(v):
    v = v.lower()
    while True:
        w = re.sub(r"(\d),(\d)", r"\1\2", v)
        if w == v:
            break
        v = w
    return v.strip(" \t\r\n" + CURRENCY)


def fact_present(fact, reply_n):
    alts = fact if isinstance(fact, list) else [fact]
    return any(norm_text(a) in reply_n for a in alts)


def critical_failures(item, text):
    bad = []
    for c in item["critical"]:
        m = re.search(c["pattern"], text, re.IGNORECASE)
        if m and norm_value(m.group(1)) != norm_value(c["expect"]):
            bad.append((c["what"], m.group(1)))
    return bad


def score(item, reply):
    if not reply or not reply.strip():
        return 0.0, "unanswered"
    reply_n = norm_text(reply)
    bad = critical_failures(item, reply)
    if bad:
        return 0.0, "critical wrong: " + "; ".join(f"{w} read as {v!r}" for w, v in bad)
    if all(fact_present(f, reply_n) for f in item["full"]):
        return 1.0, "all full facts"
    if all(fact_present(f, reply_n) for f in item["half"]):
        missing = [f for f in item["full"] if not fact_present(f, reply_n)]
        return 0.5, f"half facts; missing {missing}"
    missing = [f for f in item["half"] if not fact_present(f, reply_n)]
    return 0.0, f"missing half facts {missing}"


def png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    w, h = struct.unpack(">II", head[16:24])
    return f"{w}x{h}"


def check_key(key, base):
    problems = []
    if not isinstance(key.get("prompt"), str) or not key["prompt"].strip():
        problems.append("prompt missing")
    ids = set()
    for it in key["items"]:
        iid = it.get("id", "?")
        if iid in ids:
            problems.append(f"{iid}: duplicate id")
        ids.add(iid)
        for field in ("id", "kind", "image", "size", "full", "half", "critical"):
            if field not in it:
                problems.append(f"{iid}: no {field}")
        if it["image"] != f"items/{iid}.png":
            problems.append(f"{iid}: image path {it['image']}")
        path = os.path.join(base, it["image"])
        if not os.path.exists(path):
            problems.append(f"{iid}: {it['image']} missing")
        elif png_size(path) != it["size"]:
            problems.append(f"{iid}: PNG is {png_size(path)}, key says {it['size']}")
        if not 3 <= len(it["full"]) <= 5:
            problems.append(f"{iid}: {len(it['full'])} full facts")
        if not 1 <= len(it["half"]) <= 2:
            problems.append(f"{iid}: {len(it['half'])} half facts")
        full_forms = [json.dumps(f, ensure_ascii=False) for f in it["full"]]
        for f in it["half"]:
            if json.dumps(f, ensure_ascii=False) not in full_forms:
                problems.append(f"{iid}: half fact {f!r} is not one of the full facts")
        if not 1 <= len(it["critical"]) <= 2:
            problems.append(f"{iid}: {len(it['critical'])} critical entries")
        for c in it["critical"]:
            p = c["pattern"]
            for bad in ("(?=", "(?!", "(?<=", "(?<!", "(?P=", "\\1", "\\2"):
                if bad in p:
                    problems.append(f"{iid}: pattern uses {bad}, which Rust's regex lacks")
            try:
                rx = re.compile(p, re.IGNORECASE)
            except re.error as e:
                problems.append(f"{iid}: pattern does not compile: {e}")
                continue
            if rx.groups != 1:
                problems.append(f"{iid}: pattern has {rx.groups} groups")
    return problems


def main():
    key_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "key.json")
    samples_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "samples.json")
    with open(key_path, encoding="utf-8") as fh:
        key = json.load(fh)
    with open(samples_path, encoding="utf-8") as fh:
        samples = json.load(fh)
    items = {it["id"]: it for it in key["items"]}
    problems = check_key(key, os.path.dirname(os.path.abspath(key_path)))
    print(f"key: {len(key['items'])} items, {sum(len(i['critical']) for i in key['items'])} critical patterns")
    covered = {}
    ok = 0
    for n, s in enumerate(samples, 1):
        it = items.get(s["id"])
        if it is None:
            problems.append(f"sample {n}: unknown id {s['id']}")
            continue
        got, why = score(it, s["reply"])
        # The verdict must not depend on whether the pattern sees the raw or the normalised reply.
        if bool(critical_failures(it, s["reply"])) != bool(critical_failures(it, norm_text(s["reply"]))):
            problems.append(f"sample {n} ({s['id']}): critical verdict differs on the normalised reply")
        mark = "ok " if got == s["expect_score"] else "BAD"
        if got == s["expect_score"]:
            ok += 1
        else:
            problems.append(f"sample {n} ({s['id']}): scored {got}, expected {s['expect_score']}")
        covered.setdefault(s["id"], set()).add(s["expect_score"])
        print(f"{mark} {s['id']:<36} expect {s['expect_score']:<3} got {got:<3} {why}")
    for iid in items:
        have = covered.get(iid, set())
        if not {1, 0} <= have:
            problems.append(f"{iid}: samples lack a correct (1) and a wrong (0) reply")
    print(f"samples: {ok}/{len(samples)} scored as expected")
    if problems:
        print("PROBLEMS:")
        for p in problems:
            print("  " + p)
        sys.exit(1)
    print("key OK")


if __name__ == "__main__":
    main()
