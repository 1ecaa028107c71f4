#!/usr/bin/env node
'use strict';
/**
 * Lights Out, a game program for pregen's game protocol (docs/external.md),
 * in Node.js on the Node SDK (`pregen_game.js`, beside it: the protocol is
 * the SDK's, the game is here).
 *
 * A square of lights; pressing one toggles it and its four neighbours; the
 * player turns every light off. The generator presses cells of a dark board
 * at random from the seed; the solver finds the fewest presses exactly, by
 * Gaussian elimination over GF(2) and every choice of the free presses; the
 * check replays a solution under the rules.
 *
 *     node lightsout.js        # speak the protocol on stdin and stdout
 */

const pg = require('./pregen_game');

const LETTERS = 'abcdefgh';

/** The cells a press of cell `i` toggles. */
function toggled(size, i) {
  const r = Math.floor(i / size), c = i % size;
  const out = [i];
  if (r > 0) out.push(i - size);
  if (r < size - 1) out.push(i + size);
  if (c > 0) out.push(i - 1);
  if (c < size - 1) out.push(i + 1);
  return out;
}

/** The board (an array of 0 and 1) after pressing `presses` on `board`. */
function pressAll(size, board, presses) {
  const out = board.slice();
  for (const p of presses) for (const t of toggled(size, p)) out[t] ^= 1;
  return out;
}

/**
 * The fewest presses that turn `board` dark (cell indexes, ascending), the
 * number of solutions, and the choices of free presses tried; `null` when
 * no press set does.
 */
function solve(size, board) {
  const n = size * size;
  // One equation per cell: which presses toggle it, and whether it is lit.
  const rows = [];
  for (let cell = 0; cell < n; cell++) {
    let mask = 0n;
    for (const p of toggled(size, cell)) mask |= 1n << BigInt(p);
    rows.push({ mask, lit: board[cell] });
  }
  const pivots = [];
  let rank = 0;
  for (let col = 0; col < n && rank < n; col++) {
    const bit = 1n << BigInt(col);
    const at = rows.findIndex((row, k) => k >= rank && (row.mask & bit) !== 0n);
    if (at < 0) continue;
    [rows[rank], rows[at]] = [rows[at], rows[rank]];
    for (let k = 0; k < n; k++) {
      if (k !== rank && (rows[k].mask & bit) !== 0n) {
        rows[k] = { mask: rows[k].mask ^ rows[rank].mask, lit: rows[k].lit ^ rows[rank].lit };
      }
    }
    pivots.push(col);
    rank++;
  }
  if (rows.slice(rank).some((row) => row.lit)) return null;
  const free = [];
  for (let col = 0; col < n; col++) if (!pivots.includes(col)) free.push(col);
  let best = null;
  const choices = 1 << free.length;
  for (let choice = 0; choice < choices; choice++) {
    const x = new Array(n).fill(0);
    free.forEach((col, j) => { x[col] = (choice >> j) & 1; });
    pivots.forEach((col, k) => {
      let v = rows[k].lit;
      for (const f of free) if (x[f] && (rows[k].mask & (1n << BigInt(f))) !== 0n) v ^= 1;
      x[col] = v;
    });
    const presses = [];
    x.forEach((v, i) => { if (v) presses.push(i); });
    if (best === null || presses.length < best.length) best = presses;
  }
  return { presses: best, solutions: choices, tried: choices };
}

const cellName = (size, i) => `${LETTERS[i % size]}${Math.floor(i / size) + 1}`;

function layout(size, board) {
  let text = '';
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) text += board[r * size + c] ? '#' : '.';
    text += '\n';
  }
  return text;
}

/** The board of a level's own form, `{size, lit: ["01..", ...]}`, checked. */
function boardOf(value) {
  const { size, lit } = value;
  if (!Number.isInteger(size) || !Array.isArray(lit) || lit.length !== size) {
    throw new pg.CheckFailed('the level is not a Lights Out board');
  }
  const board = [];
  for (const row of lit) {
    if (typeof row !== 'string' || !new RegExp(`^[01]{${size}}$`).test(row)) {
      throw new pg.CheckFailed('a row of the board is not its lights');
    }
    for (const ch of row) board.push(ch === '1' ? 1 : 0);
  }
  return board;
}

