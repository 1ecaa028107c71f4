"""pregen's game protocol for Python: one file, the standard library only.

Copy this file beside your game and write a subclass of `Game` with
`describe`'s facts as class attributes and `generate`, `check` (and, if you
draw your levels, `render`); `serve(YourGame())` speaks the protocol on
stdin and stdout (docs/external.md):

    import pregen_game as pg

    class Coins(pg.Game):
        name, version, text_format = "coins", "1.0.0", "coins"
        params = {"size": 4, "min_moves": 2}
        metrics = [pg.Metric("states", "count", "positions searched")]
        reasons = [pg.Reason("no coin", "rejected", "the seed placed no coin")]

        def generate(self, seed, params, max_nodes):
            rng = pg.rng(seed)                   # seeded from the exact seed
            board = ...
            if not board:
                raise pg.Rejected("no coin", "a board of 0 coins")
            pg.solving()                          # the rest is solve_ms
            path, states = ...
            if path is None:
                raise pg.Unsolvable(nodes=states)
            return pg.Level(board, layout="...\\n", solution="R U", moves=2,
                            metrics={"states": states}, nodes=states)

        def check(self, params, level):
            ...                                   # raise pg.CheckFailed("why")

    if __name__ == "__main__":
        pg.serve(Coins())

What this module does for you: reads requests as they come (a batch waits
in stdin), answers each in order with its id, flushes when no further
request is waiting and after any answer that took 1 ms or more to make or
once the answers held have waited 5 ms (so a fast game's batches cost few
writes and no answer is left in a buffer; an answer made in under 1 ms may
wait while the game makes the next), reads
seeds as Python integers (exact up to 2^64), writes the level's canonical
JSON and its SHA-256, times `generate` (split at
`solving()`), turns `Rejected`/`Unsolvable`/a raised exception into the
outcome the protocol names, answers `prepare` from the params' keys and
`check_params`, answers an unknown request or a broken line with
`error` without stopping, ends quietly when pregen stops reading, and keeps
stdout to the protocol (from its import, when pregen runs it): `print`,
`sys.stdout` and whatever writes to file descriptor 1 go to stderr, each
line written while a seed is made marked `[seed N] `.
"""

import hashlib
import json
import os
import random
import sys
import time
import traceback

PROTOCOL = 1

__all__ = [
    "PROTOCOL", "Game", "Metric", "Reason", "Level", "Rejected", "Unsolvable",
    "CheckFailed", "canonical_json", "sha256", "rng", "solving", "serve",
]


class Metric:
    """A key of a level's `metrics`: its name, unit (`count`, `share`,
    `flag` for 0 or 1, `ms`...) and what it measures."""

    def __init__(self, name, unit, doc):
        self.name, self.unit, self.doc = name, unit, doc

    def to_json(self):
        return {"name": self.name, "unit": self.unit, "doc": self.doc}


class Reason:
    """A reason code of the game's own, beside the common ones (`too easy`,
    `budget exhausted`, `cap hit`...): its word, status (`rejected` or
    `error`) and meaning. Rejections name it as their code."""

    def __init__(self, word, status, meaning):
        self.word, self.status, self.meaning = word, status, meaning

    def to_json(self):
        return {"word": self.word, "status": self.status, "meaning": self.meaning}


class Rejected(Exception):
    """The seed refused by a rule or budget: a reason code (a common one or
    one of the game's `reasons`) and its particulars. `status="error"` for
    a code of that status."""

    def __init__(self, code, detail="", nodes=0, status="rejected"):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code, self.detail, self.nodes, self.status = code, detail, nodes, status


class Unsolvable(Exception):
    """The level is proven to have no solution."""

    def __init__(self, nodes=0):
        super().__init__("unsolvable")
        self.nodes = nodes


class CheckFailed(Exception):
    """A level that fails `check`, and why."""


class Level:
    """An accepted level. `level` is the game's own form (anything JSON can
    write: its canonical JSON and hash are made here), `layout` its text
    form (ending with a newline, no blank line, no line starting with `;`),
    `solution` the moves as text, `moves` their count. `difficulty` may be
    left out: pregen rates every level with the description's
    `rating_model`. `canonical`: a string equal for levels that are one
    puzzle (its SHA-256 is sent), to drop duplicates; `None` keeps all."""

    def __init__(self, level, layout, solution, moves, metrics=None, optimal=True,
                 canonical=None, nodes=0, difficulty=None):
        self.level, self.layout, self.solution, self.moves = level, layout, solution, moves
        self.metrics = metrics or {}
        self.optimal, self.canonical, self.nodes, self.difficulty = optimal, canonical, nodes, difficulty

    def to_json(self):
        level_json = canonical_json(self.level)
        out = {
            "difficulty": float(self.moves if self.difficulty is None else self.difficulty),
            "moves": int(self.moves),
            "moves_optimal": bool(self.optimal),
            "layout": self.layout,
            "level_json": level_json,
            "solution": self.solution,
            "metrics": {k: float(v) for k, v in self.metrics.items()},
            "level_hash": sha256(level_json),
        }
        if self.canonical is not None:
            out["canonical"] = sha256(self.canonical)
        return out


