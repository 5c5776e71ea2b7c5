"""Drives a toolkit MCP server with the official Python SDK's stdio client.

Usage: python python_client.py SERVER_EXECUTABLE

Prints one JSON object describing what the client saw; the Rust test that
runs this script checks it.
"""

import json
import sys

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main(executable):
    seen = {"notifications": []}

    async def on_message(message):
        name = getattr(message, "method", None) or type(message).__name__
        seen["notifications"].append(str(name))

    params = StdioServerParameters(
        command=executable, env={"TOOLKIT_MCP_TEST_SERVE": "1"}
    )
    async with stdio_client(params) as (read, write):
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


anyio.run(main, sys.argv[1])
