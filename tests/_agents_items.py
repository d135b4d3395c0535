"""Responses input items of every type the OpenAI Agents SDK stores in a session, as the SDK
writes them (``RunItem.to_input_item()``: ``model_dump(exclude_unset=True)`` of the output
classes, plus the input shapes a user hands ``Runner.run``). The test checks each one against
the SDK's own ``ResponseInputItemParam`` so the catalogue cannot drift into invented shapes."""

from __future__ import annotations

from typing import Any

Item = dict[str, Any]

USER_TEXT: Item = {"role": "user", "content": "What is the weather in Paris?"}
USER_PARTS: Item = {
    "type": "message",
    "role": "user",
    "content": [
        {"type": "input_text", "text": "What is in this picture?"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"},
        {"type": "input_file", "file_id": "file-abc", "filename": "report.pdf"},
    ],
}
SYSTEM: Item = {"role": "system", "content": "You are terse."}
DEVELOPER: Item = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use tools."}]}
ASSISTANT: Item = {
    "id": "msg_68c0ffee",
    "content": [
        {
            "annotations": [
                {"type": "url_citation", "start_index": 0, "end_index": 5, "url": "https://example.com", "title": "ex"}
            ],
            "text": "Paris: 21°C, clear. 🌤",
            "type": "output_text",
            "logprobs": [],
        }
    ],
    "role": "assistant",
    "status": "completed",
    "type": "message",
}
REFUSAL: Item = {
    "id": "msg_refuse",
    "content": [{"refusal": "I can't help with that.", "type": "refusal"}],
    "role": "assistant",
    "status": "completed",
    "type": "message",
}
FUNCTION_CALL: Item = {
    "arguments": '{"city": "Paris",  "units":"metric"}',
    "call_id": "call_Xy12",
    "name": "get_weather",
    "type": "function_call",
    "id": "fc_68c0",
    "status": "completed",
}
FUNCTION_OUTPUT: Item = {"call_id": "call_Xy12", "output": '{"temp": 21, "sky": "clear"}', "type": "function_call_output"}
FUNCTION_OUTPUT_PARTS: Item = {
    "call_id": "call_img",
    "output": [
        {"type": "input_text", "text": "the chart"},
        {"type": "input_image", "image_url": "https://example.com/c.png", "detail": "low"},
    ],
    "type": "function_call_output",
}
REASONING: Item = {
    "id": "rs_68c0",
    "summary": [{"text": "**Checking the forecast** I should call the tool.", "type": "summary_text"}],
    "type": "reasoning",
    "content": [{"text": "raw chain", "type": "reasoning_text"}],
    "encrypted_content": "gAAAAABo0v1c9f3kXg-opaque-bytes_/+==",
    "status": "completed",
}
REASONING_EMPTY_SUMMARY: Item = {"id": "rs_2", "summary": [], "type": "reasoning", "encrypted_content": "gAAAAB=="}
WEB_SEARCH: Item = {
    "id": "ws_68c0",
    "action": {"type": "search", "query": "Paris weather", "sources": [{"type": "url", "url": "https://meteo.fr"}]},
    "status": "completed",
    "type": "web_search_call",
}
FILE_SEARCH: Item = {
    "id": "fs_1",
    "queries": ["quarterly revenue"],
    "status": "completed",
    "type": "file_search_call",
    "results": [
        {"file_id": "file-1", "filename": "q3.pdf", "score": 0.92, "text": "Revenue grew 12%", "attributes": {"year": 2025}}
    ],
}
CODE_INTERPRETER: Item = {
    "id": "ci_1",
    "code": "print(2 ** 10)",
    "container_id": "cntr_1",
    "outputs": [{"logs": "1024\n", "type": "logs"}],
    "status": "completed",
    "type": "code_interpreter_call",
}
IMAGE_GENERATION: Item = {
    "id": "ig_1", "result": "iVBORw0KGgoAAAANSUhEUg==", "status": "completed", "type": "image_generation_call"
}
COMPUTER_CALL: Item = {
    "id": "cu_1",
    "action": {"button": "left", "type": "click", "x": 10, "y": 20},
    "call_id": "call_cu_1",
    "pending_safety_checks": [],
    "status": "completed",
    "type": "computer_call",
}
COMPUTER_OUTPUT: Item = {
    "call_id": "call_cu_1",
    "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"},
    "type": "computer_call_output",
}
LOCAL_SHELL_CALL: Item = {
    "id": "ls_1",
    "action": {"command": ["ls", "-la"], "env": {}, "type": "exec"},
    "call_id": "call_ls_1",
    "status": "completed",
    "type": "local_shell_call",
}
LOCAL_SHELL_OUTPUT: Item = {"id": "call_ls_1", "output": "total 0\n", "type": "local_shell_call_output"}
SHELL_CALL: Item = {
    "action": {"commands": ["echo hi"], "timeout_ms": 1000},
    "call_id": "call_sh_1",
    "type": "shell_call",
    "status": "completed",
}
SHELL_OUTPUT: Item = {
    "call_id": "call_sh_1",
    "output": [{"outcome": {"type": "exit", "exit_code": 0}, "stdout": "hi\n", "stderr": ""}],
    "type": "shell_call_output",
}
APPLY_PATCH_CALL: Item = {
    "call_id": "call_ap_1",
    "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-x\n+y\n"},
    "status": "completed",
    "type": "apply_patch_call",
}
APPLY_PATCH_OUTPUT: Item = {"call_id": "call_ap_1", "status": "completed", "type": "apply_patch_call_output", "output": "ok"}
MCP_LIST_TOOLS: Item = {
    "id": "mcpl_1",
    "server_label": "deepwiki",
    "tools": [{"input_schema": {"type": "object", "properties": {}}, "name": "ask", "description": "Ask"}],
    "type": "mcp_list_tools",
}
MCP_APPROVAL_REQUEST: Item = {
    "id": "mcpr_1",
    "arguments": '{"q":"x"}',
    "name": "ask",
    "server_label": "deepwiki",
    "type": "mcp_approval_request",
}
MCP_APPROVAL_RESPONSE: Item = {"approval_request_id": "mcpr_1", "approve": True, "type": "mcp_approval_response"}
MCP_CALL: Item = {
    "id": "mcp_1",
    "arguments": '{"q":"x"}',
    "name": "ask",
    "server_label": "deepwiki",
    "type": "mcp_call",
    "output": "answer",
    "status": "completed",
}
CUSTOM_TOOL_CALL: Item = {"call_id": "call_ct_1", "input": "SELECT 1;", "name": "sql", "type": "custom_tool_call", "id": "ctc_1"}
CUSTOM_TOOL_OUTPUT: Item = {"call_id": "call_ct_1", "output": "1", "type": "custom_tool_call_output"}
COMPACTION: Item = {"id": "cmp_1", "encrypted_content": "gAAAAB-compacted==", "type": "compaction"}
ITEM_REFERENCE: Item = {"id": "msg_old", "type": "item_reference"}
ODD_TEXT: Item = {"role": "user", "content": "nul\u0000 tab\t astral 𝄞 emoji 👩🏽‍💻 rtl עברית \\ \" '"}

CATALOGUE: dict[str, Item] = {
    name.lower(): item
    for name, item in globals().items()
    if name.isupper() and isinstance(item, dict) and name != "CATALOGUE"
}
