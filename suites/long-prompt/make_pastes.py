#!/usr/bin/env python3
"""Build the long-prompt robustness pastes for cargo-sparktest.

Writes paste-25k.txt (exactly 25,000 characters) and paste-95k.txt (exactly
95,000 characters) next to this script. Each paste is a fictional municipal
archive's annual report, assembled month by month from many sentence
templates and word lists. All choices come from one fixed-seed
random.Random(7), so the output is fully deterministic. No sentence is used
twice within a paste.

The only checkable fact (a door code) is planted in the final paragraph of
each paste; nothing before that paragraph mentions doors, codes, lockers or
the answer digits. The last character of each paste is a newline, counted
in the exact length.

Standard library only. Usage: python3 make_pastes.py
Original text written for cargo-sparktest; dedicated to the public domain
under CC0 1.0.
"""

import datetime
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))

TOWN = "Kestrel Ford"
ARCHIVE = "Municipal Archive of " + TOWN

# Words and numbers that must never appear before the final paragraph.
FORBIDDEN_RE = re.compile(
    r"code|locker|\block|\bdoors?\b|\bkeys?\b|keypad|password|passcode|"
    r"combination|\bpin\b|secret|\bdigits?\b|4817|6293",
    re.IGNORECASE,
)

MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
            "Saturday", "Sunday"]
# Typical daytime high, in degrees Celsius, for each month.
MONTH_HIGH = [6, 7, 10, 13, 16, 19, 21, 21, 18, 14, 10, 7]

MALE = ["Ambrose", "Bernard", "Cedric", "Desmond", "Elias", "Felix", "Gideon",
        "Howard", "Ivo", "Jasper", "Leopold", "Lionel", "Nathaniel", "Niall",
        "Percival", "Rupert", "Silas", "Ulrich", "Yusuf", "Crispin", "Hugo",
        "Matthias", "Oswin", "Tobias"]
FEMALE = ["Agnes", "Beatrix", "Clara", "Dora", "Edith", "Florence", "Greta",
          "Hester", "Imogen", "Juniper", "Katrin", "Mabel", "Marguerite",
          "Odette", "Ottilie", "Rosalind", "Sabine", "Tamsin", "Vivian",
          "Winifred", "Zora", "Philippa", "Lettice", "Maud"]
LAST = ["Ashdown", "Brackley", "Carrow", "Dunstan", "Ellery", "Fairweather",
        "Garside", "Holloway", "Inchbold", "Jessop", "Kettering", "Lamberth",
        "Marwood", "Netherby", "Oakhurst", "Pellow", "Quarrie", "Redfern",
        "Stannard", "Thursby", "Underhill", "Vosper", "Whitlock", "Yardley",
        "Abernethy", "Blenkin", "Corbishley", "Drinkwater", "Egerton",
        "Fennimore", "Gathercole", "Hebblethwaite", "Ilsley", "Juxon",
        "Kingdom", "Lightfoot", "Mortimer", "Nuttall", "Ormerod", "Penhaligon",
        "Rudd", "Sowerby", "Tregear", "Wainwright"]
MALE_TITLES = ["Mr.", "Mr.", "Dr.", "Councillor", "Alderman", "Rev."]
FEMALE_TITLES = ["Mrs.", "Ms.", "Miss", "Dr.", "Councillor"]

ROLES = ["the chair", "the vice-chair", "the treasurer", "the deputy archivist",
         "the senior conservator", "the parish liaison", "the records officer",
         "the volunteer coordinator", "the town clerk", "the finance officer",
         "the education officer", "the digitization lead"]
COMMITTEES = ["Records Committee", "Finance and Estates Subcommittee",
              "Friends of the Archive", "Conservation Working Group",
              "Reading Room Users' Forum", "Digitization Steering Group",
              "Heritage and Outreach Panel", "Acquisitions Panel"]
VENUES = ["Guildhall", "archive search room", "library annexe",
          "council chamber", "old court room"]
AGENDA = ["the revised collections policy", "the draft budget",
          "the offer of the Marwood estate papers on deposit",
          "the new fee schedule", "the conservation priorities list",
          "the plan for a summer exhibition", "the volunteer handbook",
          "a partnership with the county library",
          "the updated emergency plan", "a new rota for weekend openings"]
DEFERRED = ["new reading room hours", "charges for copying",
            "the loan of maps for exhibition", "the volunteer rota",
            "photography in the search room", "the storage of oversized plans",
            "the transfer of council committee papers",
            "the future of the microfilm service", "signage on the High Street"]
QUOTES_FOR = ["new shelving", "a replacement microfilm reader",
              "pest monitoring", "a book cradle", "a larger map chest",
              "reboxing the parish collection", "a second scanner",
              "repairs to the stone steps", "a humidity logger"]
SUPPORTERS = ["county historical society", "local civic trust",
              "university history department", "town council",
              "family history society", "diocesan registry",
              "chamber of commerce", "rotary club"]