const game = {
  name: 'lightsout',
  version: '1.0.0',
  textFormat: 'lightsout',
  params: { size: 5, presses: 8, min_moves: 4 },
  metrics: [
    pg.metric('lit', 'count', 'lights on at the start'),
    pg.metric('solutions', 'count', 'press sets that turn the board dark'),
  ],
  reasons: [pg.reason('dark', 'rejected', "the scramble's presses cancelled out: no light is on")],
  // The rating model as a JSON object (TOML text is the other form).
  ratingModel: {
    name: 'lightsout-default',
    version: 1,
    game: 'lightsout',
    about: 'fewest presses, plus a tenth of a point per light on',
    terms: [
      { feature: 'moves', weight: 1.0, about: 'fewest presses that turn every light off' },
      { feature: 'lit', weight: 0.1, about: 'lights on at the start' },
    ],
  },

  checkParams({ size, presses, min_moves: minMoves }) {
    if (!Number.isInteger(size) || size < 3 || size > 8) throw new Error('size must be 3..=8');
    if (!Number.isInteger(presses) || presses < 1 || presses > size * size) {
      throw new Error('presses must be 1..=size*size');
    }
    if (!Number.isInteger(minMoves) || minMoves < 0) throw new Error('min_moves must be 0 or more');
  },

  generate(seed, { size, presses, min_moves: minMoves }) {
    const rng = pg.rng(seed);
    const scramble = [];
    for (let k = 0; k < presses; k++) scramble.push(rng.below(size * size));
    const board = pressAll(size, new Array(size * size).fill(0), scramble);
    const lit = board.reduce((a, b) => a + b, 0);
    if (lit === 0) throw new pg.Rejected('dark', `${presses} presses cancelled out`);
    pg.solving();
    const solved = solve(size, board);
    if (solved === null) throw new pg.Unsolvable();
    const moves = solved.presses.length;
    if (moves < minMoves) {
      throw new pg.Rejected('too easy', `${moves} moves < min_moves ${minMoves}`, { nodes: solved.tried });
    }
    const rows = [];
    for (let r = 0; r < size; r++) rows.push(board.slice(r * size, (r + 1) * size).join(''));
    return pg.level({
      level: { size, lit: rows },
      layout: layout(size, board),
      solution: solved.presses.map((i) => cellName(size, i)).join(' '),
      moves,
      metrics: { lit, solutions: solved.solutions },
      nodes: solved.tried,
    });
  },

  solve(params, text) {
    const rows = text.split('\n').filter((r) => r);
    const size = rows.length;
    const malformed = (why) => new pg.Rejected('malformed level', why, { status: 'error' });
    if (size < 3 || size > 8 || rows.some((r) => !new RegExp(`^[#.]{${size}}$`).test(r))) {
      throw malformed('not a square of 3 to 8 rows of `#` and `.`');
    }
    const board = [];
    for (const row of rows) for (const ch of row) board.push(ch === '#' ? 1 : 0);
    pg.solving();
    const solved = solve(size, board);
    if (solved === null) throw new pg.Unsolvable();
    return pg.level({
      level: { size, lit: rows.map((r) => r.replace(/#/g, '1').replace(/\./g, '0')) },
      layout: layout(size, board),
      solution: solved.presses.map((i) => cellName(size, i)).join(' '),
      moves: solved.presses.length,
      metrics: { lit: board.reduce((a, b) => a + b, 0), solutions: solved.solutions },
      nodes: solved.tried,
    });
  },

  check({ size }, level) {
    const value = pg.levelOf(level);
    const board = boardOf(value);
    if (value.size !== size) return `a board of ${value.size}, the params say ${size}`;
    if (layout(size, board) !== level.layout) return "the layout is not the level's";
    const tokens = level.solution.split(' ').filter((t) => t);
    const presses = [];
    for (const t of tokens) {
      const c = LETTERS.indexOf(t[0]), r = Number(t.slice(1)) - 1;
      if (c < 0 || c >= size || !Number.isInteger(r) || r < 0 || r >= size) return `\`${t}\` is not a cell`;
      presses.push(r * size + c);
    }
    if (pressAll(size, board, presses).some((v) => v)) return 'a light is still on';
    if (presses.length !== level.moves) return `the solution has ${presses.length} moves, the level says ${level.moves}`;
    return '';
  },
};

module.exports = game;

if (require.main === module) pg.serve(game);
