#!/usr/bin/env python3
"""What an SDK costs: each SDK's example game run for the same seeds as a
plain loop in its own language (the game's `generate` called directly) and
through the SDK over the protocol (a process fed every request, its answers
read), in alternating rounds. Prints, per SDK, the median seconds of each
and the ratio plain / SDK.

A third run in each round serves the same example through a protocol loop
written by hand, without the SDK: each request read with the language's
JSON parser, the game's `generate` called and timed, its outcome written as
JSON, answers written in one write a read (Node) or flushed one by one
(Python). It is what the protocol costs any program of this language and
this game, SDK or not: plain / by hand. By hand / SDK is what the SDK costs
beyond it (1.0: nothing).

    python3 sdk/overhead.py [SEEDS] [ROUNDS] [python|node ...]
    python3 sdk/overhead.py --packs PREGEN [ROUNDS]

With `--packs`, each example makes a pack with `pregen run` (the binary
PREGEN) at the job's defaults (one worker on every core, the determinism
probe, the 1% cross-check, every level checked by the program in the
coordinator's process), against a plain loop in the example's language
over the same seeds that calls `generate` and, for each accepted level,
`check` on the level read back from its JSON: CPU time (user and system)
of each whole process tree, medians of ROUNDS (3 by default), and the
ratio plain / pregen.

SEEDS is the Python example's (2,000 by default, about 8 s); the Node
example's levels take a fiftieth of the time each, so it runs 20 times as
many seeds, for a measure of the protocol rather than of the JIT's warm-up
and the pipe's first fill (at 2,000 seeds a Node run lasts 0.08 s). The
Node example runs twice: on its default 5x5 boards (about 18 us a level)
and on 8x8 boards (about 100 us a level, 5 times the seeds), the same SDK
against a game of five times the cost a level.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples", "external")

PLAIN_PYTHON = """
import sys, time
sys.path.insert(0, {examples!r})
import pregen_game as pg
from rushhour import RushHour
game = RushHour()
params = game.full_params({{}})
started = time.perf_counter()
for seed in range({seeds}):
    try:
        game.generate(seed, params, 200000)
    except (pg.Rejected, pg.Unsolvable):
        pass
print(time.perf_counter() - started)
"""

PLAIN_NODE = """
const pg = require({sdk!r});
const game = require({game!r});
const params = {{ ...game.params, ...{params} }};
const started = process.hrtime.bigint();
for (let seed = 0n; seed < {seeds}n; seed++) {{
  try {{ game.generate(seed, params, 200000); }}
  catch (e) {{ if (!(e instanceof pg.Rejected) && !(e instanceof pg.Unsolvable)) throw e; }}
}}
console.log(Number(process.hrtime.bigint() - started) / 1e9);
"""


BY_HAND_PYTHON = """
import json, sys, time
sys.path.insert(0, {examples!r})
import pregen_game as pg
from rushhour import RushHour
game = RushHour()
defaults = game.full_params({{}})
for line in sys.stdin.buffer:
    request = json.loads(line)
    if "describe" in request:
        answer = {{"describe": game.description()}}
    else:
        g = request["generate"]
        params = {{**defaults, **g["params"]}}
        started = time.perf_counter()
        try:
            level = game.generate(g["seed"], params, g["max_nodes"])
            outcome = {{"status": "accepted", "level": level.to_json(), "nodes": level.nodes}}
        except pg.Rejected as e:
            outcome = {{"status": e.status, "reason_code": e.code, "reason_detail": e.detail, "nodes": e.nodes}}
        except pg.Unsolvable as e:
            outcome = {{"status": "unsolvable", "nodes": e.nodes}}
        outcome["generate_ms"] = round((time.perf_counter() - started) * 1e3, 3)
        outcome["solve_ms"] = 0
        answer = {{"outcome": outcome}}
    answer["id"] = request["id"]
    sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\\n")
    sys.stdout.flush()
