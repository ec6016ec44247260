"""A live turn's message is indexed with the messages before it (`core.conversation.indexing`), read from the
end of its chain a page at a time rather than the last CONTEXT_WINDOW thoughts each time."""

from core import usecases as uc
from core.conversation.indexing import CONTEXT_PAGE, CONTEXT_WINDOW, _thread, thought_records
from core.conversation.thoughts import CATEGORY_USER


def test_each_message_is_indexed_with_the_three_before_it_read_from_a_page(workbench, instance):
    said = [f"Note {n}: the {word} is in the shed." for n, word in enumerate(
        ["rake", "hose", "ladder", "bike", "drill", "saw", "tent", "kayak"])]
    for text in said:
        uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id="shed", instance=instance))
    with workbench.pool().connection() as conn:
        rows = dict(conn.execute("SELECT content, context FROM memory WHERE instance = %s AND kind = 'user'",
                                 (instance,)).fetchall())
    # Offline, answers are extractive and not searchable: the context is the user's earlier messages.
    for n, text in enumerate(said):
        assert rows[text]["before"] == said[max(0, n - 3):n][::-1], text

    store = workbench.thoughts
    last = [t for t in store.chain_thoughts(instance, "shed") if t.category == CATEGORY_USER][-1]
    page = _thread(store, instance, "shed", {last.id})
    assert len(page) <= CONTEXT_PAGE < len(store.chain_thoughts(instance, "shed"))
    assert thought_records(page, {last.id}) == thought_records(
        store.chain_thoughts(instance, "shed", last=CONTEXT_WINDOW), {last.id})
