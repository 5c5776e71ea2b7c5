// The page map walk (part of the page script, see core.js): what is
// interactive, how it is described, what is visible and not covered.

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
    numbering.next = Math.max(numbering.next, opts.base);
    const firstWalk = numbering.walks === 0;
    numbering.walks += 1;
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
      next: numbering.next,
      ms: performance.now() - started,
    };
  }