"""

BY_HAND_NODE = """
const pg = require({sdk!r});
const game = require({game!r});
let pending = '';
const answer = (line) => {{
  const request = JSON.parse(line);
  let out;
  if (request.describe) out = {{ describe: {{ protocol: 1, name: game.name }} }};
  else {{
    const g = request.generate;
    const params = {{ ...game.params, ...g.params }};
    const started = performance.now();
    let outcome;
    try {{
      const made = game.generate(BigInt(g.seed), params, g.max_nodes);
      outcome = {{ status: 'accepted', level: made.level, nodes: made.nodes }};
    }} catch (e) {{
      if (e instanceof pg.Rejected) outcome = {{ status: e.status, reason_code: e.code, reason_detail: e.detail, nodes: e.nodes }};
      else if (e instanceof pg.Unsolvable) outcome = {{ status: 'unsolvable', nodes: e.nodes }};
      else throw e;
    }}
    outcome.generate_ms = Math.round((performance.now() - started) * 1e3) / 1e3;
    outcome.solve_ms = 0;
    out = {{ outcome }};
  }}
  out.id = request.id;
  return JSON.stringify(out) + '\\n';
}};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {{
  pending += chunk;
  let out = '';
  let start = 0;
  for (let end = pending.indexOf('\\n'); end >= 0; end = pending.indexOf('\\n', start)) {{
    out += answer(pending.slice(start, end));
    start = end + 1;
  }}
  pending = pending.slice(start);
  if (out) process.stdout.write(out);
}});
"""


def by_hand(language):
    """The command of the example served by a protocol loop written by hand."""
    if language == "python":
        return [sys.executable, "-c", BY_HAND_PYTHON.format(examples=EXAMPLES)]
    return ["node", "-e", BY_HAND_NODE.format(sdk=os.path.join(EXAMPLES, "pregen_game.js"),
                                              game=os.path.join(EXAMPLES, "lightsout.js"))]


def plain(language, seeds, params):
    if language == "python":
        code = PLAIN_PYTHON.format(examples=EXAMPLES, seeds=seeds)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    else:
        code = PLAIN_NODE.format(sdk=os.path.join(EXAMPLES, "pregen_game.js"),
                                 game=os.path.join(EXAMPLES, "lightsout.js"), seeds=seeds,
                                 params=json.dumps(params))
        out = subprocess.run(["node", "-e", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def served(command, seeds, params):
    """Seconds for a process of `command` to answer `seeds` generate requests."""
    requests = [json.dumps({"id": 1, "describe": {"protocol": 1}})]
    requests += [json.dumps({"id": seed + 2, "generate": {"seed": seed, "params": params, "max_nodes": 200000}})
                 for seed in range(seeds)]
    data = ("\n".join(requests) + "\n").encode()
    process = subprocess.Popen(command, cwd=EXAMPLES, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # The description first: the process is up before the clock starts.
    process.stdin.write(data[: data.index(b"\n") + 1])
    process.stdin.flush()
    process.stdout.readline()
    started = time.perf_counter()

    def feed():
        process.stdin.write(data[data.index(b"\n") + 1:])
        process.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    answers = sum(1 for _ in process.stdout)
    writer.join()
    took = time.perf_counter() - started
    process.wait()
    assert answers == seeds, f"{answers} answers to {seeds} seeds"
    return took


PLAIN_CHECKED_PYTHON = """
import json, sys, time
sys.path.insert(0, {examples!r})
import pregen_game as pg
from rushhour import RushHour
game = RushHour()
params = game.full_params({params})
for seed in range({seeds}):
    try:
        level = json.loads(json.dumps(game.generate(seed, params, 200000).to_json()))
    except (pg.Rejected, pg.Unsolvable):
        continue
    why = game.check(params, level)
    assert not why, why
"""

PLAIN_CHECKED_NODE = """
const pg = require({sdk!r});
const game = require({game!r});
const params = {{ ...game.params, ...{params} }};
for (let seed = 0n; seed < {seeds}n; seed++) {{
  let level;
  try {{ level = JSON.parse(JSON.stringify(game.generate(seed, params, 200000).level)); }}
  catch (e) {{ if (e instanceof pg.Rejected || e instanceof pg.Unsolvable) continue; throw e; }}
  const why = game.check(params, level);
  if (why) throw new Error(why);
}}
"""


def children_cpu():
    """CPU seconds (user and system) of every child process waited for."""
    import resource
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(command, **kwargs):
    """CPU seconds of `command`'s whole process tree."""
    before = children_cpu()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return children_cpu() - before


