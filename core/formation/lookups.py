"""Look-ups: a user message that only names what it wants found, as typed in a search box ("latest wiki
note I wrote", "the recipe my mother sent last week", "notes from the planning meeting").

Such a message asks without a question mark: it names a thing and says nothing of it. Read as a statement,
it was stored as an observation and then ranked first for the very question it asked (its words are the
question's). `core.formation.kinds` reads it as a question (rule 4), so it stays in the transcript and
leaves no observation.

What marks one, read word by word (no tagger: the sets below are closed classes, and the records that
are looked up by name):
- a thing and a relative clause with no verb of the sentence's own after it: "<thing> <subject> [just,
  had …] <verb> <what adds no clause>" ("the recipe my mother sent last week", "latest wiki note I wrote",
  "everything I told you about Ana", "the gym schedule Ana shared"); the thing opens with a determiner, a
  recency word or "everything", or is a plural noun alone ("photos I took in Kyoto");
- a record named, with what it is about or where it came from: "notes from the planning meeting", "my
  most recent blood test results", "anything about my car insurance".
Not a look-up: a label before a clause ("Latest news: I got the job!"), a thing with a verb of its own ("The
recipe my mother sent last week was delicious.", "Photos from the wedding look amazing."), a time before a
clause ("Last week I wrote a wiki note…"), a name after a person ("My brother Tom moved to Berlin").

A whole message may also be a search phrase (`searched_for`): a noun phrase of any thing, with no verb of
its own, as an agent or an engineer types it ("memory leak in the websocket gateway", "python 3.12 upgrade
problems", "the customer who reported missing emails", "decision about switching from REST to gRPC"). An
agent sent 40 such messages through `remember`: 20 were stored as facts, and retrieved as facts for other
questions. What decides is the finite verb, the mark of a sentence that asserts:
- no finite verb, no full stop: a search phrase, a question. That includes a verbless report with its
  "is" dropped ("disk full on the build runner", "terraform state lock stuck"): it has no tense and
  asserts nothing, and it is exactly how a search box is typed. Read as a fact, a search phrase becomes
  a false memory ranked for every later question with its words; a terse report read as a search phrase
  only stays in the transcript, unformed. The first is the worse mistake.
- a finite verb after its subject: a statement, even without an article or a full stop ("helm chart
  upgrade failed", "oauth callback returns invalid_grant", "git bisect found the commit"). Read alone,
  such a headline reports an event, and a user reporting one ("deploy to production failed again") means
  it; a search for it cannot be told apart by its words.
- a full stop makes a verbless message a sentence the user wrote ("Dinner with Ana on Friday at 8."), and
  a past form or "-ing" first drops its subject ("Went to the dentist", "Feeling better"): statements.
- a verb is told by its place, with no tagger: a past form after a noun, a word before an object's article
  ("the kids love the park"), a word in -s that no noun ending marks as a plural ("returns invalid_grant").
- a state said of a person first, with its complement or a time it has held, is a predicate with its "I'm"
  dropped (`tells_a_state`): "allergic to penicillin", "Vegetarian since 2019", "fluent in Portuguese"
  (`STATES`, words whose form does not say they describe), and by its form, not a list of words: a word
  that describes ("-ic", "-ant", "-ive", "-ous", "-ible", …) before a preposition a predicate takes and a
  searched noun phrase seldom does ("sensitive to caffeine", "nervous about the test", "eligible for the
  staff discount"), or a predicate and "since"/"for" a time ("epileptic since my teens", "pescatarian for
  ten years"). A word before the state may be its subject ("server unreachable since the last deploy", a
  report of a thing): then only a time of a life makes it a state ("lactose intolerant since childhood",
  "type 1 diabetic since 2015"). Before a noun, or after a plural, the state describes a noun in a noun
  phrase ("vegetarian restaurants near Alfama", "patients allergic to penicillin", "left-handed scissors for
  kids": a compound in -ed before a noun drops no subject).
  A state takes "in" when its word has a form nouns seldom have or is derived ("nervous", "conversational",
  "claustrophobic") and what follows is no place: a bare plural or a language ("claustrophobic in lifts",
  "conversational in Italian"; "clinic in Braga", "music in the car", "logic in templates" are searches:
  `_state_in`). A note may drop its subject before a verb of a person's life in -s ("Lives with two cats",
  "Works at Siemens since 2019": `NOTE_VERBS`, a closed class, since English gives a verb in -s and a plural
  one form; "trains to Porto" stays a search).
  Known misses, read as search phrases: a verb in -s that is no such verb ("mypy complains about…"), a bare
  verb before no article ("photos from the wedding look amazing" without its full stop), a telegraphic fact
  with no verb and no state word first ("my flight to Lisbon next Friday"); read as a statement, a noun in
  -ive before "to" ("alternative to Notion").
Measured on tests/data/message_kinds.jsonl (tests/unit/test_message_kinds.py), whose look-ups and
near-misses were labelled in three batches, the last two before the rules read them (first try: 21 of 27,
then 29 of 30); then the agent's 40 messages and 14 search phrases and terse reports like them, labelled
before `searched_for` was written (24 of 40 and 9 of 14 right before it);
a second formation pass's 54 (terse states, search phrases like them, switches said in passing), labelled
before `tells_a_state` read states by their form: 35 right before, 49 after.
"""

