"""Memory formation: what a conversation leaves behind as memory (docs/ARCHITECTURE.md, "What is
remembered"): each user message's kind (`kinds`), the observations its statements become
(`observations`), the memories its corrections supersede (`supersede`), session summaries and important
items (`summaries`, `important`), and re-running it over an instance (`run`)."""
