"""A user message's kind: statement, question, acknowledgement (or small talk), correction, instruction.

`classify` is the rule-based reading, measured on tests/data/message_kinds.jsonl (621 realistic chat
messages, 307 labelled before the rules were written, 99 look-ups and statements like them added with
`core.formation.lookups`, then an agent's 40 search phrases and 14 like them, with `lookups.searched_for`,
then a user pass's 38, praise of an idea, updates and "Actually, I…", labelled before rules 1 and 2 read
them: 17 read right before, 36 after; then a formation pass's 30, questions and requests announced
("Actually, I have a question about the visa"), terse states ("allergic to penicillin") and near-misses,
labelled before `announces` and `lookups.STATES` read them: 12 read right before, 28 after; then a second
formation pass's 54, terse states by their form ("lactose intolerant since childhood"), search phrases like
them and switches said in passing, labelled before `lookups.tells_a_state` read them: 35 right before, 49
after; then 93 (batch "langform", each Portuguese or German row with its `lang`): Portuguese and German small
talk, corrections, requests and facts handed over, and English terse notes ("Lives with two cats",
"claustrophobic in lifts") and search phrases like them, labelled before the rules read them: 28 right before,
93 after; then 15 (batch "langform 2"): German "Doch, …" and Portuguese and German changes told in passing,
11 right before, 15 after;
tests/unit/test_message_kinds.py prints precision and recall per kind). The LLM reading
(`core.formation.observations.llm_formation`) uses the same labels and falls back to these rules.

Portuguese and German messages are read with the same rules and short closed lists of their words, each
marked where it is defined (`OTHER_TALK`, `OTHER_IMPERATIVES`, `_OTHER_TOLD`, `_OTHER_WH` here; thanks,
praise and corrections in `core.conversation.feedback`, which reads an answer's next turn with them); no word they share with English changes an English message's kind (such words count only
before a pause, or are left out).

The rules, in order:
1. correction: `core.conversation.feedback.is_correction` (a reply opening with the interjection "no":
   "No, …", "No.", "no it was…", not the determiner of "No dogs are allowed…"; "that's wrong",
   "actually, <a fact>", "Lyon, not Paris", ...), a change of mind ("scratch that", "I changed my mind"), or
   "Actually, I <a state that replaces one>" ("Actually, I live in Denver now"); not a message that opens by
   announcing a question or a request (`announces`: "Actually, I have a question about my new job",
   "Actually, quick question about the visa").
2. acknowledgement: nothing is left once greetings, thanks, praise and interjections are taken off the
   front ("Thanks!", "Hey, how are you?", "Ok cool", "Ha, fair.", "Great idea.", "Fair point!"), or only
   what speaks about the conversation itself ("Sorry, I got pulled away.", `about_the_chat`).
   Then a first sentence that announces a question or a request ("I have a question about the visa", "I
   wanted to ask about…", "I need your help with…"): a question or an instruction, whatever its topic says.
3. instruction: a request to do something: "can/could/would you <verb>" unless the verb asks for
   information (tell, remind, explain: a question), or an imperative opening ("Write…", "Please…",
   "Always answer in…", "Don't…").
4. question: a sentence ending with "?", or an opening wh-word (in Portuguese and German too: "quem é…",
   "wann ist…", `_OTHER_WH`) or inverted auxiliary ("what did i plant"),
   or a look-up, which names what it wants found without a question mark ("latest wiki note I wrote", "the
   recipe my mother sent last week"), or a whole message that is a search phrase, a noun phrase with no
   finite verb and no full stop ("memory leak in the websocket gateway"; "helm chart upgrade failed" has a
   verb and reports: a statement; why, in `core.formation.lookups`).
5. statement: everything else (facts, preferences, plans, events), "Remember that…" and "FYI…" included:
   they tell a fact. So do "Remind me: <a fact>", "Don't forget: <a fact>", "Note: <a fact>" (`TOLD_OPENER`),
   checked before rules 3 and 4: a request whose object is a fact to keep. When the object asks ("Remind me,
   what's the wifi name?") or instructs ("Note: keep the answers short"), the message is that.

What a message tells (`told_statements`, the offline observations, one per statement) is its sentences
without small talk, questions, announced questions and what only speaks about the conversation, each one
statement, but a
sentence that refers back to the one before ("She is a nurse.") stays with it, and:
- without the opener that hands a fact over ("Remind me: my dentist appointment is…" → "My dentist
  appointment is…");
- with the statement before a question's tail in the same sentence ("Inês turns 7 on October 10, ideas for
  a party?" → "Inês turns 7 on October 10.", `told_before_question`), unless it is a condition, a topic or a
  hedge ("If I move to Porto, what…?", "For the party, how many…?", "Quick question, …");
- without a verbless fragment answering the assistant after "Yes,", "Sure," … ("Yes, short and warm. My
  manager is Miguel." → "My manager is Miguel."), nor a request after the first sentence ("We're back
  from Lisbon. Help me write a thank-you note." → "We're back from Lisbon.");
- with what has no word (an emoji) going with the sentence before it, kept or dropped with it.
"""

from __future__ import annotations

import re

from core.conversation.feedback import (  # one reading of apostrophes, phrases and sentences for both
    _APOSTROPHES,
    _SENTENCE_END,
    ACKNOWLEDGEMENTS,
    OTHER_PRAISE,
    OTHER_THANKS,
    PRAISE,
    PRAISED,
    _phrases,
    _unaccented,
    is_correction,
)
from core.formation.lookups import looks_up, searched_for
from core.formation.updates import USES, read
from core.models import MESSAGE_KINDS, MessageKind

