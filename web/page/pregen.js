// pregen's games in the browser: a small API over pregen_web.wasm
// (docs/web.md). A classic script: it defines `Pregen`.
//
//   const pregen = await Pregen.load("pregen_web.wasm");   // or Pregen.loadSync
//   pregen.regenerate(seedFileText)          // {levels: [...], matching}
//   pregen.regenerate(seedFileText, ["7"])   // only these seeds
//   pregen.level("tilt", params, "7", maxNodes)
//   pregen.check("tilt", levelJson, solution) // {ok, reason}
//   pregen.play("tilt", levelJson, moves)     // {text, svg, won} or {error}
//   pregen.picture("tilt", layout, title)     // {svg}
//
// Seeds may be given as strings of digits, which stay exact past 2^53
// (where JavaScript's numbers round); answers carry `seed_text` beside
// `seed` for the same reason.
"use strict";

var Pregen = (function () {
  // Reads a file as bytes or text, from a server or (with Chromium's
  // --allow-file-access-from-files) from disk.
  function get(url, type) {
    return new Promise(function (resolve, reject) {
      var x = new XMLHttpRequest();
      x.open("GET", url);
      x.responseType = type;
      x.onload = function () {
        if (x.status === 0 || x.status === 200) resolve(x.response);
        else reject(new Error(url + ": HTTP " + x.status));
      };
      x.onerror = function () { reject(new Error("cannot read " + url)); };
      x.send();
    });
  }

  function Api(instance) {
    var exports = instance.exports;
    var encoder = new TextEncoder();
    var decoder = new TextDecoder();
    // One JSON request in, one JSON answer out (web/src/lib.rs).
    function request(body) {
      var bytes = encoder.encode(JSON.stringify(body));
      var ptr = exports.pregen_alloc(bytes.length);
      new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
      var len = exports.pregen_request(ptr, bytes.length);
      var at = exports.pregen_answer();
      return JSON.parse(decoder.decode(new Uint8Array(exports.memory.buffer, at, len)));
    }
    this.request = request;
    this.regenerate = function (seedFile, seeds) {
      return request({ op: "regenerate", seed_file: seedFile, seeds: seeds });
    };
    this.level = function (game, params, seed, maxNodes) {
      return request({ op: "level", game: game, params: params, seed: seed, max_nodes: maxNodes });
    };
    this.check = function (game, levelJson, solution) {
      return request({ op: "check", game: game, level_json: levelJson, solution: solution });
    };
    this.play = function (game, levelJson, moves) {
      return request({ op: "play", game: game, level_json: levelJson, moves: moves });
    };
    this.picture = function (game, layout, title) {
      return request({ op: "picture", game: game, layout: layout, title: title || "" });
    };
  }

  // The same, at once (a synchronous request: for measuring, and for
  // headless browsers that read the page when it has loaded).
  function getSync(url, binary) {
    var x = new XMLHttpRequest();
    x.open("GET", url, false);
    if (binary) x.overrideMimeType("text/plain; charset=x-user-defined");
    x.send();
    if (x.status !== 0 && x.status !== 200) throw new Error(url + ": HTTP " + x.status);
    if (!binary) return x.responseText;
    var text = x.responseText, bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 255;
    return bytes;
  }

  return {
    get: get,
    getSync: getSync,
    load: function (url) {
      return get(url, "arraybuffer")
        .then(function (bytes) { return WebAssembly.instantiate(bytes, {}); })
        .then(function (made) { return new Api(made.instance); });
    },
    loadSync: function (url) {
      return new Api(new WebAssembly.Instance(new WebAssembly.Module(getSync(url, true)), {}));
    },
    // `load` and `get`, or with `?sync=1` in the page's address their
    // synchronous forms: the page is done when it has loaded.
    // The seed file must come from the page's own origin (a page served
    // from a release folder reads that release): one from elsewhere is
    // refused, so the page never vouches for a file it was pointed at.
    open: function (wasm, file) {
      var url = new URL(file, location.href);
      if (url.protocol !== location.protocol || url.origin !== location.origin) {
        return Promise.reject(new Error("the seed file must come from this page's own origin (" +
          (location.protocol === "file:" ? "this computer's files" : location.origin) +
          "), not " + url.href));
      }
      file = url.href;
      if (new URLSearchParams(location.search).get("sync") === "1") {
        try {
          return Promise.resolve([this.loadSync(wasm), getSync(file, false)]);
        } catch (e) {
          return Promise.reject(e);
        }
      }
      return Promise.all([this.load(wasm), get(file, "text")]);
    },
  };
})();