from __future__ import annotations

import re

from core.conversation.feedback import _APOSTROPHES, _SENTENCE_END

DETERMINERS = frozenset({"the", "my", "our", "your", "his", "her", "their", "that", "those", "these", "this",
                         "all", "any", "every", "each", "some"})
ARTICLES = frozenset({"a", "an"})
RECENT = frozenset({"latest", "last", "newest", "recent", "previous", "first", "most", "oldest", "earliest"})
ANYTHING = frozenset({"anything", "everything", "something", "stuff", "all"})
# What is looked up by name: what was written, sent, saved or kept.
RECORDS = frozenset(
    f"{w}{s}" for w in ("note", "message", "email", "mail", "text", "doc", "document", "file", "photo", "picture",
                        "pic", "screenshot", "video", "recipe", "article", "link", "post", "invoice", "receipt",
                        "letter", "report", "list", "result", "detail", "record", "podcast", "episode", "playlist",
                        "draft", "slide", "spreadsheet", "page", "thread", "conversation", "reminder", "contract",
                        "password", "voicemail", "memo", "transcript", "schedule", "calendar", "itinerary",
                        "timetable", "confirmation", "form", "number")
    for s in ("", "s")) | {"info", "information", "summary", "summaries", "entry", "entries", "address", "addresses"}
SUBJECTS = frozenset({"i", "we", "you", "they", "he", "she", "i'm", "i've", "i'd", "we're", "we've", "we'd",
                      "you've", "you're", "they've", "they're", "he's", "she's"})
_CONTRACTED = ("'m", "'re", "'ve", "'d", "'s")
POSSESSIVES = frozenset({"my", "our", "your", "his", "her", "their"})
# A verb of the sentence's own, or an auxiliary: a statement ("… was delicious", "… are in the drive").
FINITE = frozenset({"is", "are", "was", "were", "am", "be", "been", "will", "would", "can", "could", "should",
                    "must", "might", "may", "shall", "does", "do", "did", "has", "have", "had", "isn't", "aren't",
                    "wasn't", "weren't", "don't", "doesn't", "didn't", "won't", "can't", "hasn't", "haven't",
                    "it's", "that's", "there's", "here's", "what's", "who's", "it'll", "that'll"})
# A relative clause's verb may be one of these ("the car my dad has").
_POSSESSING = frozenset({"has", "have", "had"})
# What may stand between a relative clause's subject and its verb ("I've just read", "we had booked").
BEFORE_VERB = frozenset({"just", "ever", "already", "recently", "once", "never", "also", "really", "finally",
                         "last", "first", "had", "have", "did", "was", "were", "am", "are"})
PREPOSITIONS = frozenset({"about", "for", "to", "in", "from", "at", "with", "on", "of", "by", "during", "after",
                          "before", "into", "regarding", "re", "between", "near", "around", "without", "via",
                          "under", "over", "like", "since", "until"})
