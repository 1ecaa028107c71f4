'use strict';
/**
 * pregen's game protocol for Node.js: one file, Node's own modules only.
 *
 * Copy this file beside your game, describe the game in an object with
 * `generate` and `check` (and, if you draw your levels, `render`), and call
 * `serve(game)`: it speaks the protocol on stdin and stdout
 * (docs/external.md).
 *
 *     const pg = require('./pregen_game');
 *     pg.serve({
 *       name: 'coins', version: '1.0.0', textFormat: 'coins',
 *       params: { size: 4, min_moves: 2 },
 *       metrics: [pg.metric('states', 'count', 'positions searched')],
 *       reasons: [pg.reason('no coin', 'rejected', 'the seed placed no coin')],
 *       checkParams(params) { if (params.size < 2) throw new Error('size must be 2 or more'); },
 *       generate(seed, params, maxNodes) {      // seed: a BigInt, exact
 *         const rng = pg.rng(seed);
 *         ...
 *         if (!board) throw new pg.Rejected('no coin', 'a board of 0 coins');
 *         pg.solving();                         // the rest is solve_ms
 *         ...
 *         return pg.level({ level: board, layout, solution, moves, metrics, nodes });
 *       },
 *       check(params, level) { ... },           // throw new pg.CheckFailed('why')
 *       // optional: solve(params, text, maxNodes), a level read from its
 *       // text form and solved (for `pregen solve --job` and `calibrate`);
 *       // render(params, level), its SVG picture.
 *     });
 *
 * What this module does for you: reads requests as they come and answers
 * each in order with its id, writing a fast game's answers a few at a time
 * (at most 64, written once the first held has waited 5 ms; a quick answer
 * may wait while the next is made) and a slow game's (1 ms or more an
 * answer) each at once, nothing left in a buffer; ends quietly when pregen stops
 * reading; reads every seed from the line's own digits into a
 * BigInt, since `JSON.parse` rounds numbers above 2^53; writes the level's
 * canonical JSON (keys sorted) and its SHA-256; times `generate` (split at
 * `solving()`); turns `Rejected`, `Unsolvable` and a thrown error into the
 * outcome the protocol names; answers `prepare` from the params' keys and
 * `checkParams`; answers an unknown request or a broken line with `error`
 * and goes on; keeps stdout to the protocol (from its loading, when pregen
 * runs it), sending the game's `console.log` and `process.stdout.write` to
 * stderr, each line written while a seed is made marked `[seed N] `.
 */

const crypto = require('crypto');
const { performance } = require('perf_hooks');

const PROTOCOL = 1;

/** Answers written to stdout in one write, at most. */
const ANSWERS_A_WRITE = 64;
/** An answer that took this long to make (ms) is written at once. */
const QUICK_MS = 1;
/** The longest an answer is held to be written with later ones (ms). */
const HOLD_MS = 5;

/** A key of a level's `metrics`: name, unit (`count`, `share`, `flag`...) and meaning. */
function metric(name, unit, doc) {
  return { name, unit, doc };
}

/** A reason code of the game's own: word, status (`rejected` or `error`) and meaning. */
function reason(word, status, meaning) {
  return { word, status, meaning };
}

/** The seed refused by a rule or budget: a reason code and its particulars. */
class Rejected extends Error {
  constructor(code, detail = '', { nodes = 0, status = 'rejected' } = {}) {
    super(detail ? `${code}: ${detail}` : code);
    this.code = code;
    this.detail = detail;
    this.nodes = nodes;
    this.status = status;
  }
}

/** The level is proven to have no solution. */
class Unsolvable extends Error {
  constructor({ nodes = 0 } = {}) {
    super('unsolvable');
    this.nodes = nodes;
  }
}

/** A level that fails `check`, and why. */
class CheckFailed extends Error {}

