// The page-side half of toolkit-browser: the page map walker and the
// element lookups that actions use. Evaluated as an expression, it is a
// function that installs (once per document) a non-enumerable
// `window.__toolkitBrowser` object and returns it. It runs in an isolated
// world of its own (see `Session::world`): the page's scripts share the DOM
// but can neither see this object nor tamper with the built-ins it uses.
// Every entry point is called through `run(method, args)`, which returns a
// JSON string: either `{"ok": result}` or `{"err": message}`, so exceptions
// never escape as protocol errors and the Rust side parses one shape.
//
// Element numbers: a WeakMap element -> number and a Map number ->
// WeakRef(element). A number is given once and never reused; it stays with
// its element for as long as the element exists (even while it is hidden or
// scrolled away), and a number whose element is gone, disconnected, or in a
// frame that is gone is stale. The Rust side passes `base`, the next number
// of the whole session, so numbers are unique across documents and tabs: a
// number from the previous page can never name an element of this one.
//
// `EXTRACT` is the markdown converter of `markdown.js`, passed in by the
// Rust side so that each file stays about one thing.
(function install(VERSION, EXTRACT) {
  'use strict';
  const KEY = '__toolkitBrowser';
  const existing = window[KEY];
  if (existing && existing.version === VERSION) return existing;

  const state = {
    next: 1,
    byEl: new WeakMap(),
    byIndex: new Map(),
    walks: 0,
  };

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

  function cut(s, max) {
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

  function deepElementFromPoint(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
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

  // A frame context: the document and where its viewport sits in the
  // top-level viewport (`ox`, `oy`), plus the visible clip of the frame in
  // top-level coordinates.
  function topCtx(expand) {
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    return {
      doc: document, win: window, frameEl: null, parent: null,
      ox: 0, oy: 0, lx: 0, ly: 0, vw, vh,
      clip: { left: 0, top: -expand, right: vw, bottom: vh + expand },
      view: { left: 0, top: 0, right: vw, bottom: vh },
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
    const r = frameEl.getBoundingClientRect();
    const cs = ctx.win.getComputedStyle(frameEl);
    const lx = r.left + frameEl.clientLeft + (parseFloat(cs.paddingLeft) || 0);
    const ly = r.top + frameEl.clientTop + (parseFloat(cs.paddingTop) || 0);
    const ox = ctx.ox + lx;
    const oy = ctx.oy + ly;
    const vw = win.innerWidth;
    const vh = win.innerHeight;
    const box = { left: ox, top: oy, right: ox + vw, bottom: oy + vh };
    return {
      doc, win, frameEl, parent: ctx, ox, oy, lx, ly, vw, vh,
      clip: intersect(ctx.clip, { left: box.left, top: box.top - expand, right: box.right, bottom: box.bottom + expand }),
      view: intersect(ctx.view, box),
    };
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
    const known = state.byEl.get(el);
    if (known !== undefined) return [known, false];
    const n = state.next++;
    state.byEl.set(el, n);
    state.byIndex.set(n, new WeakRef(el));
    return [n, true];
  }

  function resolve(index) {
    const ref = state.byIndex.get(index);
    const el = ref && ref.deref();
    if (!el || !el.isConnected) return null;
    const ctx = ctxOf(el, 0);
    return ctx ? [el, ctx] : null;
  }

  // Forgets numbers whose element has been garbage-collected, so the map
  // does not grow with every element a long-lived page ever showed.
  function prune() {
    for (const [n, ref] of state.byIndex) {
      if (!ref.deref()) state.byIndex.delete(n);
    }
  }

  // ---------- what is interactive ----------

  // `el.onclick` is per world: a handler the page assigned as a property is
  // invisible from this isolated world (attributes are not); the cursor
  // heuristic catches most of those.
  function hasClickAttr(el) {
    return el.hasAttribute('onclick') || el.hasAttribute('onmousedown') ||
      el.hasAttribute('onmouseup') || typeof el.onclick === 'function';
  }

  // Why `el` is interactive, or '' when it is not. The cursor heuristic,
  // which needs the parent's facts, is applied by the walk.
  function interactive(el, tag) {
    switch (tag) {
      case 'a':
        if (el.hasAttribute('href')) return 'tag';
        break;
      case 'button': case 'select': case 'textarea': case 'summary':
        return 'tag';
      case 'input':
        return el.type === 'hidden' ? '' : 'tag';
      case 'details':
        // Without a <summary> the browser draws a "Details" toggle.
        return el.querySelector(':scope > summary') ? '' : 'tag';
      case 'option':
        // Options of a <select> are reached through the select.
        if (el.closest('select, datalist')) return '';
        break;
      case 'label': {
        // A custom-styled checkbox: the real input is invisible, the label
        // is what a person clicks.
        const c = el.control;
        if (c && c.localName === 'input' &&
          !c.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return 'label';
        break;
      }
      default:
        break;
    }
    const role = el.getAttribute('role');
    if (role && ROLES.has(role.trim().split(/\s+/)[0].toLowerCase())) return 'role';
    if (hasClickAttr(el)) return 'onclick';
    if (el.hasAttribute('tabindex') && el.tabIndex >= 0) return 'tabindex';
    if (el.isContentEditable) {
      const p = parentOf(el);
      if (!p || !p.isContentEditable) return 'editable';
    }
    return '';
  }

  // ---------- description ----------

  function accessibleName(el, tag) {
    const doc = el.getRootNode();
    const ids = el.getAttribute('aria-labelledby');
    if (ids && doc.getElementById) {
      const s = ids.split(/\s+/).map((id) => doc.getElementById(id))
        .filter(Boolean).map((n) => shortText(n, 80)).join(' ').trim();
      if (s) return s;
    }
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return collapse(aria);
    if (el.labels && el.labels.length) {
      const s = Array.from(el.labels).map((l) => shortText(l, 80)).join(' ').trim();
      if (s) return s;
    }
    if (tag === 'input' && (el.type === 'submit' || el.type === 'button' || el.type === 'reset')) {
      if (el.value) return collapse(el.value);
    }
    if (tag === 'input' && el.type === 'image' && el.alt) return collapse(el.alt);
    if (tag === 'a' || tag === 'button' || tag === 'summary' || el.hasAttribute('role')) {
      const t = shortText(el, 80);
      if (t) return t;
      const img = el.querySelector('img[alt], [aria-label], svg title');
      if (img) {
        const s = img.getAttribute('alt') || img.getAttribute('aria-label') || img.textContent;
        if (s && s.trim()) return collapse(s);
      }
    }
    const title = el.getAttribute('title');
    if (title && title.trim()) return collapse(title);
    return '';
  }

  function valueOf(el, tag) {
    if (tag === 'select') {
      return Array.from(el.selectedOptions || []).map((o) => collapse(o.text)).join(', ');
    }
    if (tag === 'textarea') return el.value;
    if (tag === 'input') {
      const t = el.type;
      if (t === 'checkbox' || t === 'radio' || t === 'file' || t === 'submit' ||
        t === 'button' || t === 'reset' || t === 'image') {
        if (t === 'file' && el.files && el.files.length) {
          return Array.from(el.files).map((f) => f.name).join(', ');
        }
        return null;
      }
      if (t === 'password') return el.value ? '\u2022'.repeat(Math.min(el.value.length, 12)) : '';
      return el.value;
    }
    if (el.isContentEditable) return shortText(el, 200);
    const v = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
    return v === null ? null : v;
  }

  function triState(v) {
    if (v === null || v === undefined) return null;
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    return null;
  }

  function describe(el, ctx, n, fresh, maxText, rect) {
    const tag = el.localName;
    const d = { i: n, tag };
    const role = el.getAttribute('role');
    if (role) d.role = role.trim().split(/\s+/)[0];
    const name = accessibleName(el, tag);
    if (name) d.name = cut(name, maxText);
    if (tag === 'input') d.type = el.type;
    const fieldName = el.getAttribute('name');
    if (fieldName && (tag === 'input' || tag === 'select' || tag === 'textarea' || tag === 'button')) {
      d.field = cut(fieldName, 40);
    }
    if (tag === 'a') {
      const href = el.getAttribute('href');
      if (href !== null) d.href = cut(href, maxText);
      const target = el.getAttribute('target');
      if (target) d.target = target;
    }
    const ph = el.getAttribute('placeholder');
    if (ph) d.placeholder = cut(collapse(ph), maxText);
    const value = valueOf(el, tag);
    if (value !== null && value !== undefined) d.value = cut(value, maxText * 2);
    if (tag !== 'input' && tag !== 'select' && tag !== 'textarea' && !el.isContentEditable) {
      const t = shortText(el, maxText);
      if (t) d.text = t;
    }
    if (tag === 'label' && el.control) {
      d.checked = el.control.checked;
    } else if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      d.checked = el.checked;
    } else {
      const c = triState(el.getAttribute('aria-checked'));
      if (c !== null) d.checked = c;
    }
    const sel = triState(el.getAttribute('aria-selected'));
    if (sel !== null) d.selected = sel;
    let exp = triState(el.getAttribute('aria-expanded'));
    if (exp === null && tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
      exp = el.parentElement.open;
    }
    if (tag === 'details') exp = el.open;
    if (exp !== null) d.expanded = exp;
    if (el.disabled === true || el.getAttribute('aria-disabled') === 'true') d.disabled = true;
    if (fresh) d.new = true;
    if (ctx && ctx.frameEl) d.frame = true;
    if (el.getRootNode() instanceof ShadowRoot) d.shadow = true;
    if (rect) {
      d.x = Math.round(rect.left + ctx.ox);
      d.y = Math.round(rect.top + ctx.oy);
      d.w = Math.round(rect.width);
      d.h = Math.round(rect.height);
    }
    return d;
  }

  function scrollState(el, d) {
    d.sa = Math.round(el.scrollTop);
    d.sb = Math.max(0, Math.round(el.scrollHeight - el.clientHeight - el.scrollTop));
  }

  // ---------- visibility and hit testing ----------

  function visibleBox(el) {
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return null;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) return r;
    // An inline wrapper of blocks can have an empty box of its own while its
    // fragments are visible.
    for (const cr of el.getClientRects()) {
      if (cr.width > 0 && cr.height > 0) return cr;
    }
    return null;
  }

  // Whether a hit at `hit` reaches `el`: the element itself, something inside
  // it, an ancestor (the element lets clicks through, so the click lands
  // where a person's would), or a label of it.
  function hitReaches(el, hit) {
    if (!hit) return false;
    if (composedContains(el, hit) || composedContains(hit, el)) return true;
    const label = hit.closest && hit.closest('label');
    return !!(label && label.control === el);
  }

  // Hit-tests `el` at the point (x, y) of its own frame's viewport, and
  // each enclosing frame element at the same point in its parent. Returns
  // null when the point reaches the element, else what is hit instead.
  function occluder(el, ctx, x, y) {
    const hit = deepElementFromPoint(ctx.doc, x, y);
    if (!hitReaches(el, hit)) return hit || ctx.doc.documentElement;
    if (ctx.frameEl) return occluder(ctx.frameEl, ctx.parent, x + ctx.lx, y + ctx.ly);
    return null;
  }

  // Candidate points (frame coordinates) inside the visible part of the
  // element's fragments: the centre of each fragment, then the centre of
  // its quarters.
  function candidatePoints(el, ctx, clip) {
    const view = clip ? intersect(ctx.view, clip) : ctx.view;
    const centres = [];
    const others = [];
    for (const cr of Array.from(el.getClientRects()).slice(0, 4)) {
      const r = intersect(
        { left: cr.left + ctx.ox, top: cr.top + ctx.oy, right: cr.right + ctx.ox, bottom: cr.bottom + ctx.oy },
        view);
      const w = r.right - r.left;
      const h = r.bottom - r.top;
      if (w < 1 || h < 1) continue;
      // Centres first: the most likely to reach the element, and where a
      // person clicks; the quarter points catch partly covered elements.
      centres.push([r.left + w / 2, r.top + h / 2]);
      others.push([r.left + w / 4, r.top + h / 4], [r.left + (3 * w) / 4, r.top + (3 * h) / 4],
        [r.left + w / 4, r.top + (3 * h) / 4], [r.left + (3 * w) / 4, r.top + h / 4]);
    }
    return centres.concat(others).map(([x, y]) => [x - ctx.ox, y - ctx.oy]);
  }

  // ---------- the walk ----------

  function toTop(r, ctx) {
    return { left: r.left + ctx.ox, top: r.top + ctx.oy, right: r.right + ctx.ox, bottom: r.bottom + ctx.oy };
  }

  function isEmpty(r) {
    return r.right - r.left < 1 || r.bottom - r.top < 1;
  }

  function overlaps(a, b) {
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }

  // The clip of the nearest ancestors that hide their overflow, in
  // top-level coordinates, computed on first use: most clipping elements
  // hold nothing interactive.
  function clipRect(src) {
    if (!src) return null;
    if (src.rect === undefined) {
      const own = toTop(src.el.getBoundingClientRect(), src.ctx);
      const outer = clipRect(src.parent);
      src.rect = outer ? intersect(own, outer) : own;
    }
    return src.rect;
  }

  // The walk runs in two passes. The first visits every element (open
  // shadow roots and same-origin frames included) and notes the interactive
  // ones, the positioned elements that could cover them, and which
  // ancestors clip them. The second keeps the candidates that are visible,
  // inside the (extended) viewport and not clipped away, and hit-tests only
  // those a positioned element overlaps: `elementFromPoint` costs about
  // 0.1 ms, too much to spend on each of a thousand elements, and in normal
  // flow nothing else can cover an element.
  function walk(opts) {
    const started = performance.now();
    const expand = opts.expand;
    const maxText = opts.maxText;
    const maxElements = opts.maxElements;
    state.next = Math.max(state.next, opts.base);
    const firstWalk = state.walks === 0;
    state.walks += 1;
    prune();

    const candidates = [];
    const positioned = [];
    let crossOriginFrames = 0;
    // Per-walk facts about each visited element, for its descendants:
    // inside an interactive element, showing a pointer cursor, and the
    // clipping ancestors.
    const info = new Map();

    function visit(root, ctx) {
      const all = root.querySelectorAll('*');
      for (let k = 0; k < all.length; k++) {
        const el = all[k];
        const tag = el.localName;
        const parent = parentOf(el);
        const pinfo = parent ? info.get(parent) : undefined;
        const cs = ctx.win.getComputedStyle(el);
        let why = interactive(el, tag);
        let pointer = !!(pinfo && pinfo.pointer);
        if (!why && !(pinfo && pinfo.inside)) {
          // Script-driven controls (a <div> with a click listener) usually
          // show a pointer cursor; count the outermost such element only,
          // since the cursor is inherited by everything inside.
          pointer = cs.cursor === 'pointer';
          if (pointer && !(pinfo && pinfo.pointer)) why = 'cursor';
        }
        const position = cs.position;
        // A fixed element escapes its ancestors' clips.
        const clip = position === 'fixed' ? null : (pinfo ? pinfo.clip : null);
        let childClip = clip;
        if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
          childClip = { el, ctx, parent: clip, rect: undefined };
        }
        info.set(el, { inside: !!why || !!(pinfo && pinfo.inside), pointer, clip: childClip });

        // A scroll container holding no visible control would leave the
        // model no number to scroll it by; it gets one of its own.
        let scroller = false;
        if (tag !== 'textarea' && tag !== 'select' && (cs.overflowY === 'auto' || cs.overflowY === 'scroll') &&
          el !== ctx.doc.scrollingElement && el !== ctx.doc.body && el.scrollHeight > el.clientHeight + 1) {
          scroller = true;
          if (!why) why = 'scroll';
        }
        if (why) candidates.push({ el, ctx, clip, scroller });
        if ((position === 'fixed' || position === 'sticky' || position === 'absolute' ||
          (position === 'relative' && cs.zIndex !== 'auto')) && cs.pointerEvents !== 'none') {
          positioned.push({ el, ctx });
        }
        if (el.shadowRoot) visit(el.shadowRoot, ctx);
        if (tag === 'iframe' || tag === 'frame') {
          if (!visibleBox(el)) continue;
          const child = childCtx(ctx, el, expand);
          if (child) {
            if (!isEmpty(child.clip)) visit(child.doc, child);
          } else {
            crossOriginFrames += 1;
          }
        }
      }
    }

    visit(document, topCtx(expand));

    const covers = [];
    for (const p of positioned) {
      const box = visibleBox(p.el);
      if (box) covers.push({ el: p.el, rect: toTop(box, p.ctx) });
    }

    function mayBeCovered(el, rect) {
      for (let k = 0; k < covers.length; k++) {
        const c = covers[k];
        if (c.el !== el && overlaps(c.rect, rect) &&
          !composedContains(c.el, el) && !composedContains(el, c.el)) return true;
      }
      return false;
    }

    const out = [];
    let truncated = false;
    for (const c of candidates) {
      if (out.length >= maxElements) {
        truncated = true;
        break;
      }
      const box = visibleBox(c.el);
      if (!box) continue;
      const rect = toTop(box, c.ctx);
      const clip = clipRect(c.clip);
      let shown = intersect(rect, c.ctx.clip);
      if (clip) shown = intersect(shown, clip);
      if (isEmpty(shown)) continue;
      if (mayBeCovered(c.el, shown) && !reachable(c.el, c.ctx, clip)) continue;
      const [n, fresh] = numberOf(c.el);
      const d = describe(c.el, c.ctx, n, fresh && !firstWalk, maxText, box);
      if (c.scroller) scrollState(c.el, d);
      out.push(d);
    }

    // Whether a click in the visible part of the element reaches it. An
    // element entirely in the band beyond the viewport cannot be
    // hit-tested and counts as reachable.
    function reachable(el, ctx, clip) {
      const pts = candidatePoints(el, ctx, clip);
      if (pts.length === 0) return true;
      for (let k = 0; k < pts.length; k++) {
        if (occluder(el, ctx, pts[k][0], pts[k][1]) === null) return true;
      }
      return false;
    }

    const se = document.scrollingElement || document.documentElement;
    return {
      url: location.href,
      title: document.title,
      ready: document.readyState,
      elements: out,
      truncated,
      crossOriginFrames,
      scroll: {
        x: Math.round(window.scrollX),
        y: Math.round(window.scrollY),
        width: se ? se.scrollWidth : 0,
        height: se ? se.scrollHeight : 0,
        vw: window.innerWidth,
        vh: window.innerHeight,
      },
      next: state.next,
      ms: performance.now() - started,
    };
  }

  // ---------- entry points for actions ----------

  function fullyInView(el, ctx) {
    const r = el.getBoundingClientRect();
    const v = ctx.view;
    return r.width > 0 && r.height > 0 &&
      r.left + ctx.ox >= v.left && r.right + ctx.ox <= v.right &&
      r.top + ctx.oy >= v.top && r.bottom + ctx.oy <= v.bottom;
  }

  function bringIntoView(el, ctx) {
    if (fullyInView(el, ctx)) return ctx;
    el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    // Offsets of enclosing frames may have moved with the scroll.
    return ctxOf(el, 0);
  }

  function elementInfo(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const [el, ctx] = found;
    const box = visibleBox(el);
    const d = describe(el, ctx, args.index, false, args.maxText, box);
    if (canScroll(el, ctx.win) && el !== el.ownerDocument.scrollingElement) scrollState(el, d);
    return { el: d, visible: !!box };
  }

  // Scrolls the element into view and finds a point (top-level viewport
  // coordinates) where a click reaches it.
  function clickPoint(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    let [el, ctx] = found;
    const before = describe(el, ctx, args.index, false, args.maxText, null);
    if (!visibleBox(el)) {
      return { el: before, notClickable: 'it is hidden or has no size on the page' };
    }
    ctx = bringIntoView(el, ctx);
    if (!ctx) return { stale: true };
    const pts = candidatePoints(el, ctx);
    if (pts.length === 0) {
      return { el: before, notClickable: 'it is outside the visible part of the page' };
    }
    let blocker = null;
    for (const [x, y] of pts) {
      const o = occluder(el, ctx, x, y);
      if (o === null) {
        return { el: before, x: x + ctx.ox, y: y + ctx.oy, target: el.getAttribute && el.getAttribute('target') };
      }
      if (!blocker) blocker = o;
    }
    return { el: before, notClickable: 'it is covered by ' + shortDesc(blocker) };
  }

  function isTextInput(el) {
    if (el.localName === 'textarea') return true;
    if (el.localName === 'input') return TEXT_INPUTS.has(el.type) || VALUE_INPUTS.has(el.type);
    return el.isContentEditable;
  }

  function editableOf(el) {
    if (isTextInput(el)) return el;
    const roots = [el];
    if (el.shadowRoot) roots.push(el.shadowRoot);
    for (const r of roots) {
      const inner = r.querySelectorAll('input, textarea, [contenteditable]');
      for (const c of inner) {
        if (isTextInput(c)) return c;
      }
    }
    return null;
  }

  function fieldValue(t) {
    if (t.localName === 'input' || t.localName === 'textarea') return t.value;
    return t.innerText;
  }

  function editDesc(el) {
    let s = '<' + el.localName;
    if (el.localName === 'input') s += ' type=' + el.type;
    return s + '>';
  }

  // Focuses the element's text field and selects what `clear` replaces.
  // Value-only inputs (dates, colours, ranges) are set here directly, since
  // typed text does not reach them.
  function focusField(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    let [el, ctx] = found;
    const t = editableOf(el);
    if (!t) return { notEditable: editDesc(el) };
    if (t.disabled) return { notEditable: 'a disabled ' + editDesc(t) };
    if (t.readOnly) return { notEditable: 'a read-only ' + editDesc(t) };
    const desc = describe(el, ctx, args.index, false, args.maxText, null);
    ctx = bringIntoView(t, ctx) || ctx;
    t.focus({ preventScroll: true });
    const before = fieldValue(t);
    if (t.localName === 'input' && VALUE_INPUTS.has(t.type)) {
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
      setter.call(t, args.text);
      t.dispatchEvent(new Event('input', { bubbles: true }));
      t.dispatchEvent(new Event('change', { bubbles: true }));
      return { el: desc, done: true, value: t.value, before };
    }
    if (t.localName === 'input' || t.localName === 'textarea') {
      if (args.clear) {
        t.select();
      } else {
        try {
          const n = t.value.length;
          t.setSelectionRange(n, n);
        } catch (e) {
          // email and number inputs have no selection API; the caret stays.
        }
      }
    } else {
      const sel = t.ownerDocument.getSelection();
      const range = t.ownerDocument.createRange();
      range.selectNodeContents(t);
      if (!args.clear) range.collapse(false);
      sel.removeAllRanges();
      sel.addRange(range);
    }
    return { el: desc, empty: before === '', before };
  }

  function readField(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const t = editableOf(found[0]);
    if (!t) return { stale: true };
    return { value: fieldValue(t) };
  }

  function canScroll(el, win) {
    if (el.scrollHeight <= el.clientHeight + 1) return false;
    const oy = win.getComputedStyle(el).overflowY;
    return oy === 'auto' || oy === 'scroll' || oy === 'overlay';
  }

  function pageScroller() {
    const se = document.scrollingElement || document.documentElement;
    const style = getComputedStyle(document.body || se);
    const rootStyle = getComputedStyle(se);
    if (se.scrollHeight > window.innerHeight + 1 && rootStyle.overflowY !== 'hidden' &&
      style.overflowY !== 'hidden') {
      return null;
    }
    // The document does not scroll (an app shell): the largest visible
    // scrollable element stands in for the page.
    let best = null;
    let bestArea = 0;
    for (const el of document.body ? document.body.querySelectorAll('*') : []) {
      if (!canScroll(el, window)) continue;
      const r = el.getBoundingClientRect();
      const area = Math.max(0, Math.min(r.right, innerWidth) - Math.max(r.left, 0)) *
        Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0));
      if (area > bestArea) {
        best = el;
        bestArea = area;
      }
    }
    return best;
  }

  function scroll(args) {
    let target = null;
    if (args.index !== null && args.index !== undefined) {
      const found = resolve(args.index);
      if (!found) return { stale: true };
      for (let el = found[0]; el; el = parentOf(el)) {
        const win = el.ownerDocument.defaultView;
        if (el === el.ownerDocument.scrollingElement) break;
        if (canScroll(el, win)) {
          target = el;
          break;
        }
      }
    } else {
      target = pageScroller();
    }
    const isPage = target === null;
    const viewport = isPage ? window.innerHeight : target.clientHeight;
    const before = isPage ? window.scrollY : target.scrollTop;
    const dy = args.pages * viewport * (args.down ? 1 : -1);
    if (isPage) {
      window.scrollBy({ top: dy, behavior: 'instant' });
    } else {
      target.scrollBy({ top: dy, behavior: 'instant' });
    }
    const after = isPage ? window.scrollY : target.scrollTop;
    const se = document.scrollingElement || document.documentElement;
    const height = isPage ? se.scrollHeight : target.scrollHeight;
    return {
      container: isPage ? null : shortDesc(target),
      moved: Math.round(after - before),
      above: Math.round(after),
      below: Math.max(0, Math.round(height - viewport - after)),
      viewport: Math.round(viewport),
    };
  }

  function pageInfo() {
    return { url: location.href, title: document.title, ready: document.readyState };
  }

  // ---------- dropdowns ----------

  const OPTION_ROLES = '[role=option],[role=menuitem],[role=menuitemradio],' +
    '[role=menuitemcheckbox],[role=treeitem]';

  function roleOf(el) {
    const r = el.getAttribute && el.getAttribute('role');
    return r ? r.trim().split(/\s+/)[0].toLowerCase() : '';
  }

  // The element an ARIA widget names in `aria-controls` / `aria-owns`.
  function controlled(el) {
    const root = el.getRootNode();
    for (const attr of ['aria-controls', 'aria-owns']) {
      const ids = (el.getAttribute(attr) || '').split(/\s+/).filter(Boolean);
      for (const id of ids) {
        const found = (root.getElementById ? root.getElementById(id) : null) ||
          el.ownerDocument.getElementById(id);
        if (found) return found;
      }
    }
    return null;
  }

  // What a dropdown is made of: a native <select> (the element or one it
  // holds), or an ARIA listbox or menu (the element, the one it controls,
  // or one inside it).
  function dropdownOf(el) {
    const select = el.localName === 'select' ? el
      : (el.localName === 'label' && el.control && el.control.localName === 'select') ? el.control
        : el.querySelector('select');
    if (select) return { select };
    let box = null;
    const role = roleOf(el);
    if (role === 'listbox' || role === 'menu' || role === 'tree') box = el;
    if (!box) box = controlled(el);
    if (!box) box = el.querySelector('[role=listbox],[role=menu],[role=tree]');
    if (!box && (role === 'option' || role === 'menuitem')) box = el.closest('[role=listbox],[role=menu]');
    if (!box) return null;
    return { box, trigger: box === el ? null : el };
  }

  function optionList(dd, maxText) {
    if (dd.select) {
      return Array.from(dd.select.options).map((o) => ({
        text: cut(collapse(o.text), maxText), value: o.value, selected: o.selected,
        disabled: o.disabled || (o.parentElement && o.parentElement.localName === 'optgroup' && o.parentElement.disabled),
        node: o,
      }));
    }
    return Array.from(dd.box.querySelectorAll(OPTION_ROLES)).map((o) => ({
      text: shortText(o, maxText) || collapse(o.getAttribute('aria-label') || ''),
      value: o.getAttribute('data-value') || o.getAttribute('value') || '',
      selected: o.getAttribute('aria-selected') === 'true' || o.getAttribute('aria-checked') === 'true',
      disabled: o.getAttribute('aria-disabled') === 'true',
      node: o,
    }));
  }

  function plainOptions(list) {
    return list.map((o) => ({ text: o.text, value: o.value, selected: o.selected, disabled: !!o.disabled }));
  }

  function dropdownOptions(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const [el, ctx] = found;
    const desc = describe(el, ctx, args.index, false, args.maxText, null);
    const dd = dropdownOf(el);
    if (!dd) return { el: desc, notDropdown: true };
    const list = optionList(dd, args.maxText);
    const expanded = triState(el.getAttribute('aria-expanded'));
    return {
      el: desc, native: !!dd.select, multiple: !!(dd.select && dd.select.multiple),
      options: plainOptions(list), collapsed: expanded === false,
    };
  }

  // Finds the option `wanted` names: its exact text, its value, the same
  // ignoring case, then a unique part of a text.
  function matchOption(list, wanted) {
    const w = collapse(wanted);
    const lw = w.toLowerCase();
    const tries = [
      (o) => o.text === w, (o) => o.value !== '' && o.value === w,
      (o) => o.text.toLowerCase() === lw, (o) => o.value !== '' && o.value.toLowerCase() === lw,
    ];
    for (const t of tries) {
      const hit = list.find(t);
      if (hit) return hit;
    }
    const partial = list.filter((o) => lw && o.text.toLowerCase().includes(lw));
    return partial.length === 1 ? partial[0] : null;
  }

  // Selects an option of a native <select> here (setting the value as the
  // browser's own picker does, then firing `input` and `change`), or
  // numbers an ARIA option so the Rust side clicks it like a person.
  function selectOption(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const [el, ctx] = found;
    state.next = Math.max(state.next, args.base);
    const desc = describe(el, ctx, args.index, false, args.maxText, null);
    const dd = dropdownOf(el);
    if (!dd) return { el: desc, notDropdown: true, next: state.next };
    const list = optionList(dd, args.maxText);
    const hit = matchOption(list, args.wanted);
    if (!hit) return { el: desc, noMatch: true, options: plainOptions(list), next: state.next };
    if (hit.disabled) return { el: desc, disabledOption: hit.text, next: state.next };
    if (dd.select) {
      const s = dd.select;
      if (s.disabled) return { el: desc, disabledSelect: true, next: state.next };
      s.focus({ preventScroll: true });
      if (s.multiple) {
        hit.node.selected = true;
      } else {
        const setter = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'selectedIndex').set;
        setter.call(s, hit.node.index);
      }
      s.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      s.dispatchEvent(new Event('change', { bubbles: true }));
      return {
        el: desc, native: true, text: hit.text, value: hit.value,
        selected: hit.node.selected, next: state.next,
      };
    }
    const [n] = numberOf(hit.node);
    return { el: desc, native: false, text: hit.text, value: hit.value, option: n, next: state.next };
  }

  // ---------- files ----------

  function fileInputOf(el) {
    if (el.localName === 'input') return el.type === 'file' ? el : null;
    if (el.localName === 'label' && el.control) return el.control.type === 'file' ? el.control : null;
    const roots = [el];
    if (el.shadowRoot) roots.push(el.shadowRoot);
    for (const r of roots) {
      const inner = r.querySelector('input[type=file]');
      if (inner) return inner;
    }
    return null;
  }

  function fileInput(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const [el, ctx] = found;
    const desc = describe(el, ctx, args.index, false, args.maxText, null);
    const input = fileInputOf(el);
    if (!input) return { el: desc, notFile: editDesc(el) };
    if (input.disabled) return { el: desc, notFile: 'a disabled ' + editDesc(input) };
    return { el: desc, multiple: input.multiple, accept: input.accept || null };
  }

  function fileNames(args) {
    const found = resolve(args.index);
    const input = found && fileInputOf(found[0]);
    if (!input) return { stale: true };
    return { names: Array.from(input.files || []).map((f) => f.name) };
  }

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
    const which = Math.min(Math.max((args.nth || 1) - 1, 0), hits.length - 1);
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
    const before = orig.slice(Math.max(0, at - 60), at);
    const after = orig.slice(end + 1, end + 61);
    return {
      found: hits.length, nth: which + 1, y: Math.round(r.top),
      context: (at > 60 ? '\u2026' : '') + before + orig.slice(at, end + 1) + after +
        (end + 61 < orig.length ? '\u2026' : ''),
      scroll: Math.round(window.scrollY),
    };
  }

  // ---------- secrets in screenshots ----------

  const masked = [];

  // Makes text fields and elements that hold one of `values` draw bullets
  // (`-webkit-text-security`) until `unmask`, so a screenshot shows no
  // secret. Password fields already do.
  function mask(args) {
    const values = args.values.filter(Boolean);
    if (!values.length) return { masked: 0 };
    const holds = (s) => typeof s === 'string' && values.some((v) => s.includes(v));
    const targets = new Set();
    function visitFields(root) {
      for (const f of root.querySelectorAll('input, textarea')) {
        if (holds(f.value)) targets.add(f);
      }
      for (const host of root.querySelectorAll('*')) {
        if (host.shadowRoot) visitFields(host.shadowRoot);
        if (host.localName === 'iframe' || host.localName === 'frame') {
          let doc = null;
          try { doc = host.contentDocument; } catch (e) { doc = null; }
          if (doc) visitFields(doc);
        }
      }
    }
    visitFields(document);
    for (const n of textNodes(4000000)) {
      if (holds(n.data) && n.parentElement) targets.add(n.parentElement);
    }
    for (const el of targets) {
      masked.push([el, el.style.getPropertyValue('-webkit-text-security'),
        el.style.getPropertyPriority('-webkit-text-security')]);
      el.style.setProperty('-webkit-text-security', 'disc', 'important');
    }
    return { masked: targets.size };
  }

  function unmask() {
    while (masked.length) {
      const [el, value, priority] = masked.pop();
      if (value) el.style.setProperty('-webkit-text-security', value, priority);
      else el.style.removeProperty('-webkit-text-security');
    }
    return { masked: 0 };
  }

  function extract(args) {
    return EXTRACT(args);
  }

  const methods = {
    walk, elementInfo, clickPoint, focusField, readField, scroll, pageInfo,
    dropdownOptions, selectOption, fileInput, fileNames, findText, mask, unmask, extract,
  };

  const api = {
    version: VERSION,
    // The file input of element `index`, as a node for DOM.setFileInputFiles.
    fileNode(index) {
      const found = resolve(index);
      return found ? fileInputOf(found[0]) : null;
    },
    run(method, args) {
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