CONJUNCTIONS = frozenset({"and", "or", "but", "so", "because", "if", "when", "while", "then", "than"})
# What follows a verb and adds no clause: its object pronoun, a particle, a time ("… I said to you yesterday").
AFTER_VERB = frozenset({"me", "us", "you", "him", "her", "them", "it", "up", "out", "back", "down", "off",
                        "again", "too", "there", "here", "together", "earlier", "recently", "yesterday", "today",
                        "tonight", "lately", "once", "twice", "already", "ago", "before", "afterwards", "please"})
TIMES = frozenset({"morning", "afternoon", "evening", "night", "week", "weekend", "month", "year", "day", "time",
                   "spring", "summer", "autumn", "fall", "winter", "monday", "tuesday", "wednesday", "thursday",
                   "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july",
                   "august", "september", "october", "november", "december", "today", "tomorrow", "yesterday",
                   "tonight", "days", "weeks", "months", "years", "weekends", "nights", "mornings"})
_TIME_COUNTS = frozenset({"last", "this", "next", "past", "a", "two", "three", "few"})  # "last week", "a year"
IRREGULAR_PAST = frozenset({
    "wrote", "sent", "said", "told", "took", "made", "gave", "got", "bought", "found", "met", "went", "ate", "drank",
    "left", "kept", "heard", "thought", "brought", "taught", "sold", "paid", "lost", "won", "ran", "began", "chose",
    "drove", "flew", "forgot", "spoke", "wore", "grew", "knew", "threw", "drew", "saw", "came", "became", "felt",
    "fell", "held", "led", "meant", "slept", "spent", "stood", "sang", "swam", "built", "caught", "fought", "lent",
    "woke", "rode", "broke", "stole", "sat", "shot", "hid", "hung", "did", "had"})
# Words in -s that are no verb before a subject ("Sometimes I…" opens a statement, and is no plural thing).
_NOT_PLURAL = frozenset({"sometimes", "always", "perhaps", "besides", "nowadays", "afterwards", "thanks", "yes",
                         "guess", "its", "us", "this", "his", "news", "various", "series"})
# Verbs in -s that a statement about a record says of it ("The contract for the office ends in March."): after
# a noun, not a determiner, they end its noun phrase ("the costs" is a noun).
VERBS_IN_S = frozenset({"ends", "starts", "begins", "opens", "closes", "runs", "goes", "comes", "leaves", "arrives",
                        "lands", "expires", "costs", "says", "shows", "mentions", "includes", "covers", "needs",
                        "takes", "looks", "sounds", "seems", "feels", "works", "lives", "stays", "meets", "happens",
                        "changes", "moves", "gets", "makes", "keeps", "lasts", "finishes", "renews", "contains",
                        "lists", "explains", "describes", "confirms", "belongs", "matters", "helps"})
# Verbs in -s that open a note about a person with its subject dropped ("Lives with two cats", "Works at a
# bakery in Porto", "Prefers window seats", "Speaks fluent Portuguese"): read as plurals, such notes were
# search phrases. English gives a verb in -s and a plural noun one form, so this is a closed class: verbs of a
# person's home, work, habits and likes that are seldom a plural noun. Those that often are stay out, and
# a message opening with one stays a search: "trains to Porto", "walks near Sintra", "drinks with low
# sugar", "studies on fasting", "stays in Porto", "uses of baking soda", "leads", "supports", "rides", "plays",
# "runs", "cooks", "likes", "rents", "visits".
NOTE_VERBS = frozenset({"lives", "works", "prefers", "speaks", "owns", "drives", "teaches", "enjoys", "commutes",
                        "volunteers", "hates", "avoids", "loves", "wants", "eats", "swims", "attends", "belongs",
                        "knows", "suffers", "wears", "sleeps", "smokes", "misses", "writes", "dislikes",
                        "struggles", "manages", "coaches", "tutors", "practises", "practices", "collects"})