__all__ = ["MESSAGE_KINDS", "MessageKind", "about_the_chat", "announces", "classify", "content_of",
           "opener_length", "reads_as_correction", "says_nothing", "sentences", "statement_sentences",
           "told_before_question", "told_statements"]



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
_PAUSE = r"(?=\s*(?:[,.!;:—–-]|$))"
# The same in Portuguese and German (`OTHER_TALK`, `OTHER_THANKS`; each also without its accents, as typed on a
# phone: "Ola", "Ate amanha"): greetings, farewells, "how are you", "no thanks", "you're welcome", "all right",
# thanks. Phrases and words that are no English word; an English word among them ("boa", "gut", "legal",
# "sim", "toll", "prima", "pronto") counts only before a pause, as a praise word does (`OTHER_PRAISE`):
# "Boa parte do ordenado…", "Gut feeling…", "Legal fees…", "Sim card…" open statements.
OTHER_TALK = (
    "olá", "oi", "bom dia", "boa tarde", "boa noite", "tudo bem", "tudo bom", "tudo certo", "tudo tranquilo",
    "como estás", "como está", "como vai", "como vais", "e aí", "até logo", "até já", "até amanhã", "até mais",
    "até à próxima", "até breve", "adeus", "tchau", "xau", "beijinhos", "beijos", "abraço", "abraços",
    "bom fim de semana", "bom trabalho", "de nada", "não faz mal", "sem problema", "sem problemas",
    "não há problema", "não tem problema", "não obrigado", "não obrigada", "não, obrigado", "não, obrigada",
    "tá bem", "está bem", "tá", "pois", "pois é", "percebi", "entendi", "faz sentido", "muito bem",
    "com certeza", "exatamente", "exactamente", "isso mesmo", "era mesmo isso", "era isso mesmo",
    "era mesmo isso que eu precisava", "era mesmo isso que precisava", "ok", "okay",
    "hallo", "moin", "servus", "grüß dich", "grüß gott", "guten morgen", "guten tag", "guten abend",
    "gute nacht", "tschüss", "tschüs", "ciao", "bis später", "bis morgen", "bis bald", "bis dann",
    "auf wiedersehen", "schönes wochenende", "schönen tag", "schönen abend", "wie geht's", "wie geht es dir",
    "wie geht es ihnen", "alles klar", "alles gut", "passt", "verstanden", "kein problem", "keine ursache",
    "gern geschehen", "gerne", "bitte schön", "bitteschön", "macht nichts", "nein danke", "nein, danke",
    "nee danke", "nee, danke", "sehr gut", "das hilft", "das hilft mir", "macht sinn", "ergibt sinn",
    "genau das habe ich gebraucht", "genau das brauchte ich", "genau das wollte ich",
    # receipts, the user's or the assistant's ("Anotado.", "Entendido!", "Notiert.", "Alles klar, gemerkt.")
    "entendido", "percebido", "anotado", "fica anotado", "está anotado", "registado", "registrado", "combinado",
    "notiert", "ist notiert", "gemerkt", "ist gemerkt", "mach ich", "wird gemacht", "geht klar")
OTHER_TALK = _unaccented(OTHER_TALK)
# Praise of what the assistant said ("Great idea.", "Fair point!", "That's a good plan", "Love that idea"),
# before a pause or the end: "Great ideas come to me…", "Good call centres are…" tell something. A praise
# word alone counts before a pause or another word of the opener ("Perfect, thanks"), as feedback reads it:
# "Nice people run the bakery" is no "Nice!".
_TALK = SMALL_TALK + ACKNOWLEDGEMENTS + OTHER_TALK + OTHER_THANKS
_PRAISING = (rf"(?:(?:(?:that's|that\s+is|what|such)\s+)?(?:an?\s+)?(?:(?:really|very|so|pretty)\s+)?"
             rf"(?:{_alternatives(PRAISE)})|love\s+(?:that|this|the|your))\s+(?:{_alternatives(PRAISED)}){_PAUSE}"
             rf"|(?:{_alternatives(PRAISE + OTHER_PRAISE)})(?:{_PAUSE}|(?=\s+(?:{_alternatives(_TALK + PRAISE + OTHER_PRAISE)})"
             r"(?![\w'])))")
_OPENER = re.compile(rf"^(?:\W*(?:{_PRAISING}|{_alternatives(_TALK)})(?![\w'])[\s,.!;:—–-]*)+", re.IGNORECASE)
# A change of mind corrects an earlier statement as much as "no" does.
_CHANGE_OF_MIND = re.compile(
    r"\b(?:scratch\s+that|changed\s+my\s+mind|change\s+of\s+plans?|let\s+me\s+correct|mixing\s+(?:them|it|"
    r"those|these)?\s*up|got\s+that\s+wrong|got\s+it\s+wrong|i\s+was\s+wrong)\b|^\W*correction\b",
    re.IGNORECASE)
# "Actually, I…" goes on to something new ("Actually, I have another question", `is_correction`), or states
# what contradicts an earlier fact: a value of an attribute, or a change ("Actually, I live in Denver now",
# "Actually, I started eating fish again, so I'm pescatarian now"; `core.formation.updates.read`).
_ACTUALLY_I = re.compile(r"^\W*actually\b[\s,]*(?=(?:i|i'm|i've|we|we're|we've)\b)", re.IGNORECASE)
# A sentence that announces what comes next instead of telling it: a question ("Actually, I have a
# question about the visa", "I wanted to ask about…", "Quick question about…") or a request for help ("I
# need your help with…"). What follows is its topic, no fact: "Actually, I have a question about my new
# job" tells no new job, and no correction either. A question for someone else ("I have a question for my
# doctor") or asking someone else ("I need to ask my landlord…") tells a plan.
_QUESTION_NOUN = (r"(?:(?:a|an|one|another|one\s+more|two|a\s+few|a\s+couple\s+of|some)\s+)?"
                  r"(?:(?:quick|small|short|little|last|silly|simple|follow-up|related|different|new)\s+)*"
                  r"questions?")
