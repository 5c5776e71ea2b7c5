"""The browser-use half of the page-map comparison (compare_browser_use.rs).

Started by the Rust side with the Chromium executable to use; it launches
its own browser-use session on that Chromium, then answers one JSON request
per line on stdin with one JSON line on stdout:

    {"url": "...", "settle_ms": 400}
      -> {"text": "<the map as the model reads it>",
          "elements": [{"index", "tag", "x", "y", "w", "h", "attrs", "name",
                        "text", "other_target"}, ...]}
    {"again": true}      (the same page mapped again, timed)
      -> {"times_ms": [<ms>]}

The map is browser-use's own DOM service, called directly, the way its
DOM watchdog does at every agent step (no model involved):
`DomService.get_serialized_dom_tree()` then `llm_representation()`, with
the session's own settings (cross-origin iframes and paint-order filtering
on, a 1,000 px viewport threshold). The Rust side alternates its own maps
with these, one by one, so both sides meet the same load on a busy
machine. Logs go to stderr.
"""

import asyncio
import json
import os
import sys
import time

# Nothing leaves the machine: no telemetry, no cloud sync, no extension
# downloads.
os.environ.setdefault('ANONYMIZED_TELEMETRY', 'false')
os.environ.setdefault('BROWSER_USE_CLOUD_SYNC', 'false')
os.environ.setdefault('BROWSER_USE_LOGGING_LEVEL', 'warning')

from browser_use.browser import BrowserProfile, BrowserSession  # noqa: E402
from browser_use.dom.service import DomService  # noqa: E402

ATTRS = ('id', 'name', 'type', 'role', 'aria-label', 'placeholder', 'href', 'title', 'value', 'for')


def describe(index, node, main_target):
    pos = node.absolute_position
    text = node.get_all_children_text() if node.children_nodes else ''
    return {
        'index': index,
        'tag': node.tag_name,
        'x': pos.x if pos else None,
        'y': pos.y if pos else None,
        'w': pos.width if pos else None,
        'h': pos.height if pos else None,
        'attrs': {k: v[:80] for k, v in (node.attributes or {}).items() if k in ATTRS},
        'name': (node.ax_node.name or '')[:80] if node.ax_node else '',
        'text': ' '.join(text.split())[:80],
        'other_target': node.target_id != main_target,
    }


async def map_page(session, request, state):
    """Opens the page and maps it once (untimed), or, for `{"again": true}`,
    maps the page already open once more, timed."""
    if not request.get('again'):
        await session.navigate_to(request['url'])
        await asyncio.sleep(request.get('settle_ms', 400) / 1000)
        profile = session.browser_profile
        state['service'] = DomService(
            session,
            cross_origin_iframes=profile.cross_origin_iframes,
            paint_order_filtering=profile.paint_order_filtering,
            max_iframes=profile.max_iframes,
            max_iframe_depth=profile.max_iframe_depth,
        )
    started = time.perf_counter()
    dom, _, _ = await state['service'].get_serialized_dom_tree()
    text = dom.llm_representation()
    elapsed = (time.perf_counter() - started) * 1000
    if request.get('again'):
        return {'times_ms': [elapsed]}
    main = session.agent_focus_target_id
    elements = [describe(i, n, main) for i, n in dom.selector_map.items()]
    return {'times_ms': [], 'text': text, 'elements': elements}


def send(answer):
    # Pages may hold lone surrogates, which JSON readers reject: they go out
    # as '?'.
    line = json.dumps(answer, ensure_ascii=False).encode('utf-8', 'replace')
    sys.stdout.buffer.write(line + b'\n')
    sys.stdout.buffer.flush()


async def main():
    executable = sys.argv[1]
    profile = BrowserProfile(
        executable_path=executable,
        headless=True,
        # As root Chromium cannot start sandboxed, as for the crate.
        chromium_sandbox=False,
        enable_default_extensions=False,
        highlight_elements=False,
        viewport={'width': 1280, 'height': 800},
        window_size={'width': 1280, 'height': 800},
        args=['--disable-gpu', '--disable-background-networking'],
    )
    session = BrowserSession(browser_profile=profile)
    await session.start()
    version = await session.cdp_client.send.Browser.getVersion()
    send({'ready': True, 'product': version.get('product', '')})
    loop = asyncio.get_running_loop()
    state = {}
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line.strip():
                break
            request = json.loads(line)
            try:
                answer = await map_page(session, request, state)
            except Exception as error:  # reported to the Rust side, which says so
                answer = {'error': f'{type(error).__name__}: {error}'}
            send(answer)
    finally:
        await session.kill()


if __name__ == '__main__':
    asyncio.run(main())
