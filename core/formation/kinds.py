"""A user message's kind: statement, question, acknowledgement (or small talk), correction, instruction.

`classify` is the rule-based reading, measured on tests/data/message_kinds.jsonl (326 realistic chat
messages, 307 labelled before the rules were written; tests/unit/test_message_kinds.py prints precision and
recall per kind). The LLM reading (`core.formation.observations.llm_formation`) uses the same labels and
falls back to these rules.

The rules, in order:
1. correction: `core.conversation.feedback.is_correction` (a reply opening with the interjection "no":
   "No, …", "No.", "no it was…", not the determiner of "No dogs are allowed…"; "that's wrong",
   "actually, <a fact>", "Lyon, not Paris", ...) or a change of mind ("scratch that", "I changed my mind").
2. acknowledgement: nothing is left once greetings, thanks, praise and interjections are taken off the
   front ("Thanks!", "Hey, how are you?", "Ok cool", "Ha, fair."), or only what speaks about the
   conversation itself ("Sorry, I got pulled away.", `about_the_chat`).
3. instruction: a request to do something: "can/could/would you <verb>" unless the verb asks for
   information (tell, remind, explain: a question), or an imperative opening ("Write…", "Please…",
   "Always answer in…", "Don't…").
4. question: a sentence ending with "?", or an opening wh-word or inverted auxiliary ("what did i plant").
5. statement: everything else (facts, preferences, plans, events), "Remember that…" and "FYI…" included:
   they tell a fact.
"""

from __future__ import annotations

import re

from core.conversation.feedback import (  # one reading of apostrophes, phrases and sentences for both
    _APOSTROPHES,
    _SENTENCE_END,
    ACKNOWLEDGEMENTS,
    PRAISE,
    _phrases,
    is_correction,
)
from core.models import MESSAGE_KINDS, MessageKind

__all__ = ["MESSAGE_KINDS", "MessageKind", "about_the_chat", "classify", "content_of", "opener_length",
           "statement_sentences"]



def _alternatives(phrases) -> str:
    """The phrases as regex alternatives, longest first (so "hello there" is taken whole, not "hello")."""
    return _phrases(tuple(sorted(phrases, key=len, reverse=True)))


# Greetings, farewells, interjections and social phrases: a message made only of these (and of
# ACKNOWLEDGEMENTS / PRAISE) says nothing to remember.
SMALL_TALK = ("hi", "hello", "hey", "hiya", "hello there", "hey there", "hi there", "good morning",
              "good afternoon", "good evening", "good night", "morning", "evening", "night", "night night",
              "bye", "bye for now", "bye bye", "goodbye", "see you", "see you tomorrow", "see you later",
              "see you soon", "see ya", "talk later", "talk soon", "have a nice day", "have a good day",
              "have a great day", "have a good one", "have a nice evening", "have a good weekend",
              "how are you", "how are you doing", "how are you today", "how's it going", "how is it going",
              "what's up", "sup", "lol", "lmao", "haha", "hahaha", "hehe", "ha", "wow", "oh", "ooh", "ah",
              "aha", "hmm", "hmmm", "hm", "yes", "yep", "yeah", "yup", "sure", "ok", "okay", "k", "kk",
              "alright", "all right", "fair", "fair enough", "right", "indeed", "true", "no worries",
              "no worries at all", "no problem", "no problem at all", "np", "no thanks", "no thank you",
              "you're the best", "you're a star", "you rock", "you're welcome",
              "thanks a lot", "thanks a million", "thank you so much", "thanks so much", "many thanks",
              "that's exactly what i needed", "exactly what i needed", "just what i needed", "well done",
              "good job", "nice one", "sweet", "neat", "yay", "phew", "oops", "welcome", "interesting")
_OPENER = re.compile(
    rf"^(?:\W*(?:{_alternatives(SMALL_TALK + ACKNOWLEDGEMENTS + PRAISE)})(?![\w'])[\s,.!;:—–-]*)+",
    re.IGNORECASE)
# A change of mind corrects an earlier statement as much as "no" does.
_CHANGE_OF_MIND = re.compile(
    r"\b(?:scratch\s+that|changed\s+my\s+mind|change\s+of\s+plans?|let\s+me\s+correct|mixing\s+(?:them|it|"
    r"those|these)?\s*up|got\s+that\s+wrong|got\s+it\s+wrong|i\s+was\s+wrong)\b|^\W*correction\b",
    re.IGNORECASE)
# "Remember that…", "FYI…": a fact told, not a request.
_TELLS = re.compile(r"^\W*(?:please\s+)?(?:remember|note|keep\s+in\s+mind|bear\s+in\s+mind|fyi|for\s+the\s+record|"
                    r"just\s+so\s+you\s+know|heads\s+up)\b", re.IGNORECASE)
# "can you remind me…", "could you tell me…" ask for information: questions.
_POLITE = re.compile(r"^\W*(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:also\s+)?(\w+)",
                     re.IGNORECASE)
