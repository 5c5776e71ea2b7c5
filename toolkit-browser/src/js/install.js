// The page-side half of toolkit-browser: the page map walker and the
// element lookups that actions use. Evaluated as an expression, this file
// is a function that installs (once per document) a non-enumerable
// `window.__toolkitBrowser` object and returns it. It runs in an isolated
// world of its own (see `Session::world`): the page's scripts share the DOM
// but can neither see this object nor tamper with the built-ins it uses.
// Every entry point is called through `run(method, args)`, which returns a
// JSON string: either `{"ok": result}` or `{"err": message}`, so exceptions
// never escape as protocol errors and the Rust side parses one shape.
//
// The rest of the script is in modules, one file of `js/` each: a file is
// a function expression that takes the modules it uses and returns what it
// gives the others (`(function map(core) { ... return { walk, ... }; })`).
// The Rust side sends them as `modules`, an object of those functions by
// file name (see `browser/session/script.rs`); the lines below call each
// once, in an order where every module comes after the ones it uses, so
// they are the whole graph of dependencies between the files and it has
// no cycles. `EXTRACT` is the markdown converter of `markdown.js`.
(function install(VERSION, EXTRACT, modules) {
  'use strict';
  const KEY = '__toolkitBrowser';
  const existing = window[KEY];
  if (existing && existing.version === VERSION) return existing;

  const core = modules.core();
  const map = modules.map(core);
  const input = modules.input(core, map);
  const forms = modules.forms(core, map, input);
  const text = modules.text(core);
  const masking = modules.mask(text);
  const api = modules.api(VERSION, EXTRACT, core, map, input, forms, text, masking);

  Object.defineProperty(window, KEY, { value: api, configurable: true, enumerable: false, writable: false });
  return api;
})