COLLECTIONS = ["the tithe maps", "the quarter sessions rolls",
               "the borough rate books", "the parish registers of St. Anselm",
               "the Fennick brewery ledgers", "the canal company letter books",
               "the workhouse admission registers", "the school log books",
               "the market charters", "the harbour commissioners' minutes",
               "the Marwood estate papers", "the photographic glass plates",
               "the enclosure awards", "the fire brigade day books",
               "the mill wage sheets", "the coroners' inquest files",
               "the building control plans", "the Temperance Society albums",
               "the gasworks correspondence", "the cricket club scorebooks",
               "the turnpike trust accounts", "the almshouse minute books",
               "the lantern slide collection", "the cattle market returns"]
MATERIALS = ["bound volumes", "loose deeds", "folded maps", "glass negatives",
             "account ledgers", "bundles of letters", "printed handbills",
             "parchment rolls", "architectural drawings", "photograph albums",
             "minute books", "cash books", "survey notebooks", "postcards",
             "scrapbooks", "press cuttings", "rate assessments",
             "sale catalogues", "election posters", "sermon notes"]
CONTAINERS = [("Three parcels", "were"), ("Two crates", "were"),
              ("A tin trunk", "was"), ("Four bundles", "were"),
              ("Six boxes", "were"), ("A leather suitcase", "was"),
              ("A tea chest", "was")]
CONDITIONS = ["in good order", "dry and stable", "slightly foxed",
              "with loose spines", "with some mould staining on the edges",
              "tightly rolled and brittle", "water damaged at the lower corners",
              "complete and legible", "faded but readable",
              "with torn wrappers", "much handled but sound",
              "stained by old adhesive tape", "in need of rehousing",
              "cockled from past damp", "free of pests"]
PLACES = ["Upper Wrayford", "Saltmarsh End", "Cobbler's Green", "Hallam Cross",
          "Brindle Mere", "Oxley Vale", "Fenwick Lane", "St. Anselm's Row",
          "Thornby", "Little Barrow", "Castle Quay", "Mill Hythe",
          "Pickering Street", "Ashby Common", "the Old Tannery",
          "Willowbrook Farm", "Quarry Hill", "Gallows Mead", "Priory Close",
          "the North Wharf"]
SCHOOLS = ["Upper Wrayford Primary", "Thornby Grammar", "Castle Quay Academy",
           "St. Anselm's Junior", "Oxley Vale High", "Mill Hythe Infants"]
FAR_PLACES = ["Ontario", "New South Wales", "Cape Town", "Otago", "Ohio",
              "Rotterdam", "Bergen", "Cork", "Halifax, Nova Scotia",
              "Tasmania", "Vermont", "Buenos Aires", "Lyon", "Dunedin",
              "Queensland", "Manitoba"]
TOPICS = ["a great-grandfather who worked at the tannery",
          "the route of the old tramway", "the demolition of the corn exchange",
          "a house said to have been a coaching inn",
          "the history of the lifeboat station",
          "an ancestor transported for poaching",
          "the building of the railway viaduct", "a family grave at Thornby",
          "the name of a vanished street", "the cholera outbreak of 1849",
          "a shop sign found in a garden", "the wartime evacuee billets",
          "the origin of the May fair", "the bells of St. Anselm",
          "a photograph of a brass band", "a boundary dispute over a hedge",
          "the founding of the cooperative store",
          "the course of the medieval town ditch"]
DEPOSITORS = ["Kestrel Ford Choral Society", "Oxley Vale Women's Institute",
              "Castle Quay Sailing Club", "Thornby Allotment Association",
              "Mill Hythe Bowls Club", "St. Anselm's bell ringers",
              "Brindle Mere Angling Club", "Kestrel Ford Rotary Club"]
BUSINESSES = ["a family bakery", "the local rowing club",
              "a solicitor's practice", "a Methodist chapel",
              "the drapery on High Street", "a dairy farm", "the town band",
              "a lodging house", "a rope works", "a printing shop"]
TREATMENTS = ["surface cleaned with a soft brush and smoke sponge",
              "humidified and flattened under weights",
              "repaired with Japanese tissue and wheat starch paste",
              "rehoused in acid-free folders and boxes",
              "given new cloth hinges", "interleaved with buffered paper",
              "boxed in custom four-flap enclosures",
              "washed and deacidified", "rebacked in archival cloth",
              "frozen for a week as a precaution against insects",
              "encapsulated in polyester sleeves",
              "consolidated where the ink had begun to flake"]
PROBLEMS = ["mould", "insect damage", "iron gall ink corrosion",
            "brittle paper", "old pressure-sensitive tape", "water staining",
            "detached boards", "silverfish grazing", "tears along the folds",
            "flaking pigment", "rusted staples", "distortion from damp"]
WET = {"overcast with drizzle", "wet and blustery", "showery with sunny spells",
       "unsettled", "heavy rain midweek", "sleet on two days",
       "thundery late in the week", "grey and damp"}