_ANNOUNCES = re.compile(
    r"^\W*(?:(?:actually|so|also|and|but|oh|well|ok|okay|hey|hi|sorry)(?![\w'])[\s,]*)*(?:"
    rf"(?P<question>(?:i|we)(?:\s+(?:also\s+|still\s+)?have(?:\s+got)?|'ve\s+got|\s+got)\s+{_QUESTION_NOUN}"
    r"(?!\s+for\s+(?!you\b))"
    r"|(?:i|we)(?:\s+(?:just\s+|also\s+)?(?:want(?:ed)?|need(?:ed)?|would\s+like|wanna|meant)|'d\s+like)"
    r"\s+to\s+ask"
    r"(?!\s+(?:(?:my|our|the|his|her|their|him|them)\b|(?-i:[A-Z])))"
    rf"|let\s+me\s+ask|{_QUESTION_NOUN}(?=\s*(?:about|on|regarding|re|for\s+you)\b|\s*[:,.?!]|\s*$))"
    r"|(?P<request>(?:i|we)(?:\s+(?:need|want|would\s+like|could\s+use)|'d\s+like)\s+(?:your|some)\s+help))"
    r"(?![\w'])", re.IGNORECASE)
# "Remember that…", "FYI…": a fact told, not a request.
_TELLS = re.compile(r"^\W*(?:please\s+)?(?:remember|note|keep\s+in\s+mind|bear\s+in\s+mind|fyi|for\s+the\s+record|"
                    r"just\s+so\s+you\s+know|heads\s+up)\b", re.IGNORECASE)
# "Remind me: …", "Don't forget that …", "FYI, …": what follows is handed over to keep. The opener is no part
# of the fact (`statement_sentences` takes it off); a "remind me" without a pause or "that" asks for a
# reminder ("Remind me to call the bank"), an instruction.
TOLD_OPENER = re.compile(
    r"^\W*(?:please\s+)?(?:(?:remember|note|keep\s+in\s+mind|bear\s+in\s+mind|remind\s+me|don't\s+forget|"
    r"do\s+not\s+forget|never\s+forget|make\s+a\s+note|take\s+note|for\s+your\s+information)"
    r"(?:\s*[:,—–]\s*|\s+-\s+|\s+that\s+)"
    r"|(?:fyi|for\s+the\s+record|just\s+so\s+you\s+know|heads\s+up)(?![\w'])[\s,:;—–-]*)", re.IGNORECASE)
# The same in Portuguese and German: "Lembra-te que…", "Não te esqueças: …", "Merk dir: …", "Denk daran, …"
# hand a fact over (`_OTHER_TOLD`, taken off the fact); "Lembra-me: …" hands over what follows, a question or a
# fact. A German opener before "dass" ("Merk dir, dass ich allergisch gegen Nüsse bin.") leaves its clause with
# the verb last: the fact is kept whole (`_OTHER_TELLS`), as said.
_OTHER_TOLD = re.compile(
    r"^\W*(?:(?:lembra-te|lembre-se|lembrem-se)\s+(?:de\s+)?que\s+|(?:lembra-te|lembre-se|lembra-me|lembre-me)\s*[:,—–]\s*"
    r"|n[ãa]o\s+(?:te\s+esque[çc]as|se\s+esque[çc]a)\s*(?:[:,—–]\s*|(?:de\s+)?que\s+)"
    r"|(?:toma|tome)\s+nota\s*(?:[:,—–]\s*|de\s+que\s+)|fica\s+a\s+saber\s+que\s+|s[óo]\s+para\s+saberes\s*[:,]?\s*"
    r"|para\s+registo\s*[:,]\s*|nota\s*:\s*"
    r"|merk(?:e)?\s+dir\s*[:—–]\s*|merk(?:e)?\s+dir\s*,(?!\s*dass\b)\s*|denk\s+(?:bitte\s+)?daran\s*[:—–]\s*"
    r"|vergiss\s+nicht\s*[:—–]\s*|zur\s+info(?:rmation)?\s*[:,]\s*|nur\s+zur\s+info\s*[:,]\s*|hinweis\s*:\s*)",
    re.IGNORECASE)
_OTHER_TELLS = re.compile(r"^\W*(?:merk(?:e)?\s+dir|denk\s+(?:bitte\s+)?daran|vergiss\s+nicht)\s*,?\s*dass\b",
                          re.IGNORECASE)
# Portuguese and German requests, as "Write…", "Please…", "Don't use…", "Could you draft…?" (rule 3): an
# imperative first, in the forms that are no English word ("usa", "resume", "agenda", "marca", "sag", "such"
# are: left out), a Portuguese one with its pronoun ("Explica-me", "Diz-me"), a formal German one ("Antworten
# Sie…"), or "can you …" ("Podes escrever…?", "Kannst du mir … schreiben?"), a question when its verb asks for
# information ("Podes dizer-me…?", "Kannst du mir sagen…?").
OTHER_IMPERATIVES = (
    "responde", "responda", "respondam", "escreve", "escreva", "reescreve", "reescreva", "traduz", "traduza",
    "resuma", "explica", "explique", "explica-me", "faz-me", "faça", "faça-me", "diz-me", "diga-me", "mostra",
    "mostra-me", "mostre", "mostre-me", "liste", "cria", "crie", "ajuda-me", "ajude-me", "ajuda-nos", "lembra-me",
    "lembre-me", "corrige", "corrija", "calcula", "calcule", "compara", "sugere", "sugira", "recomenda",
    "recomende", "procura", "procure", "envia", "envie", "manda", "mande", "apaga", "apague", "adiciona",
    "adicione", "tenta", "tente", "descreve", "descreva", "formata", "organiza", "prepara", "escolhe", "escolha",
    "dá-me", "dê-me", "gera", "planeia", "planeie", "revê", "reveja", "verifica", "verifique", "inventa",
    "por favor", "não uses", "não escrevas", "não respondas", "não digas", "não faças", "não inventes",
    "não incluas", "não mandes", "não envies", "não ponhas", "não repitas", "nunca uses", "usa sempre",
    "antworte", "antwortet", "schreib", "schreibe", "übersetz", "übersetze", "erklär", "erkläre", "fass", "fasse",
    "mach", "mache", "gib", "zeig", "zeige", "nenne", "erstelle", "hilf", "erinnere", "korrigiere", "berechne",
    "vergleiche", "empfiehl", "schlag", "schick", "schicke", "sende", "speichere", "lösche", "füge", "versuch",
    "versuche", "formuliere", "beschreibe", "prüfe", "überprüfe", "liste", "wiederhole", "verwende", "benutze",
    "nutze", "vermeide", "ignoriere", "bitte", "sag mir", "sage mir", "vergiss", "keine emojis")
