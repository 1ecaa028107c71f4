#!/usr/bin/env python3
"""What an SDK costs: each SDK's example game run for the same seeds as a
plain loop in its own language (the game's `generate` called directly) and
through the SDK over the protocol (a process fed every request, its answers
read), in alternating rounds. Prints, per SDK, the median seconds of each
and the ratio plain / SDK (1.0: the SDK costs nothing).

A third run in each round is the floor: the same SDK and example, its
`generate` answering with levels made before the clock starts, so the game
costs nothing and what is left is the protocol (reading each request,
writing each answer through the pipe) and the SDK. It bounds the ratio any
SDK could reach for a game this fast: plain / (plain + floor).

    python3 sdk/overhead.py [SEEDS] [ROUNDS] [python|node ...]

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


CANNED_PYTHON = """
import sys
sys.path.insert(0, {examples!r})
import pregen_game as pg
from rushhour import RushHour
game = RushHour()
params = game.full_params({{}})
made = []
for seed in range(400):
    try:
        made.append(game.generate(seed, params, 200000))
    except (pg.Rejected, pg.Unsolvable) as e:
        made.append(e)
class Canned(RushHour):
    def generate(self, seed, params, max_nodes):
        answer = made[seed % len(made)]
        if isinstance(answer, Exception):
            raise answer
        return answer
pg.serve(Canned())
"""

CANNED_NODE = """
const pg = require({sdk!r});
const game = require({game!r});
const params = {{ ...game.params, ...{params} }};
const made = [];
for (let seed = 0n; seed < 400n; seed++) {{
  try {{ made.push(game.generate(seed, params, 200000)); }} catch (e) {{ made.push(e); }}
}}
pg.serve({{ ...game, generate(seed) {{
  const answer = made[Number(seed % 400n)];
  if (answer instanceof Error) throw answer;
  return answer;
}} }});
"""


def canned(language, params):
    """The command of the example with canned levels."""
    if language == "python":
        return [sys.executable, "-c", CANNED_PYTHON.format(examples=EXAMPLES)]
    return ["node", "-e", CANNED_NODE.format(sdk=os.path.join(EXAMPLES, "pregen_game.js"),
                                             game=os.path.join(EXAMPLES, "lightsout.js"),
                                             params=json.dumps(params))]


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


def through_sdk(command, seeds, params):
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


def main():
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
        plains, sdks, ratios, floors, bounds = [], [], [], [], []
        for _ in range(rounds):
            p = plain(language, seeds, params)
            s = through_sdk(command, seeds, params)
            f = through_sdk(canned(language, params), seeds, params)
            plains.append(p)
            sdks.append(s)
            ratios.append(p / s)
            floors.append(f)
            bounds.append(p / (p + f))
        median = statistics.median
        print(f"{language} {json.dumps(params)}: {seeds} seeds, {rounds} rounds: plain {median(plains):.3f} s, "
              f"through the SDK {median(sdks):.3f} s, plain / SDK {median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f}); "
              f"floor {median(floors):.3f} s ({median(floors) / seeds * 1e6:.1f} us a seed), "
              f"best ratio for this game plain / (plain + floor) {median(bounds):.3f}")


if __name__ == "__main__":
    main()
