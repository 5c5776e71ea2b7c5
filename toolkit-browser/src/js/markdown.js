// The readable text of the page as markdown, for the `extract` action.
// Evaluated as an expression, it is a function that the page script
// (`install.js`) installs as its `extract` method; it runs in the same
// isolated world.
//
// What it keeps: headings (`#`), paragraphs, links as `[text](absolute
// URL)`, lists (`-`, `1.`, nested by indentation), tables as pipe tables,
// preformatted text as fenced code, quotes (`>`), images as `![alt]`, and
// the content of open shadow roots (in their composed order) and
// same-origin frames. What it drops: hidden elements (`display: none`,
// `visibility: hidden`, closed `<details>`, `aria-hidden`), scripts and
// styles, and form fields: their values belong to the page map, and may be
// secrets.
//
// The whole page is converted at once (up to `maxChars`); the Rust side
// cuts it into pages, so that an offset means the same on every call.
(function extract(args) {
  'use strict';
  const maxChars = args.maxChars;
  let produced = 0;
  let truncated = false;

  const SKIP = new Set([
    'script', 'style', 'noscript', 'template', 'svg', 'head', 'meta', 'link', 'canvas',
    'video', 'audio', 'object', 'embed', 'map', 'input', 'select', 'textarea', 'option',
    'datalist',
  ]);
  const INLINE = new Set([
    'a', 'abbr', 'b', 'bdi', 'bdo', 'br', 'button', 'cite', 'code', 'data', 'dfn', 'em',
    'font', 'i', 'img', 'kbd', 'label', 'mark', 'q', 's', 'samp', 'small', 'span',
    'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr', 'del', 'ins', 'output', 'meter',
    'progress',
  ]);

  function shown(el) {
    if (SKIP.has(el.localName)) return false;
    if (el.getAttribute('aria-hidden') === 'true') return false;
    // An open <dialog> is shown; a closed one is not.
    if (el.localName === 'dialog' && !el.open) return false;
    return el.checkVisibility({ checkVisibilityCSS: true });
  }

  // The nodes an element shows: its shadow root's, a slot's assigned
  // nodes, or its own children.
  function childrenOf(node) {
    if (node.nodeType === 1) {
      if (node.shadowRoot) {
        if (args.observe) args.observe(node.shadowRoot);
        return Array.from(node.shadowRoot.childNodes);
      }
      if (node.localName === 'slot') {
        const assigned = node.assignedNodes({ flatten: true });
        if (assigned.length) return assigned;
      }
      if (node.localName === 'iframe' || node.localName === 'frame') {
        let doc = null;
        try {
          doc = node.contentDocument;
        } catch (e) {
          doc = null;
        }
        if (doc && args.observe) args.observe(doc);
        return doc && doc.body ? [doc.body] : [];
      }
    }
    return Array.from(node.childNodes);
  }

  function isInline(el) {
    const tag = el.localName;
    if (INLINE.has(tag)) return true;
    if (tag.includes('-')) {
      // A custom element: its display says.
      const d = el.ownerDocument.defaultView.getComputedStyle(el).display;
      return d === 'inline' || d === 'inline-block' || d === 'contents';
    }
    return false;
  }

  // An inline element around blocks (a custom element's shadow root full
  // of paragraphs) reads as blocks. A link stays inline: a card inside a
  // link is the link's text.
  function holdsBlocks(el) {
    if (el.localName === 'a') return false;
    return childrenOf(el).some((n) => n.nodeType === 1 && !isInline(n) && shown(n));
  }

  function collapse(s) {
    return s.replace(/\s+/g, ' ');
  }

  function tidy(s) {
    return s.split('\n').map((l) => l.replace(/ {2,}/g, ' ').trim()).join('\n')
      .replace(/\n{2,}/g, '\n').trim();
  }

  // ---------- inline content ----------

  function inlineOf(node) {
    let out = '';
    for (const c of childrenOf(node)) {
      if (truncated) break;
      out += inlinePiece(c);
    }
    return out;
  }

  function inlinePiece(node) {
    if (node.nodeType === 3) return collapse(node.data);
    if (node.nodeType !== 1 || !shown(node)) return '';
    const tag = node.localName;
    if (tag === 'br') return '\n';
    if (tag === 'img') {
      const alt = collapse(node.getAttribute('alt') || '').trim();
      return alt ? '![' + alt + ']' : '';
    }
    if (tag === 'a' && node.hasAttribute('href')) {
      let text = tidy(inlineOf(node)).replace(/\n/g, ' ');
      if (!text) text = collapse(node.getAttribute('aria-label') || node.getAttribute('title') || '').trim();
      const href = node.href;
      if (!text) return '';
      if (!href || /^javascript:/i.test(href) || node.getAttribute('href').startsWith('#')) return text;
      return '[' + text.replace(/[[\]]/g, '\\$&') + '](' + href.replace(/[()\s]/g, encodeURIComponent) + ')';
    }
    if (tag === 'code' && !node.closest('pre')) {
      const t = collapse(node.textContent).trim();
      return t ? '`' + t + '`' : '';
    }
    // A block inside inline content (a card inside a link) reads as a
    // separate phrase.
    const inner = inlineOf(node);
    return isInline(node) ? inner : ' ' + inner + ' ';
  }

  // ---------- blocks ----------

  // Adds a block (its lines) after a blank line.
  function push(lines, block) {
    if (!block.length) return;
    if (lines.length) lines.push('');
    for (const l of block) {
      lines.push(l);
      produced += l.length + 1;
    }
    if (produced > maxChars) truncated = true;
  }

  function blocksOf(node) {
    const lines = [];
    let inline = '';
    const flush = () => {
      const t = tidy(inline);
      inline = '';
      if (t) push(lines, t.split('\n'));
    };
    for (const c of childrenOf(node)) {
      if (truncated) break;
      if (c.nodeType === 3) {
        inline += collapse(c.data);
        continue;
      }
      if (c.nodeType !== 1 || !shown(c)) continue;
      if (isInline(c) && !holdsBlocks(c)) {
        inline += inlinePiece(c);
        continue;
      }
      flush();
      push(lines, blockOf(c));
    }
    flush();
    return lines;
  }

  function blockOf(el) {
    const tag = el.localName;
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) {
      const t = tidy(inlineOf(el)).replace(/\n/g, ' ');
      return t ? ['#'.repeat(Number(heading[1])) + ' ' + t] : [];
    }
    switch (tag) {
      case 'ul': case 'ol': case 'menu':
        return listOf(el, tag === 'ol');
      case 'table':
        return tableOf(el);
      case 'pre': {
        const text = el.innerText.replace(/\n+$/, '');
        return text.trim() ? ['```'].concat(text.split('\n'), ['```']) : [];
      }
      case 'blockquote':
        return blocksOf(el).map((l) => (l ? '> ' + l : '>'));
      case 'hr':
        return ['---'];
      default:
        return blocksOf(el);
    }
  }

  // Text written directly inside a list (not in an item) is kept, as
  // lines of their own between the items.
  function listOf(el, ordered) {
    const lines = [];
    let n = ordered && el.hasAttribute('start') ? parseInt(el.getAttribute('start'), 10) || 1 : 1;
    let loose = '';
    const flushLoose = () => {
      const t = tidy(loose);
      loose = '';
      for (const l of t.split('\n')) if (l) lines.push(l);
    };
    for (const item of childrenOf(el)) {
      if (truncated) break;
      if (item.nodeType === 3) {
        loose += collapse(item.data);
        continue;
      }
      if (item.nodeType !== 1 || !shown(item)) continue;
      if (item.localName !== 'li' && isInline(item) && !holdsBlocks(item)) {
        loose += inlinePiece(item);
        continue;
      }
      flushLoose();
      const body = (item.localName === 'li' ? blocksOf(item) : blockOf(item)).filter((l) => l !== '');
      if (!body.length) continue;
      const marker = ordered ? n + '. ' : '- ';
      n += 1;
      const pad = ' '.repeat(marker.length);
      body.forEach((l, k) => lines.push(k === 0 ? marker + l : pad + l));
    }
    flushLoose();
    return lines;
  }

  function cellText(cell) {
    return tidy(inlineOf(cell)).replace(/\n/g, ' ').replace(/\|/g, '\\|');
  }

  function tableOf(table) {
    const rows = Array.from(table.rows).filter((r) => shown(r));
    if (!rows.length) return blocksOf(table);
    const cells = rows.map((r) => Array.from(r.cells).filter((c) => shown(c)).map(cellText));
    const width = Math.max(...cells.map((c) => c.length));
    if (width === 0) return [];
    const line = (c) => '| ' + Array.from({ length: width }, (_, k) => c[k] || '').join(' | ') + ' |';
    const out = [];
    const caption = table.caption ? tidy(inlineOf(table.caption)) : '';
    if (caption) out.push(caption, '');
    out.push(line(cells[0]), '|' + ' --- |'.repeat(width));
    for (const c of cells.slice(1)) out.push(line(c));
    return out;
  }

  const body = document.body || document.documentElement;
  const lines = body ? blocksOf(body) : [];
  return {
    url: location.href,
    title: document.title,
    markdown: lines.join('\n'),
    truncated,
  };
})
