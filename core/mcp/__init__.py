"""The MCP server: the memory tools an assistant calls, over stdio (`workbench mcp`) and streamable HTTP
(`/mcp` of the API server). A front end like the CLI: it reaches the core only through `core.usecases`.
"""
