"""Memory formation: what a conversation leaves behind as memory (docs/ARCHITECTURE.md, "What is
remembered"): each user message's kind (`kinds`; a look-up typed without a question mark is a question,
`lookups`), the observations its statements become, one per statement (`observations`), who is who in
them ("my daughter Inês": `relations`), the statements its corrections supersede (`supersede`), session
summaries and important items (`summaries`, `important`), and re-running it over an instance (`run`)."""