def canonical_json(value):
    """The canonical JSON of a value: keys sorted, no spaces."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def sha256(text):
    """The SHA-256 of a text's UTF-8 bytes, in lower-case hex."""
    return hashlib.sha256(text.encode()).hexdigest()


def rng(seed):
    """A random stream that depends on the seed alone (Python's Mersenne
    Twister seeded from the exact integer): the same levels on any machine."""
    return random.Random(seed)


_clock = {"start": 0.0, "solving": None, "seed": None}


def solving():
    """Marks where `generate` stops generating and starts solving: the time
    before is the outcome's `generate_ms`, the time after its `solve_ms`."""
    _clock["solving"] = time.perf_counter()


class Game:
    """A game: set the class attributes, write `generate` and `check`."""

    name = None
    version = "0.1.0"
    text_format = None
    params = {}
    metrics = []
    reasons = []
    rating_model = None
    concurrent = False

    def check_params(self, params):
        """Refuse params the game cannot run: raise ValueError (the params'
        keys are already known to be the description's)."""

    def generate(self, seed, params, max_nodes):
        """The level seed `seed` makes under `params` (the defaults filled
        in), solved within `max_nodes`: a `Level`, or raise `Rejected` or
        `Unsolvable`. Must depend on its arguments alone."""
        raise NotImplementedError

    def check(self, params, level):
        """Judge a level someone says these params made, without solving it
        again: raise `CheckFailed` (or return a reason) when it fails.
        `level` is the protocol's level (`level_json`, `layout`, `solution`,
        `moves`, `level_hash`...); `level_of(level)` reads its JSON."""
        raise NotImplementedError

    solve = None
    """Optional: `solve(self, params, text, max_nodes)` reads a level from
    its text form (a layout, as `generate` gives it) and solves it: a
    `Level`, or raise `Rejected` (`Rejected("malformed level", why,
    status="error")` for a text that is not a level) or `Unsolvable`. A game
    that defines it answers `pregen solve --job` and `calibrate`."""

    render = None
    """Optional: `render(self, params, level)` gives the level's SVG picture
    as text (`level` holds `level_json` and `layout`); a game that defines
    it is drawn by its own pictures."""

    # What the module does with them.

    def level_of(self, level):
        """The game's own form of a protocol level, after checking that its
        JSON is canonical and its hash is its hash (else `CheckFailed`)."""
        text = level.get("level_json", "")
        try:
            value = json.loads(text)
        except ValueError as e:
            raise CheckFailed(f"the level JSON does not read: {e}")
        if canonical_json(value) != text:
            raise CheckFailed("the level JSON is not in its canonical form")
        if sha256(text) != level.get("level_hash"):
            raise CheckFailed("the hash is not the level's")
        return value

    def full_params(self, given):
        """`given` over the defaults, after refusing unknown keys and asking
        `check_params`."""
        if not isinstance(given, dict):
            raise ValueError("params are not an object")
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise ValueError(f"unknown params: {', '.join(unknown)}")
        params = dict(self.params, **given)
        self.check_params(params)
        return params

    def description(self):
        d = {
            "protocol": PROTOCOL,
            "name": self.name,
            "version": self.version,
            "text_format": self.text_format or self.name,
            "params": self.params,
            "metrics": [m.to_json() for m in self.metrics],
            "concurrent": bool(self.concurrent),
            "renders": self.render is not None,
        }
        if self.solve is not None:
            d["solves"] = True
        if self.rating_model is not None:
            d["rating_model"] = self.rating_model
        if self.reasons:
            d["reasons"] = [r.to_json() for r in self.reasons]
        return d


def _outcome(make):
    """The outcome of `make()`, which gives a `Level` or raises."""
    started = time.perf_counter()
    _clock["solving"] = None
    status, extra, nodes = "accepted", {}, 0
    try:
        level = make()
        if not isinstance(level, Level):
            raise TypeError(f"the game gave {type(level).__name__}, not a Level")
        extra["level"], nodes = level.to_json(), level.nodes
    except Rejected as r:
        status, nodes = r.status, r.nodes
        extra = {"reason_code": r.code, "reason_detail": r.detail}
    except Unsolvable as u:
        status, nodes = "unsolvable", u.nodes
    except Exception as e:  # the game's own fault: this seed's error
        status = "error"
        extra = {"reason_code": "internal error",
                 "reason_detail": f"{type(e).__name__}: {e}"[:1000]}
        traceback.print_exc(file=sys.stderr)
    ended = time.perf_counter()
    split = _clock["solving"] or ended
    return dict(status=status, generate_ms=round((split - started) * 1e3, 3),
                solve_ms=round((ended - split) * 1e3, 3), nodes=int(nodes), **extra)


