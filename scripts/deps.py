#!/usr/bin/python3
"""deps.py — the shape of the tree in numbers (issue 26 §5), to rerun after a change.

    /usr/bin/python3 scripts/deps.py [--build build] [-v] [--check]

Prints, for the source tree beside this script and a build folder made from it:
  folders            the module folders under src/
  arrows back up     #include lines from a file to a header whose owner sits higher in the
                     layer order below (DESIGN.md's data flow); a public header's owner is the
                     folder whose objects define most of the functions it declares (nm)
  file circles       strongly connected groups of .c files, edges = a symbol one object file
                     uses and another defines (nm -u / nm --defined-only)
  folder circles     the same over folders (include arrows and symbol arrows together)
  long functions     function bodies over 150 lines (from the signature to the closing brace)
  exported rpx__     `nm -D --defined-only librpxprof.so | grep ' rpx__'`
With -v it names every arrow, circle and function. With --check it exits 1 when an arrow
goes back up, a circle exists or a folder under src/ has no rank in LAYERS (naming each);
the long functions are information only. Without a usable build folder (none, or no
object file of the tree's sources in it) it exits 2: the symbol counts would read 0,
which looks clean. Python 3 standard library only.
"""
import argparse
import os
import re
import subprocess
import sys

# Bottom to top: a folder may include/call folders of lower or equal rank only.
LAYERS = [
    ("abi",),                        # include/rpxprof/model.h: the model ABI, no code
    ("common",),                     # errors, strings, the output guard, JSON helpers
    ("io",),                         # NPY/NPZ
    ("loader", "target", "modelref"),  # the --model grammar and loaders (src/target before)
    ("measure",),                    # clock, the timing loop, latency, memory
    ("device",),                     # CUDA, NVML, CUPTI (times with measure's clock)
    ("system",),                     # the system card (reads NVML)
    ("cost",),                       # the model-cost layer
    ("roofline",),                   # bounds from a cost and a GPU spec
    ("report",),                     # the profile report, figures
    ("session",),                    # the session block: fingerprint, version, comparability
    ("compare",),                    # two reports compared in memory, the report validator
    ("history",),                    # the history of sessions: SQLite / PostgreSQL store
    ("runner",),                     # a whole run as one call
    ("sweep",),                      # a sweep's points together (sweep.json), aggregate over sweeps, capacity
    ("batch",),                      # manifests, batch jobs, aggregate, compare
    ("http", "python", "runtimes"),  # plugins and the Python extension, over the library
    ("cli",),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
LONG = 150


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout


def sources(root):
    out = []
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), root))
    for f in os.listdir(os.path.join(root, "include", "rpxprof")):
        if f.endswith(".h"):
            out.append(os.path.join("include", "rpxprof", f))
    return sorted(out)


def folder_of_src(path):
    parts = path.split(os.sep)
    return parts[1] if parts[0] == "src" and len(parts) > 2 else None


def objects(root, build):
    """source path (relative to the tree) -> object file, for every library/CLI/plugin object
    whose source is still in the tree (a moved file leaves its old object behind)."""
    out = {}
    for d, _, files in os.walk(os.path.join(build, "CMakeFiles")):
        for f in files:
            if not f.endswith(".c.o"):
                continue
            full = os.path.join(d, f)
            m = re.search(r"\.dir/(src/.*)\.o$", full)
            if m and os.path.exists(os.path.join(root, m.group(1))):
                out.setdefault(m.group(1), full)
    return out


def symbols(objs):
    defined, used = {}, {}
    for src, obj in objs.items():
        d, u = set(), set()
        for line in run(["nm", obj]).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                u.add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBRVW":
                d.add(parts[2])
        defined[src], used[src] = d, u
    return defined, used


def header_owner(root, header, defined):
    """The folder that defines most of the functions a public header declares."""
    if header.endswith("model.h"):
        return "abi"
    text = open(os.path.join(root, header), encoding="utf-8").read()
    names = set(re.findall(r"\b(rpx_\w+)\s*\(", text))
    votes = {}
    for src, syms in defined.items():
        n = len(names & syms)
        if n:
            f = folder_of_src(src)
            votes[f] = votes.get(f, 0) + n
    if not votes:
        return None
    return max(sorted(votes), key=lambda f: votes[f])


def includes(root, path):
    out = []
    for line in open(os.path.join(root, path), encoding="utf-8", errors="replace"):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            out.append(m.group(1))
    return out


def resolve(root, path, inc):
    for base in (os.path.dirname(path), "src", "include"):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(os.path.join(root, cand)):
            return cand
    return None


