// Dropdowns and file inputs (a module of the page script, see
// install.js).
(function forms(core, map, input) {
  'use strict';
  const {
    numbering, collapse, cut, shortText, deepElementFromPoint, numberOf,
    resolve,
  } = core;
  const { triState, describe, OPTION_ROLES, dropdownOf } = map;
  const { bringIntoView, isTextInput, editDesc } = input;

  // ---------- dropdowns ----------

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
    numbering.next = Math.max(numbering.next, args.base);
    const desc = describe(el, ctx, args.index, false, args.maxText, null);
    const dd = dropdownOf(el);
    if (!dd) return { el: desc, notDropdown: true, next: numbering.next };
    const list = optionList(dd, args.maxText);
    const hit = matchOption(list, args.wanted);
    if (!hit) return { el: desc, noMatch: true, options: plainOptions(list), next: numbering.next };
    if (hit.disabled) return { el: desc, disabledOption: hit.text, next: numbering.next };
    if (dd.select) {
      const s = dd.select;
      if (s.disabled) return { el: desc, disabledSelect: true, next: numbering.next };
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
        selected: hit.node.selected, next: numbering.next,
      };
    }
    const [n] = numberOf(hit.node);
    return { el: desc, native: false, text: hit.text, value: hit.value, option: n, next: numbering.next };
  }

  // ---------- files ----------

  // The file input a person reaches through `el`: the input itself, the
  // control of its label, one inside it, or one laid over it (a transparent
  // input on a styled "Click to select a file" box), which is what a click
  // at the element's centre hits.
  function fileInputOf(el) {
    if (el.localName === 'input') return el.type === 'file' ? el : null;
    if (el.localName === 'label' && el.control) return el.control.type === 'file' ? el.control : null;
    const roots = [el];
    if (el.shadowRoot) roots.push(el.shadowRoot);
    for (const r of roots) {
      const inner = r.querySelector('input[type=file]');
      if (inner) return inner;
    }
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return null;
    const hit = deepElementFromPoint(el.ownerDocument, r.left + r.width / 2, r.top + r.height / 2);
    return hit && hit.localName === 'input' && hit.type === 'file' ? hit : null;
  }

  function fileInput(args) {
    const found = resolve(args.index);
    if (!found) return { stale: true };
    const [el, ctx] = found;
    const desc = describe(el, ctx, args.index, false, args.maxText, null);
    // The input laid over the element is found by a hit test, which needs
    // the element in view.
    bringIntoView(el, ctx);
    const input = fileInputOf(el);
    if (!input) {
      // A control a file chooser may open through (a button whose script
      // clicks a hidden input), unlike a field, which only takes text.
      const field = isTextInput(el) || el.localName === 'select';
      return { el: desc, notFile: editDesc(el), clickable: !field && !el.disabled };
    }
    if (input.disabled) return { el: desc, notFile: 'a disabled ' + editDesc(input) };
    return { el: desc, multiple: input.multiple, accept: input.accept || null };
  }

  function fileNames(args) {
    const found = resolve(args.index);
    const input = found && fileInputOf(found[0]);
    if (!input) return { stale: true };
    return { names: Array.from(input.files || []).map((f) => f.name) };
  }

  return {
    dropdownOptions, selectOption, fileInput, fileNames, fileInputOf,
  };
})
