"""One router per feature; each endpoint parses its input into a core request, calls one use case and
returns its result."""
