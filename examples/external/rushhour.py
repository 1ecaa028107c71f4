#!/usr/bin/env python3
"""Rush Hour, a game program for pregen's game protocol (docs/external.md),
in Python with the standard library only.

A 6x6 car park: vehicles of length 2 or 3 slide along their own axis; the red
car `A` on row 2 must leave by the right edge. The generator places vehicles
at random from the seed; a breadth-first search finds the fewest moves (one
vehicle slid any distance is one move) or proves there is no way out; the
check replays a solution under the rules.

    python3 rushhour.py            # speak the protocol on stdin and stdout
    python3 rushhour.py --lie solution   # a liar: drops the last move of each solution
    python3 rushhour.py --lie level      # a liar: answers seed s with seed s + 1's level
    python3 rushhour.py --lie check      # drops the last move, and its check accepts anything
    python3 rushhour.py --lie strict     # its check refuses every level, its own too
    python3 rushhour.py --lie random:0.02  # not deterministic: 2% of the seeds it runs
                                           # get the level of a seed drawn at random
    python3 rushhour.py --lie crash:10     # a failing program: the process dies when asked
                                           # for a seed that is a multiple of 10

The liars (and the program that is not deterministic) exist to test pregen's checks; `RUSHHOUR_LIE=solution` (or `level`)
in the environment does the same without changing the command (so a lying
worker runs the job's own program, files and all).
"""

import hashlib
import json
import os
import random
import sys
import time
from collections import deque

PROTOCOL = 1
SIZE = 6
EXIT_ROW = 2
DEFAULTS = {"vehicles": 8, "min_moves": 5}
METRICS = [
    {"name": "states", "unit": "count", "doc": "positions the breadth-first search reached"},
    {"name": "vehicles", "unit": "count", "doc": "vehicles on the board, the red car included"},
    {"name": "blockers", "unit": "count", "doc": "vehicles between the red car and the exit at the start"},
]
NAMES = "ABCDEFGHIJKLMNOP"
# How pregen rates a level (docs/ratings.md's format): fewest moves, and half
# a point per vehicle between the red car and the exit.
RATING_MODEL = """name = "rushhour-default"
version = 1
game = "rushhour"
about = "fewest moves, plus half a point per blocker"

[[terms]]
feature = "moves"
weight = 1.0
about = "fewest moves that free the red car"

[[terms]]
feature = "blockers"
weight = 0.5
about = "vehicles between the red car and the exit at the start"
"""


class Refused(Exception):
    """A seed refused by a rule: its reason code and detail."""

    def __init__(self, code, detail=""):
        super().__init__(code)
        self.code, self.detail = code, detail


def params_of(given):
    unknown = set(given) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown params: {sorted(unknown)}")
    params = dict(DEFAULTS, **given)
    if not (2 <= params["vehicles"] <= 14):
        raise ValueError("vehicles must be 2..=14")
    return params


def cells(v):
    name, row, col, length, horizontal = v
    return [(row, col + i) if horizontal else (row + i, col) for i in range(length)]


def generate(seed, params):
    """Vehicles placed at random: the red car first, then the others."""
    rng = random.Random(seed)
    vehicles = [["A", EXIT_ROW, rng.randrange(0, SIZE - 2), 2, True]]
    taken = set(cells(vehicles[0]))
    tries = 0
    while len(vehicles) < params["vehicles"]:
        tries += 1
        if tries > 1000:
            raise Refused("cap hit", f"{len(vehicles)} of {params['vehicles']} vehicles placed")
        length = 3 if rng.random() < 0.3 else 2
        horizontal = rng.random() < 0.5
        row = rng.randrange(SIZE - (0 if horizontal else length - 1))
        col = rng.randrange(SIZE - (length - 1 if horizontal else 0))
        v = [NAMES[len(vehicles)], row, col, length, horizontal]
        if horizontal and row == EXIT_ROW:
            continue  # nothing rides the exit row but the red car
        if taken.isdisjoint(cells(v)):
            vehicles.append(v)
            taken.update(cells(v))
    return vehicles


def to_json(vehicles):
    """The canonical JSON form: keys sorted, no spaces."""
    return json.dumps({"size": SIZE, "vehicles": vehicles}, separators=(",", ":"), sort_keys=True)


