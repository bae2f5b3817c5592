#!/usr/bin/env python3
"""What reading a repository's history costs: on a large real repository, `copilot-ls
index` with the history on beside the same with it off, in one run.

Usage: history.py [--binary BIN] [--mirror PATH] [--rounds 2] [--moves 5]

The workspace is a `git clone --shared --no-checkout` of the bare mirror --mirror (default
numpy's, 41,819 commits) under .tmp/bench-history/, checked out with HEAD detached at the
mirror's HEAD. Every `copilot-ls` run is a fresh process under a small Python parent that
reports its wall time, CPU time and peak RSS (getrusage of that one child), with
COPILOT_LS_LOG=info so the history's own line (`history: N commits read (M gone) in S s,
K held`) can be read from stderr, COPILOT_LS_PROVIDER=none and no API keys. Each
configuration has its own COPILOT_LS_CACHE_DIR under .tmp/bench-history/.

1. Cold read: `index --json` on an empty cache with the history on and off (the order
   alternates by round): wall, CPU, peak RSS, the history line's seconds, the commits
   held, the history store's size (`<index dir>.history/`, next to the index dir). Also
   the history read alone: a copy of the history-off cache (the index warm, no history
   store) indexed with the history on, its peak RSS beside a no-change run's.
2. Incremental, --moves times on the warm history-on cache: a no-change run (on and off);
   HEAD to HEAD~1 (detached), index, back to the original commit, index (one commit
   read); the same with HEAD~5 (its commits gone, merges' other sides included, then read
   again). The checkouts also change files, which the index reads again, so the history
   line's seconds (printed to 10 ms) is the direct measure, and the wall time is shown
   beside a no-change run's.
3. Asks: ten fixed no-model questions about numpy, `copilot-ls ask --json`, on the warm
   caches, history on and off interleaved (on, off, on, off...): p50 each and the ratio.
4. A bounded cold read: as 1 with COPILOT_LS_HISTORY_MAX_COMMITS=30000.
5. Servers, as an editor holds them: `copilot-ls serve` asked the ten questions over LSP
   on the warm history-on store, on the history-off cache, and on a copy of that cache
   with history on (its first ask starts the whole read, in the background); then each
   one's resident set (VmRSS, after any read ended) and its peak (VmHWM).

Prints one Markdown table with the targets beside the results.
"""

import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, ".tmp", "bench-history")
BINARY = os.path.join(REPO, ".tmp", "copilot-ls-v2")
MIRROR = "/work/.mirror/numpy+numpy/repo"
BOUND = 30000
QUESTIONS = [
    "where is the dtype of a concatenated array decided",
    "how does np.einsum pick its contraction order",
    "where is the ufunc loop chosen for mixed input dtypes",
    "how is the output shape of two broadcast arrays computed",
    "where does default_rng get its seed when none is given",
    "how does np.linalg.solve call into LAPACK",
    "where is the threshold applied that summarizes large arrays when printing",
    "how does np.unique count the occurrences of each value",
    "where does np.loadtxt parse numbers out of a text file",
    "how are the field offsets and alignment of a structured dtype computed",
]
LINE = re.compile(r"history: (\d+) commits read \((\d+) gone\) in ([0-9.]+) s, (\d+) held")


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def git(cwd, *argv):
    return subprocess.run(["git", "-c", "advice.detachedHead=false"] + list(argv), cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def checkout(mirror):
    """The workspace: a shared clone of the mirror, HEAD detached at the mirror's HEAD."""
    head = git(mirror, "rev-parse", "HEAD")
    name = os.path.basename(os.path.dirname(mirror.rstrip("/")))
    if os.path.basename(mirror.rstrip("/")) != "repo":
        name = os.path.basename(mirror.rstrip("/"))
    root = os.path.join(OUT, name.split("+")[-1].removesuffix(".git"))
    if not os.path.isdir(os.path.join(root, ".git")):
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(OUT, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", mirror, root],
                       check=True)
    git(root, "checkout", "-q", "-f", "--detach", head)
    git(root, "clean", "-q", "-fdx")
    return root, head


def run(argv, env):
    """argv under a small Python parent: its stdout, stderr, wall s, CPU s, peak RSS MB."""
    helper = ("import sys,resource,subprocess,time;t=time.perf_counter();"
              "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
              "w=time.perf_counter()-t;u=resource.getrusage(resource.RUSAGE_CHILDREN);"
              "sys.stdout.write(p.stdout);sys.stderr.write(p.stderr);"
              "sys.stderr.write('\\n@@ %f %f %d %d\\n'%(w,u.ru_utime+u.ru_stime,u.ru_maxrss,"
              "p.returncode))")
    done = subprocess.run([sys.executable, "-c", helper] + argv, env=env, capture_output=True,
                          text=True)
    err, tail = done.stderr.rsplit("@@ ", 1)
    wall, cpu, rss_kb, code = tail.split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err[-800:]}")
    found = LINE.findall(err)
    line = found[-1] if found else None
    return {"out": done.stdout, "err": err, "wall": float(wall), "cpu": float(cpu),
            "rss": int(rss_kb) / 1024,
            "line": (int(line[0]), int(line[1]), float(line[2]), int(line[3])) if line else None}