COLD_ONLY = {"cold and clear", "frosty at night", "sleet on two days"}
WARM_ONLY = {"warm and close", "humid and still", "thundery late in the week"}
WEATHER = ["bright and dry", "overcast with drizzle",
           "mild with a south-westerly breeze", "cold and clear",
           "wet and blustery", "foggy in the mornings", "humid and still",
           "showery with sunny spells", "frosty at night", "unsettled",
           "dry with a brisk easterly", "heavy rain midweek",
           "sleet on two days", "warm and close", "thundery late in the week",
           "grey and damp", "breezy with long clear spells"]
EVENTS = ["a talk on the history of the market", "an exhibition of shop signs",
          "a family history drop-in session", "a tour of the strongroom",
          "a school workshop on Victorian handwriting",
          "a map reading evening", "a lantern slide show",
          "a heritage open day", "a talk on the canal boatmen",
          "a display of wartime posters", "a paleography class",
          "a reminiscence afternoon at the day centre",
          "an evening on the town's lost pubs",
          "a walk along the line of the old town wall",
          "a talk on the Fennick brewery", "a workshop on dating photographs"]
LENDING_TO = ["town museum", "county library", "Guildhall gallery",
              "university exhibition space", "Thornby heritage centre"]
SHOWS = ["an exhibition on local trades", "a display about the harbour",
         "a centenary celebration", "a show of Victorian shopfronts",
         "a display on the building of the viaduct"]
VOLUNTEER_WORK = ["indexing the rate books", "repackaging glass plates",
                  "transcribing the school log books",
                  "listing the estate papers", "checking catalogue entries",
                  "numbering the tithe map sheets"]
BUILDING_PARTS = ["the reading room windows", "the strongroom dehumidifier",
                  "the roof gutters above the search room",
                  "the goods lift", "the boiler", "the fire alarm panel",
                  "the loading bay shutter", "the rooftop skylight",
                  "the lighting in the map store", "the staff kitchen",
                  "the ramp at the main entrance", "the mobile shelving rails",
                  "the air handling unit", "the microfilm readers",
                  "the hand rail on the back stairs"]
PLURAL_PARTS = {"the reading room windows",
                "the roof gutters above the search room",
                "the mobile shelving rails", "the microfilm readers"}
FIXES = ["serviced by the contractor", "cleaned and inspected",
         "repainted", "replaced under warranty", "adjusted and lubricated",
         "rewired", "fitted with new seals", "recalibrated",
         "patched pending a full repair", "surveyed for replacement"]
LEAKS = ["the roof gutters above the search room",
         "a radiator valve in the map store", "the rooftop skylight",
         "a cracked downpipe", "the staff kitchen", "the air handling unit"]
JOBS = ["assistant archivist", "search room supervisor", "project cataloguer",
        "conservation technician", "outreach assistant", "records clerk"]
TRAINING = ["handling photographs", "manual lifting", "first aid",
            "reading secretary hand", "emergency salvage", "data protection",
            "caring for parchment", "fire safety"]
TRAINERS = ["the county record office", "the university library",
            "the national archives", "the cathedral library"]
REF_PREFIX = ["DA", "BR", "PR", "QS", "EST", "PH", "MAP", "SCH", "CAN", "WH"]
SHELF_LETTERS = "ABCDEFGHJKLMNPRSTUVW"


def cap(s):
    return s[0].upper() + s[1:]