_OTHER_IMPERATIVE = re.compile(
    rf"^\W*(?:{_alternatives(_unaccented(OTHER_IMPERATIVES))})(?![\w'-])|^\W*(?:bitte\s+)?\w+en\s+(?-i:Sie)\b",
    re.IGNORECASE)
_OTHER_POLITE = re.compile(
    r"^\W*(?:por\s+favor,?\s+)?(?:podes|podias|poderias|poderia|consegues|conseguias|pode)(?:-me)?\s+(?:me\s+|nos\s+)?"
    r"(?!ser\b|estar\b|haver\b)(?P<pt>[\w-]+)"
    r"|^\W*(?:kannst|könntest|konntest|kann|können|könnten|würdest|würden)\s+(?:du|(?-i:Sie))\b(?P<de>[^,.?!]*)",
    re.IGNORECASE)
OTHER_INFO_VERBS = re.compile(r"^(?:dizer|diz|lembrar|recordar|explicar|confirmar|contar)(?:-me|-nos)?$"
                              r"|\b(?:sagen|erklären|erinnern|bestätigen|verraten|nennen)\b", re.IGNORECASE)


def _asks_in_other_words(polite: re.Match[str]) -> bool:
    """Whether a Portuguese or German "can you …" asks for information ("Podes dizer-me…", "Kannst du mir
    sagen…") rather than asks for something done."""
    return bool(OTHER_INFO_VERBS.search(polite.group("pt") or polite.group("de") or ""))


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
# "Never", "always" and "only" instruct before a verb ("Never use emojis"), not before what a statement
# says ("Never been to Japan.", "Only two days left until the race.").
_IMPERATIVE = re.compile(
    r"^(?!\W*(?:never|always|only)\s+(?:been|had|got|was|were|ever|once|a|an|the|one|two|three|four|five|six|"
    rf"seven|eight|nine|ten|\d)(?![\w']))\W*(?:{_alternatives(IMPERATIVES)})(?![\w'])", re.IGNORECASE)
# The Portuguese and German wh-words that open a question and seldom a statement, so a question typed without
# "?" is one ("Quem é a pediatra da Inês", "Wann ist der TÜV fällig"); not those that also open a statement
# or are English words: "quando", "como", "quanto", "porque" ("Quando o Jonas vem, fica no hotel", "Como
# peixe", "Quanto a mim", "Porque chovia, ficámos"), "wie" ("Wie immer…"), "was".
_OTHER_WH = (r"quem|qual|quais|onde|aonde|quantos|quantas|o\s+qu[eê]"
             r"|wer|wen|wem|wessen|wann|wo|wohin|woher|warum|wieso|weshalb|welche[rnms]?|wie\s+viele?")
_WH = re.compile(r"^\W*(?:and\s+|so\s+|but\s+|e\s+|und\s+)?"
                 rf"(?:what|when|where|who|whom|whose|why|how|which|{_OTHER_WH})(?![\w])", re.IGNORECASE)
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


# "Here is a photo of the label", "I've attached the draft": what the message carries, not a fact (the
# attachment's own text is not imported either).
_SHOWN = re.compile(
    r"^\W*(?:here(?:'s|\s+is|\s+are)|attached(?:\s+is|\s+are)?|i(?:'ve|\s+have)?\s+(?:attached|uploaded|pasted))"
    r"\s+(?:(?:a|an|the|my|some|this|that)\s+)?(?:photo|picture|pic|screenshot|image|file|link|list|draft|copy|"
    r"scan|pdf|document|doc)s?(?![\w'])(?:\s+of\s[^.!?,;:—–-]*)?[.!\s]*$", re.IGNORECASE)


def about_the_chat(sentence: str) -> bool:
    """Whether a sentence only speaks about the conversation ("Sorry, I got pulled away.", "I'm back",
    "Here is a photo of the label.")."""
    sentence = sentence.translate(_APOSTROPHES)
    return bool(_ABOUT_THE_CHAT.match(sentence) or _SHOWN.match(sentence))


def opener_length(text: str) -> int:
    """How many leading characters are greetings, thanks, praise or interjections."""
    match = _OPENER.match(text.translate(_APOSTROPHES))
    return match.end() if match else 0


def content_of(text: str) -> str:
    """The message without its opening small talk ("Hi! I just moved…" → "I just moved…")."""
    return text[opener_length(text):].strip()


# Ends with "?" (or the full-width "？" of Chinese and Japanese, the Arabic "؟"), an emoji or a bracket after it
# aside: "我住在哪里？" was a statement, so its extractive answer said "noted" and it was retrieved as a memory.
_ASKS = re.compile(r"[?\uff1f\u061f]\W*$")


def _is_question(sentence: str) -> bool:
    return bool(_ASKS.search(sentence) or _WH.match(sentence) or _INVERTED.match(sentence)
                or looks_up(sentence))