def scc(nodes, edges):
    """Tarjan's strongly connected components, iteratively; groups of 2 or more."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]; counter[0] += 1
        stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop(); on.discard(w); group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


def long_functions(root, path):
    lines = open(os.path.join(root, path), encoding="utf-8", errors="replace").read().split("\n")
    out = []
    for i, line in enumerate(lines):
        if line != "{":
            continue
        j = i - 1  # the signature: back to a line that starts at column 0 with a name
        while j > 0 and (lines[j].startswith((" ", "\t")) or lines[j] == ""):
            j -= 1
        m = re.search(r"(\w+)\s*\(", lines[j])
        end = next((k for k in range(i + 1, len(lines)) if lines[k] == "}"), None)
        if m and end is not None and end - j + 1 > LONG:
            out.append((end - j + 1, "%s:%d %s" % (path, j + 1, m.group(1))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when an arrow goes back up, a circle exists or a folder has no rank")
    a = ap.parse_args()
    root, build = a.root, os.path.abspath(a.build)
    files = sources(root)
    folders = sorted({folder_of_src(f) for f in files if folder_of_src(f)})

    objs = objects(root, build)
    if not objs:
        print("deps.py: %s: %s; build the tree first (cmake -S . -B %s && cmake --build %s) "
              "and give that folder with --build: without object files every symbol count "
              "would read 0" % (build, "no such folder" if not os.path.isdir(build) else
                                "no object file of this tree's sources in it",
                                a.build, a.build), file=sys.stderr)
        return 2
    lib_sources = [f for f in files if f.endswith(".c") and folder_of_src(f)]
    unbuilt = [f for f in lib_sources if f not in objs]
    stale = [f for f in lib_sources if f in objs and
             os.path.getmtime(os.path.join(root, f)) > os.path.getmtime(objs[f])]
    defined, used = symbols(objs)
    owner = {}
    for f in files:
        owner[f] = folder_of_src(f) or header_owner(root, f, defined)

    # include arrows
    back, fold_edges = [], {}
    for f in files:
        src_folder = owner[f]
        for inc in includes(root, f):
            tgt = resolve(root, f, inc)
            if not tgt or tgt not in owner or not owner[tgt] or not src_folder:
                continue
            dst = owner[tgt]
            if dst != src_folder:
                fold_edges.setdefault(src_folder, set()).add(dst)
            if RANK.get(dst, -1) > RANK.get(src_folder, len(LAYERS)):
                back.append("%s -> %s (%s up to %s)" % (f, inc, src_folder, dst))

    # symbol arrows between files (and folders)
    by_sym = {}
    for src, syms in defined.items():
        for s in syms:
            by_sym.setdefault(s, set()).add(src)
    file_edges, back_calls = {}, []
    for src, syms in used.items():
        for s in syms:
            for d in by_sym.get(s, ()):
                if d == src:
                    continue
                file_edges.setdefault(src, set()).add(d)
                fs, fd = folder_of_src(src), folder_of_src(d)
                if fs and fd and fs != fd:
                    fold_edges.setdefault(fs, set()).add(fd)
                    if RANK.get(fd, -1) > RANK.get(fs, len(LAYERS)):
                        back_calls.append("%s calls %s in %s" % (src, s, d))
    file_circles = scc(sorted(set(defined)), file_edges)
    folder_circles = scc(sorted(fold_edges), fold_edges)

    longs = sorted((x for f in files if f.endswith(".c") for x in long_functions(root, f)),
                   reverse=True)
    lib = os.path.join(build, "librpxprof.so")
    exported = [l for l in run(["nm", "-D", "--defined-only", lib]).splitlines()
                if " rpx__" in l] if os.path.exists(lib) else None

    print("folders under src/:      %d (%s)" % (len(folders), " ".join(folders)))
    print("include arrows back up:  %d" % len(back))
    print("call arrows back up:     %d" % len(back_calls))
    print("file circles:            %d (%s files)" % (
        len(file_circles), "+".join(str(len(c)) for c in file_circles) or "0"))
    print("folder circles:          %d (%s)" % (
        len(folder_circles), "; ".join(" ".join(c) for c in folder_circles) or "none"))
    print("functions over %d lines: %d" % (LONG, len(longs)))
    print("exported rpx__ symbols:  %s" % ("no librpxprof.so in " + build
                                          if exported is None else len(exported)))
    unranked = [f for f in folders if f not in RANK]
    if unranked:
        print("folders without a rank:  %d (%s): give each its place in deps.py's LAYERS"
              % (len(unranked), " ".join(unranked)))
    if stale:
        print("note: %d source%s newer than %s's object files (rebuild for exact counts): %s"
              % (len(stale), "" if len(stale) == 1 else "s", build, " ".join(stale[:5])),
              file=sys.stderr)
    if unbuilt and a.verbose:
        print("note: not built in %s (their symbols are not counted): %s"
              % (build, " ".join(unbuilt)), file=sys.stderr)
    if a.verbose:
        for b in back:
            print("  include up:", b)
        for b in back_calls:
            print("  call up:", b)
        for c in file_circles:
            print("  file circle:", " ".join(c))
        for n, w in longs:
            print("  long: %4d %s" % (n, w))
    if a.check:
        bad = len(back) + len(back_calls) + len(file_circles) + len(folder_circles) + len(unranked)
        if bad:
            if not a.verbose:
                for b in back:
                    print("  include up:", b)
                for b in back_calls:
                    print("  call up:", b)
                for c in file_circles:
                    print("  file circle:", " ".join(c))
            print("deps.py --check: the house is not clean: %d arrow%s back up, %d file "
                  "circle%s, %d folder circle%s, %d folder%s without a rank (DESIGN.md: no "
                  "module reaches back up)"
                  % (len(back) + len(back_calls), "" if len(back) + len(back_calls) == 1 else "s",
                     len(file_circles), "" if len(file_circles) == 1 else "s",
                     len(folder_circles), "" if len(folder_circles) == 1 else "s",
                     len(unranked), "" if len(unranked) == 1 else "s"), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