/** The canonical JSON of a value: object keys sorted, no spaces. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}

/** The SHA-256 of a text's UTF-8 bytes, in lower-case hex. */
function sha256(text) {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * A random stream that depends on the seed alone (a BigInt or a safe
 * integer): SplitMix64 from the exact 64-bit seed, the same numbers on any
 * machine.
 */
function rng(seed) {
  const M = 0xffffffffffffffffn;
  let state = BigInt.asUintN(64, BigInt(seed));
  const next64 = () => {
    state = (state + 0x9e3779b97f4a7c15n) & M;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
    return z ^ (z >> 31n);
  };
  const u32 = () => Number(next64() >> 32n);
  return {
    /** 32 random bits. */
    u32,
    /** A float in [0, 1). */
    random: () => u32() / 4294967296,
    /** An integer in [0, n), n at most 2^32. */
    below: (n) => Math.floor((u32() / 4294967296) * n),
  };
}

/**
 * An accepted level: `level` the game's own form (its canonical JSON and
 * hash are made here), `layout` its text form (ending with a newline, no
 * blank line, no line starting with `;`), `solution` the moves as text,
 * `moves` their count. `canonical`: a string equal for levels that are one
 * puzzle (its SHA-256 is sent), to drop duplicates.
 */
function level({ level, layout, solution, moves, metrics = {}, optimal = true, canonical, nodes = 0, difficulty }) {
  const levelJson = canonicalJson(level);
  const out = {
    difficulty: difficulty === undefined ? moves : difficulty,
    moves,
    moves_optimal: optimal,
    layout,
    level_json: levelJson,
    solution,
    metrics: Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, Number(v)])),
    level_hash: sha256(levelJson),
  };
  if (canonical !== undefined && canonical !== null) out.canonical = sha256(canonical);
  return { level: out, nodes };
}

const clock = { solving: null, seed: null };

/** Marks where `generate` stops generating and starts solving. */
function solving() {
  clock.solving = performance.now();
}

/** The game's own form of a protocol level, its JSON canonical and its hash its hash (else `CheckFailed`). */
function levelOf(level) {
  let value;
  try {
    value = JSON.parse(level.level_json);
  } catch (e) {
    throw new CheckFailed(`the level JSON does not read: ${e.message}`);
  }
  if (canonicalJson(value) !== level.level_json) throw new CheckFailed('the level JSON is not in its canonical form');
  if (sha256(level.level_json) !== level.level_hash) throw new CheckFailed("the hash is not the level's");
  return value;
}

function fullParams(game, given) {
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw new Error('params are not an object');
  const defaults = game.params || {};
  const unknown = Object.keys(given).filter((k) => !(k in defaults)).sort();
  if (unknown.length) throw new Error(`unknown params: ${unknown.join(', ')}`);
  const params = { ...defaults, ...given };
  if (game.checkParams) game.checkParams(params);
  return params;
}

function description(game) {
  const d = {
    protocol: PROTOCOL,
    name: game.name,
    version: game.version || '0.1.0',
    text_format: game.textFormat || game.name,
    params: game.params || {},
    metrics: game.metrics || [],
    concurrent: false,
    renders: typeof game.render === 'function',
  };
  if (typeof game.solve === 'function') d.solves = true;
  if (game.ratingModel !== undefined) d.rating_model = game.ratingModel;
  if (game.reasons && game.reasons.length) d.reasons = game.reasons;
  return d;
}

const ms = (from, to) => Math.round((to - from) * 1e3) / 1e3;

/** The outcome of `make()`, which gives a `pg.level(...)` or throws. */
function outcome(make) {
  const started = performance.now();
  clock.solving = null;
  let body;
  try {
    const made = make();
    if (!made || !made.level) throw new TypeError('the game gave no pg.level(...)');
    body = { status: 'accepted', level: made.level, nodes: made.nodes };
  } catch (e) {
    if (e instanceof Rejected) {
      body = { status: e.status, reason_code: e.code, reason_detail: e.detail, nodes: e.nodes };
    } else if (e instanceof Unsolvable) {
      body = { status: 'unsolvable', nodes: e.nodes };
    } else {
      process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
      body = { status: 'error', reason_code: 'internal error', reason_detail: String(e).slice(0, 1000), nodes: 0 };
    }
  }
  const ended = performance.now();
  const split = clock.solving || ended;
  body.generate_ms = ms(started, split);
  body.solve_ms = ms(split, ended);
  return body;
}

/**
 * The seed of a generate request `g` (`line` its text), exact: a seed
 * `JSON.parse` read exactly (below 2^53) as it is; a larger one from the
 * line's own digits, those whose number `JSON.parse` read (so a `"seed"`
 * key elsewhere in the line, in the params, is never taken for it).
 */
function exactSeed(g, line) {
  const read = g.seed;
  if (Number.isSafeInteger(read) && read >= 0) return BigInt(read);
  if (typeof read !== 'number' || !Number.isInteger(read) || read < 0) {
    throw new Error('a generate request without a seed (a whole number, 0 or more)');
  }
  for (const found of line.matchAll(/"seed"\s*:\s*(\d+)/g)) {
    const digits = BigInt(found[1]);
    if (Number(digits) === read) return digits;
  }
  throw new Error('a generate request whose seed cannot be read exactly');
}