def sentences(text: str) -> list[str]:
    """The sentences of a text; what has no word (an emoji after "?") goes with the sentence before it."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if out and not re.search(r"\w", piece):
            out[-1] = f"{out[-1]} {piece}"
        elif piece.strip():
            out.append(piece)
    return out


def _handed_over(text: str) -> MessageKind | None:
    """The kind of a "Remind me: …" / "FYI …" message, by what it hands over: a question when that asks
    ("Remind me, what's the wifi name?"), an instruction when it instructs ("Note: keep the answers
    short"), else a statement. None without such an opener."""
    told = TOLD_OPENER.match(text) or _TELLS.match(text) or _OTHER_TOLD.match(text) or _OTHER_TELLS.match(text)
    if told is None:
        return None
    rest = text[told.end():].strip()
    first = next(iter(_SENTENCE_END.split(rest)), "")
    if first and _is_question(first):
        return "question"
    if told.re in (TOLD_OPENER, _OTHER_TOLD) and (_IMPERATIVE.match(rest) or _POLITE.match(rest)
                                                   or _OTHER_IMPERATIVE.match(rest)):
        return "instruction"
    return "statement"


# A question's tail after a statement in the same sentence: "…, ideas for a party?", "… — what should I
# pack?", "…, can it take snow chains?". A wh-word, an auxiliary before its subject, or a request for ideas.
_ASKING = re.compile(
    r"(?:(?:and|but|so)\s+)?(?:(?:what|when|where|who|whom|whose|why|how|which)(?![\w'])"
    r"|(?:do|does|did|is|are|was|were|am|can|could|should|would|will|shall|may|might|must|isn't|aren't|"
    r"doesn't|don't|didn't|won't|can't|shouldn't|wouldn't)\s+(?:i|you|we|he|she|they|it|that|this|there|my|"
    r"our|your|anyone|someone)\b"
    r"|(?:any\s+)?(?:ideas?|suggestions?|tips|thoughts|recommendations?|advice|pointers)\b|any\s+\w+)",
    re.IGNORECASE)
# Where the tail begins: a comma, semicolon or colon, or a dash between spaces.
_CLAUSE_END = re.compile(r"[,;:]\s+|\s+[—–-]+\s+|\s*[—–]\s*")
# A tail that only asks for confirmation ("…, isn't it?", "…, is that right?"): the words before it are
# what the user is unsure of, not a fact told.
_CONFIRMING = re.compile(r"(?:(?:is|isn't|was|wasn't|am|are|aren't)\s+(?:that|it|this|i)\s+"
                         r"(?:right|correct|true|ok|okay|so)|right|correct|true|ok|okay|yes|no"
                         r"|(?:don't|do|wouldn't|would)\s+you\s+(?:think|agree|say)|what\s+do\s+you\s+think"
                         r"|how\s+does\s+that\s+sound|(?:does\s+that|do\s+you)\s+(?:sound|make\s+sense))\b",
                         re.IGNORECASE)
# What begins words that set a condition or a topic, or hedge, before the question: "If I move to Porto, …",
# "Given the rain, …", "Quick question, …", "Sorry to bother you, …". They tell nothing.
_NOT_TOLD = re.compile(
    r"(?:if|when|whenever|since|because|as|although|though|unless|until|before|after|while|once|given|"
    r"assuming|suppose|supposing|in\s+case|whether|speaking\s+of|going\s+back\s+to|back\s+to|as\s+for|"
    r"regarding|re|about|out\s+of\s+curiosity|(?:just\s+)?curious|(?:one\s+|quick\s+|a\s+)?question|"
    r"honestly|to\s+be\s+honest|sorry\s+to\s+\w+|i\s+(?:was\s+)?(?:just\s+)?wondering|i\s+wonder|"
    r"i'm\s+(?:just\s+)?(?:curious|wondering)|i'd\s+like\s+to\s+know|i\s+(?:want|need)\s+to\s+know|"
    # a reaction to what was said ("Sounds like you had fun, what…?"), or words about the chat
    r"(?:it\s+|that\s+|this\s+)?(?:sounds|looks|seems|feels)|(?:well\s+)?enough\s+about)(?![\w'])"
    # unsure or guessing, about asking ("I never really asked, what…?"), about the assistant ("You said…")
    r"|.*\b(?:not\s+sure|i\s+bet|must\s+(?:have|be)|ask|asked|asking|you|your|you're|you've|yours)\b",
    re.IGNORECASE)
# A preposition before the question sets its topic ("For the party on Saturday, how many pizzas…?", "With
# two kids, which car…?"), unless a subject follows ("In May we moved to Porto, any tips?").
_PREPOSITION = re.compile(r"(?:for|with|without|between|in|on|at|during|from|to|by|of|besides|apart\s+from|"
                          r"compared\s+to|like|after|before)(?![\w'])", re.IGNORECASE)
_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|he|he's|she|she's|they|they're|"
                      r"it's|there's|there\s+is|there\s+are)\b", re.IGNORECASE)
_TRAILING_FILLER = re.compile(r"(?:\s*[,;:—–-]+\s*(?:i\s+mean|you\s+know|like|so|and|but|well|though))*"
                              r"[\s,;:—–-]*$", re.IGNORECASE)
_LEADING_JOIN = re.compile(r"^\W*(?:(?:and|but|so|also|then|ok|okay)\b[\s,]*)+", re.IGNORECASE)
# As `observations.MIN_TOLD_WORDS`: "And the dentist, what time was it?" tells nothing; "Inês turns 7 on
# October 10, …?" does.
MIN_HEAD_WORDS = 4


def told_before_question(sentence: str) -> str | None:
    """The statement a question's sentence makes before its question ("Inês turns 7 on October 10, ideas
    for a party?" → "Inês turns 7 on October 10."), or None: the sentence only asks, its tail only asks for
    confirmation ("…, isn't it?"), or what comes before sets a condition or a topic or hedges (`_NOT_TOLD`,
    `_PREPOSITION`), or is too short (MIN_HEAD_WORDS), or is itself a question or a request."""
    sentence = sentence.strip()
    if not _ASKS.search(sentence) or _WH.match(sentence) or _INVERTED.match(sentence):
        return None
    for boundary in _CLAUSE_END.finditer(sentence):
        tail = sentence[boundary.end():].rstrip("?!. ")
        if not _ASKING.match(tail) or len(tail.split()) < 3 and not re.match(
                r"(?:any\s+)?(?:ideas?|suggestions?|tips|thoughts|advice)\b", tail, re.IGNORECASE):
            continue
        if _CONFIRMING.fullmatch(tail.strip()):
            return None
        head = sentence[:boundary.start()].strip()
        plain = head[_LEADING_JOIN.match(head).end():] if _LEADING_JOIN.match(head) else head
        if (len(plain.split()) < MIN_HEAD_WORDS or _is_question(plain) or _NOT_TOLD.match(plain)
                or (_PREPOSITION.match(plain) and not _SUBJECT.search(plain)) or _IMPERATIVE.match(plain)
                or _POLITE.match(plain) or about_the_chat(plain)):
            return None
        head = _TRAILING_FILLER.sub("", head)
        return head + ("" if head[-1:] in ".!" else ".")
    return None