def to_text(vehicles):
    grid = [["."] * SIZE for _ in range(SIZE)]
    for v in vehicles:
        for r, c in cells(v):
            grid[r][c] = v[0]
    return "".join("".join(row) + "\n" for row in grid)


def moves_from(vehicles, positions):
    """Every move from `positions` (the first cell of each vehicle along its
    axis): (vehicle index, signed distance, the new positions)."""
    occupied = set()
    for v, p in zip(vehicles, positions):
        occupied.update(cells([v[0], v[1] if v[4] else p, p if v[4] else v[2], v[3], v[4]]))
    for i, (v, p) in enumerate(zip(vehicles, positions)):
        length, horizontal = v[3], v[4]
        for step in (-1, 1):
            d = step
            while True:
                head = p + d if step < 0 else p + length - 1 + d
                if not 0 <= head < SIZE:
                    break
                cell = (v[1], head) if horizontal else (head, v[2])
                if cell in occupied:
                    break
                yield i, d, positions[:i] + (p + d,) + positions[i + 1:]
                d += step


def start_positions(vehicles):
    return tuple(v[2] if v[4] else v[1] for v in vehicles)


def won(positions):
    return positions[0] == SIZE - 2


def solve(vehicles, max_nodes):
    """Fewest moves by breadth-first search: (moves as (vehicle, distance), states)."""
    start = start_positions(vehicles)
    parent = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if won(here):
            path = []
            while parent[here] is not None:
                here, move = parent[here]
                path.append(move)
            return path[::-1], len(parent)
        for i, d, there in moves_from(vehicles, here):
            if there not in parent:
                if len(parent) >= max_nodes:
                    raise Refused("budget exhausted", f"{max_nodes} nodes")
                parent[there] = (here, (i, d))
                queue.append(there)
    return None, len(parent)


def notation(vehicles, path):
    return " ".join(f"{vehicles[i][0]}{'+' if d > 0 else '-'}{abs(d)}" for i, d in path)


def replay(vehicles, solution):
    """The moves of a solution if it wins under the rules, else why not."""
    positions = start_positions(vehicles)
    names = [v[0] for v in vehicles]
    moves = solution.split()
    for n, token in enumerate(moves):
        name, sign, dist = token[0], token[1:2], token[2:]
        if name not in names or sign not in "+-" or not dist.isdigit():
            return None, f"move {n}: `{token}` is not a move"
        i, d = names.index(name), int(dist) * (1 if sign == "+" else -1)
        legal = {(j, e): p for j, e, p in moves_from(vehicles, positions)}
        if (i, d) not in legal:
            return None, f"move {n}: `{token}` is blocked or leaves the board"
        positions = legal[(i, d)]
    if not won(positions):
        return None, "the red car does not reach the exit"
    return len(moves), ""


def blockers(vehicles):
    red_end = vehicles[0][2] + 1
    return sum(1 for v in vehicles[1:] if any(r == EXIT_ROW and c > red_end for r, c in cells(v)))


def outcome(seed, params, max_nodes, lie):
    started = time.perf_counter()
    try:
        params = params_of(params)
        made_from = seed + 1 if lie == "level" else seed
        if lie and lie.startswith("random:") and random.random() < float(lie[len("random:"):]):
            made_from = seed + random.randint(1, 1 << 30)
        vehicles = generate(made_from, params)
        generated = time.perf_counter()
        path, states = solve(vehicles, max_nodes)
        solved = time.perf_counter()
        ms = lambda a, b: round((b - a) * 1000, 3)
        if path is None:
            return {"status": "unsolvable", "generate_ms": ms(started, generated),
                    "solve_ms": ms(generated, solved), "nodes": states}
        if len(path) < params["min_moves"]:
            return {"status": "rejected", "reason_code": "too easy",
                    "reason_detail": f"{len(path)} moves < min_moves {params['min_moves']}",
                    "generate_ms": ms(started, generated), "solve_ms": ms(generated, solved), "nodes": states}
        if lie in ("solution", "check"):
            path = path[:-1]
        level_json = to_json(vehicles)
        metrics = {"states": float(states), "vehicles": float(len(vehicles)), "blockers": float(blockers(vehicles))}
        level = {
            "difficulty": round(len(path) + 0.5 * metrics["blockers"], 6),
            "moves": len(path),
            "moves_optimal": True,
            "layout": to_text(vehicles),
            "level_json": level_json,
            "solution": notation(vehicles, path),
            "metrics": metrics,
            "level_hash": hashlib.sha256(level_json.encode()).hexdigest(),
        }
        return {"status": "accepted", "level": level, "generate_ms": ms(started, generated),
                "solve_ms": ms(generated, solved), "nodes": states}
    except Refused as r:
        return {"status": "rejected", "reason_code": r.code, "reason_detail": r.detail,
                "generate_ms": round((time.perf_counter() - started) * 1000, 3), "solve_ms": 0, "nodes": 0}