def packs(pregen, rounds):
    """`pregen run` at the job's defaults against a plain loop with checks."""
    import tempfile
    examples = os.path.abspath(EXAMPLES)
    cases = (
        ("python", "Rush Hour", ["python3", "rushhour.py"], ["rushhour.py", "pregen_game.py"],
         {"vehicles": 8, "min_moves": 5}, 1000),
        ("node", "Lights Out 8x8", ["node", "lightsout.js"], ["lightsout.js", "pregen_game.js"],
         {"size": 8, "presses": 21}, 20000),
        ("node", "Lights Out 8x8", ["node", "lightsout.js"], ["lightsout.js", "pregen_game.js"],
         {"size": 8, "presses": 21}, 2000),
    )
    for language, name, command, files, params, count in cases:
        toml_params = "".join(f"{k} = {v}\n" for k, v in params.items())
        job = (f'pack = "overhead"\ngame = "external"\ncount = {count}\n'
               f"[external]\ncommand = {json.dumps(command)}\ndir = {json.dumps(examples)}\n"
               f"files = {json.dumps(files)}\n[params]\n{toml_params}")
        ours, theirs, ratios = [], [], []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as out:
                path = os.path.join(out, "job.toml")
                with open(path, "w") as f:
                    f.write(job)
                ran = cpu_of([pregen, "run", "--no-progress", "--out", out, path])
                with open(os.path.join(out, "overhead", "manifest.json")) as f:
                    seeds = json.load(f)["seeds"]["tried"]
            if language == "python":
                code = PLAIN_CHECKED_PYTHON.format(examples=examples, seeds=seeds, params=params)
                loop = cpu_of([sys.executable, "-c", code])
            else:
                code = PLAIN_CHECKED_NODE.format(sdk=os.path.join(examples, "pregen_game.js"),
                                                 game=os.path.join(examples, "lightsout.js"),
                                                 seeds=seeds, params=json.dumps(params))
                loop = cpu_of(["node", "-e", code])
            ours.append(ran)
            theirs.append(loop)
            ratios.append(loop / ran)
        median = statistics.median
        print(f"{name} ({language}), {count} levels ({seeds} seeds), {rounds} rounds: "
              f"plain loop {median(theirs):.2f} s, pregen run {median(ours):.2f} s of CPU; "
              f"plain / pregen {median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--packs":
        packs(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
        return
    base = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    only = set(sys.argv[3:]) or {"python", "node"}
    # (language, command, seeds per SEEDS, the example's params)
    runs = (
        ("python", [sys.executable, "rushhour.py"], 1, {}),
        ("node", ["node", "lightsout.js"], 20, {}),
        ("node", ["node", "lightsout.js"], 5, {"size": 8, "presses": 21}),
    )
    for language, command, scale, params in runs:
        if language not in only:
            continue
        seeds = base * scale
        plains, sdks, hands, ratios, protocol, own = [], [], [], [], [], []
        for _ in range(rounds):
            p = plain(language, seeds, params)
            s = served(command, seeds, params)
            h = served(by_hand(language), seeds, params)
            plains.append(p)
            sdks.append(s)
            hands.append(h)
            ratios.append(p / s)
            protocol.append(p / h)
            own.append(h / s)
        median = statistics.median
        print(f"{language} {json.dumps(params)}: {seeds} seeds, {rounds} rounds: plain {median(plains):.3f} s, "
              f"through the SDK {median(sdks):.3f} s, by hand {median(hands):.3f} s; "
              f"plain / SDK {median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); "
              f"plain / by hand {median(protocol):.3f} (min {min(protocol):.3f}, max {max(protocol):.3f}); "
              f"by hand / SDK {median(own):.3f} (min {min(own):.3f}, max {max(own):.3f})")


if __name__ == "__main__":
    main()