def _answer(game, request):
    if not isinstance(request, dict):
        return {"error": "not a request"}
    if "describe" in request:
        asked = request["describe"].get("protocol")
        if asked != PROTOCOL:
            return {"error": f"this game speaks protocol {PROTOCOL}, not {asked}"}
        return {"describe": game.description()}
    if "generate" in request:
        g = request["generate"]
        seed, params = int(g["seed"]), game.full_params(g.get("params", {}))
        _clock["seed"] = seed
        try:
            return {"outcome": _outcome(lambda: game.generate(seed, params, g.get("max_nodes", 0)))}
        finally:
            _clock["seed"] = None
    if "solve" in request and game.solve is not None:
        r = request["solve"]
        params = game.full_params(r.get("params", {}))
        return {"outcome": _outcome(lambda: game.solve(params, r["text"], r.get("max_nodes", 0)))}
    if "check" in request:
        c = request["check"]
        try:
            why = game.check(game.full_params(c.get("params", {})), c["level"]) or ""
        except (CheckFailed, ValueError) as e:
            why = str(e) or type(e).__name__
        return {"check": {"ok": not why, "reason": why}}
    if "prepare" in request:
        try:
            game.full_params(request["prepare"].get("params", {}))
            return {"prepare": {"ok": True}}
        except ValueError as e:
            return {"prepare": {"ok": False, "reason": str(e)}}
    if "render" in request and game.render is not None:
        r = request["render"]
        return {"render": {"svg": game.render(game.full_params(r.get("params", {})),
                                              {"level_json": r["level_json"], "layout": r.get("layout", "")})}}
    return {"error": "unknown request"}


def _lines(fd, flush):
    """The lines of `fd` as they come; `flush` runs whenever no whole line
    is waiting, before the read that may block."""
    pending = b""
    start = 0  # where the next line begins in `pending`
    while True:
        cut = pending.find(b"\n", start)
        while cut < 0:
            flush()
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                if pending[start:].strip():
                    yield pending[start:]
                return
            pending = pending[start:] + chunk
            start = 0
            cut = pending.find(b"\n")
        yield pending[start:cut]
        start = cut + 1


def serve(game, stdin=None, stdout=None):
    """Answers requests from stdin on stdout until stdin ends, or until
    pregen stops reading (then quietly: nothing is left to answer).

    The protocol keeps the process's stdout to itself: from here on,
    `print`, `sys.stdout` and whatever writes to file descriptor 1 (a C
    library, a child process) go to stderr, each line the game writes while
    it makes a seed marked `[seed N]`, so that a stray line can never be
    read as an answer."""
    if stdout is None:
        stdout = _protocol or _keep_stdout()
    try:
        _serve(game, stdin, stdout)
    except BrokenPipeError:
        # The interpreter's own flush of the protocol's stream at exit would
        # fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())


def _keep_stdout():
    """The protocol's own stream: a copy of file descriptor 1, which then
    becomes stderr, with `sys.stdout` and `sys.stderr` marking each line
    with the seed being made."""
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        sys.stdout.flush()  # what was printed before, now to stderr
    except (OSError, ValueError):
        pass
    sys.stdout = _Marked(sys.stdout)
    sys.stderr = _Marked(sys.stderr)
    return protocol


class _Marked:
    """A text stream whose lines written while a seed is made start with
    `[seed N] ` (pregen logs them with that seed)."""

    def __init__(self, stream):
        self._stream = stream
        self._at_start = True

    def write(self, text):
        seed = _clock["seed"]
        if seed is None or not text:
            self._at_start = text.endswith("\n") if text else self._at_start
            return self._stream.write(text)
        mark = f"[seed {seed}] "
        lines = text.split("\n")
        out = []
        for i, line in enumerate(lines):
            if line and (i > 0 or self._at_start):
                line = mark + line
            out.append(line)
        self._at_start = text.endswith("\n")
        self._stream.write("\n".join(out))
        return len(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


# Under pregen (which sets PREGEN_GAME_PROTOCOL), the protocol takes stdout
# as soon as this module is imported: what the game prints before `serve`
# goes to stderr too.
_protocol = _keep_stdout() if os.environ.get("PREGEN_GAME_PROTOCOL") else None


# pregen times each answer from the one before it (its watchdog), so an
# answer is written before the game starts on the next request, unless it
# took under QUICK seconds to make and the answers held with it are under
# HOLD seconds old: a fast game's answers go out a few at a time, a slow
# game's each at once.
QUICK = 0.001
HOLD = 0.005


def _serve(game, stdin, stdout):
    fd = (stdin or sys.stdin).fileno()
    out = stdout or sys.stdout.buffer
    waiting = []
    held_since = 0.0  # when the oldest waiting answer was begun

    def flush():
        if waiting:
            out.write(b"".join(waiting))
            out.flush()
            waiting.clear()

    for line in _lines(fd, flush):
        if not line.strip():
            continue
        began = time.perf_counter()
        request = None
        try:
            request = json.loads(line)
            response = _answer(game, request)
        except Exception as e:  # a broken request, or the game's fault: its error
            response = {"error": f"{type(e).__name__}: {e}"[:1000]}
        response["id"] = request.get("id", 0) if isinstance(request, dict) else 0
        if not waiting:
            held_since = began
        waiting.append(json.dumps(response, separators=(",", ":")).encode() + b"\n")
        now = time.perf_counter()
        if now - began >= QUICK or now - held_since >= HOLD:
            flush()
    flush()