def environment(cache, history=True, bound=None):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/"),
           "COPILOT_LS_PROVIDER": "none", "COPILOT_LS_LOG": "info",
           "COPILOT_LS_CACHE_DIR": os.path.join(OUT, cache)}
    if not history:
        env["COPILOT_LS_HISTORY"] = "off"
    if bound:
        env["COPILOT_LS_HISTORY_MAX_COMMITS"] = str(bound)
    return env


def index(binary, root, env):
    result = run([binary, "index", "--json", "--workspace", root], env)
    result["json"] = json.loads(result["out"])
    return result


def store_bytes(cache):
    """The history store's files: `<index dir>.history/` under the cache dir."""
    total = 0
    for entry in os.scandir(cache):
        if entry.is_dir() and entry.name.endswith(".history"):
            for dirpath, _, names in os.walk(entry.path):
                total += sum(os.path.getsize(os.path.join(dirpath, n)) for n in names)
    return total


def cold(binary, root, name, **kwargs):
    env = environment(name, **kwargs)
    shutil.rmtree(env["COPILOT_LS_CACHE_DIR"], ignore_errors=True)
    result = index(binary, root, env)
    result["store"] = store_bytes(env["COPILOT_LS_CACHE_DIR"])
    print(f"  cold {name}: {result['wall']:.1f} s, {result['rss']:.0f} MB, "
          f"history {result['json']['history']}, line {result['line']}", file=sys.stderr)
    return result


def alone(binary, root):
    """The history read on its own: the history-off cache (index warm, no store) copied,
    then indexed with the history on."""
    source, target = os.path.join(OUT, "cache-off"), os.path.join(OUT, "cache-alone")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    base = index(binary, root, environment("cache-off", history=False))
    result = index(binary, root, environment("cache-alone"))
    assert result["json"]["filesRead"] == 0, result["json"]
    print(f"  history alone: {result['rss']:.0f} MB (no-change, off: {base['rss']:.0f} MB), "
          f"line {result['line']}", file=sys.stderr)
    return result, base


def moves(binary, root, head, count):
    """Incremental reads on the warm history-on cache."""
    on, off = environment("cache-on"), environment("cache-off", history=False)
    rows = {key: [] for key in ("still on", "still off", "to ~1", "back 1", "to ~5", "back 5")}
    for _ in range(count):
        rows["still on"].append(index(binary, root, on))
        index(binary, root, off)  # the files the last moves changed, read again
        rows["still off"].append(index(binary, root, off))
        for back in (1, 5):
            git(root, "checkout", "-q", "--detach", f"{head}~{back}")
            rows[f"to ~{back}"].append(index(binary, root, on))
            git(root, "checkout", "-q", "--detach", head)
            rows[f"back {back}"].append(index(binary, root, on))
    for key, results in rows.items():
        print(f"  {key}: " + ", ".join(f"{r['wall']:.3f} s {r['line']}" for r in results),
              file=sys.stderr)
    return rows


