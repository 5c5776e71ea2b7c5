// Secrets in screenshots (a module of the page script, see install.js).
(function mask(text) {
  'use strict';
  const { textNodes } = text;

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

  return {
    mask, unmask,
  };
})
