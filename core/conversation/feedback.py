"""Behaviour feedback for an answer, read from the user's next turn: whether the user continued,
corrected the answer or acknowledged it, how long they took, and the score that follows; an answer
with no follow-up within ABANDON_AFTER_S is marked abandoned.

Pure functions: the thought store applies them.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel

ABANDON_AFTER_S = 600.0

# Replies are read after typographic apostrophes become plain ones ("That’s" → "That's").
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# Interjections that may open a reply before its first real word: "Hmm no, …", "Well, no, …", "Ok thanks".
_FILLER = r"(?:(?:hmm+|hm|mm+|well|uh|um|err?|erm|oh|ah|wait|sorry|ok|okay|yes|yeah|yep|right|so)\W+)*"

# An acknowledgement opens the reply (after an interjection): "Thanks to Marie…", "I got it from the
# library" and "Perfect weather today" say nothing about the answer. PRAISE words count only when a pause
# or the end follows them ("Perfect, I'll use that"), or a word of praise ("Great answer"), or a word for
# what the assistant said or did and a pause or the end (PRAISED: "Good idea.", "Fair point, but…"; not
# "Good call centres are…").
ACKNOWLEDGEMENTS = ("thanks", "thank you", "thx", "ty", "cheers", "much appreciated", "got it", "gotcha",
                    "understood", "noted", "makes sense", "that makes sense", "that works", "that helps",
                    "that helped", "sounds good", "spot on", "love it", "good to know", "nice one",
                    "that's it", "that's right", "that's correct", "that's the one", "that's helpful",
                    "that's very helpful", "that's really helpful", "that's great", "that's perfect",
                    "very helpful", "exactly what")
PRAISE = ("great", "perfect", "excellent", "fantastic", "brilliant", "wonderful", "lovely", "awesome",
          "nice", "cool", "exactly", "correct", "super", "good", "fair", "smart", "solid", "clever")
PRAISED = ("answer", "job", "idea", "point", "plan", "one", "call", "suggestion", "tip", "catch", "thinking",
           "move", "choice", "advice", "work")
# Thanks and praise in Portuguese and German, each also without its accents, as typed on a phone
# ("Obrigada!", "Danke schön", "Perfeito, valeu"): a word they share with English ("boa", "gut", "legal",
# "sim", "top") counts only before a pause (`OTHER_PRAISE`), so no English reply reads otherwise.
OTHER_THANKS = ("obrigado", "obrigada", "muito obrigado", "muito obrigada", "obrigadão", "obrigadinho",
                "obrigadinha", "brigado", "brigada", "valeu", "agradeço", "obrigado pela ajuda",
                "obrigada pela ajuda", "muito obrigado pela ajuda", "muito obrigada pela ajuda",
                "danke", "danke schön", "dankeschön", "danke sehr", "danke dir", "danke euch", "vielen dank",
                "vielen lieben dank", "besten dank", "herzlichen dank", "merci", "danke für die hilfe",
                "danke für deine hilfe", "vielen dank für die hilfe", "vielen dank für deine hilfe",
                # thanks for what was told, an assistant's too ("Obrigado pela informação!", "Danke für die Info!")
                "obrigado pela informação", "obrigada pela informação", "obrigado por avisares",
                "obrigada por avisares", "obrigado pela partilha", "obrigada pela partilha", "danke für die info",
                "danke für die infos", "danke für die information", "danke für den hinweis", "danke fürs bescheidgeben")
OTHER_PRAISE = ("perfeito", "perfeita", "ótimo", "ótima", "excelente", "fixe", "boa", "legal", "certo", "claro",
                "sim", "pronto", "beleza", "perfekt", "toll", "prima", "klasse", "genau", "gut", "richtig",
                "stimmt", "ja", "jep", "jo", "wunderbar", "spitze", "top")


def _unaccented(phrases) -> tuple[str, ...]:
    """The phrases and, for those with accents, the same without them ("olá" → "ola")."""
    folded = ("".join(c for c in unicodedata.normalize("NFD", p) if not unicodedata.combining(c)) for p in phrases)
    return tuple(dict.fromkeys((*phrases, *folded)))


OTHER_THANKS, OTHER_PRAISE = map(_unaccented, (OTHER_THANKS, OTHER_PRAISE))
# Corrections are looked for in statements only: "What should be my next step?" and "Is this actually
# true?" ask, they do not correct. A reply that opens with the interjection "no" (`NO_INTERJECTION`)
# corrects unless an idiom follows ("no problem", "no rush", "no, nothing else").
NOT_CORRECTING_NO = ("problem", "worries", "worry", "rush", "hurry", "need", "idea", "thanks", "thank",
                     "matter", "nothing", "not yet", "doubt", "way", "one more")
CORRECTIONS = ("incorrect", "not true", "not correct", "not right", "isn't right", "isn't correct",
               "isn't true", "mistaken", "misunderstood", "misread", "misheard", "backwards",
               "the other way round", "the other way around", "confusing me", "you confused",
               "you're thinking of", "mixed them up", "mixed it up", "mixed that up", "try again",
               "correction:", "correct that", "not what i asked", "not what i said", "not what i meant",
               "not what i wanted", "not quite", "not exactly", "not really", "it should be",
               "it should have been", "don't think that's right", "don't think that's correct",
               "don't think that's true")


def _phrases(phrases: tuple[str, ...]) -> str:
    """The phrases as regex alternatives, any run of spaces between words."""
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)


_ACK = re.compile(
    rf"^\W*{_FILLER}(?:(?:{_phrases(ACKNOWLEDGEMENTS)})(?!\w)(?!\s+to\b)"
    rf"|(?:{_phrases(PRAISE)})(?:\s*(?:[,.!;:—-]|$)|\s+(?:answer|job|thanks|thank)\b"
    rf"|\s+(?:{_phrases(PRAISED)})\s*(?:[,.!;:—-]|$)))", re.IGNORECASE)
_OTHER_ACK = re.compile(rf"^\W*{_FILLER}(?:(?:{_phrases(OTHER_THANKS)})(?!\w)"
                        rf"|(?:{_phrases(OTHER_PRAISE)})\s*(?:[,.!;:—-]|$))", re.IGNORECASE)
# "No" corrects only as an interjection: before a pause or the end ("No, it was Lyon", "No.", "No!",
# "no — last month's"), doubled ("No no, …", "Nooo"), or before a word the determiner "no" never comes
# before ("No it was level 4", "No I said Tuesday", "no that's wrong", "No the party is Saturday").
# "No dogs are allowed in my building", "No one in my family eats pork", "No-one …", "No sugar in my
# coffee" and "No. 5 is my bus" state a fact: read as corrections, formation had stored them without
# their "No", as their opposite. "Nope" and "nah" are never determiners. Formation strips the same "no"
# from a correction's fact (`core.formation.observations`), so the two readings cannot disagree.
AFTER_INTERJECTION_NO = ("no", "nope", "not", "wait", "actually", "sorry", "i", "i'm", "im", "i'd", "i've",
                         "ive", "i'll", "you", "you're", "youre", "you've", "your", "we", "we're", "he",
                         "he's", "she", "she's", "they", "they're", "it", "it's", "its", "that", "that's",
                         "thats", "this", "there", "there's", "the", "my", "his", "her", "our", "their",
                         "what")
NO_INTERJECTION = (r"(?:nope|nah)(?![\w'])|no{2,}(?![\w'])"
                   r"|no(?=\s*(?:[,!;:…—–]|\.(?!\s*\d)|$)|\s+-(?!\w)"
                   rf"|\s+(?:{_phrases(AFTER_INTERJECTION_NO)})(?![\w']))")
# "Oh no, I forgot my umbrella" is dismay, not a correction.
_LEADING_NO = re.compile(rf"^\W*{_FILLER}(?<!\boh\s)(?:{NO_INTERJECTION})"
                         rf"(?!\W*(?:{_phrases(NOT_CORRECTING_NO)})\b)", re.IGNORECASE)
# What a comparison compares with: "not to peanuts like me", "not vegan like her sister", "not 5 as I do".
# "like you said" corrects: a verb after "you" is not a comparison.
COMPARED = (r"(?:\b(?:un)?like\s+(?:me|us|him|them|myself|mine|ours|his|hers|theirs"
            r"|(?:my|our|his|her|their)\s+\w+"
            r"|you(?!\s+(?:said|say|thought|think|wrote|meant|suggested|assumed|put\s+it|had\s+it)\b))\b"
            r"|\bas\s+(?:i|we|he|she|they|my\s+\w+)\s+(?:am|are|is|do|does|did|was|were|have|has)\b)")
_CORRECTION = re.compile(
    rf"(?<!\w)(?:{_phrases(CORRECTIONS)})(?!\w)"
    # "That's not …" unless an idiom follows ("That's not a problem").
    r"|(?<!\w)(?:that's|thats|that is|that was|this is|that isn't|that wasn't)\s+not\b"
    r"(?!\s+(?:an?\s+)?(?:problem|issue|big deal|urgent|necessary|needed|important|possible)\b)"
    # "wrong", unless it is about something else: "what's wrong with…", "nothing's wrong", "she was wrong".
    r"|(?<!what's )(?<!what is )(?<!nothing's )(?<!nothing is )(?<!she was )(?<!he was )(?<!they were )"
    r"(?<!\w)wrong(?!\w)(?!\s+with\b)"
    # "I meant …" opening a clause (not "the one I meant"); "Actually, <a fact>" but not "Actually, I…",
    # "Actually, let me…", "Actually, quick question…", which go on to something new.
    r"|(?:^|[,.;:!—-]\s*)i\s+meant\b"
    r"|^\W*actually\b,?\s+(?!(?:i|i'[a-z]+|let|let's|can|could|please|also|one more"
    r"|(?:(?:a|one|another)\s+)?(?:quick\s+)?questions?)\b)"
    # A contrast: "Lyon, not Paris", "1,200 not 1,400"; not a comparison ("he is allergic to eggs, not to
    # peanuts like me": a fact about him, read as a correction it had superseded my own allergy).
    rf"|,\s*not\s+(?!sure\b|yet\b|now\b|today\b|only\b)(?![^,.;:!?]*{COMPARED})\w|\d\s+not\s+\d",
    re.IGNORECASE)

# A sentence ends at ".", "!" or "?" before a space; not after a title or an abbreviation that a name or
# more words follow ("with Dr. Pereira", "Mr. Smith", "e.g. fruit", "J. K. Rowling", "the U.S. embassy"),
# nor after "etc." or "a.m." before a lower-case word, nor in "No. 5". Split at "Dr.", a stored fact had
# stopped at "with Dr." and lost the name.
_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof", "St", "Jr", "Sr", "Mt", "Fr", "Rev", "Sgt", "Capt", "Gen",
           "vs", "cf", "approx", "e.g", "i.e", "viz", "Dra", "Sra", "Profa")  # and Portuguese: "a Dra. Costa"
_MID_SENTENCE = ("etc", "a.m", "p.m")


def _after(words) -> str:
    """Lookbehinds: not right after one of these words and its dot (as given, lower or title case)."""
    forms = {f for w in words for f in (w, w.lower(), w[:1].upper() + w[1:])}
    return "".join(rf"(?<!\b{re.escape(f)}\.)" for f in sorted(forms))


_SENTENCE_END = re.compile(rf"(?<=[.!?])(?<!\b[A-Z]\.){_after(_TITLES)}"
                           rf"(?:{_after(_MID_SENTENCE)}\s+|\s+(?![\sa-z]))(?!\d(?<=\b[Nn]o\.\s\d))")


# Corrections in Portuguese and German, read as the English ones are (`is_correction`; formation's
# rule 1 reads them too):
# - the interjection "não" / "nein" before a pause or doubled ("Não, eu moro no Porto.", "Nein. Ich arbeite bei
#   Bosch.", "Não, não, …"), "nein" also before a pronoun or an article ("Nein das war in Köln"); not "Não como
#   carne" (a negated verb: Portuguese says "I don't" with the same word), "Nein zu sagen…", nor before thanks or
#   an idiom ("Não, obrigado", "Nein danke", "Não faz mal": `_OTHER_NOT_CORRECTING`);
# - "that's wrong", "that's not true", "I got it wrong", "I meant" ("Isso está errado", "Não é verdade",
#   "Enganei-me", "Das stimmt nicht", "Ich habe mich vertan", "Falsch, …");
# - a contrast, "…, não na quinta", "…, nicht am Dienstag" (before an article, a preposition, a number or a
#   name, as "Lyon, not Paris"; not "…, não como carne", "…, nicht weit", nor a comparison "como eu", "wie ich");
# - "actually, <a fact>" ("Na verdade, o voo é na sexta.", "Eigentlich heißt sie Anna."); "actually, I …"
#   only with a home, a job, a name or a change ("Na verdade, eu moro no Porto agora", "Eigentlich wohne ich in
#   Hamburg"), as "Actually, I live in Denver now": "Na verdade, prefiro chá", "Eigentlich mag ich keinen
#   Kaffee" tell a preference.
# - German "doch" before a pause or doubled, which contradicts a negative ("Doch, ich wohne in Hamburg.", "Doch!");
#   not "Doch dann hat es geregnet." (a "but" that opens a sentence).
# Only statements correct: "Não é verdade?" asks.
OTHER_NO = r"n[ãa]o|nein|nee|doch"
OTHER_NO_INTERJECTION = (rf"(?:{OTHER_NO})(?=\s*(?:[,!;:…—–]|\.(?!\s*\d)|$)|\s+-(?!\w)|\s+(?:{OTHER_NO})(?![\w-]))"
                         r"|nein(?=\s+(?:ich|wir|das|es|er|sie|der|die|den|dem|mein|meine|unser|unsere)\b)")
_OTHER_NOT_CORRECTING = re.compile(
    r"\W*(?:obrigad[oa]|brigad[oa]|danke|nada|nichts|faz\s+mal|h[áa]\s+problema|tem\s+problema|problema|"
    r"precisa|kein\s+problem|alles\s+gut|schon\s+gut|macht\s+nichts|passt|t[áa]\s+bem|est[áa]\s+bem)\b",
    re.IGNORECASE)
_OTHER_LEADING_NO = re.compile(rf"^\W*(?:(?:ok|okay|hmm+|ah|bem|olha|ora|also|naja|ach|oh)\W+)*(?:{OTHER_NO_INTERJECTION})",
                               re.IGNORECASE)
_OTHER_WRONG = re.compile(
    r"\b(?:enganei-me|me\s+enganei|engano\s+meu|estava\s+enganad[oa]|est[áa]s?\s+enganad[oa]|"
    r"mudei\s+de\s+ideias?|corre[cç][ãa]o\s*:|quis\s+dizer|queria\s+dizer|"
    r"(?:isso|isto)\s+(?:est[áa]|[ée])\s+errad[oa]|est[áa]\s+errad[oa]|"
    r"n[ãa]o\s+(?:[ée]|est[áa])\s+(?:verdade|cert[oa]|bem\s+assim|isso)|"
    r"ich\s+habe?\s+mich\s+(?:geirrt|vertan|verschrieben|vertippt)|hab\s+mich\s+(?:geirrt|vertan)|"
    r"korrektur\s*:|ich\s+meinte|ich\s+habe?\s+(?:es\s+)?mir\s+anders\s+überlegt|"
    r"(?:das|es)\s+stimmt\s+(?:so\s+)?nicht|(?:das|es)\s+ist\s+(?:so\s+)?(?:falsch|nicht\s+(?:richtig|korrekt|wahr)))"
    r"(?![\w-])|^\W*(?:errad[oa]|falsch|stimmt\s+nicht)(?![\w-])", re.IGNORECASE)
_OTHER_CONTRAST = re.compile(
    r",\s*(?:n[ãa]o\s+(?!s[óo]\b)(?:(?:n[oa]s?|[oa]s?|ao|à|em|de|d[oa]s?|um|uma|para|com)\s+|\d|(?-i:[A-ZÁÉÍÓÚÂÊÔÃÕÇ]))"
    r"|nicht\s+(?!nur\b)(?:(?:in|im|am|an|auf|bei|beim|mit|zu|zum|zur|der|die|das|den|dem|ein|eine|einen|um|seit|"
    r"nach|vom|von)\s+|\d|(?-i:[A-ZÄÖÜ])))"
    r"(?![^,.;:!?]*\b(?:como\s+(?:eu|n[óo]s|ele|ela|o\s+meu|a\s+minha)|wie\s+(?:ich|wir|er|sie|mein|meine))\b)",
    re.IGNORECASE)
_OTHER_ACTUALLY = re.compile(r"^\W*(?:na\s+verdade|na\s+realidade|eigentlich)(?![\w-])[\s,]*", re.IGNORECASE)
# "Actually, I…" in Portuguese ("eu", or a verb in the first person, "prefiro") and German ("Eigentlich wohne
# ich…"), and what makes it a correction: a home, a job, a name, an age, a move, or a change ("agora", "jetzt").
_OTHER_FIRST_PERSON = re.compile(
    r"^(?:eu\b|n[óo]s\b|(?!(?:isso|isto|aquilo|nosso|vosso|todo|muito|pouco|outro|mesmo|primeiro|segundo|último|"
    r"ultimo|próximo|proximo|novo|tanto|quanto|cada|o|no|do|ao|pelo|meu|teu|seu)\b)[a-zà-ÿ]{3,}o\b"
    r"|\w+\s+(?:ich|wir)\b)", re.IGNORECASE)
_OTHER_STATE = re.compile(
    r"\b(?:moro|moramos|vivo|vivemos|trabalho|trabalhamos|mudei|mud[áa]mos|chamo-me|tenho\s+\d+\s+anos|agora|"
    r"j[áa]\s+n[ãa]o|wohne|wohnen|lebe|leben|arbeite|arbeiten|hei(?:ß|ss)e|umgezogen|bin\s+\d+|jetzt|inzwischen|"
    r"mittlerweile|nicht\s+mehr)\b", re.IGNORECASE)


def corrects_in_other_words(text: str) -> bool:
    """Whether a Portuguese or German message corrects by its own words (see `OTHER_NO_INTERJECTION` above)."""
    if (no := _OTHER_LEADING_NO.match(text)) and not _OTHER_NOT_CORRECTING.match(text[no.end():]):
        return True
    told = [s for s in _SENTENCE_END.split(text) if s.strip() and not s.rstrip().endswith("?")]
    if any(_OTHER_WRONG.search(s) or _OTHER_CONTRAST.search(s) for s in told):
        return True
    if told and (actually := _OTHER_ACTUALLY.match(told[0])) and actually.end() < len(told[0]):
        rest = told[0][actually.end():]
        return not _OTHER_FIRST_PERSON.match(rest) or bool(_OTHER_STATE.search(rest))
    return False


def is_acknowledgement(text: str) -> bool:
    """A reply that opens by thanking or agreeing and does not go on to correct ("Thanks, but…")."""
    text = text.translate(_APOSTROPHES)
    return bool(_ACK.search(text) or _OTHER_ACK.search(text)) and not is_correction(text)


def is_correction(text: str) -> bool:
    """A reply that opens with the interjection "no" (not "No dogs are allowed…"), or says outside a
    question that the answer was wrong."""
    text = text.translate(_APOSTROPHES).strip()
    if _LEADING_NO.search(text):
        return True
    statements = [s for s in _SENTENCE_END.split(text) if not s.rstrip().endswith("?")]
    return any(_CORRECTION.search(s) for s in statements) or corrects_in_other_words(text)


class Feedback(BaseModel):
    feedback_score: float
    acknowledged: bool
    corrected: bool


def base_score(time_to_next_s: float) -> float:
    """0.9 when the user came back within 30 s, 0.7 within 120 s, else 0.5."""
    if time_to_next_s < 30:
        return 0.9
    if time_to_next_s < 120:
        return 0.7
    return 0.5


def feedback_score(time_to_next_s: float, next_text: str) -> Feedback:
    """base_score(t) + 0.1 if acknowledged − 0.1 if corrected, floored at 0.3 after a correction,
    then clipped to [0, 1]."""
    acknowledged = is_acknowledgement(next_text)
    corrected = is_correction(next_text)
    score = base_score(time_to_next_s) + (0.1 if acknowledged else 0.0) - (0.1 if corrected else 0.0)
    if corrected:
        score = max(score, 0.3)
    return Feedback(feedback_score=round(min(1.0, max(0.0, score)), 4), acknowledged=acknowledged,
                    corrected=corrected)