def check(params, level):
    params = params_of(params)
    try:
        vehicles = json.loads(level["level_json"])["vehicles"]
    except (ValueError, KeyError, TypeError) as e:
        return f"the level JSON is not a Rush Hour level: {e}"
    if to_json(vehicles) != level["level_json"]:
        return "the level JSON is not in its canonical form"
    if hashlib.sha256(level["level_json"].encode()).hexdigest() != level["level_hash"]:
        return "the hash is not the level's"
    if to_text(vehicles) != level["layout"]:
        return "the layout is not the level's"
    if len(vehicles) != params["vehicles"]:
        return f"{len(vehicles)} vehicles, the params say {params['vehicles']}"
    moves, why = replay(vehicles, level["solution"])
    if moves is None:
        return why
    if moves != level["moves"]:
        return f"the solution has {moves} moves, the level says {level['moves']}"
    return ""


COLOURS = ["#2f7fc1", "#e8a33d", "#5aa469", "#8e6bbf", "#d98cb3", "#6cc3c9", "#b08d57"]


def render(level_json):
    """The level's picture: the car park from above, the red car in red, the
    exit an opening in the right wall."""
    vehicles = json.loads(level_json)["vehicles"]
    tile, side = 40, SIZE * 40 + 16
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}" '
             f'viewBox="0 0 {side} {side}">',
             f'<rect width="{side}" height="{side}" fill="#444"/>',
             f'<rect x="8" y="8" width="{SIZE * tile}" height="{SIZE * tile}" fill="#ddd"/>',
             f'<rect x="{side - 8}" y="{8 + EXIT_ROW * tile}" width="8" height="{tile}" fill="#ddd"/>']
    for i, (name, row, col, length, horizontal) in enumerate(vehicles):
        w, h = (length, 1) if horizontal else (1, length)
        colour = "#d33" if name == "A" else COLOURS[i % len(COLOURS)]
        parts.append(f'<rect class="vehicle" x="{8 + col * tile + 3}" y="{8 + row * tile + 3}" '
                     f'width="{w * tile - 6}" height="{h * tile - 6}" rx="6" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)


def answer(request, lie):
    if "describe" in request:
        if request["describe"].get("protocol") != PROTOCOL:
            return {"error": f"this game speaks protocol {PROTOCOL}"}
        return {"describe": {"protocol": PROTOCOL, "name": "rushhour", "version": "1.0.0",
                             "text_format": "rushhour", "params": DEFAULTS, "metrics": METRICS,
                             "rating_model": RATING_MODEL, "concurrent": False,
                             "renders": True}}
    if "prepare" in request:
        try:
            params_of(request["prepare"]["params"])
            return {"prepare": {"ok": True}}
        except ValueError as e:
            return {"prepare": {"ok": False, "reason": str(e)}}
    if "generate" in request:
        g = request["generate"]
        if lie and lie.startswith("crash:") and g["seed"] % int(lie[len("crash:"):]) == 0:
            os._exit(3)
        return {"outcome": outcome(g["seed"], g["params"], g["max_nodes"], lie)}
    if "check" in request:
        why = "" if lie == "check" else check(request["check"]["params"], request["check"]["level"])
        if lie == "strict":
            why = "strict: no level passes"

        return {"check": {"ok": not why, "reason": why}}
    if "render" in request:
        return {"render": {"svg": render(request["render"]["level_json"])}}
    return {"error": "unknown request"}


def main():
    lie = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--lie" else os.environ.get("RUSHHOUR_LIE")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            response = answer(request, lie)
        except (ValueError, KeyError, TypeError) as e:
            request, response = {}, {"error": str(e)}
        response["id"] = request.get("id", 0) if isinstance(request, dict) else 0
        sys.stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
