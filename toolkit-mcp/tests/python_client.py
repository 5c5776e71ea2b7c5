"""Drives a toolkit MCP server with the official Python SDK's stdio and
Streamable HTTP clients.

Usage: python python_client.py stdio SERVER_EXECUTABLE
       python python_client.py http URL

Prints one JSON object describing what the client saw; the Rust test that
runs this script checks it.
"""

import json
import sys

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def transport(mode, target):
    if mode == "stdio":
        params = StdioServerParameters(
            command=target, env={"TOOLKIT_MCP_TEST_SERVE": "1"}
        )
        return stdio_client(params)
    return streamable_http_client(target)


async def main(mode, target):
    seen = {"notifications": [], "progress": []}

    async def on_message(message):
        name = getattr(message, "method", None) or type(message).__name__
        seen["notifications"].append(str(name))

    async def on_progress(progress, total, message):
        seen["progress"].append([progress, total, message])

    async with transport(mode, target) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            seen["server"] = dump(init.server_info)
            seen["capabilities"] = dump(init.capabilities)
            seen["tools"] = [dump(tool) for tool in (await session.list_tools()).tools]
            seen["add"] = dump(await session.call_tool("add", {"a": 2, "b": 3}))
            seen["bad_arguments"] = dump(await session.call_tool("add", {"a": "two"}))
            seen["failing"] = dump(await session.call_tool("fail", {}))
            seen["image"] = dump(await session.call_tool("pixel", {}))
            seen["structured"] = dump(await session.call_tool("weather", {"city": "Oslo"}))
            seen["counted"] = dump(
                await session.call_tool("count", {"to": 3}, progress_callback=on_progress)
            )
            try:
                await session.call_tool("nope", {})
                seen["unknown"] = "no error"
            except MCPError as error:
                seen["unknown"] = {"code": error.error.code, "message": error.error.message}
            # Disabling a tool changes the list: the server says so.
            seen["toggle"] = dump(await session.call_tool("toggle", {"name": "fail"}))
            with anyio.fail_after(5):
                while not any("list_changed" in n for n in seen["notifications"]):
                    await anyio.sleep(0.05)
            seen["tools_after"] = [tool.name for tool in (await session.list_tools()).tools]
    print(json.dumps(seen))


anyio.run(main, sys.argv[1], sys.argv[2])
