#!/usr/bin/env python3
"""tests/jit/coverage.py MIST [--min PERCENT] [--list]: how much of the
program code of tests/scripts/ and examples/ graph mode compiles natively
(docs/jit.md).

Every script and example runs in graph mode with MIST_JIT_LOG=1 and
--dump=ir.  Each user function (a def or lambda of those files, not of
the standard library) that graph mode was asked to run counts once: it
is native when one of its signatures compiled natively.  A function
that does I/O, string formatting or dict work with computed keys is left
out of the share (the issue's measure): it is found in the function's IR
(and its branches' and loops'): print, open, input and file methods;
format, f-strings, str and repr; dicts made with keys that are not
constants, dict comprehensions, and get/keys/items/values.  Functions
reached only through grad and the other transforms (the log marks
their derivative programs `[derivative]`) are counted apart: how many
of them compiled natively in some derivative program.

Prints the counts and the share; exits 1 when the share is below
--min (default 0), 0 otherwise.  --list prints every function left
interpreted and why.
"""
import collections
import os
import re
import shutil
import subprocess
import tempfile
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG = re.compile(r"^jit: (.*) \((.+):(\d+)\)( \[derivative\])?: (compiled|interpreted) \([0-9.]+ ms\)(?:: (.*))?$")
GRAPH = re.compile(r"^graph @(\S+)\((.*)\)(?: in @(\S+))? : ([a-z, ]+) \{\s+# (\d+):")

IO = re.compile(r'\$(print|open|input|progress|exit)\(|call_method\([^,]+, "(write|writelines|read|readlines|save|load|save_npy|load_npy|lines)"')
FORMAT = re.compile(r'\b(format|concat_str|repr|str)\(|\$(str|repr|format)\(|call_method\([^,]+, "(format|join)"|mod\("')
DICT_METHOD = re.compile(r'call_method\([^,]+, "(get|keys|items|values|setdefault|pop|update)"')
MAKE_DICT = re.compile(r"make_dict\(([^)]*)\)")
DICT_COMP = re.compile(r"cons_list\([^,]+, 1\)")


def scripts():
    out = []
    for d, _, files in os.walk(os.path.join(ROOT, "tests", "scripts")):
        for f in files:
            if f.endswith(".ms") and not f.startswith("_"):
                out.append(os.path.join(d, f))
    for d, _, files in os.walk(os.path.join(ROOT, "examples")):
        for f in files:
            if f.endswith(".ms") and f != "fashion_mnist.ms":
                out.append(os.path.join(d, f))
    return sorted(out)


def parse_dump(text, base):
    """The graphs of --dump=ir's output: name -> (file, line, flags, parent, body)."""
    graphs = {}
    path = None
    cur = None
    for line in text.splitlines():
        m = re.match(r"^# ---- ir: (.*) ----$", line)
        if m:
            path = os.path.normpath(os.path.join(base, m.group(1)))
            continue
        m = GRAPH.match(line)
        if m:
            cur = {"file": path, "line": int(m.group(5)), "flags": m.group(4), "parent": m.group(3), "body": []}
            graphs[(path, m.group(1))] = cur
            continue
        if cur is not None:
            if line == "}":
                cur = None
            else:
                cur["body"].append(line)
    return graphs


def excluded(graphs, key):
    """Why the function is left out of the share, or None."""
    path = key[0]
    # the function's own IR: it and the graphs nested in it that are not
    # functions of their own
    body = list(graphs[key]["body"])
    for k, g in graphs.items():
        if k[0] != path or "function" in g["flags"]:
            continue
        p = g["parent"]
        while p and (path, p) in graphs and "function" not in graphs[(path, p)]["flags"]:
            p = graphs[(path, p)]["parent"]
        if p == key[1]:
            body += g["body"]
    text = "\n".join(body)
    if IO.search(text):
        return "I/O"
    if FORMAT.search(text):
        return "string formatting"
    if DICT_METHOD.search(text) or DICT_COMP.search(text):
        return "dict work"
    for m in MAKE_DICT.finditer(text):
        keys = [a.strip() for a in m.group(1).split(",")][0::2]
        if any(k and not k.startswith('"') for k in keys):
            return "dict work"
    return None