MAX_WORDS = 14
NOUN_PHRASE = 3  # the words a preposition's noun phrase may have ("from the wedding look amazing" tells)
_WORDS = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
_CLAUSE_MARK = re.compile(r"[:;,?!]|\s[—–-]\s|[—–]")  # a label before a clause, or two clauses


def past(word: str) -> bool:
    """A past tense or participle by its form: "wrote", "recommended" (not "need", "bed", "hundred")."""
    return word in IRREGULAR_PAST or (len(word) >= 5 and word.endswith("ed") and not word.endswith("eed")
                                      and word not in ("hundred", "naked", "wicked", "sacred", "beloved"))


def possessive(word: str) -> bool:
    """A name's possessive ("Ana's", "mum's"), not "that's" or "she's"."""
    return word.endswith("'s") and word not in FINITE and word not in SUBJECTS and word != "let's"


def noun_word(word: str) -> bool:
    """A word that may stand inside a noun phrase: no verb of its own, no subject, no joining word."""
    return not (word in FINITE or word in SUBJECTS or word in CONJUNCTIONS or past(word))


def adjuncts(words: list[str], *, after_verb: bool = True) -> bool:
    """Whether what follows a relative clause's verb (or, `after_verb` False, a named record) adds no
    clause: object pronouns, particles and times, an "-ing" word right after the verb ("started watching"),
    and prepositions with noun phrases of NOUN_PHRASE words at most ("for Ana's birthday"; "to in Lyon": a
    preposition left at the end of its clause)."""
    i = 0
    while i < len(words):
        w = words[i]
        if w in PREPOSITIONS:
            i += 1
            end = min(i + NOUN_PHRASE, len(words))
            while (i < end and words[i] not in PREPOSITIONS and noun_word(words[i])
                   and not (words[i] in VERBS_IN_S and words[i - 1] not in DETERMINERS | ARTICLES | PREPOSITIONS)):
                i += 1
        elif w in AFTER_VERB or w in TIMES or w.isdigit() or (after_verb and i == 0 and w.endswith("ing")
                                                               and len(w) > 4):
            i += 1
        elif w in _TIME_COUNTS and i + 1 < len(words) and words[i + 1] in TIMES:
            i += 2
        else:
            return False
    return True


def _verb_in_s(words: list[str]) -> bool:
    """A word in -s inside the words, not before a preposition: a verb ("My mum thinks I…"), where a plural
    is the last word or followed by a preposition ("the kids in my class")."""
    return any(w.endswith("s") and not possessive(w) and w not in _NOT_PLURAL | DETERMINERS | RECENT
               and words[n + 1] not in PREPOSITIONS for n, w in enumerate(words[:-1]))


def names_a_thing(words: list[str]) -> bool:
    """Whether the words before a relative clause name a thing: a determiner, a recency word, a possessive
    or "everything" first ("the recipe", "latest wiki note", "everything"), or a plural noun alone
    ("photos", "gift ideas"); no verb, not ending on a preposition or a determiner, and not a time ("last
    week", "this morning": "Last week I wrote…" tells)."""
    if (not words or not all(noun_word(w) for w in words) or words[-1] in PREPOSITIONS | DETERMINERS
            or words[-1] in TIMES or _verb_in_s(words)):
        return False
    first = words[0]
    if first in DETERMINERS | RECENT | ANYTHING or possessive(first):
        return True
    return (len(words) <= 3 and words[-1].endswith("s") and first not in _NOT_PLURAL
            and not set(words) & (DETERMINERS | ARTICLES))


def _names_a_record(words: list[str]) -> bool:
    """"<determiners> <up to three words> <record> <adjuncts>" ("my most recent blood test results", "notes
    from the planning meeting"), or "anything/everything about …". No article or pronoun before the record:
    "Make a packing list…", "Give me a list…" are requests."""
    start = 0
    while start < len(words) and (words[start] in DETERMINERS | RECENT | ARTICLES or possessive(words[start])):
        start += 1
    for head in range(start, min(start + 4, len(words))):
        w = words[head]
        if not noun_word(w) or w in PREPOSITIONS | TIMES | DETERMINERS | AFTER_VERB | ARTICLES:
            return False
        if w in RECORDS or (w in ANYTHING and head + 1 < len(words) and words[head + 1] in PREPOSITIONS):
            return adjuncts(words[head + 1:], after_verb=False)
    return False


