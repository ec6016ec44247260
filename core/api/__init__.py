"""The HTTP API (`workbench api`): JSON endpoints over the use cases, with API keys and instance scope.

A front end like the CLI and the dashboard: each endpoint parses its input into a `core.usecases`
request, calls one use case and returns its result. `create_app` builds the FastAPI application.
"""