def announces(sentence: str) -> MessageKind | None:
    """What a sentence that only announces what comes next announces: "question" ("Actually, I have a
    question about the visa", "Quick question about…"), "instruction" ("I need your help with…"), else
    None (`_ANNOUNCES`)."""
    m = _ANNOUNCES.match(sentence.translate(_APOSTROPHES))
    return None if m is None else "question" if m.group("question") else "instruction"


def reads_as_correction(text: str) -> bool:
    """Whether a message (or one statement of it) corrects by its own words: rule 1 of the module
    docstring ("No, …", "…, not Paris", "scratch that"); not when it opens by announcing a question or a
    request ("Actually, quick question about the visa")."""
    text = text.translate(_APOSTROPHES).strip()
    if announces(next(iter(_SENTENCE_END.split(text)), "")):
        return False
    if is_correction(text) or _CHANGE_OF_MIND.search(text):
        return True
    if actually := _ACTUALLY_I.match(text):
        said = read(text[actually.end():])  # a name used alone ("Actually, I went with Ana") states no attribute
        return any(c.attribute != USES for c in said.claims) or said.update
    return False


def classify(text: str) -> MessageKind:
    """The kind of a user message, by the rules in the module docstring."""
    text = text.translate(_APOSTROPHES).strip()
    if reads_as_correction(text):
        return "correction"
    rest = content_of(text)
    if not re.search(r"\w", rest) or all(about_the_chat(s) for s in _SENTENCE_END.split(rest) if s.strip()):
        return "acknowledgement"
    if announced := announces(next(iter(_SENTENCE_END.split(rest)), "")):
        return announced
    if handed := _handed_over(rest):
        return handed
    if polite := _POLITE.match(rest):
        return "question" if polite.group(1).lower() in INFO_VERBS else "instruction"
    if polite := _OTHER_POLITE.match(rest):
        return "question" if _asks_in_other_words(polite) else "instruction"
    if _IMPERATIVE.match(rest) or _OTHER_IMPERATIVE.match(rest):
        return "instruction"
    if searched_for(rest) or any(_is_question(s) for s in _SENTENCE_END.split(rest)):
        return "question"
    return "statement"


_JOINED = re.compile(r"(?:and|but|so|plus)\b[\s,]*", re.IGNORECASE)
# A request after what a statement tells: an imperative verb before its object ("Help me write…", "Write a
# retry decorator…", "Please call the shop…"). Not "Plan: the train at 8", "Book club is on Thursdays",
# "Please note the code is 4412" (`_TELLS`).
_ORDER = re.compile(rf"^\W*(?:please\s+)?(?:{_alternatives(IMPERATIVES)})\s+"
                    r"(?:me|us|him|her|them|it|a|an|the|my|our|your|this|that|these|those|some|\d)\b",
                    re.IGNORECASE)
# What marks a clause: a subject, an auxiliary or a past tense. "Short and warm", "In Python please" and
# "Bullet points" have none; "Ana is vegetarian", "We moved" do.
_CLAUSE = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|we|we're|we've|you|he|he's|she|she's|it|it's|they|they're|"
                     r"there|this|that|that's|is|are|was|were|am|be|been|has|have|had|do|does|did|will|would|"
                     r"can|could|should|must|\w+'s|\w+ed)\b", re.IGNORECASE)


def _fragment(sentence: str) -> bool:
    """A short verbless answer to the assistant ("short and warm", "in Python please"): no fact."""
    return len(sentence.split()) < MIN_HEAD_WORDS and not _CLAUSE.search(sentence)


# A sentence that leans on the one before it: a pronoun or a demonstrative that refers back ("My sister lives
# in Berlin. She is a nurse.", "I bought a car. It's a Toyota.", "That's why I moved."). It is one statement
# with that sentence: alone, "She is a nurse." says nobody's job. "This weekend …", "That morning …" open a
# time, not a reference.
_REFERS_BACK = re.compile(
    r"^\W*(?:(?:and|but|so)\s+)?(?:he|she|it|they|him|her|his|its|their|them|he's|she's|it's|they're|"
    r"they've|it'll|they'll|(?:this|that|these|those)(?!\s+(?:morning|afternoon|evening|night|week|weekend|"
    r"month|year|time|day|spring|summer|autumn|fall|winter|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)s?\b)(?:'s)?)(?![\w'-])", re.IGNORECASE)

# What has no word at the start of a sentence (an emoji after "!"): it goes with the sentence before it.
_LEADING_MARK = re.compile(r"^[^\w\s\"'“‘(\[]+\s+(?=\w)")


def told_statements(text: str) -> list[str]:
    """What a message tells, statement by statement: its told sentences (see the module docstring), each
    one statement, but a sentence that refers back to the one before it (`_REFERS_BACK`) stays with it. A
    correction of one statement then supersedes that statement alone (`core.formation.supersede`)."""
    statements: list[str] = []
    for sentence in _told_sentences(text):
        if statements and (mark := _LEADING_MARK.match(sentence)):  # "…today! 🎉 The flat…": the 🎉 is today's
            statements[-1] = f"{statements[-1]} {mark.group().strip()}"
            sentence = sentence[mark.end():]
        if statements and _REFERS_BACK.match(sentence.translate(_APOSTROPHES)):
            statements[-1] = f"{statements[-1]} {sentence}"
        else:
            statements.append(sentence)
    return statements


