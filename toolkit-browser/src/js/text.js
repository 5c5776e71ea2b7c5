// Finding a text on the page (a module of the page script, see
// install.js).
(function text(core) {
  'use strict';
  const { call, SKIP_TEXT, collapse } = core;

  // ---------- text search ----------

  // Visible text nodes in document order, through open shadow roots (in
  // their composed order, slots included) and same-origin frames.
  function textNodes(maxChars) {
    const out = [];
    let total = 0;
    const seen = new Set();
    function shown(el) {
      if (!el) return true;
      let v = seen.has(el);
      if (!v) {
        if (!el.checkVisibility({ checkVisibilityCSS: true })) return false;
        seen.add(el);
        v = true;
      }
      return v;
    }
    function visit(node) {
      if (total > maxChars) return;
      if (node.nodeType === 3) {
        const p = node.parentElement;
        // White space between elements is kept: it is what separates the
        // words of "<label>User</label> <label>Password</label>".
        if (!(p && SKIP_TEXT.has(p.nodeName)) && shown(p)) {
          out.push(node);
          total += node.data.length;
        }
        return;
      }
      if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
      if (node.nodeType === 1) {
        if (SKIP_TEXT.has(node.nodeName)) return;
        if (node.localName === 'iframe' || node.localName === 'frame') {
          let doc = null;
          try { doc = node.contentDocument; } catch (e) { doc = null; }
          if (doc && doc.body) visit(doc.body);
          return;
        }
        if (node.localName === 'slot') {
          const assigned = node.assignedNodes({ flatten: true });
          if (assigned.length) {
            for (const a of assigned) visit(a);
            return;
          }
        }
        if (node.shadowRoot) {
          visit(node.shadowRoot);
          return;
        }
      }
      for (let c = node.firstChild; c; c = c.nextSibling) visit(c);
    }
    visit(document.body || document.documentElement);
    return out;
  }

  function isInline(el, cache) {
    if (!el) return true;
    let v = cache.get(el);
    if (v === undefined) {
      const d = el.ownerDocument.defaultView.getComputedStyle(el).display;
      v = d === 'inline' || d === 'contents';
      cache.set(el, v);
    }
    return v;
  }

  // Scrolls to the first occurrence of `text` (case and runs of white
  // space ignored) and says how many there are.
  function findText(args) {
    const needle = collapse(args.text).toLowerCase();
    if (!needle) return { found: 0 };
    const nodes = textNodes(4000000);
    // The page's text as one string, white space collapsed, with where
    // each character came from.
    let hay = '';
    let orig = '';
    const mapNode = [];
    const mapOff = [];
    const display = new Map();
    let lastParent = null;
    let pendingSpace = false;
    for (let k = 0; k < nodes.length; k++) {
      const n = nodes[k];
      const p = n.parentElement;
      if (lastParent && p !== lastParent && (!isInline(p, display) || !isInline(lastParent, display))) {
        pendingSpace = true;
      }
      lastParent = p;
      const data = n.data;
      for (let i = 0; i < data.length; i++) {
        const ch = data[i];
        const code = data.charCodeAt(i);
        const space = code < 128 ? (code === 32 || (code >= 9 && code <= 13)) : /\s/.test(ch);
        if (space) {
          pendingSpace = true;
          continue;
        }
        if (pendingSpace && hay.length) {
          hay += ' ';
          orig += ' ';
          mapNode.push(k);
          mapOff.push(i);
        }
        pendingSpace = false;
        const low = ch.toLowerCase();
        hay += low.length === 1 ? low : ch;
        orig += ch;
        mapNode.push(k);
        mapOff.push(i);
      }
    }
    const hits = [];
    for (let at = hay.indexOf(needle); at !== -1 && hits.length < 1000; at = hay.indexOf(needle, at + 1)) {
      hits.push(at);
    }
    if (!hits.length) return { found: 0 };
    // The Rust side redacts the three parts of a window together, then
    // cuts the context to 60 characters on each side.
    const reach = 60 + call.slack + 1;
    const windowAt = (at) => ({
      before: orig.slice(Math.max(0, at - reach), at),
      hit: orig.slice(at, at + needle.length),
      after: orig.slice(at + needle.length, at + needle.length + reach),
    });
    // With secrets in the policy, every occurrence is sent back first,
    // unscrolled: the Rust side leaves out those that touch a secret (a
    // count of them would tell the text of a secret piece by piece), then
    // picks one (`pick`, the index among all).
    if (args.survey) return { found: hits.length, windows: hits.map(windowAt) };
    const which = args.pick !== undefined && args.pick !== null ?
      Math.min(Math.max(args.pick, 0), hits.length - 1) :
      Math.min(Math.max((args.nth || 1) - 1, 0), hits.length - 1);
    const at = hits[which];
    const end = at + needle.length - 1;
    const startNode = nodes[mapNode[at]];
    const endNode = nodes[mapNode[end]];
    const target = startNode.parentElement;
    if (target) target.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    const range = startNode.ownerDocument.createRange();
    range.setStart(startNode, mapOff[at]);
    range.setEnd(endNode, mapOff[end] + 1);
    const r = range.getBoundingClientRect();
    return Object.assign(
      { found: hits.length, nth: which + 1, y: Math.round(r.top), scroll: Math.round(window.scrollY) },
      windowAt(at),
    );
  }

  return {
    findText, textNodes,
  };
})
