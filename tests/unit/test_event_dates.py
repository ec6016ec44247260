"""Which occurrence a date said without its year means (`core.formation.event_dates`, through the
observation's `event_time`): the next one for a plan, a sign-up, a booking, the future or the present; the
previous one for the past; the nearest when nothing tells. Said on Tuesday 28 April 2026, 10:00 UTC.

A user's ChatGPT import had "I signed up for the Denver Half Marathon on October 13." (said 2026-04-28) at
2025-10-13, six months before it was said."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.formation.event_dates import direction_of
from core.formation.observations import event_time

SAID = datetime(2026, 4, 28, 10, 0, tzinfo=UTC)  # a Tuesday


def day(text: str, said: datetime = SAID) -> tuple[int, int, int]:
    moment, stated = event_time(text, said)
    assert stated, text
    return moment.year, moment.month, moment.day


@pytest.mark.parametrize("text, when", [
    ("I signed up for the Denver Half Marathon on October 13.", (2026, 10, 13)),
    ("I registered for the Chicago marathon on October 11.", (2026, 10, 11)),
    ("We booked Hotel Granvia Kyoto for July 6 to 12.", (2026, 7, 6)),
    ("I bought tickets for the Coldplay concert on March 3.", (2027, 3, 3)),
    ("My mom's birthday is on August 3.", (2026, 8, 3)),
    ("Maya turns 7 on February 10.", (2027, 2, 10)),
    ("The conference in Lisbon is on 14 March.", (2027, 3, 14)),
    ("I'm flying to Kyoto on April 6.", (2027, 4, 6)),
    ("We fly to Kyoto on May 6.", (2026, 5, 6)),
    ("I'll call the landlord on Monday.", (2026, 5, 4)),
    ("My flight leaves on Friday.", (2026, 5, 1)),
    ("I'm so excited for the race on October 13!", (2026, 10, 13)),
    ("I have a dentist appointment on April 20.", (2027, 4, 20)),
    ("We're going to Lisbon next October.", (2026, 10, -1)),
    ("The lease renewal is due in March.", (2027, 3, -1)),
    ("Planning a Lisbon trip for 13–15 September with Ana.", (2026, 9, 15)),
])
def test_a_plan_or_the_present_means_the_next_occurrence(text, when):
    assert day(text) == when


@pytest.mark.parametrize("text, when", [
    ("I ran the Denver Half on October 13.", (2025, 10, 13)),
    ("I ran it last October 13.", (2025, 10, 13)),
    ("Leo was born on January 17.", (2026, 1, 17)),
    ("Priya gave birth to our son Leo on December 17!", (2025, 12, 17)),
    ("We were married on June 3.", (2025, 6, 3)),
    ("Maya turned 5 on May 14.", (2025, 5, 14)),
    ("I had a dentist appointment on May 3.", (2025, 5, 3)),
    ("The party was on Saturday.", (2026, 4, 25)),
    ("On October 13 I ran my first half marathon.", (2025, 10, 13)),
    ("We went to Lisbon in October.", (2025, 10, -1)),
    ("I was in Lisbon last May.", (2025, 5, -1)),
    ("I've been to the dentist on May 3.", (2025, 5, 3)),
    ("I have been to the dentist on May 3.", (2025, 5, 3)),
    ("I signed the lease on October 13.", (2025, 10, 13)),
])
def test_the_past_means_the_previous_occurrence(text, when):
    assert day(text) == when


@pytest.mark.parametrize("text, when", [
    ("Dentist on May 3.", (2026, 5, 3)),             # 5 days ahead, not a year back
    ("Dentist on December 1.", (2025, 12, 1)),       # 5 months back, not 7 ahead
    ("Book club on Thursday.", (2026, 4, 30)),       # 2 days ahead, not 5 back
    ("Yoga class on Sunday.", (2026, 4, 26)),        # 2 days back, not 5 ahead
    ("Lisbon in October.", (2026, 10, -1)),
    ("Lisbon in February.", (2026, 2, -1)),
    ("Anniversary dinner on 1 June.", (2026, 6, 1)),
    ("Grandma's visit on March 30.", (2026, 3, 30)),
    ("Our anniversary on April 28.", (2026, 4, 28)),  # today, whatever the tense
    ("Team offsite on November 20.", (2025, 11, 20)),
    ("Vet appointment on July 15.", (2026, 7, 15)),
    ("Payday on the 30th of April.", (2026, 4, 30)),
])
def test_nothing_that_tells_means_the_nearest_occurrence(text, when):
    assert day(text) == when


@pytest.mark.parametrize("text, when", [
    ("We went to Lyon in May 2024.", (2024, 5, -1)),                # its year
    ("We planned the trip last month.", (2026, 3, -1)),             # a period
    ("My flight to Lisbon leaves next Friday.", (2026, 5, 1)),      # relative to now
    ("I ran 10 km yesterday.", (2026, 4, 27)),
    ("This October we go to Lisbon.", (2026, 10, -1)),              # this year's
    ("I'm vegan since January.", (2026, 1, -1)),                    # since: the one begun
])
def test_a_date_the_parser_reads_outright_is_read_as_said(text, when):
    assert day(text) == when


def test_a_clock_time_is_today_s_or_the_next_by_the_same_rule():
    """A bare "2:05" may be a race time as well ("My goal is 2:05."): read as the parser reads it."""
    moment, _ = event_time("The meeting is at 3pm.", SAID)
    assert (moment.day, moment.hour) == (28, 15)
    moment, _ = event_time("I went to the gym at 9am.", SAID)
    assert (moment.day, moment.hour) == (28, 9)
    moment, _ = event_time("My goal is 2:05.", SAID)
    assert (moment.day, moment.hour) == (28, 2)


def test_the_words_that_govern_the_date_decide_not_the_rest_of_the_sentence():
    """The nearest marker before the date in its clause, else the first after it."""
    assert direction_of("We moved to Denver last year, and Maya starts school on September 2.",
                        "September 2") == "next"
    assert direction_of("I will tell you about the race I ran on October 13.", "October 13") == "previous"
    assert direction_of("Birthday party for Maya on May 14!", "May 14") == "nearest"


def test_the_stated_words_are_kept():
    assert event_time("I ran it last October 13.", SAID)[1] == "last October 13"
    assert event_time("I signed up for the half on October 13.", SAID)[1] == "October 13"