def statement_sentences(text: str) -> str:
    """What a message tells, as one text: its `told_statements` joined. A message that is one statement
    throughout is kept as it is."""
    return " ".join(told_statements(text)).strip()


# A fenced block (from "```" at a line's start to the next "```", or to the end when it is left open), with
# the clause that introduces it on the lines before, ending in a colon, if any.
_PASTED = re.compile(r"(?:[^.!?\n]*:[ \t]*\n\s*|(?<![^\n])[ \t]*)```.*?(?:```|\Z)", re.DOTALL)


def _told_sentences(text: str) -> list[str]:
    """The sentences a message tells (see the module docstring), in order."""
    text = text.strip()
    rest = content_of(text)
    if searched_for(rest):  # "memory leak in the websocket gateway": it names what to find, it tells nothing
        return []
    opened = len(rest) < len(text)
    if told := TOLD_OPENER.match(rest) or _OTHER_TOLD.match(rest):  # "Remind me: my dentist appointment is…"
        rest, opened = rest[told.end():], True
    if opened:  # "Perfect, and the target is…": the "and" joined the small talk to the rest
        joined = _JOINED.match(rest)
        rest = rest[joined.end():] if joined and joined.end() < len(rest) else rest
        rest = rest[:1].upper() + rest[1:]
    kept = []
    # Pasted material is shown, not told: a fenced block and the clause that introduces it ("I get this error
    # when running the tests:") leave no fact, and the sentence after it is a sentence of its own.
    told = [s for piece in _PASTED.split(rest) for s in sentences(piece)]
    for n, sentence in enumerate(told):
        if about_the_chat(sentence) or announces(sentence) or (n == 0 and opened and _fragment(sentence)):
            continue
        if _is_question(sentence):
            sentence = told_before_question(sentence)
        elif (any(len(k.split()) >= MIN_HEAD_WORDS for k in kept) and not _TELLS.match(sentence)
              and (_ORDER.match(sentence) or _POLITE.match(sentence))):
            continue  # "We're back. … Help me write a note."
        if sentence and sentence.strip():
            kept.append(sentence.strip())
    return kept


# An assistant's reply that says nothing (`says_nothing`): each of its parts receives, thanks, offers help,
# wishes well, sympathises or reacts, as the small talk of a user's acknowledgement does (`_TALK`, praise).
# The phrases are an assistant's; what they name is the conversation ("that", "it", "the update"), never a
# fact: "Thanks for the update!", "Let me know if you need anything else.", "Good luck with the interview!".
_RECEIVED = (r"i\s+(?:understand|see)|duly\s+noted|acknowledged|will\s+do|done|of\s+course|absolutely|"
             r"certainly|definitely|sure\s+thing|anytime|any\s+time|my\s+pleasure|"
             r"(?:i've|i\s+have)\s+got\s+(?:that|this|it)|you're\s+(?:very\s+|so\s+|most\s+)?welcome|"
             r"(?:i'll|i\s+will|i've|i\s+have|i'm\s+going\s+to)\s+(?:(?:keep|kept|bear)\s+(?:that|this|it)\s+in\s+mind"
             r"|remember(?:ed)?\s+(?:that|this|it)|noted?\s+(?:that|this|it)(?:\s+down)?"
             r"|(?:made|make)\s+a\s+note\s+of\s+(?:that|this|it))")
_THANKED = (r"thanks?(?:\s+you)?(?:\s+(?:so|very)\s+much)?\s+for\s+(?:letting\s+me\s+know|telling\s+me|clarifying|"
            r"sharing(?:\s+(?:that|this|it))?(?:\s+with\s+me)?|the\s+(?:update|info|information|heads[\s-]up|"
            r"context|details|reminder|clarification|correction|kind\s+words))")
_OFFERED = (r"(?:please\s+)?(?:let\s+me\s+know|feel\s+free\s+to\s+(?:ask|reach\s+out)|just\s+(?:ask|let\s+me\s+know))"
            r"(?:\s+if\s+(?:you\s+(?:need|have|want)|there's|there\s+is|anything|something)[^.!?]*)?"
            r"|(?:is\s+there\s+)?anything\s+else(?:\s+(?:i\s+can|you'd\s+like|you\s+would\s+like|you\s+want|"
            r"you\s+need)(?:\s+to)?\s+(?:help(?:\s+you)?\s+with|do(?:\s+for\s+you)?|know|ask|add|talk\s+about))?"
            r"|how\s+(?:can|may)\s+i\s+(?:help|assist)(?:\s+you)?(?:\s+today)?"
            r"|what\s+(?:else\s+)?can\s+i\s+(?:do|help\s+(?:you\s+)?with)(?:\s+for\s+you)?(?:\s+today)?"
            r"|(?:i'm\s+)?(?:happy|glad)\s+(?:to\s+help|i\s+could\s+help|(?:that|it)\s+helped|to\s+hear\s+(?:that|it))"
            r"|i'm\s+here\s+if\s+you\s+need\s+(?:anything|me)")