def main():
    mist = os.path.abspath(sys.argv[1])
    minimum = 0.0
    listing = "--list" in sys.argv
    if "--min" in sys.argv:
        minimum = float(sys.argv[sys.argv.index("--min") + 1])
    funcs = {}   # (file, line) -> {"native", "interp": [reasons], "derived", "why_out", "name"}
    for script in scripts():
        d, name = os.path.split(script)
        stem = script[:-3]
        args = open(stem + ".args").read().split() if os.path.exists(stem + ".args") else []
        stdin = open(stem + ".in", "rb") if os.path.exists(stem + ".in") else subprocess.DEVNULL
        env = dict(os.environ, MIST_JIT_LOG="1")
        with tempfile.TemporaryDirectory() as copy:
            cwd = d
            if b"# test: writes files" in open(script, "rb").read():
                # it writes beside itself: into a copy of its folder, as run_script.sh runs it
                shutil.copytree(d, copy, dirs_exist_ok=True)
                cwd = copy
            r = subprocess.run([mist, "--mode=graph", "--dump=ir", name] + args, cwd=cwd, stdin=stdin,
                               capture_output=True, env=env, timeout=600)
        graphs = parse_dump(r.stdout.decode("utf-8", "replace"), d)
        by_line = {}
        for k, g in graphs.items():
            if "function" in g["flags"]:
                by_line.setdefault((k[0], g["line"]), k)
        for line in r.stderr.decode("utf-8", "replace").splitlines():
            m = LOG.match(line)
            if not m:
                continue
            sig, path, lno, deriv, how, why = m.groups()
            path = os.path.normpath(os.path.join(d, path))
            if not (path.startswith(os.path.join(ROOT, "tests", "scripts")) or path.startswith(os.path.join(ROOT, "examples"))):
                continue
            key = (path, int(lno))
            f = funcs.setdefault(key, {"native": False, "interp": [], "derived": False, "derived_native": False,
                                       "derived_why": [], "plain": False, "why_out": None, "name": sig.split("(")[0]})
            if deriv:
                # a program autodiff made from the function (its J or F,
                # grad(f)...): counted apart
                f["derived"] = True
                if how == "compiled":
                    f["derived_native"] = True
                else:
                    f["derived_why"].append(why)
                continue
            f["plain"] = True
            if how == "compiled":
                f["native"] = True
            else:
                f["interp"].append(why)
            gk = by_line.get(key)
            if gk and f["why_out"] is None:
                f["why_out"] = excluded(graphs, gk) or ""
    plain = {k: f for k, f in funcs.items() if f["plain"]}
    only_derived = [k for k, f in funcs.items() if not f["plain"]]
    counted = {k: f for k, f in plain.items() if not f["why_out"]}
    out = collections.Counter(f["why_out"] for f in plain.values() if f["why_out"])
    native = sum(1 for f in counted.values() if f["native"])
    share = 100.0 * native / len(counted) if counted else 0.0
    print(f"functions of tests/scripts and examples run in graph mode: {len(plain)}")
    print(f"  left out (I/O, string formatting, dict work): {sum(out.values())} "
          f"({', '.join(f'{n} {w}' for w, n in out.most_common())})")
    print(f"  counted: {len(counted)}, compiled natively: {native} ({share:.1f}%)")
    allnat = sum(1 for f in plain.values() if f["native"])
    print(f"  of all {len(plain)}: {allnat} compiled natively ({100.0 * allnat / max(1, len(plain)):.1f}%)")
    dnat = sum(1 for k in only_derived if funcs[k]["derived_native"])
    print(f"functions reached only through derivatives: {len(only_derived)}, "
          f"compiled natively in a derivative program: {dnat}")
    dreasons = collections.Counter()
    for k in only_derived:
        if not funcs[k]["derived_native"]:
            r = funcs[k]["derived_why"][0] if funcs[k]["derived_why"] else "?"
            r = re.sub(r" at \S+$", "", r)
            r = re.sub(r"of type \S+\[[^ ]*\]", "of type tensor", r)
            dreasons[r] += 1
    for r, n in dreasons.most_common(8):
        print(f"  derivative interpreted: {n:4d}  {r}")
    reasons = collections.Counter()
    for f in counted.values():
        if not f["native"]:
            r = re.sub(r" at \S+$", "", f["interp"][0] if f["interp"] else "?")
            r = re.sub(r"of type \S+\[[^ ]*\]", "of type tensor", r)
            reasons[r] += 1
    for r, n in reasons.most_common(12):
        print(f"  interpreted: {n:4d}  {r}")
    if listing:
        for k, f in sorted(counted.items()):
            if not f["native"]:
                print(f"  {os.path.relpath(k[0], ROOT)}:{k[1]} {f['name']}: {f['interp'][0] if f['interp'] else '?'}")
    if share < minimum:
        print(f"FAIL: {share:.1f}% compiled natively, below {minimum}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
