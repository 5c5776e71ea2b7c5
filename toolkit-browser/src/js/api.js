// The object the page script installs (part of the page script, see
// core.js): `run(method, args)` and the methods it dispatches to.

  // ---------- the entry points ----------

  function extract(args) {
    return EXTRACT(Object.assign({}, args, { observe }));
  }

  function textVersion() {
    // Changes not yet delivered to the observer count too.
    if (observer.takeRecords().length) changes += 1;
    return { version: DOC_ID + ':' + changes + ':' + location.href };
  }

  const methods = {
    walk, frameBox, elementInfo, clickPoint, focusField, readField, scroll, pageInfo,
    dropdownOptions, selectOption, fileInput, fileNames, findText, mask, unmask, extract,
    textVersion, shownCount, busy,
  };

  const api = {
    version: VERSION,
    // The file input of element `index`, as a node for DOM.setFileInputFiles.
    fileNode(index) {
      const found = resolve(index);
      return found ? fileInputOf(found[0]) : null;
    },
    // The custom elements the last walk found that may hide a closed
    // shadow root, for DOM.describeNode; each is handed out once.
    takeHosts() {
      const hosts = pendingHosts;
      pendingHosts = [];
      for (const h of hosts) checkedHosts.add(h);
      return hosts;
    },
    // A closed shadow root DevTools found on `host` (DOM.resolveNode).
    adoptRoot(host, root) {
      if (root && root.nodeType === 11 && root.host === host) closedRoots.set(host, root);
      return true;
    },
    // The frame element `index`, as a node for DOM.describeNode.
    frameNode(index) {
      const found = resolve(index);
      return found ? found[0] : null;
    },
    run(method, args) {
      frameGeom = (args && args.frame) || null;
      SLACK = (args && args.slack) || 0;
      try {
        return JSON.stringify({ ok: methods[method](args) }, wellFormed);
      } catch (e) {
        return JSON.stringify({ err: String((e && e.message) || e) });
      }
    },
  };
  Object.defineProperty(window, KEY, { value: api, configurable: true, enumerable: false, writable: false });
  return api;
})
