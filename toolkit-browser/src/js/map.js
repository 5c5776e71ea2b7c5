// The page map walk (a module of the page script, see install.js): what
// is interactive, how it is described, what is visible and not covered,
// and whether the page is still changing.
(function map(core) {
  'use strict';
  const {
    numbering, call, observe, quietFor, ROLES, SKIP_TEXT, collapse, cut,
    shortText, parentOf, composedContains, shadowOf, deepElementFromPoint,
    shortDesc, topCtx, intersect, childCtx, frameOrigin, numberOf, resolve,
    prune,
  } = core;

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
    // Something the page lets a person drag (a card, a list item).
    if (el.getAttribute('draggable') === 'true') return 'draggable';
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
    if (!name && tag === 'input' && el.type === 'file' && transparentFileBox(el)) {
      const under = coveredText(el, maxText);
      if (under) d.name = under;
    }
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
    if (tag === 'label' && el.control && (el.control.type === 'checkbox' || el.control.type === 'radio')) {
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
    if ((ctx && ctx.frameEl) || call.frame) d.frame = true;
    if (tag === 'select' || SUMMARISED_ROLES.has(roleOf(el))) summariseOptions(el, d);
    if (el.getRootNode() instanceof ShadowRoot) d.shadow = true;
    if (rect) {
      d.x = Math.round(rect.left + ctx.ox);
      d.y = Math.round(rect.top + ctx.oy);
      d.w = Math.round(rect.width);
      d.h = Math.round(rect.height);
    }
    return d;
  }

  // Roles whose options (in a listbox they own or control) are listed in
  // the map, as a <select>'s are.
  const SUMMARISED_ROLES = new Set(['combobox', 'listbox']);
  const SUMMARY_OPTIONS = 8;

  // The first options of a dropdown and how many there are, so the model
  // can choose without asking for them first.
  function summariseOptions(el, d) {
    const dd = dropdownOf(el);
    if (!dd) return;
    const all = dd.select ? dd.select.options
      : dd.box.querySelectorAll(OPTION_ROLES);
    if (!all.length) return;
    const texts = [];
    for (let k = 0; k < all.length && texts.length < SUMMARY_OPTIONS; k++) {
      const o = all[k];
      const t = dd.select ? collapse(o.text) : shortText(o, 40);
      if (t) texts.push(cut(t, 40));
    }
    d.opts = texts;
    d.nopts = all.length;
  }

  function scrollState(el, d) {
    d.sa = Math.round(el.scrollTop);
    d.sb = Math.max(0, Math.round(el.scrollHeight - el.clientHeight - el.scrollTop));
  }

  // ---------- dropdowns and file inputs, as the map sees them ----------

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

  // The box of a file input made transparent (opacity 0) and laid over
  // something a person sees and clicks, or null. Such an input is the
  // upload control of the page: the map lists it, named by the text under
  // it, in place of the box it covers. Inputs hidden the usual way (a
  // pixel in size, clipped away) are reached through their label instead.
  function transparentFileBox(el) {
    if (el.localName !== 'input' || el.type !== 'file' || el.disabled) return null;
    if (!el.checkVisibility({ checkVisibilityCSS: true })) return null;
    if (el.ownerDocument.defaultView.getComputedStyle(el).pointerEvents === 'none') return null;
    const r = el.getBoundingClientRect();
    return r.width >= 8 && r.height >= 8 ? r : null;
  }

  // What a transparent file input is called when nothing names it: the
  // text of the box it lies in.
  function coveredText(el, max) {
    const p = parentOf(el);
    return p && !el.labels.length ? shortText(p, max) : '';
  }

  // ---------- visibility and hit testing ----------

  function visibleBox(el) {
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return null;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) return r;
    const shown = fragments(el);
    return shown.length ? shown[0] : null;
  }

  // At most this many elements inside an empty box are looked at.
  const MAX_INNER = 20;

  // Elements shown only through what is inside them (see `fragments`):
  // reached only by a hit on what is inside, and always hit-tested.
  const hollow = new WeakSet();

  // The boxes `el` shows on the page, at most four. An inline wrapper of
  // blocks has an empty box of its own while its fragments are visible;
  // an element whose content all floats out of it (a link around a
  // floated logo) has none at all, and shows, and takes clicks, where the
  // first shown elements inside it are, unless it clips them. Inside,
  // a box under 2 px or one cut by `clip` or `clip-path` (text kept for
  // screen readers) shows nothing.
  function fragments(el) {
    const own = [];
    for (const cr of el.getClientRects()) {
      if (cr.width > 0 && cr.height > 0 && own.push(cr) === 4) break;
    }
    hollow.delete(el);
    if (own.length || !el.firstElementChild) return own;
    const style = getComputedStyle(el);
    if (style.overflowX !== 'visible' || style.overflowY !== 'visible') return own;
    // Live and lazy: only the elements looked at are found (asking for
    // its length would find them all).
    const inner = el.getElementsByTagName('*');
    for (let k = 0; k < MAX_INNER && own.length < 4; k++) {
      const e = inner[k];
      if (!e) break;
      const r = e.getBoundingClientRect();
      if (r.width < 2 || r.height < 2) continue;
      if (!e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      const cut = getComputedStyle(e);
      if (cut.clip !== 'auto' || cut.clipPath !== 'none') continue;
      own.push(r);
    }
    if (own.length) hollow.add(el);
    return own;
  }

  // Whether a hit at `hit` reaches `el`: the element itself, something inside
  // it, an ancestor (the element lets clicks through, so the click lands
  // where a person's would), or a label of it.
  function hitReaches(el, hit) {
    if (!hit) return false;
    if (composedContains(el, hit)) return true;
    if (composedContains(hit, el)) return !hollow.has(el);
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
    for (const cr of fragments(el)) {
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

  // ---------- closed shadow roots ----------

  // Custom elements without an open root are looked at once for a closed
  // one (`checkedHosts`); those a walk found unchecked wait in
  // `pendingHosts` for the Rust side to take (`takeHosts`).
  const checkedHosts = new WeakSet();
  let pendingHosts = [];

  // The custom elements the last walk found that may hide a closed shadow
  // root; each is handed out once.
  function takeHosts() {
    const hosts = pendingHosts;
    pendingHosts = [];
    for (const h of hosts) checkedHosts.add(h);
    return hosts;
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

  // Headings (their level) and the elements whose text counts as a short
  // orientation text when it is short enough.
  const HEADINGS = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
  // Longer texts are content, for `extract`, not orientation.
  const SHORT_TEXT = 100;

  // The text of a block of text, without what its interactive elements
  // and its own blocks say (they have lines of their own).
  function ownText(el, info, max) {
    let out = '';
    for (let c = el.firstChild; c && out.length <= max * 3; c = c.nextSibling) {
      if (c.nodeType === 3) {
        out += c.data;
      } else if (c.nodeType === 1 && !SKIP_TEXT.has(c.nodeName) && !(c.localName === 'label' && c.control)) {
        const ci = info.get(c);
        if (ci && ci.inline && !ci.inside) out += ' ' + ownText(c, info, max) + ' ';
      }
    }
    return out;
  }

  function hasOwnText(el) {
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3 && /\S/.test(c.data)) return true;
    }
    return false;
  }

  // The walk runs in two passes. The first visits every element (open
  // shadow roots and same-origin frames included) and notes the interactive
  // ones, the blocks of text, the positioned elements that could cover
  // them, frames from other sites, and which ancestors clip them. The
  // second keeps the candidates that are visible, inside the (extended)
  // viewport and not clipped away, and hit-tests only those a positioned
  // element overlaps: `elementFromPoint` costs about 0.1 ms, too much to
  // spend on each of a thousand elements, and in normal flow nothing else
  // can cover an element.
  function walk(opts) {
    const started = performance.now();
    numbering.next = Math.max(numbering.next, opts.base);
    numbering.limit = opts.limit || Infinity;
    try {
      return walkNumbered(opts, started);
    } finally {
      numbering.limit = Infinity;
    }
  }

  function walkNumbered(opts, started) {
    const expand = opts.expand;
    const maxText = opts.maxText;
    const maxElements = opts.maxElements;
    const textBudget = opts.textBudget || 0;
    let overflow = false;
    // A walk repeated for the same map (the page was still changing, or
    // still being parsed) is the first walk of its document when the walk
    // it replaces was.
    const firstWalk = opts.repeat && numbering.walks > 0 ? numbering.lastFirst : numbering.walks === 0;
    // A frame from another site is new to the tab when its document is:
    // the Rust side says whether the tab's own document was mapped before.
    const markNew = opts.markNew === undefined ? !firstWalk : opts.markNew;
    if (!opts.repeat || numbering.walks === 0) numbering.walks += 1;
    numbering.lastFirst = firstWalk;
    prune();

    const candidates = [];
    const positioned = [];
    const blocks = [];
    const foreign = [];
    let crossOriginFrames = 0;
    const hosts = [];
    // Document order across shadow roots and frames, for texts and frames
    // that stand before the same element.
    let seq = 0;
    // Per-walk facts about each visited element, for its descendants:
    // inside an interactive element, showing a pointer cursor, laid out
    // inline, the block its text belongs to, the clipping ancestors, and
    // how many candidates came before it.
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
          // show a pointer (or grab) cursor; count the outermost such element only,
          // since the cursor is inherited by everything inside.
          pointer = cs.cursor === 'pointer' || cs.cursor === 'grab';
          if (pointer && !(pinfo && pinfo.pointer)) why = 'cursor';
        }
        const position = cs.position;
        // A fixed element escapes its ancestors' clips.
        const clip = position === 'fixed' ? null : (pinfo ? pinfo.clip : null);
        let childClip = clip;
        if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
          childClip = { el, ctx, parent: clip, rect: undefined };
        }
        const display = cs.display;
        const inline = display === 'inline' || display === 'contents';
        const inside = !!why || !!(pinfo && pinfo.inside);
        const owner = inline && pinfo ? pinfo.owner : el;
        const here = {
          inside, pointer, clip: childClip, inline, owner, ownClip: clip, ctx, cand: candidates.length, seq: seq++,
        };
        info.set(el, here);
        if (textBudget && !inside && !SKIP_TEXT.has(el.nodeName) && hasOwnText(el)) {
          const oi = info.get(owner) || here;
          if (!oi.block) {
            oi.block = true;
            blocks.push(owner);
          }
        }

        // A scroll container holding no visible control would leave the
        // model no number to scroll it by; it gets one of its own.
        let scroller = false;
        if (tag !== 'textarea' && tag !== 'select' && (cs.overflowY === 'auto' || cs.overflowY === 'scroll') &&
          el !== ctx.doc.scrollingElement && el !== ctx.doc.body && el.scrollHeight > el.clientHeight + 1) {
          scroller = true;
          if (!why) why = 'scroll';
          // What it clips away is counted on its line.
          if (childClip !== clip) childClip.scroller = true;
        }
        if (why) candidates.push({ el, ctx, clip, scroller });
        // Positioned elements, and the others that paint over their
        // neighbours: transformed ones, and flex or grid items lifted by
        // a z-index.
        if ((position === 'fixed' || position === 'sticky' || position === 'absolute' ||
          (position === 'relative' && cs.zIndex !== 'auto') || cs.transform !== 'none' ||
          (cs.zIndex !== 'auto' && pinfo && /flex|grid/.test(pinfo.display || ''))) &&
          cs.pointerEvents !== 'none') {
          positioned.push({ el, ctx });
        }
        if (display === 'flex' || display === 'grid' || display === 'inline-flex' || display === 'inline-grid') {
          here.display = display;
        }
        const shadow = shadowOf(el);
        if (shadow) {
          observe(shadow);
          visit(shadow, ctx);
        } else if (tag.includes('-') && !checkedHosts.has(el)) {
          // A custom element may hide a closed shadow root.
          hosts.push({ el, ctx });
        }
        if (tag === 'iframe' || tag === 'frame') {
          if (!visibleBox(el)) continue;
          const child = childCtx(ctx, el, expand);
          if (child) {
            if (!isEmpty(child.clip)) {
              observe(child.doc);
              visit(child.doc, child);
            }
          } else {
            crossOriginFrames += 1;
            foreign.push({ el, ctx, clip, cand: candidates.length, seq: here.seq });
          }
        }
      }
    }

    visit(document, topCtx(expand));

    const covers = [];
    for (const p of positioned) {
      const box = visibleBox(p.el) || transparentFileBox(p.el);
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

    // Covered by an element of a page this frame is inside (only for a
    // frame from another site, where the parent's elements are not seen).
    function coveredFromOutside(ctx, rect) {
      for (const r of ctx.covers || []) {
        if (rect.left >= r.left && rect.right <= r.right && rect.top >= r.top && rect.bottom <= r.bottom) {
          return true;
        }
      }
      return false;
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

    // The part of an element the map shows (top-level coordinates), or
    // null when nothing of it is shown or something covers it.
    function shownPart(el, ctx, clipSrc, box) {
      const clip = clipRect(clipSrc);
      let shown = intersect(toTop(box, ctx), ctx.clip);
      if (clip) shown = intersect(shown, clip);
      if (isEmpty(shown) || coveredFromOutside(ctx, shown)) return null;
      if ((hollow.has(el) || mayBeCovered(el, shown)) && !reachable(el, ctx, clip)) return null;
      return shown;
    }

    // Like `shownPart`, for a block of text: one hit test, at the centre
    // of its visible part, is enough to tell a text under a modal from one
    // beside it.
    function textShown(el, ctx, clipSrc, box) {
      const clip = clipRect(clipSrc);
      let shown = intersect(toTop(box, ctx), ctx.clip);
      if (clip) shown = intersect(shown, clip);
      if (isEmpty(shown) || coveredFromOutside(ctx, shown)) return false;
      if (!mayBeCovered(el, shown)) return true;
      const view = intersect(shown, ctx.view);
      if (isEmpty(view)) return true;
      const x = (view.left + view.right) / 2 - ctx.ox;
      const y = (view.top + view.bottom) / 2 - ctx.oy;
      return occluder(el, ctx, x, y) === null;
    }

    // A control that its scroll box clips away: counted on the box's
    // line (above or below its visible part), so the model knows that
    // scrolling the box reveals it.
    const hiddenIn = new Map();
    function noteHidden(c, box) {
      let s = c.clip;
      while (s && !s.scroller) s = s.parent;
      if (!s) return;
      const view = toTop(s.el.getBoundingClientRect(), s.ctx);
      const r = toTop(box, c.ctx);
      let side = null;
      if (r.top >= view.bottom) side = 'below';
      else if (r.bottom <= view.top) side = 'above';
      if (!side) return;
      let h = hiddenIn.get(s.el);
      if (!h) {
        h = { above: 0, below: 0 };
        hiddenIn.set(s.el, h);
      }
      h[side] += 1;
    }

    // Which candidates are shown, decided for all of them before any is
    // numbered: a label whose control is shown folds into the control's
    // line, even when the control comes after it.
    const shownEls = new Set();
    for (let k = 0; k < candidates.length && shownEls.size <= maxElements; k++) {
      const c = candidates[k];
      const box = visibleBox(c.el) || transparentFileBox(c.el);
      if (!box) continue;
      if (shownPart(c.el, c.ctx, c.clip, box)) {
        c.box = box;
        shownEls.add(c.el);
      } else {
        noteHidden(c, box);
      }
    }

    const out = [];
    // For each candidate, how many elements the map had before it.
    const outBefore = new Array(candidates.length + 1);
    let truncated = false;
    for (let k = 0; k < candidates.length; k++) {
      const c = candidates[k];
      outBefore[k] = out.length;
      if (out.length >= maxElements) {
        truncated = true;
        break;
      }
      if (!c.box) continue;
      // The control's line names it with the label's text already, and
      // a click on either does the same.
      if (c.el.localName === 'label' && c.el.control && shownEls.has(c.el.control)) continue;
      const numbered = numberOf(c.el);
      if (!numbered) {
        overflow = true;
        continue;
      }
      const [n, fresh] = numbered;
      const d = describe(c.el, c.ctx, n, fresh && markNew, maxText, c.box);
      if (c.scroller) {
        scrollState(c.el, d);
        const h = hiddenIn.get(c.el);
        if (h && h.above) d.ha = h.above;
        if (h && h.below) d.hb = h.below;
      }
      out.push(d);
    }
    for (let k = 0; k < outBefore.length; k++) {
      if (outBefore[k] === undefined) outBefore[k] = out.length;
    }

    // Short texts for orientation (headings, labels, prices), in document
    // order, within the budget: each says before which element it stands.
    const texts = [];
    let spent = 0;
    let textsCut = false;
    for (const el of blocks) {
      const bi = info.get(el);
      const tag = el.localName;
      const level = HEADINGS[tag] ||
        (roleOf(el) === 'heading' ? (parseInt(el.getAttribute('aria-level'), 10) || 2) : 0);
      // A label's text already names its control.
      if (tag === 'label' && el.control) continue;
      const text = collapse(ownText(el, info, SHORT_TEXT));
      if (!text || (!level && text.length > SHORT_TEXT)) continue;
      const box = visibleBox(el);
      if (!box || !textShown(el, bi.ctx, bi.ownClip, box)) continue;
      const t = cut(text, maxText);
      if (spent + t.length > textBudget) {
        textsCut = true;
        break;
      }
      spent += t.length;
      const item = { t, at: outBefore[bi.cand], s: bi.seq };
      if (level) item.h = Math.min(level, 6);
      texts.push(item);
    }

    // Frames from other sites: where each one is, for the Rust side to
    // map it through a session of its own.
    const frames = [];
    for (const f of foreign) {
      const [lx, ly] = frameOrigin(f.el, f.ctx);
      const cs = f.ctx.win.getComputedStyle(f.el);
      const w = f.el.clientWidth - (parseFloat(cs.paddingLeft) || 0) - (parseFloat(cs.paddingRight) || 0);
      const h = f.el.clientHeight - (parseFloat(cs.paddingTop) || 0) - (parseFloat(cs.paddingBottom) || 0);
      const ox = f.ctx.ox + lx;
      const oy = f.ctx.oy + ly;
      const content = { left: ox, top: oy, right: ox + w, bottom: oy + h };
      const ancestors = clipRect(f.clip);
      let clip = intersect(f.ctx.clip, content);
      let view = intersect(f.ctx.view, content);
      if (ancestors) {
        clip = intersect(clip, ancestors);
        view = intersect(view, ancestors);
      }
      if (isEmpty(clip)) continue;
      const frameCovers = (f.ctx.covers || []).filter((r) => overlaps(r, view));
      for (const c of covers) {
        if (c.el === f.el || composedContains(c.el, f.el) || !overlaps(c.rect, view)) continue;
        const r = intersect(c.rect, view);
        if (isEmpty(r)) continue;
        // Only what really paints over the frame counts.
        const x = (r.left + r.right) / 2 - f.ctx.ox;
        const y = (r.top + r.bottom) / 2 - f.ctx.oy;
        if (occluder(f.el, f.ctx, x, y) !== null) frameCovers.push(r);
      }
      const numbered = numberOf(f.el);
      if (!numbered) {
        overflow = true;
        continue;
      }
      const [n] = numbered;
      frames.push({ i: n, at: outBefore[f.cand], s: f.seq, ox, oy, clip, view, covers: frameCovers });
    }

    const se = document.scrollingElement || document.documentElement;
    return {
      url: location.href,
      title: document.title,
      ready: document.readyState,
      first: firstWalk,
      overflow,
      elements: out,
      texts,
      textsCut,
      frames,
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
      next: numbering.next,
      // Looked for only when there is nothing to list: a page that shows
      // nothing at all is not helped by scrolling.
      nothingVisible: out.length === 0 && !showsAnything(document),
      // The browser's PDF viewer: the document holds the viewer, not the
      // PDF's text, which the session reads from the file instead.
      pdf: document.contentType === 'application/pdf',
      // Custom elements not looked at yet for a closed shadow root.
      closedHosts: (pendingHosts = hostsInReach(hosts)).length,
      // Only the tab's own walk asks: what is still changing, folded into
      // the walk so that a quiet page costs no second round trip.
      busy: opts.settle ? busy(opts.settle) : undefined,
      ms: performance.now() - started,
    };
  }

  // At most this many custom elements are looked at for closed shadow
  // roots per walk (the rest wait for the next).
  const MAX_HOSTS = 200;

  // The custom elements worth asking DevTools about: shown, and within
  // the part of the page the map covers (the others are asked about once
  // they come within it).
  function hostsInReach(hosts) {
    const out = [];
    for (let k = 0; k < hosts.length && out.length < MAX_HOSTS; k++) {
      const h = hosts[k];
      const box = visibleBox(h.el);
      if (box && !isEmpty(intersect(toTop(box, h.ctx), h.ctx.clip))) out.push(h.el);
    }
    return out;
  }

  // ---------- settling ----------

  // At most this many running animations are looked at.
  const MAX_ANIMATIONS = 50;

  // What on the page is still changing, for the map to wait for (see
  // `page/map.rs`): `wait`, in how many milliseconds it may have settled
  // (0: it has), and `why`. The DOM must have been quiet for `quiet` ms.
  // A running animation or transition is waited for when it is finite,
  // ends within `within` ms and plays on an element within `expand` px of
  // the viewport: an endless spinner or a ten-second progress bar would
  // only use up the wait, and an animation far from view changes nothing
  // the map shows.
  function busy(args) {
    let wait = 0;
    const why = [];
    const since = quietFor(performance.now());
    if (since < args.quiet) {
      wait = args.quiet - since;
      why.push('changes');
    }
    const vh = window.innerHeight;
    const expand = args.expand || 0;
    const all = document.getAnimations();
    let longest = 0;
    let looked = 0;
    for (let k = 0; k < all.length && looked < MAX_ANIMATIONS; k++) {
      const a = all[k];
      const rate = a.playbackRate;
      if (a.playState !== 'running' || !a.effect || !rate) continue;
      const t = a.effect.getComputedTiming();
      if (t.localTime === null || !isFinite(t.endTime)) continue;
      const left = (rate > 0 ? t.endTime - t.localTime : t.localTime) / Math.abs(rate);
      if (left <= 0 || left > args.within) continue;
      looked += 1;
      const target = a.effect.target;
      if (target && target.isConnected) {
        const r = target.getBoundingClientRect();
        if (r.bottom < -expand || r.top > vh + expand) continue;
      }
      longest = Math.max(longest, left);
    }
    if (longest > 0) {
      wait = Math.max(wait, longest);
      why.push('animations');
    }
    return { wait: Math.ceil(wait), why };
  }

  // Where the frame element `index` shows its document now (for a call
  // into a frame from another site), and, given a `point` of the tab's
  // viewport, whether a click there reaches the frame.
  function frameBox(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const [el, ctx] = found;
    if ((el.localName !== 'iframe' && el.localName !== 'frame') || !visibleBox(el)) return { stale: true };
    const [lx, ly] = frameOrigin(el, ctx);
    const ox = ctx.ox + lx;
    const oy = ctx.oy + ly;
    const out = { ox, oy, clip: ctx.clip, view: ctx.view, covers: [] };
    if (args.point) {
      const hit = occluder(el, ctx, args.point.x - ctx.ox, args.point.y - ctx.oy);
      if (hit !== null) out.blocker = shortDesc(hit);
    }
    return out;
  }

  // Whether the document shows anything: some visible text or media with
  // a box. Stops at the first thing found.
  function showsAnything(doc) {
    const body = doc.body;
    if (!body) return false;
    const opts = { checkOpacity: true, checkVisibilityCSS: true };
    if (!body.checkVisibility(opts)) return false;
    const seen = (el) => {
      if (!el.checkVisibility(opts)) return false;
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    };
    const walker = doc.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const p = n.parentElement;
      if (!p || SKIP_TEXT.has(p.nodeName) || !n.data.trim()) continue;
      if (seen(p)) return true;
    }
    for (const m of body.querySelectorAll('img,svg,canvas,video,iframe,embed,object')) {
      if (seen(m)) return true;
    }
    return false;
  }

  return {
    walk, busy, frameBox, takeHosts, describe, triState, scrollState,
    visibleBox, fragments, occluder, candidatePoints, OPTION_ROLES, dropdownOf,
  };
})