def _relative_clause_at(words: list[str], cased: list[str], k: int) -> bool:
    """Whether a relative clause starting at `k` (its subject) runs to the end with nothing after its verb
    but adjuncts: "I wrote", "we went to in Lyon", "I'm reading", "my mother sent last week", "my new
    manager recommended", and a name after a record ("the gym schedule Ana shared"; not "My brother Tom
    moved to Berlin", "Our dog Rex died yesterday": no record before the name)."""
    w = words[k]
    if w in SUBJECTS:
        rest = words[k + 1:]
        while len(rest) > 1 and rest[0] in BEFORE_VERB:
            rest = rest[1:]
        if not rest:
            return False
        if w.endswith(_CONTRACTED):  # "I'm reading", "we've booked"
            return (rest[0].endswith("ing") or past(rest[0])) and adjuncts(rest[1:])
        return (rest[0] not in FINITE - _POSSESSING and rest[0] not in PREPOSITIONS | DETERMINERS
                and adjuncts(rest[1:]))
    if cased[k][:1].isupper() and k + 1 < len(words) and past(words[k + 1]) and set(words[:k]) & RECORDS:
        return adjuncts(words[k + 2:])
    if w in POSSESSIVES:
        for verb in (k + 2, k + 3):  # a subject of one or two words after "my"
            if verb < len(words) and all(noun_word(x) for x in words[k + 1:verb]) and (
                    past(words[verb]) or (words[verb].endswith("s") and words[verb] not in FINITE - _POSSESSING
                                          - {"does"})) and adjuncts(words[verb + 1:]):
                return True
    return False


# A relative clause's pronoun: the verb after it is the clause's, not the phrase's ("the customer who reported
# missing emails", "the migration that dropped the index").
RELATIVES = frozenset({"who", "whom", "whose", "which", "that"})
# Endings of nouns, not of verbs: a word in -s with one is a plural ("rate limit errors", "bucket permissions"),
# or no plural at all, which no verb in -s ends with ("allergic rhinitis", "the status", "a glass").
_NOUN_ENDINGS = ("ions", "ers", "ors", "ments", "nesses", "ics", "ings", "ances", "ences", "ists", "ities", "ships",
                 "is", "us", "ss")
# What opens a verb's object, and no word of a noun phrase after a noun ("that" may open a relative clause).
_OBJECT_OPENERS = ARTICLES | POSSESSIVES | {"the"}
# What a search phrase has at least: two words are more often a short answer to the assistant ("Bullet
# points", "Green tea").
MIN_SEARCH_WORDS = 3


def _describes(words: list[str], n: int) -> bool:
    """Whether the word at `n` stands where a verb cannot be the phrase's own: first, or after a
    determiner, a preposition, a joining word or a relative pronoun ("the failed deploy", "on users email",
    "when calling the api", "that dropped the index")."""
    return n == 0 or words[n - 1] in DETERMINERS | ARTICLES | PREPOSITIONS | CONJUNCTIONS | RELATIVES | RECENT


def _verb_at(words: list[str], n: int) -> bool:
    """Whether the word at `n` is a finite verb of the phrase's own: an auxiliary, or after a noun a past
    tense ("helm chart upgrade failed"), a word before an object's article ("the kids love the park": inside
    a noun phrase, an article follows a preposition), or a word in -s that no noun ending marks as a plural
    and no preposition or word that describes follows ("oauth callback returns invalid_grant"; not "redis
    evictions in production", "electric cars eligible for the tax credit": a verb in -s before a state is
    one of `VERBS_IN_S`, "seems", "looks")."""
    w = words[n]
    if w == "may" and n and (words[n - 1] in PREPOSITIONS or words[n - 1].isdigit()):
        return False  # the month: "flights to Lisbon in May", "from 3 May"
    if w in FINITE or w in SUBJECTS:
        return True
    if _describes(words, n):
        return False
    after = words[n + 1] if n + 1 < len(words) else ""
    if past(w) or (after in _OBJECT_OPENERS and w not in PREPOSITIONS | CONJUNCTIONS | RELATIVES):
        return True
    return (w.endswith("s") and after and not possessive(w) and w not in _NOT_PLURAL
            and (w in VERBS_IN_S or (after not in PREPOSITIONS and not w.endswith(_NOUN_ENDINGS)
                                     and not described(after))))


