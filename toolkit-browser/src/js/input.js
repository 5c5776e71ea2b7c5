// Entry points for acting on elements (a module of the page script, see
// install.js): lookups, click points, text fields, scrolling.
(function input(core, map) {
  'use strict';
  const { TEXT_INPUTS, VALUE_INPUTS, parentOf, shortDesc, ctxOf, resolve } = core;
  const { describe, scrollState, visibleBox, fragments, occluder, candidatePoints } = map;

  // ---------- entry points for actions ----------

  // Geometry only: a transparent element (a file input laid over its
  // box) is in view where its box is.
  function fullyInView(el, ctx) {
    const own = el.getBoundingClientRect();
    const r = own.width > 0 && own.height > 0 ? own : fragments(el)[0];
    const v = ctx.view;
    return !!r &&
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
    // The origin of the document the element is in (a frame's own, not
    // the tab's): what a secret's sites are checked against before it is
    // typed there. An opaque origin is "null", which no site matches.
    const win = el.ownerDocument.defaultView;
    return { el: d, visible: !!box, origin: (win && win.origin) || 'null' };
  }

  // Scrolls the element into view and finds a point (top-level viewport
  // coordinates) where a click reaches it.
  // The last form submission since the last click point was asked for,
  // seen from this world (the page cannot reach it): `submitted` reads it
  // once the click is done.
  let lastSubmit = null;
  let submitWatched = false;

  function armSubmit() {
    lastSubmit = null;
    if (submitWatched) return;
    submitWatched = true;
    window.addEventListener('submit', e => { lastSubmit = e; }, true);
  }

  // Whether the click sent a form that loads a page in this tab: the
  // browser requests that navigation only in a task after the click's,
  // and the session waits for it. Read once the event is over, so that a
  // page that cancelled the submission (to send it by script) counts as
  // not sending it.
  function submitted() {
    const e = lastSubmit;
    lastSubmit = null;
    if (!e || e.defaultPrevented || !(e.target instanceof HTMLFormElement)) {
      return { navigates: false };
    }
    const form = e.target;
    const by = e.submitter;
    const attr = (own, override) =>
      (by && by.hasAttribute(override) ? by.getAttribute(override) : form.getAttribute(own)) || '';
    const base = document.querySelector('base[target]');
    const target = (attr('target', 'formtarget') || (base ? base.getAttribute('target') : ''))
      .trim().toLowerCase();
    const here = ['', '_self', '_top', '_parent'].includes(target);
    const method = attr('method', 'formmethod').trim().toLowerCase();
    const action = by && by.hasAttribute('formaction') ? by.formAction : form.action;
    return { navigates: here && method !== 'dialog' && !/^\s*javascript:/i.test(action) };
  }

  function clickPoint(args) {
    armSubmit();
    const found = resolve(args.index);
    if (!found) return { stale: true };
    let [el, ctx] = found;
    const before = describe(el, ctx, args.index, false, args.maxText, null);
    if (!visibleBox(el)) {
      return { el: before, notClickable: 'it is hidden or has no size on the page' };
    }
    // Whether bringing it into view scrolled anything: a drag needs both
    // of its elements in view at once, which only a look that did not
    // scroll can tell.
    const scrolled = !fullyInView(el, ctx);
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
        return {
          el: before, x: x + ctx.ox, y: y + ctx.oy, scrolled,
          target: el.getAttribute && el.getAttribute('target'),
          // Whether the click might open a file chooser (see `Browser::click`).
          files: !!el.ownerDocument.querySelector('input[type=file]'),
        };
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
      let el = found[0];
      while (el) {
        const doc = el.ownerDocument;
        const win = doc.defaultView;
        if (el === doc.scrollingElement) {
          // A frame's own page scrolls like a container of the page
          // around it; one that cannot scroll passes to its frame element.
          if (doc !== document && el.scrollHeight > win.innerHeight + 1) {
            target = el;
            break;
          }
          let frameEl = null;
          try {
            frameEl = doc === document ? null : win.frameElement;
          } catch (e) {
            frameEl = null;
          }
          el = frameEl;
          continue;
        }
        if (canScroll(el, win)) {
          target = el;
          break;
        }
        el = parentOf(el) || (doc.scrollingElement !== el ? doc.scrollingElement : null);
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

  // How many elements of the page's own document (not its frames or
  // shadow roots) are shown: what a hover compares
  // before and after, to tell the model whether something (a menu)
  // appeared. Capped, so a huge page costs a bounded walk.
  function shownCount() {
    let shown = 0;
    const all = document.body ? document.body.getElementsByTagName('*') : [];
    const n = Math.min(all.length, 20000);
    for (let k = 0; k < n; k++) {
      if (all[k].checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) shown += 1;
    }
    return { shown };
  }

  function pageInfo() {
    return { url: location.href, title: document.title, ready: document.readyState };
  }

  return {
    elementInfo, clickPoint, focusField, readField, scroll, shownCount,
    pageInfo, bringIntoView, isTextInput, editDesc, submitted,
  };
})
