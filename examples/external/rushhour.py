#!/usr/bin/env python3
"""Rush Hour, a game program for pregen's game protocol (docs/external.md),
in Python with the standard library only, on the Python SDK
(`pregen_game.py`, beside it: the protocol is the SDK's, the game is here).

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

import json
import os
import random
import sys
from collections import deque

import pregen_game as pg

SIZE = 6
EXIT_ROW = 2
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
            raise pg.Rejected("crowded", f"{len(vehicles)} of {params['vehicles']} vehicles placed")
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


def to_text(vehicles):
    grid = [["."] * SIZE for _ in range(SIZE)]
    for v in vehicles:
        for r, c in cells(v):
            grid[r][c] = v[0]
    return "".join("".join(row) + "\n" for row in grid)


def from_text(text):
    """The vehicles of a level's text form (as `to_text` writes it): each
    letter's cells a vehicle of length 2 or 3 in a line, `A` on the exit row."""
    rows = text.splitlines()
    malformed = lambda why: pg.Rejected("malformed level", why, status="error")
    if len(rows) != SIZE or any(len(r) != SIZE for r in rows):
        raise malformed(f"not {SIZE} rows of {SIZE} cells")
    cells_of = {}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch != ".":
                if ch not in NAMES:
                    raise malformed(f"`{ch}` is not a vehicle")
                cells_of.setdefault(ch, []).append((r, c))
    vehicles = []
    for name in sorted(cells_of):
        cs = cells_of[name]
        (r0, c0), horizontal = cs[0], len({r for r, _ in cs}) == 1
        v = [name, r0, c0, len(cs), horizontal]
        if len(cs) not in (2, 3) or cells(v) != cs:
            raise malformed(f"vehicle {name} is not 2 or 3 cells in a line")
        vehicles.append(v)
    if not vehicles or vehicles[0][0] != "A" or vehicles[0][1] != EXIT_ROW or not vehicles[0][4]:
        raise malformed("the red car A does not lie across the exit row")
    return vehicles


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
                    raise pg.Rejected("budget exhausted", f"{max_nodes} nodes", nodes=len(parent))
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


class RushHour(pg.Game):
    name, version, text_format = "rushhour", "1.0.0", "rushhour"
    params = {"vehicles": 8, "min_moves": 5}
    metrics = [
        pg.Metric("states", "count", "positions the breadth-first search reached"),
        pg.Metric("vehicles", "count", "vehicles on the board, the red car included"),
        pg.Metric("blockers", "count", "vehicles between the red car and the exit at the start"),
    ]
    reasons = [pg.Reason("crowded", "rejected", "the car park had no room for every vehicle the params ask for")]
    rating_model = RATING_MODEL

    def __init__(self, lie=None):
        self.lie = lie or ""

    def check_params(self, params):
        if not (2 <= params["vehicles"] <= 14):
            raise ValueError("vehicles must be 2..=14")

    def generate(self, seed, params, max_nodes):
        lie = self.lie
        if lie.startswith("crash:") and seed % int(lie[len("crash:"):]) == 0:
            os._exit(3)
        made_from = seed + 1 if lie == "level" else seed
        if lie.startswith("random:") and random.random() < float(lie[len("random:"):]):
            made_from = seed + random.randint(1, 1 << 30)
        vehicles = generate(made_from, params)
        pg.solving()
        path, states = solve(vehicles, max_nodes)
        if path is None:
            raise pg.Unsolvable(nodes=states)
        if len(path) < params["min_moves"]:
            raise pg.Rejected("too easy", f"{len(path)} moves < min_moves {params['min_moves']}", nodes=states)
        if lie in ("solution", "check"):
            path = path[:-1]
        return pg.Level({"size": SIZE, "vehicles": vehicles}, layout=to_text(vehicles),
                        solution=notation(vehicles, path), moves=len(path), nodes=states,
                        metrics={"states": states, "vehicles": len(vehicles),
                                 "blockers": blockers(vehicles)})

    def check(self, params, level):
        if self.lie == "check":
            return ""
        if self.lie == "strict":
            return "strict: no level passes"
        try:
            vehicles = self.level_of(level)["vehicles"]
        except (KeyError, TypeError) as e:
            return f"the level JSON is not a Rush Hour level: {e}"
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

    def solve(self, params, text, max_nodes):
        vehicles = from_text(text)
        pg.solving()
        path, states = solve(vehicles, max_nodes)
        if path is None:
            raise pg.Unsolvable(nodes=states)
        return pg.Level({"size": SIZE, "vehicles": vehicles}, layout=to_text(vehicles),
                        solution=notation(vehicles, path), moves=len(path), nodes=states,
                        metrics={"states": states, "vehicles": len(vehicles),
                                 "blockers": blockers(vehicles)})

    def render(self, params, level):
        return picture(json.loads(level["level_json"])["vehicles"])


COLOURS = ["#2f7fc1", "#e8a33d", "#5aa469", "#8e6bbf", "#d98cb3", "#6cc3c9", "#b08d57"]


def picture(vehicles):
    """The level's picture: the car park from above, the red car in red, the
    exit an opening in the right wall."""
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


if __name__ == "__main__":
    lie = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--lie" else os.environ.get("RUSHHOUR_LIE")
    pg.serve(RushHour(lie))