# A state said of a person → the prepositions of its complement ("allergic to", "afraid of"); each also
# takes "since" (`STATE_SINCE`). The words whose form does not say they describe (`_FORMS` reads the others):
# "afraid", "fluent", "vegan", "single".
STATES: dict[str, frozenset[str]] = {
    **dict.fromkeys(("allergic", "sensitive", "addicted", "married", "engaged"), frozenset({"to"})),
    "intolerant": frozenset({"to", "of"}),
    **dict.fromkeys(("afraid", "scared", "terrified", "frightened"), frozenset({"of"})),
    "fluent": frozenset({"in"}),
    "pregnant": frozenset({"with"}),
    **dict.fromkeys(("vegetarian", "vegan", "pescatarian", "pescetarian", "flexitarian", "diabetic", "sober",
                     "single", "gluten-free", "dairy-free", "celiac", "coeliac", "asthmatic"), frozenset()),
}
STATE_SINCE = "since"
# What may stand before the state: a degree ("severely allergic to", "very afraid of", "mildly allergic").
_DEGREE = frozenset({"very", "so", "really", "quite", "a", "bit", "little", "extremely", "super", "pretty",
                     "also", "still", "now", "always", "not"})
# A word that describes, by its ending → the prepositions its complement takes as a predicate and a searched
# noun phrase seldom does after it: "sensitive to caffeine", "nervous about the test", "eligible for the staff
# discount", "capable of…". Nouns share these endings ("restaurant", "clinic", "music", "alternative"):
# "restaurant with a view", "clinic near me", "music for studying" are searches, so "with", "in", "near",
# "on" make no state of a form (only of `STATES`: "fluent in", "pregnant with"); "alternative to Notion" is
# a known miss. An adjective takes no plural: "alternatives to Notion" is a noun phrase.
_FORMS: dict[tuple[str, ...], frozenset[str]] = {
    ("ic", "ant", "ent", "ive"): frozenset({"to", "about"}),
    ("ous", "ful"): frozenset({"to", "about", "of", "for"}),
    ("able", "ible"): frozenset({"to", "of", "for"}),
    ("less",): frozenset({"of", "about"}),
}
# Nouns, whatever their ending: what a state is never said with ("treatment", "inflation").
_ABSTRACT = ("ion", "ment", "ness", "ity", "ism", "ance", "ence", "ship")
# A time a state has held: "since 2015", "since childhood", "since my teens", "since I was a kid", "for ten
# years (now)", "for most of my life". Of a life: a year, a stage of it, the person's own ("my", "I was").
_SINCE, _FOR = "since", "for"
_LIFE = frozenset({"birth", "childhood", "infancy", "adolescence", "puberty", "school", "college", "university",
                   "uni", "i", "we", "my", "our"})
_SPAN = frozenset({"year", "years", "month", "months", "decade", "decades", "while", "ages", "life"})
_COUNTED = frozenset({"a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                      "eleven", "twelve", "fifteen", "twenty", "thirty", "few", "several", "many", "most", "all",
                      "of", "my", "the", "past", "last", "over", "about", "almost", "nearly", "around", "at",
                      "least", "more", "than", "half"})
# A state said as a place or a course it is in ("on metformin since the diagnosis", "in remission since May").
_STATE_PLACES = frozenset({"on", "in", "off", "at"})


