// Element numbers drawn over the page for a screenshot (see
// src/page/pictures.rs). Evaluated on its own in the crate's isolated
// world, never in the page's: the page's scripts cannot see these
// variables or patch the built-ins used here.
//
// `marks` are boxes in viewport CSS pixels with their numbers; `colour` is
// a CSS colour; `ttl` is how long, in milliseconds, the layer may stay if
// nothing removes it (a screenshot cancelled half-way).
(function (marks, colour, ttl) {
  const KEY = '__toolkitBrowserOverlay';
  const old = window[KEY];
  if (old) {
    old.host.remove();
    clearTimeout(old.timer);
  }
  const host = document.createElement('div');
  // Inline declarations marked important win over every style sheet of the
  // page (element-attached styles come before cascade layers).
  host.style.cssText = [
    'all: initial', 'display: block', 'position: fixed', 'inset: 0',
    'width: 100vw', 'height: 100vh', 'margin: 0', 'padding: 0', 'border: 0',
    'background: transparent', 'overflow: hidden', 'pointer-events: none',
    'z-index: 2147483647', 'opacity: 1', 'visibility: visible', 'transform: none',
    'filter: none', 'clip-path: none', 'contain: strict',
  ].map((d) => d + ' !important').join(';');
  // A closed root: the page's scripts and styles cannot reach inside.
  const root = host.attachShadow({ mode: 'closed' });
  const style = document.createElement('style');
  style.textContent =
    '.b{position:absolute;box-sizing:border-box;border:2px solid ' + colour + ';}' +
    '.l{position:absolute;background:' + colour + ';color:#fff;' +
    'font:bold 13px/16px monospace;padding:0 3px;white-space:nowrap;}';
  root.appendChild(style);
  for (const m of marks) {
    const b = document.createElement('div');
    b.className = 'b';
    b.style.left = m.x + 'px';
    b.style.top = m.y + 'px';
    b.style.width = Math.max(m.w, 4) + 'px';
    b.style.height = Math.max(m.h, 4) + 'px';
    root.appendChild(b);
    const l = document.createElement('span');
    l.className = 'l';
    l.textContent = String(m.i);
    // At the box's right end, where a row's text rarely reaches; above the
    // box when there is room, else inside its top edge.
    l.style.right = Math.max(window.innerWidth - (m.x + Math.max(m.w, 4)), 0) + 'px';
    l.style.top = (m.y >= 16 ? m.y - 16 : Math.max(m.y, 0)) + 'px';
    root.appendChild(l);
  }
  document.documentElement.appendChild(host);
  // The top layer: above modal dialogs and anything a z-index can reach.
  host.setAttribute('popover', 'manual');
  try { host.showPopover(); } catch (e) { /* no top layer: the z-index stands */ }
  const timer = setTimeout(() => host.remove(), ttl);
  window[KEY] = { host, timer };
  return host.isConnected;
})
