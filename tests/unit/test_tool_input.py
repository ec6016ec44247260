from core.tokens import count_tokens
from core.conversation.tool_input import ChatMessage, ToolInputSchema, format_query


def test_standard_format_has_the_three_headers_on_their_own_lines():
    q = format_query(ToolInputSchema(chat_history=[ChatMessage(type="human", content="hi"),
                                                   ChatMessage(type="ai", content="hello")],
                                     latest_human_message="what now?",
                                     intermediate_steps={"sql_tool": "3 rows"}))
    lines = q.text.splitlines()
    assert "Chat history:" in lines and "Intermediate tool outputs:" in lines and "Latest user question:" in lines
    assert lines.index("Chat history:") < lines.index("Intermediate tool outputs:") < lines.index(
        "Latest user question:")
    assert "Human: hi" in lines and "AI: hello" in lines and lines[-1] == "    what now?"
    assert q.history_turns_dropped == 0


def test_history_is_cut_oldest_first_and_the_cut_is_reported():
    history = [ChatMessage(type="human" if i % 2 == 0 else "ai", content=f"message number {i} " + "word " * 20)
               for i in range(10)]
    per_message = count_tokens("Human: " + history[0].content) + 1
    q = format_query(ToolInputSchema(chat_history=history, latest_human_message="q"),
                     history_budget=per_message * 3 + 2)
    assert q.history_turns_kept == 3 and q.history_turns_dropped == 7
    assert "message number 9" in q.text and "message number 6" not in q.text
    assert q.history_tokens <= q.history_budget


def test_token_counting_works_offline_and_is_not_a_character_guess():
    assert count_tokens("") == 0
    assert 0 < count_tokens("internationalisation") < len("internationalisation")