class Gen:
    def __init__(self, rng, year, scale=1.0):
        self.r = rng
        self.year = year
        self.scale = scale  # stretches the number of sentences per section
        self.seen = set()   # every sentence used so far in this paste
        self.month = 0      # month (0-11) of the section being written
        self.used = set()   # templates already used in the current section
        self.committee = COMMITTEES[0]

    # ---- small helpers -------------------------------------------------
    def c(self, seq):
        return self.r.choice(seq)

    def n(self, lo, hi):
        return self.r.randint(lo, hi)

    def days_in(self, m):
        nxt = datetime.date(self.year + (m == 11), (m + 1) % 12 + 1, 1)
        return (nxt - datetime.date(self.year, m + 1, 1)).days

    def date(self, month=None, weekday=False):
        m = self.month if month is None else month
        d = self.n(1, self.days_in(m))
        day = datetime.date(self.year, m + 1, d)
        if weekday:
            while day.weekday() > 4:  # meetings fall on working days
                day += datetime.timedelta(days=1)
            return "%s %d %s" % (WEEKDAYS[day.weekday()], day.day, MONTHS[day.month - 1])
        return "%d %s" % (d, MONTHS[m])

    def mon(self):
        """The current month or, now and then, the month before it."""
        return MONTHS[max(0, self.month - self.n(0, 1))]

    def later_month(self, fallback):
        return self.c(MONTHS[self.month + 1:] or [fallback])

    def person(self):
        if self.n(0, 1):
            return "%s %s %s" % (self.c(MALE_TITLES), self.c(MALE), self.c(LAST))
        return "%s %s %s" % (self.c(FEMALE_TITLES), self.c(FEMALE), self.c(LAST))

    def name(self):
        return "%s %s" % (self.c(MALE + FEMALE), self.c(LAST))

    def years(self):
        a = self.n(1620, 1935)
        return "%d to %d" % (a, a + self.n(2, 60))

    def shelf(self):
        return "%s%d" % (self.c(SHELF_LETTERS), self.n(1, 48))

    def ref(self):
        return "%s/%d/%d" % (self.c(REF_PREFIX), self.n(1, 9), self.n(1, 899))

    def verb(self, part):
        return "were" if part in PLURAL_PARTS else "was"

    def unique(self, make):
        for _ in range(500):
            s = make()
            if s not in self.seen and not FORBIDDEN_RE.search(s):
                self.seen.add(s)
                return s
        raise RuntimeError("could not produce a fresh sentence")

    def sentence(self, family):
        """One fresh sentence from a family, preferring templates not yet used in this section."""
        templates, repeatable = family
        free = [t for t in range(len(templates)) if (id(family), t) not in self.used]
        t = self.c(free or repeatable)
        self.used.add((id(family), t))
        return self.unique(templates[t])

    def paragraphs(self, family, count, per_para=(3, 5)):
        out, cur = [], []
        target = self.n(*per_para)
        for _ in range(count):
            cur.append(self.sentence(family))
            if len(cur) >= target:
                out.append(" ".join(cur))
                cur, target = [], self.n(*per_para)
        if cur:
            if len(cur) == 1 and out:
                out[-1] += " " + cur[0]  # no one-sentence paragraph at the end
            else:
                out.append(" ".join(cur))
        return out

    # ---- sentence families: (templates, repeatable template indices) ---
    def families(self):
        c, n = self.c, self.n
        self.F_MIN = ([
            lambda: "%s reported that work on %s was %d percent complete and expected to finish by %s." % (
                cap(c(ROLES)), c(COLLECTIONS), n(12, 96), self.later_month("the end of the year")),
            lambda: "After some discussion it was agreed to defer the question of %s until the %s meeting." % (
                c(DEFERRED), self.later_month("January")),
            lambda: "%s proposed, and %s seconded, that the %s accept %s; the motion carried by %d votes to %d." % (
                self.person(), self.person(),
                "panel" if "Panel" in self.committee else "meeting", c(AGENDA), n(5, 9), n(0, 3)),
            lambda: "The treasurer noted that spending stood at %d pounds against a budget of %d pounds for the quarter." % (
                n(1200, 9000), n(9100, 15000)),
            lambda: "Members thanked %s for %d years of service to the %s." % (self.name(), n(3, 31), self.committee),
            lambda: "It was reported that the %s had written in support of a grant application for %s." % (
                c(SUPPORTERS), c(COLLECTIONS)),
            lambda: "Action: %s to obtain three quotations for %s before the next meeting." % (self.name(), c(QUOTES_FOR)),
            lambda: "%s asked whether the search room could open on Saturday mornings during %s; the matter was noted for review." % (
                self.person(), self.later_month("the summer")),
            lambda: "A letter from %s was read, thanking the staff for help with research into %s." % (
                self.person(), c(TOPICS)),
            lambda: "%s presented a short paper on %s, and members agreed that it should be circulated with these minutes." % (
                self.person(), c(COLLECTIONS)),
            lambda: "The meeting noted with regret the death of %s, a reader at the archive for more than %d years." % (
                self.name(), n(10, 40)),
            lambda: "%s asked that the next newsletter include an appeal for photographs of %s." % (
                self.person(), c(PLACES)),
            lambda: "It was agreed that %s would draft a response to the consultation on %s." % (
                c(ROLES), c(DEFERRED)),
        ], [0, 2, 5, 6, 8])
        self.F_INV = ([
            lambda: "Bay %s holds %d boxes of %s from %s, %s." % (
                self.shelf(), n(3, 140), c(MATERIALS), c(PLACES), c(CONDITIONS)),
            lambda: "Shelves %s to %s were checked against the catalogue; %d items were found out of sequence and returned to their places." % (
                self.shelf(), self.shelf(), n(2, 40)),
            lambda: "The series %s, covering %s, was recounted at %d volumes, %d more than the old handlist records." % (
                self.ref(), self.years(), n(10, 320), n(1, 9)),
            lambda: (lambda box: "%s of %s, found %s, %s moved to the isolation room for inspection." % (
                box[0], c(MATERIALS), c(CONDITIONS), box[1]))(c(CONTAINERS)),
            lambda: "The map chest in the east store now contains %d sheets, each listed with its scale and date." % n(40, 900),
            lambda: "Item %s, previously recorded as missing, was found inside a volume of %s." % (self.ref(), c(COLLECTIONS)),
            lambda: "A spot check of %d randomly chosen items from %s found all present and correctly labelled." % (
                n(20, 250), c(COLLECTIONS)),
            lambda: "Oversized items from bay %s were transferred to flat storage, freeing %d metres of shelving." % (
                self.shelf(), n(2, 36)),
            lambda: "Labels on %d boxes of %s were replaced, as the old ink had faded beyond reading." % (
                n(12, 300), c(MATERIALS)),
            lambda: "Total linear extent of the holdings at the end of %s stood at %d.%d metres." % (
                MONTHS[self.month], 3000 + 8 * self.month + n(0, 7), n(0, 9)),
            lambda: "Volumes %s to %s of %s were found to be shelved upside down and were turned." % (
                n(1, 20), n(21, 60), c(COLLECTIONS)),
        ], [0, 1, 2, 5, 7])
        self.F_IN_ENV = ([
            lambda: "Strongroom temperature held between %d and %d degrees, and relative humidity between %d and %d percent." % (
                n(14, 16), n(17, 19), n(42, 47), n(48, 56)),
            lambda: "The search room thermometer read %d degrees on the warmest afternoon, and the blinds were drawn to protect the displays." % (
                MONTH_HIGH[self.month] + n(5, 10)),
            lambda: "The roof gauge recorded %d millimetres for the month, %s the ten-year average." % (
                n(18, 140), c(["above", "below", "close to", "well above", "a little under"])),
            lambda: "A hygrometer in the basement store peaked at %d percent after %s, and a portable dehumidifier was run for %d days." % (
                n(58, 71), c(["a week of rain", "a burst pipe in the street", "the river rose", "a warm humid spell"]), n(2, 9)),
            lambda: "Overnight lows fell to %d degrees on %s, the coldest reading of the month." % (
                MONTH_HIGH[self.month] - n(6, 11), self.date()),
            lambda: "No readings were taken on %s owing to %s." % (
                self.date(), c(["a public holiday", "staff sickness", "a failed battery in the logger",
                                "building works on the roof"])),
            lambda: "Light levels in the exhibition case averaged %d lux, within the agreed limit." % n(38, 50),
        ], [5])
        self.F_ACQ = ([
            lambda: "%s of %s donated %d %s relating to %s, dating from %s." % (
                self.person(), c(PLACES), n(2, 60), c(MATERIALS), c(BUSINESSES), self.years()),
            lambda: "The archive purchased at auction a %s of %s, dated %d, for %d pounds." % (
                c(["manuscript plan", "printed sale notice", "diary", "account book",
                   "commonplace book", "panoramic photograph"]), c(PLACES), n(1690, 1930), n(40, 900)),
            lambda: "The %s transferred %d boxes of %s, now catalogued as %s." % (
                c(["planning department", "registrar's office", "parks department",
                   "housing office", "magistrates' court", "harbour office"]), n(4, 90), c(MATERIALS), self.ref()),
            lambda: "A small collection of %s found during renovation of a house at %s was handed in by the builders." % (
                c(MATERIALS), c(PLACES)),
            lambda: "%s deposited the records of the %s, on loan for an initial term of %d years." % (
                self.person(), c(DEPOSITORS), n(5, 25)),
            lambda: "Copies of %d photographs of %s were made from originals lent by %s." % (
                n(6, 140), c(PLACES), self.person()),
            lambda: "An offer of %s was declined, since the same material is already held at the county record office." % c(MATERIALS),
            lambda: "Accessions for %s numbered %d, compared with %d in the same month last year." % (
                MONTHS[self.month], n(3, 31), n(3, 31)),
            lambda: "The family of the late %s gave %d %s kept by the %s." % (
                self.name(), n(3, 40), c(MATERIALS), c(DEPOSITORS)),
        ], [0, 1, 3, 5])
        self.F_CONS = ([
            lambda: "Volume %s, affected by %s, was %s." % (self.ref(), c(PROBLEMS), c(TREATMENTS)),
            lambda: "The conservator spent %d hours on %s, which suffered from %s; the worst items were %s." % (
                n(4, 120), c(COLLECTIONS), c(PROBLEMS), c(TREATMENTS)),
            lambda: "Sticky traps were checked in %d locations; %s." % (
                n(12, 40), c(["none showed activity", "two silverfish were recorded in the basement",
                              "a single carpet beetle larva was found near the loading bay",
                              "catches were lower than last quarter",
                              "a few booklice were noted in the map store"])),
            lambda: "%s, a volunteer, completed the cleaning of %d %s under supervision." % (
                self.name(), n(20, 600), c(MATERIALS)),
            lambda: "Priority for the coming months is %s, where %s has been observed on %d items." % (
                c(COLLECTIONS), c(PROBLEMS), n(10, 400)),
            lambda: (lambda a: "A condition survey of %s graded %d percent of items as stable and %d percent as needing treatment." % (
                c(COLLECTIONS), a, n(3, 100 - a)))(n(55, 90)),
            lambda: "A further %d documents from %s were %s." % (n(5, 80), c(COLLECTIONS), c(TREATMENTS)),
            lambda: "Two volunteers were trained to make boxes for %s, and %d have been made so far." % (
                c(COLLECTIONS), n(10, 120)),
            lambda: "The emergency salvage crates were checked on %s and their contents brought up to date." % self.date(),
        ], [0, 6])
        self.F_VIS = ([
            lambda: "The search room welcomed %d visitors in %s, who consulted %d documents between them." % (
                n(90, 480), MONTHS[self.month], n(300, 2400)),
            lambda: (lambda a: "The most requested series remained %s, followed by %s." % (
                a, c([x for x in COLLECTIONS if x != a])))(c(COLLECTIONS)),
            lambda: "Written and emailed enquiries reached %d for the month, %d of them from overseas." % (
                n(40, 240), n(5, 39)),
            lambda: "A researcher from %s spent %d days studying %s for a book on %s." % (
                c(FAR_PLACES), n(2, 14), c(COLLECTIONS), c(TOPICS)),
            lambda: "An enquiry from %s about %s was answered with copies from %s." % (
                c(FAR_PLACES), c(TOPICS), c(COLLECTIONS)),
            lambda: "%s brought a group of %d pupils from %s to see %s." % (
                self.person(), n(12, 34), c(SCHOOLS), c(COLLECTIONS)),
            lambda: "Online catalogue searches numbered %d, %s rise on the same month last year." % (
                n(1100, 9800), c(["a steady", "an encouraging", "a welcome", "a modest but real"])),
            lambda: "A reader from %s asked about %s and was directed to %s." % (
                c(PLACES), c(TOPICS), c(COLLECTIONS)),
        ], [3, 4, 7])
        self.F_BLD = ([
            lambda: (lambda p: "During %s, %s %s %s." % (self.mon(), p, self.verb(p), c(FIXES)))(c(BUILDING_PARTS)),
            lambda: "A leak from %s was traced on %s; no documents were harmed, though %d boxes were moved as a precaution." % (
                c(LEAKS), self.date(), n(3, 60)),
            lambda: "A fire drill on %s cleared the building in %d minutes %d seconds." % (self.date(), n(2, 4), n(0, 59)),
            lambda: (lambda p: "Electricity use in %s was %d percent lower than a year earlier, helped by the fact that %s %s %s." % (
                MONTHS[self.month], n(2, 14), p, self.verb(p), c(FIXES)))(c(BUILDING_PARTS)),
            lambda: "The gardeners cut back the ivy on the %s wall and cleared the drains along %s." % (
                c(["north", "east", "south", "west"]), c(["the car park", "the service yard", "the front steps"])),
            lambda: "An insurance surveyor visited on %s and made %d minor recommendations, all since completed." % (
                self.date(), n(2, 6)),
            lambda: "Window cleaners worked on the %s elevation on %s, and the search room was closed for the morning." % (
                c(["street", "garden", "river", "car park"]), self.date()),
            lambda: "The emergency lighting was tested for %d hours on %s and passed." % (n(1, 3), self.date()),
            lambda: "A new bench was placed by the main entrance, paid for by the %s." % c(DEPOSITORS),
        ], [0, 1])
        self.F_OUT = ([
            lambda: "%s, given by %s on %s, drew an audience of %d." % (
                cap(c(EVENTS)), self.person(), self.date(), n(18, 160)),
            lambda: "The archive lent %d items to the %s for %s." % (n(2, 25), c(LENDING_TO), c(SHOWS)),
            lambda: "Volunteers gave %d hours in %s, chiefly on %s." % (n(120, 480), MONTHS[self.month], c(VOLUNTEER_WORK)),
            lambda: "The newsletter for %s went out to %d subscribers." % (MONTHS[self.month], n(300, 2600)),
            lambda: "%s was repeated on %s by popular demand." % (cap(c(EVENTS)), self.date()),
            lambda: "Staff gave a talk to the %s on %s." % (c(DEPOSITORS), c(COLLECTIONS)),
            lambda: "The window display at the library this month featured %s." % c(COLLECTIONS),
            lambda: "A local radio programme on %s used recordings made in the search room with %s." % (
                c(TOPICS), self.person()),
            lambda: "Pupils from %s visited on %s for %s." % (c(SCHOOLS), self.date(), c(EVENTS)),
            lambda: "An article by %s on %s appeared in the county history journal." % (self.person(), c(TOPICS)),
        ], [0, 5, 8])
        self.F_DIG = ([
            lambda: "Imaging of %s reached %d frames, with %d still to be captured." % (
                c(COLLECTIONS), n(1500, 40000), n(200, 20000)),
            lambda: "In all, %d catalogue entries were added or revised, bringing the online total to %d." % (
                n(300, 5000), 60000 + 9000 * self.month + n(0, 8000)),
            lambda: "The server holding master images was migrated to new storage on %s without loss." % self.date(),
            lambda: "Checksums for %d image files were verified; %d were re-copied from backup." % (
                n(20000, 300000), n(0, 40)),
            lambda: "Transcription of %s by online volunteers passed the %d page mark in %s." % (
                c(COLLECTIONS), c([500, 1000, 2000, 2500, 5000, 7500, 10000]), MONTHS[self.month]),
            lambda: "Scans of %s were checked against the originals and %d frames were retaken." % (
                c(COLLECTIONS), n(3, 90)),
            lambda: "The online gallery gained %d new images from %s." % (n(20, 400), c(COLLECTIONS)),
            lambda: "Index entries for %s were merged into the main catalogue, adding %d personal names." % (
                c(COLLECTIONS), n(800, 9000)),
        ], [0, 5, 6])
        self.F_STAFF = ([
            lambda: "%s joined the staff as %s in %s." % (self.name(), c(JOBS), MONTHS[self.month]),
            lambda: "%s retired after %d years, having catalogued much of %s." % (self.name(), n(9, 38), c(COLLECTIONS)),
            lambda: "Staff attended training on %s at %s." % (c(TRAINING), c(TRAINERS)),
            lambda: "%s was seconded for %d months to help with %s." % (self.name(), n(2, 9), c(COLLECTIONS)),
            lambda: "%s, %s, completed a part-time course in archive management." % (self.name(), c(JOBS)),
            lambda: "%s returned from leave and resumed work on %s." % (self.name(), c(COLLECTIONS)),
            lambda: "A student placement from %s spent %d weeks with the cataloguing team." % (
                c(TRAINERS), n(2, 8)),
            lambda: "Sickness absence in %s amounted to %d working days across the team." % (MONTHS[self.month], n(0, 14)),
        ], [2])

    # ---- sections ------------------------------------------------------
    def meeting_day(self, half):
        m = self.month
        last = self.days_in(m)
        d = self.n(1, 14) if half == 0 else self.n(15, last - 3)
        day = datetime.date(self.year, m + 1, d)
        step = 1
        if m == 11 and half == 1:
            # no meetings over Christmas: the second December meeting is on or before the 19th
            day, step = datetime.date(self.year, 12, min(d, 19)), -1
        while day.weekday() > 4:  # meetings fall on working days
            day += datetime.timedelta(days=step)
        return "%s %d %s" % (WEEKDAYS[day.weekday()], day.day, MONTHS[m])

    def minutes(self, num, committee, half):
        self.committee = committee
        self.used = set()
        day = self.meeting_day(half)
        head = "%d. Minutes of the %s, %s" % (num, committee, day)
        opening = [
            self.unique(lambda: "%s opened the meeting at %d.%02d and welcomed %s, attending for the first time." % (
                self.person(), self.n(5, 7), self.c([0, 15, 30, 45]), self.person())),
            self.unique(lambda: "Apologies were received from %s and %s." % (self.person(), self.person())),
            self.unique(lambda: "The minutes of the previous meeting were approved%s." % self.c([
                "", " as a correct record", " with one correction to the spelling of " + self.c(PLACES),
                " after a small amendment proposed by " + self.person()])),
        ]
        body = self.paragraphs(self.F_MIN, self.n(3, int(round(8 * self.scale))), (2, 4))
        closing = [
            self.unique(lambda: "%s, %s closed the meeting at %d.%02d." % (
                self.c(["There being no other business", "With the agenda complete",
                        "No further items having been raised", "After a vote of thanks to the staff"]),
                self.person(), self.n(8, 9), self.c([0, 5, 10, 15, 20, 25, 30, 40, 45, 50, 55]))),
            self.unique(lambda: "The next meeting was fixed for %s at the %s." % (
                self.date(min(11, self.month + 1), weekday=True), self.c(VENUES))),
        ]
        paras = [" ".join(opening)] + body
        paras[-1] += " " + " ".join(closing)
        return head + "\n\n" + "\n\n".join(paras)

    def weather(self, num):
        self.used = set()
        m = self.month
        head = "%d. Weather and Environment Log, %s" % (num, MONTHS[m])
        day = datetime.date(self.year, m + 1, 1)
        while day.weekday() != 0:
            day += datetime.timedelta(days=1)
        weeks = []
        while day.month == m + 1:
            hi = MONTH_HIGH[m] + self.n(-3, 4)
            excluded = COLD_ONLY if 4 <= m <= 8 else WARM_ONLY if m in (10, 11, 0, 1, 2) else set()
            season = [w for w in WEATHER if w not in excluded]
            w = self.c(season)
            rain = self.n(12, 48) if w in WET else self.n(0, 6)
            weeks.append(self.unique(lambda: "Week beginning %d %s: %s, highs near %d degrees, lows near %d, and %d millimetres of rain." % (
                day.day, MONTHS[m], w, hi, hi - self.n(4, 9), rain)))
            day += datetime.timedelta(days=7)
        keep = self.n(min(len(weeks), int(2 * self.scale)), len(weeks))
        paras = [" ".join(weeks[:keep])] + self.paragraphs(self.F_IN_ENV, self.n(2, int(round(5 * self.scale))))
        return head + "\n\n" + "\n\n".join(paras)

    def section(self, num, kind):
        M = MONTHS[self.month]
        if kind.startswith("minutes"):
            return self.minutes(num, self.month_committees[kind == "minutes-b"], kind == "minutes-b")
        if kind == "weather":
            return self.weather(num)
        self.used = set()
        title, fam, lo, hi = {
            "inventory": ("Inventory Notes", self.F_INV, 3, 10),
            "acq": ("Accessions Received", self.F_ACQ, 3, 8),
            "cons": ("Conservation Report", self.F_CONS, 3, 7),
            "visitors": ("Search Room and Enquiries", self.F_VIS, 3, 8),
            "building": ("Buildings and Equipment", self.F_BLD, 2, 5),
            "outreach": ("Events and Outreach", self.F_OUT, 2, 6),
            "digital": ("Cataloguing and Digitization", self.F_DIG, 2, 6),
            "staff": ("Staffing Notes", self.F_STAFF, 2, 4),
        }[kind]
        head = "%d. %s, %s" % (num, title, M)
        count = self.n(lo, int(round(hi * self.scale)))
        return head + "\n\n" + "\n\n".join(self.paragraphs(fam, count))

    def any_sentence(self):
        fam = self.c([self.F_INV, self.F_ACQ, self.F_CONS, self.F_VIS,
                      self.F_BLD, self.F_OUT, self.F_DIG, self.F_STAFF])
        return self.c(fam[0])()

    def fill_exact(self, gap):
        """Paragraphs of whole sentences exactly `gap` characters long."""
        assert gap >= 300, gap
        parts = []
        used = 0
        while gap - used > 420:
            s = self.unique(self.any_sentence)
            sep = 2 if parts and len(parts) % 5 == 0 else 1  # new paragraph every five sentences
            parts.append(("\n\n" if sep == 2 else " ") + s if parts else s)
            used += len(s) + (sep if len(parts) > 1 else 0)
        rest = gap - used - (1 if parts else 0)  # remaining, after a joining space
        pool = []
        for _ in range(800):
            s = self.any_sentence()
            if s not in self.seen and not FORBIDDEN_RE.search(s) and s not in pool:
                pool.append(s)
        by_len = {}
        for s in pool:
            by_len.setdefault(len(s), s)
        lead = " " if parts else ""
        for a in pool:  # two sentences a, b with len(a) + 1 + len(b) == rest
            b = by_len.get(rest - 1 - len(a))
            if b is not None and b != a:
                self.seen.update([a, b])
                out = "".join(parts) + lead + a + " " + b
                assert len(out) == gap
                return out
        for a in pool:  # three sentences as a fallback
            for b in pool:
                x = by_len.get(rest - 2 - len(a) - len(b))
                if b != a and x is not None and x not in (a, b):
                    self.seen.update([a, b, x])
                    out = "".join(parts) + lead + a + " " + b + " " + x
                    assert len(out) == gap
                    return out
        raise RuntimeError("could not fill %d characters exactly" % gap)

    def document(self, total, final_para):
        self.families()
        header = ("%s\nAnnual Report for the Year %d\n\n"
                  "Presented to the Records Committee of the Borough of %s. This report "
                  "summarises the work of the archive during the year: the minutes of its "
                  "committees, notes from the stores, environmental readings, accessions, "
                  "conservation, public services and staffing. Sections follow the order of "
                  "the calendar." % (ARCHIVE, self.year, TOWN))
        tail = "\n\n" + final_para + "\n"
        budget = total - len(tail)          # characters available for the body
        reserve = 800                       # kept for the closing section
        blocks = [header]
        length = len(header)
        num = 1
        for m in range(12):
            self.month = m
            month_end = len(header) + (m + 1) * (budget - reserve - len(header)) // 12
            kinds = ["inventory", "weather", "acq", "cons", "visitors",
                     "building", "outreach", "digital", "staff"]
            self.r.shuffle(kinds)
            self.month_committees = self.r.sample(COMMITTEES, 2)
            kinds = ["minutes-a"] + kinds + ["minutes-b"]
            for kind in kinds:
                sec = self.section(num, kind)
                if length + 2 + len(sec) > month_end:
                    continue  # too long for what is left of this month; try the next kind
                blocks.append(sec)
                length += 2 + len(sec)
                num += 1
        self.month = 11
        self.used = set()
        head = "%d. Miscellaneous Notes, December" % num
        blocks.append(head)
        length += 2 + len(head)
        gap = budget - length - 2
        blocks.append(self.fill_exact(gap))
        body = "\n\n".join(blocks)
        assert len(body) == budget, (len(body), budget)
        m = FORBIDDEN_RE.search(body)
        assert m is None, m.group(0)
        doc = body + tail
        assert len(doc) == total
        return doc


def final_paragraph(year, answer):
    return ("This report was prepared by the staff of the %s and received by the "
            "Records Committee at its last meeting of %d. Final note for the reader: "
            "the archive room's door code is %s." % (ARCHIVE, year, answer))


def main():
    rng = random.Random(7)
    specs = [("paste-25k.txt", 25000, 2011, "4817", 1.0),
             ("paste-95k.txt", 95000, 2014, "6293", 1.4)]
    for fname, total, year, answer, scale in specs:
        doc = Gen(rng, year, scale).document(total, final_paragraph(year, answer))
        doc.encode("ascii")  # must be pure ASCII
        assert doc.count(answer) == 1
        assert doc.endswith(
            "Final note for the reader: the archive room's door code is %s.\n" % answer)
        with open(os.path.join(HERE, fname), "w", encoding="ascii", newline="\n") as fh:
            fh.write(doc)
        print("%s: %d characters" % (fname, len(doc)))


if __name__ == "__main__":
    main()