def _plural(word: str) -> bool:
    """A plural noun by its form ("patients", "plants"), not "ss", "us", "is" ("glass", "status",
    "rhinitis"): no adjective takes one."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is")) and word not in _NOT_PLURAL


def described(word: str) -> bool:
    """Whether a word has a form that describes (`_FORMS`): "allergic", "sensitive", "eligible", not a
    plural or a noun of `_ABSTRACT` ("treatments", "treatment")."""
    return (len(word) > 4 and not _plural(word) and not word.endswith(_ABSTRACT)
            and any(word.endswith(forms) for forms in _FORMS))


# A state taking "in" ("claustrophobic in lifts", "nervous in crowds", "conversational in Italian",
# "proficient in Spanish"): nouns share the forms and take "in" for a place ("clinic in Braga", "restaurant in
# Lisbon", "music in the car", "logic in templates"), so "in" makes a state only
# - of a form nouns seldom have ("-ous", "-ful", "-ional"), or of a derived word, a stem of IN_STEM letters or
#   more before its ending ("claustrophob-ic", "profici-ent"; not "clin-ic", "log-ic", "trag-ic");
# - and before what a state is in and a place is not: a bare plural ("in lifts", "in small rooms", not "in
#   the car", "in Braga") or a language ("in Italian", "in German").
_IN_FORMS = ("ous", "ful", "ional")
_IN_DERIVED = ("ic", "ant", "ent", "ive", "able", "ible")
IN_STEM = 6
_LANGUAGE_FORMS = ("ian", "ish", "ese")
LANGUAGES = frozenset({"french", "german", "dutch", "greek", "arabic", "hindi", "korean", "mandarin", "hebrew",
                       "latin", "thai", "czech", "swahili", "catalan", "basque"})


def _state_in(words: list[str]) -> bool:
    """Whether the words are a state taking "in" and its complement (see `_IN_FORMS` above)."""
    if len(words) < 3 or words[1] != "in" or _plural(words[0]) or words[0].endswith(_ABSTRACT):
        return False
    state, complement = words[0], words[2:]
    if not (state.endswith(_IN_FORMS) or any(state.endswith(e) and len(state) - len(e) >= IN_STEM
                                             for e in _IN_DERIVED)):
        return False
    if len(complement) == 1 and (complement[0] in LANGUAGES or complement[0].endswith(_LANGUAGE_FORMS)):
        return True
    return (len(complement) <= 3 and _plural(complement[-1]) and complement[0] not in DETERMINERS | ARTICLES
            and all(noun_word(w) and w not in PREPOSITIONS for w in complement))


def _takes(word: str, preposition: str) -> bool:
    """Whether a word of a describing form takes the preposition as a predicate (`_FORMS`)."""
    return described(word) and any(word.endswith(forms) and preposition in taken for forms, taken in _FORMS.items())


def _held_since(words: list[str]) -> tuple[int, bool] | None:
    """Where a time the state has held begins at the end of the words ("… since 2015", "… for ten years
    now"), and whether it is a time of a life (a year, a stage, the person's own: "since childhood", "since
    my teens"; a span of years is one); None when the words end with none ("for beginners", "for the
    kids")."""
    for n in range(len(words) - 2, 0, -1):
        if words[n] not in (_SINCE, _FOR):
            continue
        tail = words[n + 1:]
        if tail[-1] == "now" and len(tail) > 1:
            tail = tail[:-1]
        if words[n] == _FOR:
            if tail[-1] in _SPAN and all(w in _COUNTED or w.isdigit() for w in tail[:-1]):
                return n, True
            continue
        if len(tail) <= 6 and (tail[0] in ("i", "we") or all(noun_word(w) for w in tail)):
            year = bool(re.fullmatch(r"(?:19|20)\d\d", tail[0]))
            return n, year or tail[0] in _LIFE
    return None


def _predicate(words: list[str]) -> bool:
    """Words that may say a state without a verb: one to three words of a noun phrase's kind, no plural
    and no abstract noun ("lactose intolerant", "type 1 diabetic", "accountant"), or a place or a course
    the person is in ("on metformin", "in remission")."""
    if words and words[0] in _STATE_PLACES:
        words = words[1:]
        if not words or len(words) > 2:
            return False
    return 0 < len(words) <= 3 and all(
        noun_word(w) and w not in DETERMINERS | ARTICLES | PREPOSITIONS | AFTER_VERB | TIMES and not _plural(w)
        and not w.endswith(_ABSTRACT) for w in words)


def tells_a_state(words: list[str]) -> bool:
    """Whether verbless words are a state said of a person, "I'm" dropped: a predicate first (after a
    degree, "severely", "mildly") with a complement or a time it has held, as a predicate takes them and a
    noun phrase does not:
    - a word of `STATES` and its own preposition or "since" ("allergic to penicillin", "Vegetarian since
      2019");
    - a word that describes by its form (`_FORMS`) and a preposition it takes, to the end with no verb
      ("sensitive to caffeine after 2pm", "nervous about the driving test", "eligible for the staff
      discount");
    - a predicate and a time it has held ("epileptic since my teens", "pescatarian for ten years"); with a
      word before the state, which may be its subject ("server unreachable since the last deploy", a report
      of a thing), only a time of a life ("lactose intolerant since childhood", "type 1 diabetic since
      2015").
    Not a state before a noun or after a plural: "vegetarian restaurants near Alfama", "patients allergic to
    penicillin", "vegan for beginners" (no time)."""
    n = 0
    while n < len(words) - 2 and (words[n] in _DEGREE or (words[n].endswith("ly") and len(words[n]) > 3)):
        n += 1
    words = words[n:]
    if len(words) > 1 and words[0] in STATES and words[1] in STATES[words[0]] | {STATE_SINCE}:
        return True
    if (held := _held_since(words)) and _predicate(words[:held[0]]) and (
            held[0] == 1 or held[1] or words[0] in _STATE_PLACES):
        return True
    state = words[:held[0]] if held else words
    return (len(state) > 2 and _takes(state[0], state[1])
            and not any(w in FINITE or w in SUBJECTS or w in RELATIVES for w in state[2:])) or _state_in(words)


def _compound_before_noun(words: list[str]) -> bool:
    """Whether the first word is a compound in -ed ("left-handed", "self-guided", "grass-fed") before a noun:
    it describes the noun, it drops no subject ("left-handed scissors for kids" is searched for; "Went to
    the dentist", "left-handed since birth" are said)."""
    after = words[1] if len(words) > 1 else ""
    return ("-" in words[0] and noun_word(after) and not after.endswith("ly")
            and after not in PREPOSITIONS | ARTICLES | DETERMINERS | CONJUNCTIONS | AFTER_VERB | TIMES)


def searched_for(message: str) -> bool:
    """Whether a whole message is a search phrase: a noun phrase with no finite verb and no full stop (see
    the module docstring), of MIN_SEARCH_WORDS to MAX_WORDS words. One sentence among others is not: "We
    moved to Porto. Great neighbourhood" tells."""
    text = message.translate(_APOSTROPHES).strip()
    if text.endswith((".", "!")) or _CLAUSE_MARK.search(text) or len(_SENTENCE_END.split(text)) > 1:
        return False
    words = [w.lower() for w in _WORDS.findall(text)]
    if not MIN_SEARCH_WORDS <= len(words) <= MAX_WORDS or "please" in words:
        return False
    if (past(words[0]) and not _compound_before_noun(words)) or (words[0].endswith("ing") and len(words[0]) > 4):
        return False  # "Went to…", "Feeling better…"
    if words[0] in NOTE_VERBS:  # "Lives with two cats", "Works at Siemens since 2019": the subject dropped
        return False
    if tells_a_state(words):  # "allergic to penicillin": "I'm" dropped
        return False
    return not any(_verb_at(words, n) for n in range(len(words)))


def looks_up(sentence: str) -> bool:
    """Whether a sentence only names what it wants found (see the module docstring)."""
    text = sentence.translate(_APOSTROPHES).strip().rstrip(".!").strip()
    if _CLAUSE_MARK.search(text):
        return False
    cased = _WORDS.findall(text)
    words = [w.lower() for w in cased]
    if not 1 < len(words) <= MAX_WORDS or words[0] in SUBJECTS:
        return False
    if _names_a_record(words):
        return True
    return any(names_a_thing(words[:k]) and _relative_clause_at(words, cased, k) for k in range(1, len(words) - 1))