function answer(game, request, line) {
  if (request === null || typeof request !== 'object') return { error: 'not a request' };
  if (request.describe) {
    const asked = request.describe.protocol;
    if (asked !== PROTOCOL) return { error: `this game speaks protocol ${PROTOCOL}, not ${asked}` };
    return { describe: description(game) };
  }
  if (request.generate) {
    const g = request.generate;
    const seed = exactSeed(g, line);
    const params = fullParams(game, g.params || {});
    clock.seed = seed;
    try {
      return { outcome: outcome(() => game.generate(seed, params, g.max_nodes || 0)) };
    } finally {
      clock.seed = null;
    }
  }
  if (request.solve && typeof game.solve === 'function') {
    const r = request.solve;
    const params = fullParams(game, r.params || {});
    return { outcome: outcome(() => game.solve(params, r.text, r.max_nodes || 0)) };
  }
  if (request.check) {
    let why;
    try {
      why = game.check(fullParams(game, request.check.params || {}), request.check.level) || '';
    } catch (e) {
      if (!(e instanceof CheckFailed) && !(e instanceof Error)) throw e;
      why = e.message || 'refused';
    }
    return { check: { ok: !why, reason: why } };
  }
  if (request.prepare) {
    try {
      fullParams(game, request.prepare.params || {});
      return { prepare: { ok: true } };
    } catch (e) {
      return { prepare: { ok: false, reason: e.message } };
    }
  }
  if (request.render && typeof game.render === 'function') {
    const r = request.render;
    return { render: { svg: game.render(fullParams(game, r.params || {}), { level_json: r.level_json, layout: r.layout || '' }) } };
  }
  return { error: 'unknown request' };
}

/**
 * What the game writes to stdout (`console.log`, `process.stdout.write`)
 * goes to stderr, each line written while a seed is made starting with
 * `[seed N] ` (pregen logs it with that seed): the protocol keeps stdout to
 * itself, so a stray line is never read as an answer. Gives the write to
 * the protocol's own stream.
 */
function keepStdout() {
  const protocol = process.stdout.write.bind(process.stdout);
  const marked = (stream) => {
    const write = stream.write.bind(stream);
    let atStart = true;
    return (chunk, encoding, done) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      let out = text;
      if (clock.seed !== null && text) {
        const mark = `[seed ${clock.seed}] `;
        out = text.split('\n').map((line, i) => (line && (i > 0 || atStart) ? mark + line : line)).join('\n');
      }
      if (text) atStart = text.endsWith('\n');
      return write(out, typeof encoding === 'function' ? encoding : done);
    };
  };
  process.stdout.write = marked(process.stderr);
  process.stderr.write = marked(process.stderr);
  return protocol;
}

// Under pregen (which sets PREGEN_GAME_PROTOCOL), the protocol takes stdout
// as soon as this module is loaded: what the game logs before `serve` goes
// to stderr too.
let protocolWrite = process.env.PREGEN_GAME_PROTOCOL ? keepStdout() : null;

/** Answers requests from stdin on stdout until stdin ends. */
function serve(game) {
  const send = protocolWrite || (protocolWrite = keepStdout());
  let pending = '';
  const handle = (line) => {
    let request = null;
    let response;
    try {
      request = JSON.parse(line);
      response = answer(game, request, line);
    } catch (e) {
      response = { error: String(e).slice(0, 1000) };
    }
    response.id = request && typeof request === 'object' && Number.isInteger(request.id) ? request.id : 0;
    return JSON.stringify(response) + '\n';
  };
  // pregen times each answer from the one before it (its watchdog), so an
  // answer is written before the game starts on the next request, unless
  // it took under QUICK_MS to make and the answers held with it are under
  // HOLD_MS old and fewer than ANSWERS_A_WRITE: a fast game's answers go
  // out a few at a time, a slow game's each at once. (Answers held longer
  // would also sit in memory, where the collector copies them again and
  // again beside the game's own work.)
  const take = (final) => {
    let start = 0;
    let out = '';
    let count = 0;
    let heldSince = 0;
    const answer = (line) => {
      const began = performance.now();
      if (!count) heldSince = began;
      out += handle(line);
      count++;
      const now = performance.now();
      if (now - began >= QUICK_MS || now - heldSince >= HOLD_MS || count === ANSWERS_A_WRITE) {
        send(out);
        out = '';
        count = 0;
      }
    };
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n', start)) {
      const line = pending.slice(start, end);
      start = end + 1;
      if (line.trim()) answer(line);
    }
    pending = pending.slice(start);
    if (final && pending.trim()) answer(pending);
    if (out) send(out);
  };
  // pregen gone (it stopped reading): nothing is left to answer.
  process.stdout.on('error', (e) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(0);
  });
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    take(false);
  });
  process.stdin.on('end', () => take(true));
}

module.exports = {
  PROTOCOL, metric, reason, Rejected, Unsolvable, CheckFailed, canonicalJson, sha256, rng, level,
  solving, levelOf, serve,
};
