"""The synthetic multi-session conversations of bench/multisession.py: generated from a seed, no data files.

Pure Python (no Django, no model), so that tests can check the generator on its own. ``generate(seed)`` returns
conversations shaped like LoCoMo's (sessions of turns with ids "D<session>:<n>" and a date each) and questions with
their evidence turn ids and a category. Each fact is said once, in the first person, by one of two speakers, among
small talk, lead-ins and the other speaker's reactions; the questions name the speaker in the third person and
paraphrase the fact rather than repeat it, so that matching words is not enough.

Dates run from 2021 to 2023 on purpose: retrieval's recency (one year's window) is then 0 for every turn, so the
figures do not change with the day the benchmark runs.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

CATEGORIES = ("single-hop", "multi-hop", "temporal", "date-anchored", "knowledge-update", "implicit")
CONVERSATIONS = 10
SESSIONS = (13, 17)  # fewest and most sessions a conversation has

PEOPLE = [
    "Maya", "Theo", "Priya", "Jonas", "Lucia", "Omar", "Hana", "Felix", "Imani", "Rafael", "Sofia", "Kenji",
    "Nadia", "Elliot", "Zara", "Mateo", "Ingrid", "Kwame", "Leila", "Tobias", "Aisha", "Callum", "Yara", "Dmitri",
]
OTHERS = [
    "Hannah", "Marcus", "Beatriz", "Ollie", "Fatima", "Gideon", "Rosa", "Anton", "Keiko", "Bruno", "Delphine",
    "Samir", "Greta", "Hugo", "Lena", "Vikram", "Ines", "Pavel", "Tamsin", "Ruben", "Esme", "Jasper", "Noor", "Wes",
]

# --- facts said once, asked once (single-hop) ---------------------------------------------------------------------
# kind: (values, statements, questions); a value is a dict of the fields the templates use.
SINGLE = {
    "pet": (
        [{"breed": b, "pet": p} for b, p in [
            ("beagle", "Biscuit"), ("corgi", "Waffles"), ("tabby cat", "Miso"), ("greyhound", "Pepper"),
            ("golden retriever", "Juniper"), ("border collie", "Scout"), ("Siamese cat", "Noodle"),
            ("rescue pit bull", "Olive"), ("cockatiel", "Kiwi"), ("dachshund", "Pretzel"), ("Maine Coon", "Mango")]],
        ["We finally brought a {breed} home from the shelter, and {pet} has already claimed the couch.",
         "Meet {pet}! A {breed} with more energy than the two of us put together.",
         "I caved and adopted a {breed}. Named it {pet}, after the snack I was eating when I signed the papers."],
        ["What kind of animal did {name} adopt?", "Which breed is {name}'s new companion?",
         "What is the name of the creature {name} took in?"],
    ),
    "instrument": (
        [{"instrument": i} for i in ["cello", "ukulele", "saxophone", "banjo", "harp", "trumpet", "accordion",
                                     "drum kit", "violin", "bass guitar", "flute"]],
        ["I signed up for {instrument} lessons. My fingers hurt but I can almost get through a scale.",
         "Been practising the {instrument} every evening, the neighbours are being very patient with me.",
         "My teacher says I have a decent ear for the {instrument}, which I really did not expect."],
        ["Which musical instrument has {name} taken up?", "What is {name} learning to play?",
         "What does {name} have music classes for?"],
    ),
    "dislike": (
        [{"food": f} for f in ["cilantro", "olives", "mushrooms", "blue cheese", "anchovies", "licorice", "beetroot",
                               "eggplant", "mayonnaise", "raisins", "coconut"]],
        ["Honestly {food} ruins any dish for me, I pick it out every single time.",
         "Please tell them to leave off the {food}, I can't stand the taste.",
         "Even the smell of {food} makes me gag, it has since I was a kid."],
        ["Which food does {name} refuse to eat?", "What ingredient does {name} hate?",
         "Is there something {name} won't touch at dinner?"],
    ),
    "book": (
        [{"book": b} for b in ["The Overstory", "Project Hail Mary", "Circe", "Pachinko", "The Road", "Educated",
                               "Dune", "Middlemarch", "Piranesi", "The Remains of the Day", "Station Eleven"]],
        ["Stayed up until 3am finishing {book}, that ending wrecked me.",
         "Our club picked {book} this month and I'm already halfway through it.",
         "If you need something for the plane, {book} is the best thing I've picked up in years."],
        ["What novel has {name} been reading?", "Which book did {name} get through recently?",
         "What title would {name} recommend for someone who likes stories?"],
    ),
    "sport": (
        [{"sport": s} for s in ["volleyball", "ultimate frisbee", "water polo", "curling", "rugby", "badminton",
                                "softball", "lacrosse", "netball", "field hockey", "futsal"]],
        ["Joined a {sport} team at the rec centre, we play every Sunday morning.",
         "Twisted my ankle at {sport} practice. Worth it though, we won.",
         "Our {sport} squad made the league final! Nobody saw that coming."],
        ["Which team sport does {name} play?", "What game does {name} compete in with a club?",
         "What kind of league is {name} part of?"],
    ),
    "allergy": (
        [{"allergen": a} for a in ["peanuts", "shellfish", "penicillin", "bee stings", "latex", "sesame", "kiwi",
                                   "strawberries", "tree nuts", "mustard"]],
        ["Ended up in urgent care after one bite of something with {allergen} in it, my throat closed up.",
         "I carry an EpiPen everywhere because of my {allergen} allergy.",
         "The waiter swore there were no {allergen} in the sauce. There were. Rough night."],
        ["What is {name} allergic to?", "Which substance gives {name} a bad reaction?",
         "What does {name} have to avoid for medical reasons?"],
    ),
    "vehicle": (
        [{"vehicle": v} for v in ["a used Subaru Outback", "an electric Kia Niro", "a vintage Volkswagen camper",
                                  "a Toyota Tacoma pickup", "a Vespa scooter", "a Mini Cooper", "a cargo bike",
                                  "a Honda Civic hatchback", "a Jeep Wrangler", "a Tesla Model 3"]],
        ["Sold my old wreck and picked up {vehicle}, it still smells new-ish.",
         "Took {vehicle} up the coast this weekend, it handled the hills just fine.",
         "Finally got {vehicle}! No more waiting for the bus in the rain."],
        ["What does {name} drive now?", "Which set of wheels did {name} buy?",
         "How does {name} get around these days?"],
    ),
    "course": (
        [{"subject": s} for s in ["pottery", "Japanese", "woodworking", "astronomy", "sign language", "bookkeeping",
                                  "watercolour painting", "Python programming", "Italian cooking", "first aid",
                                  "creative writing"]],
        ["Started a night class in {subject} at the community college, Tuesdays and Thursdays.",
         "My {subject} instructor gave us homework, I feel like a teenager again.",
         "Spent the whole evening on my {subject} assignment and my brain is fried."],
        ["What subject is {name} studying?", "Which class did {name} enrol in?",
         "What is {name} taking a course on?"],
    ),
    "comfort": (
        [{"dish": d} for d in ["ramen", "pho", "tacos al pastor", "butter chicken", "pierogi", "shakshuka",
                               "jollof rice", "soup dumplings", "paella", "mac and cheese", "bibimbap"]],
        ["Whenever I've had a rough day I end up ordering {dish}, it fixes everything.",
         "Nothing beats a big plate of {dish} on a cold night, I could eat it daily.",
         "If I could only eat one meal for the rest of my life it would be {dish}."],
        ["What is {name}'s go-to comfort meal?", "Which dish does {name} crave after a bad day?",
         "What is {name}'s favourite thing to eat?"],
    ),
    "fear": (
        [{"fear": f} for f in ["heights", "spiders", "deep water", "flying", "snakes", "thunderstorms", "needles",
                               "crowds", "clowns", "elevators"]],
        ["I have a real phobia of {fear}, my heart races just thinking about it.",
         "My therapist is helping me with my fear of {fear}, small steps.",
         "Everyone laughed, but I genuinely panic around {fear}."],
        ["What is {name} afraid of?", "What gives {name} panic attacks?", "Which phobia does {name} struggle with?"],
    ),
    "collection": (
        [{"things": t} for t in ["vinyl records", "vintage cameras", "houseplants", "board games", "fountain pens",
                                 "enamel pins", "comic books", "sneakers", "snow globes", "old maps"]],
        ["My {things} take up the whole spare room now, my partner is not amused.",
         "Found two rare {things} at a flea market today, I nearly screamed.",
         "I probably spend too much on {things}, but they make me happy."],
        ["What does {name} collect?", "What is {name}'s collecting hobby?",
         "What does {name} hunt for at second-hand markets?"],
    ),
}

# --- facts that change later (knowledge-update): said first, then changed in a later session --------------------------
CITIES = ["Portland", "Austin", "Denver", "Lisbon", "Toronto", "Edinburgh", "Melbourne", "Chicago", "Seattle",
          "Montreal", "Dublin", "Boston", "Atlanta", "Vancouver", "Copenhagen", "Nashville", "Barcelona", "Auckland"]
PARTNERS = ["Alex", "Sam", "Jordan", "Robin", "Charlie", "Morgan", "Jamie", "Riley", "Quinn", "Avery"]
COMPANIES = ["Lumen Labs", "Northwind Foods", "Bright Harbor Bank", "Quillfeather Press", "Copperline Energy",
             "Saltmarsh Studios", "Redwood Health", "Bluebird Logistics", "Ironbark Games", "Tidewater Insurance",
             "Foxglove Design", "Granite Peak Outfitters", "Orchard Robotics", "Silverline Airlines"]
UPDATE = {
    "home": (
        lambda rng: dict(zip(("old", "new"), rng.sample(CITIES, 2))),
        ["Our flat in {old} is tiny, but the view of the river makes up for it.",
         "I love living in {old}, the coffee scene here is unreal.",
         "Rent in {old} went up again, but I can't imagine living anywhere else."],
        ["Big news: we packed up and left {old}, we're in {new} now!",
         "First week in {new} after leaving {old}, still living out of boxes.",
         "Going from {old} to {new} was chaos, but we made it."],
        ["Where does {name} live these days?", "Which city is {name} based in now?",
         "What is {name}'s current hometown?"],
        ["Which city did {name} call home before relocating?", "Where was {name}'s previous home?"],
    ),
    "job": (
        lambda rng: dict(zip(("old", "new"), rng.sample(COMPANIES, 2))),
        ["Another long week at {old}, my manager keeps moving the deadlines.",
         "The people at {old} are lovely, even if the office coffee is terrible.",
         "{old} finally approved my vacation days, only took three emails."],
        ["Handed in my notice at {old}! I start at {new} on Monday.",
         "Two weeks into the new job at {new}, so much calmer than {old}.",
         "I said goodbye to everyone at {old} today, and {new} already sent me a welcome pack."],
        ["Where does {name} work now?", "Who is {name}'s current employer?",
         "Which company hired {name} most recently?"],
        ["Which company did {name} quit?", "Who did {name} work for before the job change?"],
    ),
    "diet": (
        lambda rng: dict(zip(("old", "new"), rng.choice([
            ("vegetarian", "vegan"), ("pescatarian", "vegetarian"), ("on keto", "plant-based"),
            ("gluten-free", "on a low-FODMAP plan"), ("vegan", "flexitarian"),
            ("on paleo", "on a Mediterranean diet")]))),
        ["I've been {old} for about a year now and it really suits me.",
         "Being {old} makes dinner parties complicated, but I feel great.",
         "Cooked dinner for my parents while staying {old}, and they didn't even notice."],
        ["I dropped the old routine, I've been {new} since last month instead of {old}.",
         "Quick update: no longer {old}, I'm {new} now and loving it.",
         "My doctor suggested I stop being {old}, so I'm {new} these days."],
        ["How does {name} eat these days?", "What eating plan is {name} on currently?",
         "What are {name}'s food rules right now?"],
        ["What eating pattern did {name} follow before switching?"],
    ),
    "exercise": (
        lambda rng: dict(zip(("old", "new"), rng.choice([
            ("running", "bouldering"), ("yoga", "boxing"), ("spin classes", "swimming"), ("weightlifting", "pilates"),
            ("tennis", "padel"), ("cycling", "rowing"), ("CrossFit", "tai chi")]))),
        ["Doing {old} in the mornings is the best part of my day, I never skip it.",
         "Signed up for another month of {old}, I'm getting stronger.",
         "Did {old} four times this week, new personal record for me."],
        ["I've swapped {old} for {new}, my knees are thanking me.",
         "Gave up {old} completely, it's all {new} now.",
         "Started {new} last month and haven't done any {old} since."],
        ["What workout does {name} do now?", "How does {name} keep fit at the moment?",
         "What is {name}'s current way of staying in shape?"],
        ["What kind of training did {name} give up?"],
    ),
    "partner": (
        lambda rng: {"old": rng.choice(PARTNERS), "new": rng.choice(["engaged", "married"])},
        ["I've been seeing someone, {old}, for a few months now. Early days!",
         "{old} and I went on our fourth date, we tried that escape room.",
         "Introduced {old} to my parents. Nerve-racking, but it went well."],
        ["{old} proposed on the beach, we're {new}!",
         "Can you believe it, {old} and I are {new} now!",
         "Huge news, me and {old} got {new} over the weekend."],
        ["What is {name}'s relationship status now?", "How serious is {name}'s romance at this point?",
         "Where does {name} stand with their partner?"],
        ["Who has {name} been dating?"],
    ),
}

# --- dated events (temporal, date-anchored): said with a relative time, asked by when or by date --------------------
BANDS = ["Arcade Fire", "Florence and the Machine", "Radiohead", "Khruangbin", "Vampire Weekend", "Bon Iver",
         "Hozier", "The National", "Fleet Foxes", "Phoebe Bridgers"]
PARKS = ["Yosemite", "the Lake District", "Banff", "Joshua Tree", "the Dolomites", "Zion", "the Cairngorms",
         "Olympic National Park", "Snowdonia", "Acadia"]
MUSEUMS = ["Natural History Museum", "Museum of Modern Art", "Science Museum", "maritime museum", "aviation museum",
           "railway museum", "Museum of Illusions", "folk art museum"]
EVENTS = [  # (key, statements with {when}, when-questions, date-questions with {date}, extra values)
    ("race", ["I ran my first half marathon {when}, my legs are still jelly.",
              "{When} I finished the city half marathon in just under two hours!"],
     ["When did {name} complete a 21-kilometre race?", "When was {name}'s first long-distance run?"],
     ["Which sporting challenge did {name} take on {date}?"], {}),
    ("wedding", ["{When} was my cousin's wedding out in the countryside, we danced until the generator died.",
                 "My cousin got married {when}, I gave a toast and only cried a little."],
     ["When did {name} attend a family marriage ceremony?", "When did {name}'s relative tie the knot?"],
     ["What celebration did {name} go to {date}?"], {}),
    ("concert", ["{When} I saw {band} live, best gig of my life.",
                 "Went to the {band} show {when}, lost my voice singing."],
     ["When did {name} watch {band} perform?", "When was {name} at a {band} concert?"],
     ["Which band did {name} see {date}?"], {"band": BANDS}),
    ("teeth", ["Got my wisdom teeth pulled {when}, I look like a chipmunk.",
               "Had oral surgery {when}, still living on smoothies."],
     ["When did {name} have dental surgery?", "When were {name}'s molars extracted?"],
     ["What medical procedure did {name} go through {date}?"], {}),
    ("camping", ["{When} we camped in {park} and saw a bear from a distance!",
                 "Spent three nights in a tent in {park} {when}, no signal, pure bliss."],
     ["When did {name} go camping in {park}?", "When did {name} sleep outdoors in {park}?"],
     ["Where did {name} go camping {date}?"], {"park": PARKS}),
    ("gallery", ["One of my photos got into a local gallery show {when}, I'm still in shock.",
                 "{When} was the opening night of the exhibition with my photograph in it!"],
     ["When was {name}'s photograph exhibited?", "When did {name}'s picture hang in a gallery?"],
     ["What artistic recognition did {name} get {date}?"], {}),
    ("wallet", ["Lost my wallet on the train {when} and spent hours cancelling cards.",
                "{When} someone swiped my wallet on the metro, what a mess."],
     ["When did {name} misplace their purse?", "When did {name} have to block their bank cards?"],
     ["What did {name} lose {date}?"], {}),
    ("foodbank", ["{When} I volunteered at the food bank, we packed four hundred boxes.",
                  "{When} I spent the whole day helping out at the food bank, my back hurts but it felt good."],
     ["When did {name} do charity work sorting groceries?", "When did {name} give their time to the food bank?"],
     ["Where did {name} volunteer {date}?"], {}),
    ("dad60", ["Threw a surprise party for my dad's 60th {when}, he actually cried.",
               "{When} we celebrated my father turning sixty, the whole family came."],
     ["When did {name} celebrate their father's sixtieth?", "When was {name}'s dad's milestone birthday party?"],
     ["Whose birthday did {name} celebrate {date}?"], {}),
    ("chili", ["Won second place in the neighbourhood chili cook-off {when}!",
               "{When} my chili came second at the street cook-off, robbed of first place."],
     ["When did {name} place in a cooking contest?", "When did {name}'s recipe win a prize?"],
     ["What competition did {name} take part in {date}?"], {}),
    ("breakdown", ["My car broke down on the highway {when}, I waited three hours for the tow truck.",
                   "{When} the engine died on the motorway and I had to get towed."],
     ["When did {name}'s vehicle break down?", "When did {name} need a tow?"],
     ["What went wrong for {name} on the road {date}?"], {}),
    ("tattoo", ["Got my first tattoo {when}, a tiny compass on my wrist.",
                "{When} I finally got inked, a little compass, I love it."],
     ["When did {name} get a tattoo?", "When did {name} have their skin inked?"],
     ["What permanent body art did {name} get {date}?"], {}),
    ("skydive", ["Went skydiving {when}, jumped from thirteen thousand feet and screamed the whole way down.",
                 "{When} I jumped out of a plane! Tandem skydive, never again, but wow."],
     ["When did {name} jump out of an aircraft?", "When did {name} go parachuting?"],
     ["What adrenaline activity did {name} try {date}?"], {}),
    ("museum", ["{When} I spent the whole afternoon at the {museum}, one hall alone took two hours.",
                "Dragged my nephew to the {museum} {when}, he loved it more than I did."],
     ["When did {name} visit the {museum}?", "When was {name}'s trip to the {museum}?"],
     ["Which museum did {name} visit {date}?"], {"museum": MUSEUMS}),
    ("flood", ["Our basement flooded {when}, we lost a box of old photos.",
               "{When} a pipe burst and flooded the basement, total nightmare."],
     ["When did water get into {name}'s basement?", "When did {name} have a plumbing disaster at home?"],
     ["What household disaster did {name} deal with {date}?"], {}),
    ("promotion", ["Had the panel interview for the team lead role {when}, fingers crossed.",
                   "{When} I pitched myself for the senior position in front of three directors."],
     ["When did {name} interview for a promotion?", "When did {name} apply in person for a more senior job?"],
     ["What career step did {name} take {date}?"], {}),
]
# (phrase, days before the session, how a date-anchored question names the day)
RELATIVE = [("yesterday", 1, "day"), ("two days ago", 2, "day"), ("three days ago", 3, "day"),
            ("last weekend", None, "weekend"), ("last week", 7, "week"), ("a couple of weeks ago", 14, "week"),
            ("last month", None, "month")]

# --- multi-hop: a relation names a person in one session, the person's news comes in a later one -----------------
RELATIONS = ["neighbour", "coworker", "roommate", "cousin", "best friend", "mentor", "old classmate", "bandmate",
             "landlord", "teammate"]
INTRODUCE = ["My {relation} {other} just got back from a year abroad, it's so good to have them around.",
             "Had dinner with my {relation}, {other}, last night, we laughed for hours.",
             "You'd like my {relation} {other}, same dry sense of humour as you.",
             "{other}, my {relation}, helped me fix the bathroom tap on Sunday."]
BRIDGE = {
    "job": ([{"v": v} for v in ["a paramedic", "an architect", "a pastry chef", "an air traffic controller",
                                 "a marine biologist", "a tax accountant", "a park ranger", "a sound engineer"]],
            ["{other} just got certified as {v}, all those night classes paid off.",
             "{other} started working as {v}, says the hours are wild."],
            ["What does {name}'s {relation} do for a living?", "What is the profession of {name}'s {relation}?"]),
    "city": ([{"v": v} for v in CITIES],
             ["{other} is moving to {v} for grad school in the autumn.",
              "{other} signed a lease in {v}, so I'll have a couch to crash on there."],
             ["Where is {name}'s {relation} relocating to?", "Which city is {name}'s {relation} moving to?"]),
    "pet": ([{"v": v} for v in ["parrot", "ferret", "tortoise", "bearded dragon", "pair of rabbits", "husky",
                                 "hedgehog", "koi fish"]],
            ["{other} adopted a {v}, it follows them around everywhere.", "{other} brought home a {v} on a whim."],
            ["What animal does {name}'s {relation} have?", "Which pet did {name}'s {relation} get?"]),
    "hobby": ([{"v": v} for v in ["beekeeping", "salsa dancing", "rock climbing", "birdwatching", "fencing",
                                   "stand-up comedy", "origami", "sourdough baking", "kitesurfing"]],
              ["{other} has gotten seriously into {v}, wants me to try it too.",
               "{other} spends every free hour on {v} now, it's all they talk about."],
              ["Which hobby is {name}'s {relation} obsessed with?", "What pastime did {name}'s {relation} pick up?"]),
    "travel": ([{"v": v} for v in ["Peru", "Vietnam", "Iceland", "Morocco", "New Zealand", "Japan", "Kenya", "Norway"]],
               ["{other} is backpacking through {v} right now, the photos are unreal.",
                "{other} sent a postcard from {v}, jealous doesn't cover it."],
               ["Which country is {name}'s {relation} travelling in?", "Where is {name}'s {relation} on holiday?"]),
}
# aggregation: the same kind of thing said in several sessions, asked as a list
AGGREGATE = {
    "trips": (["Greece", "Mexico", "Thailand", "Portugal", "Scotland", "Canada", "Croatia", "Chile", "Egypt",
               "South Korea"],
              ["Just got back from {v}, the food alone was worth the flight.",
               "Our trip to {v} was short but so worth it.",
               "Booked a last-minute getaway to {v} and I don't regret a thing."],
              ["Which countries has {name} travelled to?", "What places abroad has {name} visited?"]),
    "cooking": (["homemade pasta", "a beef wellington", "croissants", "Thai green curry", "sushi rolls",
                 "a sourdough loaf", "baklava", "empanadas", "a lemon meringue pie"],
                ["Attempted {v} tonight. Kitchen's a disaster, but it was edible!",
                 "Tried my hand at {v} over the weekend, surprisingly decent.",
                 "Made {v} from scratch for the first time, my flatmate asked for seconds."],
                ["What dishes has {name} tried to cook from scratch?",
                 "Which recipes has {name} experimented with in the kitchen?"]),
    "shows": (["a jazz night", "an improv show", "a ballet", "a stand-up special taping", "an opera",
               "a drag brunch", "a puppet theatre", "a circus performance"],
              ["Went to {v} downtown, had such a good time.",
               "Got dragged to {v} and honestly loved it.",
               "Saw {v} with friends, we talked about it the whole way home."],
              ["What kinds of live entertainment has {name} been to?",
               "Which performances has {name} attended?"]),
}

# --- implicit: the fact is implied, never named -------------------------------------------------------------------
# (kind, what it excludes, statements, questions)
IMPLICIT = [
    ("nurse", "profession", ["Three twelve-hour shifts on the ward this week, and I still smell of hand sanitiser.",
                             "Had a patient pull out his IV twice tonight, the night shift is something else."],
     ["What is {name}'s line of work?", "What does {name} do for a job?"]),
    ("teacher", "profession", ["Marked thirty essays tonight, and my fourth-graders still mix up their and there.",
                               "Parent evening went on until nine, and I still have lesson plans to finish."],
     ["What is {name}'s profession?", "What does {name} do for a living?"]),
    ("chef", "profession", ["Service was brutal, two hundred covers and the walk-in fridge died halfway through.",
                            "Burned my forearm on the grill again during the lunch rush."],
     ["What kind of job does {name} have?", "What is {name}'s occupation?"]),
    ("pilot", "profession", ["Landed in Denver at 2am after circling for an hour because of crosswinds.",
                             "My co-captain and I had to divert to another airport because of fog."],
     ["What does {name} do for work?", "What is {name}'s job?"]),
    ("vet", "profession", ["Had to put a lovely old labrador to sleep at the clinic today, always the hardest part.",
                           "Stitched up a cat that lost a fight with a fox, third one this week."],
     ["What is {name}'s career?", "What does {name} work as?"]),
    ("baker", "profession", ["Up at half three again to get the sourdough in the oven before the shop opens.",
                             "We sold out of cinnamon buns by 8am, I need a bigger proofing cabinet."],
     ["What does {name} do for a living?", "What is {name}'s trade?"]),
    ("parent", "parent", ["Packed three lunchboxes before seven and still forgot the permission slip.",
                          "Spent the whole evening helping with a volcano for the school science fair."],
     ["Does {name} have children?", "Is {name} a parent?"]),
    ("dog", "pet", ["She dragged me through every puddle on our morning walk, then shook herself dry on my bed.",
                    "Someone chewed through my new trainers while I was at work. She looks very guilty."],
     ["What kind of pet does {name} live with?", "Which animal shares {name}'s home?"]),
    ("asthma", "health", ["Forgot my inhaler on the hike and had to stop every ten minutes to catch my breath.",
                          "The pollen count is high again and my chest is tight, puffer's never far away."],
     ["What health condition does {name} have?", "Does {name} have a medical issue?"]),
    ("diabetes", "health", ["My glucose monitor beeped all through the movie, had to duck out for juice.",
                            "Had to check my sugar levels before the run and do an insulin dose."],
     ["What chronic illness does {name} manage?", "What health condition does {name} live with?"]),
    ("portuguese", "language",
     ["Ordered coffee entirely in Portuguese at the café and the barista didn't switch to English!",
      "Watched a Brazilian film without subtitles and understood most of it. Obrigado, Duolingo."],
     ["Which foreign language is {name} learning?", "What language has {name} been studying?"]),
    ("cyclist", "commute", ["Rode in to the office in the rain again, forty minutes each way and soaked.",
                            "Got a flat on the cycle path this morning and walked the bike the rest of the way in."],
     ["How does {name} get to work?", "What is {name}'s commute like?"]),
]

# An implied fact rules out the facts a question about it could also be answered by (a cyclist's car, an asthmatic's
# allergy): one answer to each question.
CONFLICTS = {"profession": ("job",), "pet": ("pet",), "commute": ("vehicle",), "health": ("allergy",),
             "language": ("course",)}

# --- the talk around the facts -------------------------------------------------------------------------------------
SHOWS = ["Severance", "The Bear", "Succession", "Slow Horses", "Bluey", "The Great British Bake Off", "Shogun",
         "Only Murders in the Building", "Ted Lasso", "Abbott Elementary"]
WEATHER = ["grey and drizzly", "weirdly warm", "freezing", "so windy", "muggy", "gorgeous", "stormy"]
TOPICS = ["octopus intelligence", "the history of salt", "sleep science", "ancient Rome", "urban foxes",
          "minimalism", "true crime", "space elevators", "the stock market", "old Hollywood"]
GREETINGS = ["Hey {other}! Long time no talk.", "Hi {other}, how's it going?", "Morning! Got a minute to chat?",
             "Hey hey, how was your week?", "{other}! Finally, I've been meaning to message you.",
             "Evening! Are you free for a chat?"]
GREETING_REPLIES = ["Hey! Always free for you.", "Hi! Good, busy, the usual. You?", "Perfect timing, I just sat down.",
                    "Hello! I was just thinking about you.", "Hey, so good to hear from you."]
LEAD_INS = ["So what's new with you?", "How have things been?", "Anything exciting happen lately?", "Catch me up!",
            "How's life treating you?", "Any news on your end?", "What have you been up to?",
            "Tell me something good, I need it.", "How did the rest of your month go?"]
LEAD_PREFIXES = ["Sorry, I was stuck on a call all afternoon.", "Okay, kettle's on, I'm all yours.",
                 "I only have ten minutes before my next thing.", "Finally sat down after the longest day.",
                 "It's so quiet here tonight.", "I just got home and kicked my shoes off."]
REACTIONS = ["Wow, I did not see that coming.", "No way!", "Ha, that is so you.", "Oh, that's a lot to take in.",
             "Seriously? That's wild.", "I love hearing that.", "Huh, I didn't know that about you.", "Oh no.",
             "Good for you, honestly.", "That made me laugh out loud.", "Okay, wow.", "I'm not even surprised."]
FOLLOW_UPS = ["How are you feeling about it?", "You'll have to tell me the whole story next time we meet.",
              "I would never have had the nerve.", "Did anyone else know before me?", "How did your family take it?",
              "Send me pictures if you have any.", "That reminds me of something my uncle did years ago.",
              "I'm going to be thinking about that all day.", "You always manage to surprise me.",
              "Keep me posted on how it goes.", "What made you decide that?", "Was it as hard as it sounds?"]
SMALL_TALK = [
    "Did you catch the new episode of {show}? No spoilers please.", "The weather has been {weather} all week here.",
    "Work has been a lot lately, I'm counting down to Friday.", "What are your plans for the weekend?",
    "Probably just laundry and a very long nap.", "I started watching {show} because of you, now I'm hooked.",
    "Traffic this morning was a nightmare, forty minutes to go three miles.",
    "Remind me to send you that podcast about {topic}.", "I can't believe how fast this year is going.",
    "Did you end up trying that new café near the station?", "My phone screen cracked again, third time this year.",
    "I've been sleeping terribly, too much coffee I think.",
    "I reorganised my whole kitchen on Saturday, very satisfying.", "The {weather} weather is really getting to me.",
    "Honestly same, some weeks are just like that.", "Ha! That sounds exactly like something you'd say.",
    "I watched a documentary about {topic} last night, fascinating stuff.",
    "Did you hear back from your landlord about the heating?",
    "Mum called for an hour yesterday, mostly about the neighbours.",
    "I keep meaning to call you and then forgetting.", "We should plan a proper catch-up in person soon.",
    "Have you been watching {show}? Everyone at work is talking about it.",
    "The supermarket was out of oat milk again.", "I finally fixed the squeaky door, only took me six months.",
    "My sister keeps sending me videos about {topic}.", "I'm trying to drink more water, it's going badly.",
    "Our building's lift has been broken for a week now.",
    "I spent way too long scrolling last night instead of sleeping.",
    "Someone at work brought in homemade brownies today.", "I need to book a haircut, I look like a sheepdog.",
    "Do you still have my umbrella? No rush.",
]
CLOSINGS = ["Anyway, I have to run. Talk soon!", "Okay, I'll let you go. Take care!", "Gotta go, dinner's ready!",
            "Let's pick this up next week.", "Speak soon, give everyone my love."]
CLOSING_REPLIES = ["Bye! Talk soon.", "Take care!", "Later! Miss you.", "Yes, next week. Bye!", "Speak soon!"]


@dataclass
class Turn:
    speaker: str
    text: str
    tag: str = ""  # names the fact a question points at; empty for small talk
    dia_id: str = ""


@dataclass
class Session:
    number: int
    when: datetime
    turns: list[Turn] = field(default_factory=list)

    @property
    def written(self) -> str:
        """The date as LoCoMo writes it, e.g. "1:56 pm on 8 May, 2023"."""
        return (f"{self.when.strftime('%I:%M %p').lstrip('0').lower()} on "
                f"{self.when.day} {self.when.strftime('%B')}, {self.when.year}")


@dataclass
class Question:
    question: str
    category: str
    tags: list[str]
    evidence: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]

    def turns(self):
        for session in self.sessions:
            for turn in session.turns:
                yield session, turn


def generate(seed: int = 7, conversations: int = CONVERSATIONS) -> list[Conversation]:
    """The benchmark: ``conversations`` conversations between two people each, the same for the same seed."""
    if 2 * conversations > len(PEOPLE):
        raise ValueError(f"at most {len(PEOPLE) // 2} conversations: there are {len(PEOPLE)} names")
    rng = random.Random(seed)
    people = rng.sample(PEOPLE, len(PEOPLE))  # all of them, so that fewer conversations are the first of more
    seeds = [rng.getrandbits(64) for _ in range(len(PEOPLE) // 2)]
    return [_conversation(random.Random(seeds[index]), f"s{seed}-c{index:02d}",
                          (people[2 * index], people[2 * index + 1])) for index in range(conversations)]


class _Plan:
    """Facts placed in sessions, and the questions that point at them through tags."""

    def __init__(self, rng: random.Random, sessions: list[Session]):
        self.rng, self.sessions = rng, sessions
        self.facts: dict[int, list[Turn]] = {session.number: [] for session in sessions}
        self.questions: list[Question] = []
        self.count = 0

    def place(self, speaker: str, text: str, first: int, last: int) -> tuple[str, int]:
        """Put a fact in the least busy session between ``first`` and ``last`` (1-based, inclusive)."""
        candidates = [n for n in range(first, last + 1)]
        self.rng.shuffle(candidates)
        number = min(candidates, key=lambda n: len(self.facts[n]))
        self.count += 1
        tag = f"f{self.count}"
        self.facts[number].append(Turn(speaker, _capitalised(text), tag))
        return tag, number

    def ask(self, question: str, category: str, tags: list[str]) -> None:
        self.questions.append(Question(question, category, tags))


def _conversation(rng: random.Random, sample_id: str, speakers: tuple[str, str]) -> Conversation:
    start = datetime(2021, 6, 1, tzinfo=timezone.utc) + timedelta(days=rng.randrange(0, 420))
    sessions, when = [], start
    for number in range(1, rng.randint(*SESSIONS) + 1):
        when = when + timedelta(days=rng.randint(4, 21))
        when = when.replace(hour=rng.randint(8, 21), minute=rng.randrange(60))
        sessions.append(Session(number, when))
    plan = _Plan(rng, sessions)
    used: dict[str, set] = {}  # values taken in this conversation, so that the two people differ
    for name in speakers:
        _person(rng, plan, name, used)
    for session in sessions:
        session.turns = _dialogue(rng, session, plan.facts[session.number], speakers, used)
        for index, turn in enumerate(session.turns, start=1):
            turn.dia_id = f"D{session.number}:{index}"
    ids = {turn.tag: turn.dia_id for session in sessions for turn in session.turns if turn.tag}
    for question in plan.questions:
        question.evidence = [ids[tag] for tag in question.tags]
    return Conversation(sample_id, speakers, sessions, plan.questions)


def _pick(rng: random.Random, values: list, used: dict[str, set], kind: str):
    taken = used.setdefault(kind, set())
    value = rng.choice([v for v in values if repr(v) not in taken])
    taken.add(repr(value))
    return value


def _person(rng: random.Random, plan: _Plan, name: str, used: dict[str, set]) -> None:
    last = len(plan.sessions)
    # Two implied facts of different kinds, and not the other person's: their statements carry no value to tell apart.
    taken = used.setdefault("implicit", set())
    implicit = []
    for choice in rng.sample(IMPLICIT, len(IMPLICIT)):
        if choice[0] not in taken and choice[1] not in {label for _, label, _, _ in implicit} and len(implicit) < 2:
            implicit.append(choice)
            taken.add(choice[0])
    excluded = {kind for _, label, _, _ in implicit for kind in CONFLICTS.get(label, ())}
    singles = rng.sample([kind for kind in SINGLE if kind not in excluded], 6)
    for kind in singles:
        values, statements, questions = SINGLE[kind]
        value = _pick(rng, values, used, kind)
        tag, _ = plan.place(name, rng.choice(statements).format(**value), 1, last)
        plan.ask(rng.choice(questions).format(name=name), "single-hop", [tag])

    updates = rng.sample([kind for kind in UPDATE if kind not in excluded], 2)
    for position, kind in enumerate(updates):
        make, before, after, current, previous = UPDATE[kind]
        value = make(rng)
        first, session = plan.place(name, rng.choice(before).format(**value), 1, last // 2)
        second, _ = plan.place(name, rng.choice(after).format(**value), session + 2, last)
        plan.ask(rng.choice(current).format(name=name), "knowledge-update", [second])
        if position == 0:
            plan.ask(rng.choice(previous).format(name=name), "knowledge-update", [first, second])

    dated: set = set()
    for position, (key, statements, when_questions, date_questions, extra) in enumerate(rng.sample(EVENTS, 5)):
        fields = {slot: _pick(rng, choices, used, slot) for slot, choices in extra.items()}
        for _ in range(20):  # a date-anchored question needs the only event of its person on that date
            phrase, days, unit = rng.choice(RELATIVE)
            number = rng.randint(1, last)
            happened, named = _happened(plan.sessions[number - 1].when.date(), days, unit)
            if (unit, named) not in dated:
                break
        dated.add((unit, named))
        text = rng.choice(statements)
        text = text.replace("{When}", _capitalised(phrase)).replace("{when}", phrase).format(**fields)
        tag, _ = plan.place(name, text, number, number)
        if position < 3:
            plan.ask(rng.choice(when_questions).format(name=name, **fields), "temporal", [tag])
        else:
            plan.ask(rng.choice(date_questions).format(name=name, date=named, **fields), "date-anchored", [tag])

    for kind in rng.sample(list(BRIDGE), 2):
        values, statements, questions = BRIDGE[kind]
        relation = _pick(rng, RELATIONS, used, "relation")
        other = _pick(rng, OTHERS, used, "other")
        first, number = plan.place(name, rng.choice(INTRODUCE).format(relation=relation, other=other), 1, last - 2)
        value = _pick(rng, values, used, f"bridge-{kind}")
        second, _ = plan.place(name, rng.choice(statements).format(other=other, **value), number + 2, last)
        plan.ask(rng.choice(questions).format(name=name, relation=relation), "multi-hop", [first, second])

    kind = rng.choice(list(AGGREGATE))
    values, statements, questions = AGGREGATE[kind]
    tags, numbers = [], set()
    for text in rng.sample(statements, rng.choice([2, 3])):
        for _ in range(20):
            tag_session = rng.randint(1, last)
            if tag_session not in numbers:
                break
        numbers.add(tag_session)
        value = _pick(rng, values, used, f"aggregate-{kind}")
        tag, _ = plan.place(name, text.format(v=value), tag_session, tag_session)
        tags.append(tag)
    plan.ask(rng.choice(questions).format(name=name), "multi-hop", tags)

    for _, _, statements, questions in implicit:
        tag, _ = plan.place(name, rng.choice(statements), 1, last)
        plan.ask(rng.choice(questions).format(name=name), "implicit", [tag])


def _happened(session_day: date, days: int | None, unit: str) -> tuple[date, str]:
    """The day an event said with a relative time happened, and how a question names that day (or week, month)."""
    if unit == "weekend":
        saturday = session_day - timedelta(days=(session_day.weekday() - 5) % 7 or 7)
        if (session_day - saturday).days < 2:
            saturday -= timedelta(days=7)
        return saturday, f"on the weekend of {_day(saturday)}"
    if unit == "month":
        previous = session_day.replace(day=1) - timedelta(days=1)
        return previous, f"in {previous.strftime('%B')} {previous.year}"
    happened = session_day - timedelta(days=days)
    if unit == "week":
        monday = happened - timedelta(days=happened.weekday())
        return happened, f"in the week of {_day(monday)}"
    return happened, f"on {_day(happened)}"


def _day(day: date) -> str:
    return f"{day.day} {day.strftime('%B')} {day.year}"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _dialogue(rng: random.Random, session: Session, facts: list[Turn], speakers: tuple[str, str],
              used: dict[str, set]) -> list[Turn]:
    """One session's talk: greetings, each fact with perhaps a lead-in and a reaction, small talk between, goodbyes."""
    first = rng.choice(speakers)
    second = speakers[1] if first == speakers[0] else speakers[0]
    other_of = {speakers[0]: speakers[1], speakers[1]: speakers[0]}
    turns = [Turn(first, rng.choice(GREETINGS).format(other=second)), Turn(second, rng.choice(GREETING_REPLIES))]
    facts = facts[:]
    rng.shuffle(facts)
    for fact in facts:
        for _ in range(rng.choice([0, 0, 1, 2])):
            turns.append(Turn(rng.choice(speakers), _small_talk(rng)))
        if rng.random() < 0.5:
            lead_in = rng.choice(LEAD_INS)
            turns.append(Turn(other_of[fact.speaker],
                              f"{rng.choice(LEAD_PREFIXES)} {lead_in}" if rng.random() < 0.6 else lead_in))
        turns.append(fact)
        if rng.random() < 0.7:
            reaction = rng.choice(REACTIONS)
            turns.append(Turn(other_of[fact.speaker],
                              f"{reaction} {rng.choice(FOLLOW_UPS)}" if rng.random() < 0.8 else reaction))
    for _ in range(rng.choice([1, 2, 3])):
        turns.append(Turn(rng.choice(speakers), _small_talk(rng)))
    closer = rng.choice(speakers)
    turns += [Turn(closer, rng.choice(CLOSINGS)), Turn(other_of[closer], rng.choice(CLOSING_REPLIES))]
    return turns


def _small_talk(rng: random.Random) -> str:
    """One or two sentences of chat, as most turns of a real conversation are."""
    said = rng.sample(SMALL_TALK, rng.choice([1, 2, 2]))
    return " ".join(s.format(show=rng.choice(SHOWS), weather=rng.choice(WEATHER), topic=rng.choice(TOPICS))
                    for s in said)
