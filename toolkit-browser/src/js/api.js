// The object the page script installs (a module of the page script, see
// install.js): `run(method, args)` and the methods it dispatches to.
(function api(VERSION, EXTRACT, core, map, input, forms, text, masking) {
  'use strict';
  const { call, observe, textVersion, wellFormed, adoptRoot, resolve } = core;
  const { walk, busy, frameBox, takeHosts } = map;
  const {
    elementInfo, clickPoint, focusField, readField, scroll, shownCount, pageInfo, submitted,
  } = input;
  const { dropdownOptions, selectOption, fileInput, fileNames, fileInputOf } = forms;
  const { findText } = text;
  const { mask, unmask } = masking;

  // ---------- the entry points ----------

  function extract(args) {
    return EXTRACT(Object.assign({}, args, { observe }));
  }

  const methods = {
    walk, frameBox, elementInfo, clickPoint, focusField, readField, scroll, pageInfo,
    dropdownOptions, selectOption, fileInput, fileNames, findText, mask, unmask, extract,
    textVersion, shownCount, busy, submitted,
  };

  return {
    version: VERSION,
    // The file input of element `index`, as a node for DOM.setFileInputFiles.
    fileNode(index) {
      const found = resolve(index);
      return found ? fileInputOf(found[0]) : null;
    },
    // The custom elements the last walk found that may hide a closed
    // shadow root, for DOM.describeNode; each is handed out once.
    takeHosts,
    adoptRoot,
    // The frame element `index`, as a node for DOM.describeNode.
    frameNode(index) {
      const found = resolve(index);
      return found ? found[0] : null;
    },
    run(method, args) {
      call.frame = (args && args.frame) || null;
      call.slack = (args && args.slack) || 0;
      try {
        return JSON.stringify({ ok: methods[method](args) }, wellFormed);
      } catch (e) {
        return JSON.stringify({ err: String((e && e.message) || e) });
      }
    },
  };
})