INFO_VERBS = ("tell", "remind", "explain", "say", "recall", "remember", "confirm", "guess", "see", "know")
IMPERATIVES = ("write", "rewrite", "summarise", "summarize", "translate", "remind", "draft", "make", "give",
               "list", "help", "suggest", "forget", "explain", "set", "tell", "create", "show", "plan", "call",
               "stop", "compare", "check", "quiz", "put", "calculate", "go", "continue", "try", "find", "turn",
               "keep", "use", "send", "add", "delete", "remove", "generate", "describe", "recommend", "book",
               "schedule", "draw", "format", "convert", "shorten", "expand", "simplify", "proofread", "edit",
               "sort", "organise", "organize", "outline", "brainstorm", "imagine", "pretend", "act",
               "answer", "respond", "reply", "ignore", "avoid", "save", "track", "update", "fix", "search",
               "look", "name", "pick", "choose", "count", "estimate", "teach", "walk", "repeat", "elaborate",
               "clarify", "please", "don't", "dont", "never", "always", "only", "let's")
_IMPERATIVE = re.compile(rf"^\W*(?:{_alternatives(IMPERATIVES)})(?![\w'])", re.IGNORECASE)
_WH = re.compile(r"^\W*(?:and\s+|so\s+|but\s+)?(?:what|when|where|who|whom|whose|why|how|which)(?![\w])",
                 re.IGNORECASE)
_INVERTED = re.compile(
    r"^\W*(?:and\s+|so\s+)?(?:do|does|did|is|are|was|were|am|can|could|should|would|will|have|has|had|"
    r"shall|may|might|must|isn't|aren't|didn't|doesn't|don't|won't|can't|haven't)\s+"
    r"(?:i|you|we|my|he|she|they|it|there|the|this|that|your|our|his|her|their|a|an|anyone|someone)\b",
    re.IGNORECASE)


# Sentences about the conversation itself, not the user's world: an apology for a pause, "I'm back",
# "one more thing". What a message tells leaves them out (`statement_sentences`, and a session's
# summary), and a message of nothing else is small talk. Whole sentences only: "Sorry, I was away in
# Lisbon last week." tells something. In the demo's chats, "Sorry, I got pulled away. What is next for
# Priya?" had stored "Sorry, I got pulled away." as a fact, 8 times, and a search for Priya found them.
_ABOUT_THE_CHAT = re.compile(
    r"^\W*(?:(?:sorry|apologies|my\s+apologies|oops"
    r"|(?:i\s+)?(?:got|was|have\s+been|i've\s+been|had\s+to\s+step)\s+(?:pulled\s+|called\s+|dragged\s+)?away"
    r"|(?:i\s+)?(?:got|was)\s+(?:sidetracked|distracted|interrupted)|(?:i\s+)?stepped\s+away"
    r"|(?:about|for)\s+(?:the\s+)?(?:delay|wait|late\s+reply|slow\s+reply)"
    r"|i'm\s+back|back\s+again|brb|be\s+right\s+back|one\s+more\s+(?:thing|question)|quick\s+question"
    r"|where\s+were\s+we|anyway)(?![\w'])\W*)+$", re.IGNORECASE)


def about_the_chat(sentence: str) -> bool:
    """Whether a sentence only speaks about the conversation ("Sorry, I got pulled away.", "I'm back")."""
    return bool(_ABOUT_THE_CHAT.match(sentence.translate(_APOSTROPHES)))


def opener_length(text: str) -> int:
    """How many leading characters are greetings, thanks, praise or interjections."""
    match = _OPENER.match(text.translate(_APOSTROPHES))
    return match.end() if match else 0


def content_of(text: str) -> str:
    """The message without its opening small talk ("Hi! I just moved…" → "I just moved…")."""
    return text[opener_length(text):].strip()


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_WH.match(sentence) or _INVERTED.match(sentence))


def classify(text: str) -> MessageKind:
    """The kind of a user message, by the rules in the module docstring."""
    text = text.translate(_APOSTROPHES).strip()
    if is_correction(text) or _CHANGE_OF_MIND.search(text):
        return "correction"
    rest = content_of(text)
    if not re.search(r"\w", rest) or all(about_the_chat(s) for s in _SENTENCE_END.split(rest) if s.strip()):
        return "acknowledgement"
    if _TELLS.match(rest):
        return "statement"
    if polite := _POLITE.match(rest):
        return "question" if polite.group(1).lower() in INFO_VERBS else "instruction"
    if _IMPERATIVE.match(rest):
        return "instruction"
    if any(_is_question(s) for s in _SENTENCE_END.split(rest)):
        return "question"
    return "statement"


_JOINED = re.compile(r"(?:and|but|so|plus)\b[\s,]*", re.IGNORECASE)


def statement_sentences(text: str) -> str:
    """A statement's sentences without its opening small talk, the questions in it and what only speaks
    about the conversation (`about_the_chat`): the offline observation. A message that is one statement
    throughout is kept as it is."""
    text = text.strip()
    rest = content_of(text)
    if len(rest) < len(text):  # "Perfect, and the target is…": the "and" joined the small talk to the rest
        joined = _JOINED.match(rest)
        rest = rest[joined.end():] if joined and joined.end() < len(rest) else rest
        rest = rest[:1].upper() + rest[1:]
    sentences = [s for s in _SENTENCE_END.split(rest)
                 if s.strip() and not _is_question(s) and not about_the_chat(s)]
    return " ".join(sentences).strip()