def asks(binary, root):
    """Ten no-model asks each, history on and off interleaved, on warm caches."""
    envs = {"on": environment("cache-on"), "off": environment("cache-off", history=False)}
    for env in envs.values():
        env.pop("COPILOT_LS_LOG")
        index(binary, root, env)  # files the checkouts touched, read again
        run([binary, "ask", "--json", "--workspace", root, QUESTIONS[0]], env)  # warm-up
    times = {"on": [], "off": []}
    cpu = {"on": [], "off": []}
    related = {"on": 0, "off": 0}
    for question in QUESTIONS:
        for name in ("on", "off"):
            result = run([binary, "ask", "--json", "--workspace", root, question], envs[name])
            times[name].append(result["wall"] * 1000)
            cpu[name].append(result["cpu"] * 1000)
            related[name] += "## Related past changes" in json.loads(result["out"])["answer"]
    print(f"  asks ms: {times}, CPU ms: {cpu}; answers with related changes: {related}",
          file=sys.stderr)
    return times, cpu, related


def server(binary, root, cache, history=True):
    """A running server as an editor holds it: `copilot-ls serve` on `cache`, the ten
    questions asked over LSP one after another, then (once any history read it started
    has ended, as its log says) its resident set now (VmRSS) and at its peak (VmHWM), MB.
    """
    import threading
    sys.path.insert(0, os.path.join(REPO, "bench"))
    from index_bench import Lsp
    env = environment(cache, history=history)
    read_ended = threading.Event()

    class Logged(Lsp):
        def __init__(self, binary, root, env):
            self.proc = subprocess.Popen([binary, "serve"], cwd=root, env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
            self.next_id = 0
            threading.Thread(target=self.log, daemon=True).start()

        def log(self):
            for line in self.proc.stderr:
                if LINE.search(line.decode(errors="replace")):
                    read_ended.set()

    lsp = Logged(binary, root, env)
    try:
        uri = "file://" + root
        lsp.request("initialize", {"processId": None, "rootUri": uri,
                                   "workspaceFolders": [{"uri": uri, "name": "numpy"}],
                                   "capabilities": {"window": {"workDoneProgress": True}}})
        lsp.notify("initialized", {})
        for question in QUESTIONS:
            reply = lsp.request("copilot/ask", {"question": question})
            assert "result" in reply, reply
        # Only a server with history on and an empty store reads; the others log nothing.
        read_ended.wait(timeout=120 if history and cache == "cache-serve" else 0)
        status = {}
        with open(f"/proc/{lsp.proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    status[key] = int(value.split()[0]) / 1024
        return status
    finally:
        lsp.close()


def servers(binary, root):
    """Servers on the warm history-on store, on the history-off cache, and on a copy of
    that cache with history on (the store empty: the first ask starts the whole read)."""
    source, target = os.path.join(OUT, "cache-off"), os.path.join(OUT, "cache-serve")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    result = {"held": server(binary, root, "cache-on"),
              "off": server(binary, root, "cache-off", history=False),
              "reading": server(binary, root, "cache-serve")}
    print(f"  servers: {result}", file=sys.stderr)
    return result


def median(values):
    return statistics.median(values)


def spread(values, fmt):
    """median (min–max) of a list."""
    if len(values) == 1:
        return fmt % values[0]
    return f"{fmt % median(values)} ({fmt % min(values)}–{fmt % max(values)})"


def each(values, fmt):
    return ", ".join(fmt % v for v in values)


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        sys.exit(__doc__)
    binary = os.path.abspath(option(args, "--binary", BINARY))
    mirror = os.path.abspath(option(args, "--mirror", MIRROR))
    rounds = int(option(args, "--rounds", "2"))
    count = int(option(args, "--moves", "5"))
    load_before = os.getloadavg()[0]
    root, head = checkout(mirror)
    commits = int(git(root, "rev-list", "--count", "HEAD"))
    behind = {n: int(git(root, "rev-list", "--count", f"{head}~{n}..{head}")) for n in (1, 5)}
    print(f"{root} at {head[:10]}, {commits:,} commits", file=sys.stderr)

    runs = {"on": [], "off": [], "alone": [], "still": [], "bound": []}
    for r in range(rounds):
        order = ["on", "off", "alone", "bound"] if r % 2 == 0 else ["off", "on", "bound", "alone"]
        for what in order:
            if what == "on":
                runs["on"].append(cold(binary, root, "cache-on"))
            elif what == "off":
                runs["off"].append(cold(binary, root, "cache-off", history=False))
            elif what == "bound":
                runs["bound"].append(cold(binary, root, "cache-bound", bound=BOUND))
            else:
                result, base = alone(binary, root)
                runs["alone"].append(result)
                runs["still"].append(base)
    moved = moves(binary, root, head, count)
    ask_ms, ask_cpu, related = asks(binary, root)
    resident = servers(binary, root)
    git(root, "checkout", "-q", "--detach", head)

    on, off, bound = runs["on"], runs["off"], runs["bound"]
    secs = lambda results: [r["line"][2] for r in results]  # noqa: E731
    walls = lambda results: [r["wall"] for r in results]  # noqa: E731
    held = on[-1]["json"]["history"]
    held_bound = bound[-1]["json"]["history"]
    rss_diff = [a["rss"] - b["rss"] for a, b in zip(on, off)]
    alone_diff = [a["rss"] - b["rss"] for a, b in zip(runs["alone"], runs["still"])]
    p50_on, p50_off = median(ask_ms["on"]), median(ask_ms["off"])
    today = datetime.date.today().isoformat()
    name = os.path.basename(root)

    print(f"{name} (a shared clone of {mirror}), HEAD {head[:10]} detached, "
          f"{commits:,} commits reachable, "
          f"{on[-1]['json']['files']:,} files indexed; {rounds} rounds of cold runs "
          f"(one value per round), {count} HEAD moves each (median, min–max); {today}, "
          f"{os.cpu_count()} cores, load average {load_before:.1f} before and "
          f"{os.getloadavg()[0]:.1f} after.\n")
    print("| measure | history on | history off | difference / ratio | target |")
    print("| --- | ---: | ---: | ---: | --- |")
    rows = [
        ("cold `index`, wall s", each(walls(on), "%.1f"), each(walls(off), "%.1f"),
         "+" + each([a - b for a, b in zip(walls(on), walls(off))], "%.1f") + " s", ""),
        ("cold `index`, CPU s", each([r["cpu"] for r in on], "%.1f"),
         each([r["cpu"] for r in off], "%.1f"),
         "+" + each([a["cpu"] - b["cpu"] for a, b in zip(on, off)], "%.1f") + " s", ""),
        (f"cold history read (`history:` line), {held['commits']:,} commits held, "
         f"complete {str(held['complete']).lower()}", each(secs(on), "%.1f") + " s", "", "", ""),
        ("cold `index`, peak RSS MB", each([r["rss"] for r in on], "%.0f"),
         each([r["rss"] for r in off], "%.0f"), "+" + each(rss_diff, "%.0f") + " MB",
         f"≤ 50 MB for 50,000 commits (here {commits:,})"),
        ("history read alone (warm index, empty store) vs a no-change run, peak RSS MB",
         each([r["rss"] for r in runs["alone"]], "%.0f"),
         each([r["rss"] for r in runs["still"]], "%.0f"), "+" + each(alone_diff, "%.0f") + " MB",
         "(the same target)"),
        ("a server after the ten asks, resident MB (VmRSS): the history held (warm store)",
         f"{resident['held']['VmRSS']:.0f}", f"{resident['off']['VmRSS']:.0f}",
         f"+{resident['held']['VmRSS'] - resident['off']['VmRSS']:.0f} MB", "(the same target)"),
        ("a server whose first ask read the whole history: resident after it / peak MB",
         f"{resident['reading']['VmRSS']:.0f} / {resident['reading']['VmHWM']:.0f}",
         f"{resident['off']['VmRSS']:.0f} / {resident['off']['VmHWM']:.0f}",
         f"+{resident['reading']['VmRSS'] - resident['off']['VmRSS']:.0f} / "
         f"+{resident['reading']['VmHWM'] - resident['off']['VmHWM']:.0f} MB", ""),
        ("on disk MB: history store (`<index dir>.history`) / index",
         each([r["store"] / 1e6 for r in on], "%.1f") + " / "
         + each([r["json"]["bytes"] / 1e6 for r in on], "%.1f"),
         each([r["json"]["bytes"] / 1e6 for r in off], "%.1f"), "", ""),
        ("no-change `index`, wall s", spread(walls(moved["still on"]), "%.3f"),
         spread(walls(moved["still off"]), "%.3f"), "", ""),
        (f"HEAD~1 → HEAD ({behind[1]} commit read): `history:` line s",
         spread(secs(moved["back 1"]), "%.3f"), "", "", "≤ 0.2 s"),
        ("HEAD~1 → HEAD: `index` wall s (the checkout's files read again too)",
         spread(walls(moved["back 1"]), "%.3f"), "",
         "vs no-change " + spread(walls(moved["still on"]), "%.3f"), ""),
        (f"HEAD → HEAD~1 ({behind[1]} gone): `history:` line s / wall s",
         spread(secs(moved["to ~1"]), "%.3f") + " / " + spread(walls(moved["to ~1"]), "%.3f"),
         "", "", ""),
        (f"HEAD → HEAD~5 ({behind[5]} gone, merges' sides included): "
         "`history:` line s / wall s",
         spread(secs(moved["to ~5"]), "%.3f") + " / " + spread(walls(moved["to ~5"]), "%.3f"),
         "", "", ""),
        (f"HEAD~5 → HEAD ({behind[5]} read): `history:` line s / wall s",
         spread(secs(moved["back 5"]), "%.3f") + " / " + spread(walls(moved["back 5"]), "%.3f"),
         "", "", "≤ 0.2 s"),
        (f"no-model `ask`, warm, p50 ms ({len(QUESTIONS)} each, interleaved; "
         f"answers with related changes {related['on']}/{related['off']})",
         f"{p50_on:.0f} ({min(ask_ms['on']):.0f}–{max(ask_ms['on']):.0f})",
         f"{p50_off:.0f} ({min(ask_ms['off']):.0f}–{max(ask_ms['off']):.0f})",
         f"×{p50_on / p50_off:.2f}", "≤ 1.2×"),
        ("the same asks, CPU (user + sys) p50 ms", f"{median(ask_cpu['on']):.0f}",
         f"{median(ask_cpu['off']):.0f}",
         f"×{median(ask_cpu['on']) / median(ask_cpu['off']):.2f}", ""),
        (f"cold, MAX_COMMITS={BOUND:,}: `history:` line s ({held_bound['commits']:,} held, "
         f"reason {held_bound['reason'] or 'none'})", each(secs(bound), "%.1f") + " s", "", "",
         f"≤ 10 s on 2 cores (here {os.cpu_count()})"),
        (f"cold, MAX_COMMITS={BOUND:,}: wall s / peak RSS MB",
         each(walls(bound), "%.1f") + " / " + each([r["rss"] for r in bound], "%.0f"),
         each(walls(off), "%.1f") + " / " + each([r["rss"] for r in off], "%.0f"),
         "+" + each([a - b for a, b in zip(walls(bound), walls(off))], "%.1f") + " s, +"
         + each([a["rss"] - b["rss"] for a, b in zip(bound, off)], "%.0f") + " MB", ""),
        (f"cold, MAX_COMMITS={BOUND:,}: history store MB",
         each([r["store"] / 1e6 for r in bound], "%.1f"), "", "", ""),
    ]
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
