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
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client, types
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
            # Without the capabilities, a tool's questions are refused.
            seen["confirm_refused"] = dump(await session.call_tool("confirm", {"what": "go"}))
            seen["summarize_refused"] = dump(await session.call_tool("summarize", {"text": "x"}))
            seen["workspace_refused"] = dump(await session.call_tool("workspace", {}))
            try:
                await session.get_prompt("plan")
                seen["plan_refused"] = "no error"
            except MCPError as error:
                seen["plan_refused"] = {"code": error.error.code, "message": error.error.message}

    # A client that answers questions, and hears log messages.
    asked = {"elicit": [], "sample": [], "logs": []}

    async def on_elicit(context, params):
        asked["elicit"].append(dump(params))
        if params.message == "What is the goal?":
            return types.ElicitResult(action="accept", content={"goal": "the goal the client gave"})
        return types.ElicitResult(action="accept", content={"sure": True})

    async def on_sample(context, params):
        asked["sample"].append(dump(params))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="all is well"),
            model="tiny-model",
            stop_reason="endTurn",
        )

    async def on_log(params):
        asked["logs"].append(dump(params))

    async def on_roots(context):
        asked["roots"] = asked.get("roots", 0) + 1
        return types.ListRootsResult(
            roots=[
                types.Root(uri="file:///home/ada/notes", name="notes"),
                types.Root(uri="file:///tmp"),
            ]
        )

    async with transport(mode, target) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(
            read,
            write,
            sampling_callback=on_sample,
            elicitation_callback=on_elicit,
            list_roots_callback=on_roots,
            logging_callback=on_log,
        ) as session:
            await session.initialize()
            seen["workspace"] = dump(await session.call_tool("workspace", {}))
            seen["plan"] = dump(await session.get_prompt("plan"))
            seen["confirm"] = dump(await session.call_tool("confirm", {"what": "go"}))
            seen["summarize"] = dump(await session.call_tool("summarize", {"text": "a long day"}))
            seen["chatty"] = dump(await session.call_tool("chatty", {}))
            # Over HTTP the messages travel on the session's own event
            # stream (rmcp routes only progress to the call's), and may
            # arrive after the result.
            with anyio.fail_after(5):
                while len(asked["logs"]) < 3:
                    await anyio.sleep(0.05)
    seen["asked"] = asked

    # A client that declares every capability and never answers: each
    # question ends at the tool's time limit.
    async def never(*_arguments):
        await anyio.sleep_forever()

    async with transport(mode, target) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(
            read,
            write,
            sampling_callback=never,
            elicitation_callback=never,
            list_roots_callback=never,
        ) as session:
            await session.initialize()
            seen["impatient"] = {
                kind: dump(await session.call_tool("impatient", {"kind": kind}))
                for kind in ["elicit", "sample", "roots"]
            }
    print(json.dumps(seen))


anyio.run(main, sys.argv[1], sys.argv[2])