_WISHED = (r"(?:i'm\s+|i\s+am\s+)?(?:so\s+)?sorry\s+to\s+hear\s+(?:that|it)|(?:that's|that\s+is)\s+too\s+bad|oh\s+no"
           r"|(?:(?:that's|that\s+is|what)\s+)?(?:(?:such\s+)?(?:a|an)\s+)?(?:(?:really|very|so)\s+)?(?:great|good|"
           r"wonderful|fantastic|amazing|exciting|lovely|brilliant|excellent|awesome|sad|tough|nice|glad|happy)"
           r"\s+(?:news|to\s+hear(?:\s+(?:that|it))?)"
           r"|happy\s+(?:birthday|anniversary|holidays|new\s+year|easter|christmas|thanksgiving|friday|weekend)"
           r"|(?:enjoy|good\s+luck\s+with|best\s+of\s+luck\s+with|congratulations\s+on|congrats\s+on)"
           r"\s+(?:your|the|it|that|this)(?:\s+\w+){0,3}"
           r"|congratulations|congrats|good\s+luck|best\s+of\s+luck|safe\s+travels|get\s+well\s+soon|enjoy"
           r"|have\s+(?:a|an)\s+(?:(?:great|good|nice|lovely|wonderful|safe|fun|relaxing)\s+)+\w+"
           r"|(?:(?:that|it|this)\s+)?(?:sounds|looks|seems)\s+(?:like\s+)?(?:(?:a|an)\s+)?"
           r"(?:(?:really|very|so|pretty|such)\s+)?(?:great|good|lovely|fun|wonderful|amazing|exciting|nice|"
           r"fantastic|delicious|perfect)(?:\s+(?:plan|idea|trip|time|day|choice))?")
# The same in Portuguese and German (`says_nothing`; thanks and receipts are `OTHER_THANKS` and `OTHER_TALK`):
# "Vou ter isso em conta.", "Ich merke es mir.", "Boa sorte com a entrevista!", "Viel Erfolg beim
# Vorstellungsgespräch!", "Diz-me se precisares de mais alguma coisa.", "Sag Bescheid, wenn du noch etwas
# brauchst." What a wish names is the conversation's, up to three words ("Boa sorte na sexta: a entrevista é às
# 10h." tells the time after it). Each also without its accents.
_OTHER_RECEIVED = (r"vou\s+(?:ter\s+isso\s+em\s+conta|lembrar-me\s+disso|guardar\s+isso)|(?:j[áa]\s+)?tomei\s+nota"
                   r"|ich\s+merke\s+(?:es\s+mir|mir\s+das)|(?:ich\s+)?hab(?:e)?\s+(?:es|das)\s+(?:mir\s+)?"
                   r"(?:notiert|gemerkt)|ich\s+denke\s+daran")
_OTHER_WISHED = (r"(?:boa\s+sorte|boa\s+viagem|as\s+melhoras|bom\s+proveito|parab[ée]ns|felicidades|viel\s+(?:erfolg|gl[üu]ck|spa(?:ß|ss))"
                 r"|gute\s+(?:reise|besserung)|herzlichen\s+gl[üu]ckwunsch|guten\s+appetit|alles\s+gute)"
                 r"(?:\s+(?:com|para|n[oa]|em|beim|bei|mit|f[üu]r|zum|zur)(?:\s+[\w-]+){1,3})?")
_OTHER_OFFERED = (r"(?:diz-me|avisa-me|avise-me)\s+se\s+precisar(?:es)?\s+de\s+mais\s+alguma\s+coisa|mais\s+alguma\s+coisa"
                  r"|sag(?:\s+mir)?\s+bescheid(?:,?\s+wenn\s+du\s+(?:noch\s+)?(?:etwas|was)\s+brauchst)?"
                  r"|(?:kann\s+ich\s+)?sonst\s+noch\s+(?:etwas|was)")
# Each part is taken whole at once (an atomic group, its longer phrases tried first): a text that fails is
# never split again another way ("good night" is also "good" and "night"), so a long reply is read in
# linear time, where backtracking took minutes over "ok, ok, ok, … x".
_REPLY_PART = (rf"(?>(?:{_RECEIVED}|{_THANKED}|{_OFFERED}|{_WISHED}|{_OTHER_RECEIVED}|{_OTHER_WISHED}|{_OTHER_OFFERED}"
               rf"|{_alternatives(dict.fromkeys(_TALK + PRAISE + OTHER_PRAISE))})(?![\w']))")
_SAYS_NOTHING = re.compile(rf"^\W*{_REPLY_PART}(?:[\s,.!;:—–-]++{_REPLY_PART})*+\W*$", re.IGNORECASE)
# A label before a colon, with no clause of its own ("Answer #4: noted."): what follows is the reply.
# "Noted: Ana is vegetarian." keeps its fact after the label.
_LABEL = re.compile(r"^\W*([^:.!?\n]{1,30}):\s+")


# Longer than this, a reply is taken to say something, unread: every indexed answer is asked (an import's
# too, 35 µs a reply read), and the labelled empty replies are 56 characters at most, an LLM's courtesies
# ("Thanks for letting me know! I'll keep that in mind. Let me know if you need anything else.") about 100.
NOTHING_MAX_CHARS = 240


def says_nothing(reply: str) -> bool:
    """Whether an assistant's reply says nothing to remember: every sentence of it receives ("Got it.",
    "Noted."), thanks ("Thanks for the update!"), offers help ("Anything else I can help with?"), wishes
    well or sympathises ("Enjoy your trip!", "Sorry to hear that."), or speaks about the chat
    (`about_the_chat`); also after a label of no clause ("Answer #4: noted."). A reply that states anything
    ("Noted: Ana is vegetarian.", "Lisbon.") says something. As a user's "Thanks!" is not retrieved, such a
    reply's row is an acknowledgement, not retrieved by default (`core.conversation.indexing.empty_reply`):
    through its neighbours' words it was retrieved and handed to synthesis in place of a memory. Measured
    on tests/data/assistant_replies.jsonl."""
    if len(reply) > NOTHING_MAX_CHARS:
        return False
    text = reply.translate(_APOSTROPHES).strip()
    if not re.search(r"\w", text):
        return False  # no words, e.g. an emoji: not what this reads (an empty text is not indexed anyway)
    label = _LABEL.match(text)
    rest = text[label.end():] if label and not _CLAUSE.search(label.group(1)) else ""
    if re.search(r"\w", rest) and _nothing(rest):
        return True
    return _nothing(text)


def _nothing(text: str) -> bool:
    return all(_SAYS_NOTHING.match(s.strip()) or about_the_chat(s.strip()) or not re.search(r"\w", s)
               for s in sentences(text))
