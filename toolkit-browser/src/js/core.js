// What the other modules of the page script share (see install.js):
// element numbers, changes seen in the document, frame contexts, shadow
// roots and small helpers.
//
// Element numbers: a WeakMap element -> number and a Map number ->
// WeakRef(element). A number is given once and never reused; it stays with
// its element for as long as the element exists (even while it is hidden or
// scrolled away), and a number whose element is gone, disconnected, or in a
// frame that is gone is stale. The Rust side passes `base`, the next number
// of the whole session, so numbers are unique across documents and tabs: a
// number from the previous page can never name an element of this one.
(function core() {
  'use strict';

  const numbering = {
    next: 1,
    byEl: new WeakMap(),
    byIndex: new Map(),
    walks: 0,
    limit: Infinity,
  };

  // What the page's text is a version of: this document (an id drawn at
  // install; a new document gets a new copy of the script) and how many
  // changes were seen in it, its shadow roots and frames since. Reading a
  // long page part by part converts it once per version.
  const DOC_ID = Math.random().toString(36).slice(2);
  let changes = 0;
  // When the DOM last changed (the page map waits for a short quiet
  // spell, see `busy` in map.js); the script's installation counts as no
  // change.
  let lastChange = -Infinity;
  const observer = new MutationObserver(() => {
    changes += 1;
    lastChange = performance.now();
  });
  const observed = new WeakSet();
  function observe(root) {
    if (!root || observed.has(root)) return;
    observed.add(root);
    observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  }
  observe(document);

  // How long the DOM has been quiet at `now` (changes not yet delivered to
  // the observer count too).
  function quietFor(now) {
    if (observer.takeRecords().length) {
      changes += 1;
      lastChange = now;
    }
    return now - lastChange;
  }

  // The version of the page's text (see `DOC_ID`), for `textVersion`.
  function textVersion() {
    // Changes not yet delivered to the observer count too.
    if (observer.takeRecords().length) changes += 1;
    return { version: DOC_ID + ':' + changes + ':' + location.href };
  }

  const ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'switch', 'combobox', 'textbox', 'searchbox',
    'slider', 'spinbutton', 'listbox', 'treeitem',
  ]);
  const TEXT_INPUTS = new Set([
    'text', 'search', 'url', 'tel', 'email', 'password', 'number', '',
  ]);
  const VALUE_INPUTS = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range']);
  const SKIP_TEXT = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);

  // ---------- small helpers ----------

  function collapse(s) {
    return s.replace(/\s+/g, ' ').trim();
  }

  // What the current call was given, set by `run` for every call:
  // `slack`, how much later than asked texts are cut (with secrets in the
  // policy, the Rust side redacts a text before it cuts it to its real
  // limit, and needs every secret that starts before the limit whole), and
  // `frame`, where this document sits in the tab when it is a frame from
  // another site (see `topCtx`). One object shared by the modules, so that
  // what `run` sets is what they read.
  const call = { slack: 0, frame: null };

  function cut(s, max) {
    max += call.slack;
    if (s.length <= max) return s;
    let end = max - 1;
    // Never between the two halves of a surrogate pair (an emoji).
    const c = s.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end -= 1;
    return s.slice(0, end).trimEnd() + '\u2026';
  }

  // Strings as the page holds them may contain lone surrogates, which JSON
  // parsers (serde_json) reject: they become U+FFFD.
  function wellFormed(key, value) {
    return typeof value === 'string' ? value.toWellFormed() : value;
  }

  // The first `max` characters of an element's text, without reading all of
  // it: a container's textContent can be the whole page.
  function shortText(el, max) {
    const doc = el.ownerDocument;
    const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let out = '';
    let lastParent = null;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const p = n.parentNode;
      if (p && SKIP_TEXT.has(p.nodeName)) continue;
      // Text of different elements ("<div>a</div><div>b</div>") is
      // separated; the collapse below removes doubled spaces.
      if (p !== lastParent && out) out += ' ';
      lastParent = p;
      out += n.data;
      if (out.length > max * 3) break;
    }
    return cut(collapse(out), max);
  }

  function parentOf(el) {
    if (el.parentElement) return el.parentElement;
    const p = el.parentNode;
    return p && p.host ? p.host : null;
  }

  // Whether `inner` is `outer` or inside it, crossing shadow boundaries.
  function composedContains(outer, inner) {
    for (let n = inner; n; n = n.parentNode || n.host) {
      if (n === outer) return true;
    }
    return false;
  }

  // Closed shadow roots, which page scripts (this one included) cannot
  // reach from their host: the Rust side finds them through DevTools and
  // hands each in (`adoptRoot`), host -> root.
  const closedRoots = new WeakMap();

  // A closed shadow root DevTools found on `host` (DOM.resolveNode); true
  // for the caller to see it ran.
  function adoptRoot(host, root) {
    if (root && root.nodeType === 11 && root.host === host) closedRoots.set(host, root);
    return true;
  }

  // The element's shadow root, open or closed (once handed in).
  function shadowOf(el) {
    return el.shadowRoot || closedRoots.get(el) || null;
  }

  function deepElementFromPoint(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    while (hit && shadowOf(hit)) {
      const inner = shadowOf(hit).elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  function shortDesc(el) {
    if (!el || !el.tagName) return 'another element';
    let s = '<' + el.localName;
    if (el.id) s += ' id=' + cut(el.id, 30);
    const cls = typeof el.className === 'string' ? collapse(el.className) : '';
    if (cls) s += ' class="' + cut(cls, 40) + '"';
    s += '>';
    const t = shortText(el, 40);
    if (t) s += ' ' + t;
    return s;
  }

  // ---------- frames ----------

  // `call.frame`: where this document's viewport sits in the tab's
  // viewport when the document is a frame from another site, which the
  // Rust side reaches through a DevTools session of its own (see
  // `page/frames.rs`): `ox`, `oy`, the part of the frame the map covers
  // (`clip`, the band beyond the viewport included) and the part on screen
  // (`view`), all in the tab's coordinates, and the rectangles of the
  // parent pages' elements that cover the frame (`covers`); null in the
  // tab's own document.

  // A frame context: the document and where its viewport sits in the
  // top-level viewport (`ox`, `oy`), plus the visible clip of the frame in
  // top-level coordinates.
  function topCtx(expand) {
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const g = call.frame;
    const ox = g ? g.ox : 0;
    const oy = g ? g.oy : 0;
    let clip = { left: ox, top: oy - expand, right: ox + vw, bottom: oy + vh + expand };
    let view = { left: ox, top: oy, right: ox + vw, bottom: oy + vh };
    if (g) {
      clip = intersect(clip, g.clip);
      view = intersect(view, g.view);
    }
    return {
      doc: document, win: window, frameEl: null, parent: null,
      ox, oy, lx: 0, ly: 0, vw, vh, clip, view, covers: g ? g.covers || [] : [],
    };
  }

  function intersect(a, b) {
    return {
      left: Math.max(a.left, b.left), top: Math.max(a.top, b.top),
      right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom),
    };
  }

  function childCtx(ctx, frameEl, expand) {
    let doc = null;
    try {
      doc = frameEl.contentDocument;
    } catch (e) {
      doc = null;
    }
    if (!doc || !doc.documentElement) return null;
    const win = doc.defaultView;
    if (!win) return null;
    const [lx, ly] = frameOrigin(frameEl, ctx);
    const ox = ctx.ox + lx;
    const oy = ctx.oy + ly;
    const vw = win.innerWidth;
    const vh = win.innerHeight;
    const box = { left: ox, top: oy, right: ox + vw, bottom: oy + vh };
    return {
      doc, win, frameEl, parent: ctx, ox, oy, lx, ly, vw, vh,
      clip: intersect(ctx.clip, { left: box.left, top: box.top - expand, right: box.right, bottom: box.bottom + expand }),
      view: intersect(ctx.view, box),
      covers: ctx.covers,
    };
  }

  // Where a frame element's content (its document's viewport) starts, in
  // the coordinates of the frame element's own viewport.
  function frameOrigin(frameEl, ctx) {
    const r = frameEl.getBoundingClientRect();
    const cs = ctx.win.getComputedStyle(frameEl);
    return [
      r.left + frameEl.clientLeft + (parseFloat(cs.paddingLeft) || 0),
      r.top + frameEl.clientTop + (parseFloat(cs.paddingTop) || 0),
    ];
  }

  // The context of an element's frame, or null when the element's frame is
  // gone or not reachable from the top document.
  function ctxOf(el, expand) {
    const chain = [];
    let win = el.ownerDocument && el.ownerDocument.defaultView;
    while (win && win !== window) {
      let fe = null;
      try {
        fe = win.frameElement;
      } catch (e) {
        return null;
      }
      if (!fe || !fe.isConnected) return null;
      chain.unshift(fe);
      win = fe.ownerDocument.defaultView;
    }
    if (win !== window) return null;
    let ctx = topCtx(expand);
    for (const fe of chain) {
      ctx = childCtx(ctx, fe, expand);
      if (!ctx) return null;
    }
    return ctx;
  }

  // ---------- numbers ----------

  // An element keeps its number while it lives, even if it is removed and
  // put back (React reorders nodes this way): only the element itself,
  // through the WeakMap, leads to its number.
  function numberOf(el) {
    const known = numbering.byEl.get(el);
    if (known !== undefined) return [known, false];
    // A walk told to number within a range (frames walked at once) stops
    // numbering at its end.
    if (numbering.next >= numbering.limit) return null;
    const n = numbering.next++;
    numbering.byEl.set(el, n);
    numbering.byIndex.set(n, new WeakRef(el));
    return [n, true];
  }

  function resolve(index) {
    const ref = numbering.byIndex.get(index);
    const el = ref && ref.deref();
    if (!el || !el.isConnected) return null;
    const ctx = ctxOf(el, 0);
    return ctx ? [el, ctx] : null;
  }

  // Forgets numbers whose element has been garbage-collected, so the map
  // does not grow with every element a long-lived page ever showed.
  function prune() {
    for (const [n, ref] of numbering.byIndex) {
      if (!ref.deref()) numbering.byIndex.delete(n);
    }
  }

  return {
    numbering, call, observe, quietFor, textVersion,
    ROLES, TEXT_INPUTS, VALUE_INPUTS, SKIP_TEXT,
    collapse, cut, wellFormed, shortText, parentOf, composedContains,
    adoptRoot, shadowOf, deepElementFromPoint, shortDesc,
    topCtx, intersect, childCtx, frameOrigin, ctxOf,
    numberOf, resolve, prune,
  };
})
