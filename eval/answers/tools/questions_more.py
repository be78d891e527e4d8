# More hand-written questions for the answer-quality evaluation (issue 26,
# item 6): the TTS staff handbook (layer handbook), and near misses, documents
# named by number or title, and sections that do not exist on the older layers
# (peps, goblog, contracts, standards). build.py reads QUESTIONS (dicts in the
# shared format, see eval/answers/README.md and questions_rfc.py):
#   near_miss        unanswerable, in the layer's own words; note says why
#   missing_section  unanswerable; section_ref is the label as the question
#                    writes it, doc the file it names (relative to the layer
#                    root), note what the document has instead
#   names_doc        names one document by number or title; file and quote
#                    are the passage that answers
#   lexical, paraphrase  as in questions_src.py (paraphrase lists terms)

# ---- handbook (the TTS / 18F staff handbook, pages/**.md)
LV = 'pages/travel-and-leave/leave.md'
PPL = 'pages/travel-and-leave/paid-parental-leave.md'
OT = 'pages/travel-and-leave/overtime.md'
TB = 'pages/general-information-and-resources/employee-resources-policies/transit-benefit.md'
EQ = 'pages/getting-started/equipment.md'
PW = 'pages/general-information-and-resources/tech-policies/password-requirements.md'
WS = 'pages/general-information-and-resources/employee-resources-policies/work-schedules.md'
FMLA = 'pages/travel-and-leave/fmla.md'
VLTP = 'pages/travel-and-leave/voluntary-leave-transfer-program.md'
HQ = [
dict(kind='lexical', layer='handbook', file=LV, quote='You can carry over a maximum of 240 annual leave hours', question='How many annual leave hours can I carry over into the next leave year?'),
dict(kind='lexical', layer='handbook', file=LV, quote='You can receive a maximum of 80 hours of award leave in a single fiscal year.', question='Is there a cap on how much award leave I can receive in a fiscal year?'),
dict(kind='lexical', layer='handbook', file=LV, quote='You can receive two weeks (80 hours) of parental bereavement leave for the passing of your child.', question='How much parental bereavement leave do I get after the passing of a child?'),
dict(kind='lexical', layer='handbook', file=LV, quote='You can receive 15 Military Leave days each year for active duty, active duty training, and inactive duty training in the National Guard or as a Reservist.', question='How many days of military leave does a National Guard member or Reservist get each year?'),
dict(kind='lexical', layer='handbook', file=LV, quote='you can receive up to 104 hours of disabled veteran leave to receive medical treatment related to your disability', question='How many hours of disabled veteran leave can I receive for medical treatment of a service-connected disability?'),
dict(kind='lexical', layer='handbook', file=LV, quote='you are entitled to 5 days of administrative leave to help make that moving process easier', question='How much administrative leave do I get when I accompany the relocation of my military spouse?'),
dict(kind='lexical', layer='handbook', file=LV, quote='You can access up to 7 days of Administrative Leave during a calendar year to serve as a bone marrow donor, and up to 30 days serve as an organ donor.', question='How many days of administrative leave can I use to be a bone marrow or organ donor?'),
dict(kind='lexical', layer='handbook', file=LV, quote='All federal employees, no matter how long they have worked in government, accrue four hours of sick leave per pay period.', question='How much sick leave do federal employees accrue per pay period?'),
dict(kind='lexical', layer='handbook', file=PPL, quote='You will need to sign an agreement, stating that you will return to work for at least 12 weeks after your final day on PPL.', question='After paid parental leave, how long do I have to agree to return to work?'),
dict(kind='lexical', layer='handbook', file=PPL, quote='You can request Leave Without Pay (LWOP) of less than four weeks at any time, if you want to extend your parental leave.', question='Can I extend my parental leave with leave without pay?'),
dict(kind='lexical', layer='handbook', file=OT, quote='You can have up to 24 credit hours accrued, at any given time.', question='How many credit hours can I have accrued at one time?'),
dict(kind='lexical', layer='handbook', file=OT, quote='If you make the maximum salary ($191,900 in 2024), you cannot receive overtime or comp time.', question='Can someone at the maximum salary receive overtime or comp time?'),
dict(kind='lexical', layer='handbook', file=TB, quote='Use `T-TECH TRANSFORMATION SERVICE` as your organizational code.', question='Which organizational code should TTS employees use when enrolling in the transit benefit?'),
dict(kind='lexical', layer='handbook', file=EQ, quote='Press the **Control + Shift + Power**', question='What keys lock a newer MacBook before I leave it?'),
dict(kind='lexical', layer='handbook', file=PW, quote='We recommend using [KeePassXC](https://keepassxc.org/) which is open source', question='Which password manager is recommended for storing work passwords?'),
dict(kind='lexical', layer='handbook', file=WS, quote='every full-time employee in TTS works 80 hours in a two week pay period', question='How many hours does a full-time TTS employee work in a two week pay period?'),
dict(kind='lexical', layer='handbook', file=FMLA, quote='You can take up to 26 weeks of unpaid FMLA to care for an ill servicemember or veteran', question='How many weeks of unpaid FMLA can I take to care for an ill servicemember?'),
dict(kind='paraphrase', layer='handbook', file=LV, quote='When you are called to jury duty, your absence is marked as Court Leave and does not count against any of your other leave balances.', question='If I am summoned to sit on a trial panel, does that come out of my vacation time?', terms=['jury duty', 'Court Leave', 'balances']),
dict(kind='paraphrase', layer='handbook', file=OT, quote='Comp time expires one year (26 pay periods) after it is earned.', question='How long before leave banked in place of extra wages is forfeited?', terms=['Comp time', 'expires', '26 pay periods']),
dict(kind='paraphrase', layer='handbook', file=LV, quote='You can also be granted up to 4 hours of Administrative Leave for blood donation.', question='Do I get paid time away from my desk to give blood at a drive?', terms=['4 hours', 'Administrative Leave', 'donation']),
]
HQ += [
dict(kind='names_doc', layer='handbook', file='pages/getting-started/piv.md', quote='GSA processes new badges every Wednesday.', question='According to the PIV card page, on which day of the week are new badges processed?'),
dict(kind='names_doc', layer='handbook', file='pages/tools/slack/records.md', quote='Treat Slack as a public forum — you have _no_ privacy.', question='What does Slack records say about privacy in Slack?'),
dict(kind='names_doc', layer='handbook', file=TB, quote='Click on **Withdraw from the program**', question='How do I cancel my enrollment, according to the Transit Benefit page?'),
dict(kind='names_doc', layer='handbook', file=PW, quote='consider setting up random nonsense answers and storing those answers in your password manager', question='What does Requirements for Passwords advise about answers to security questions?'),
dict(kind='names_doc', layer='handbook', file=PPL, quote='You must use the PPL within a year of the child’s birth or placement', question='Under Paid parental leave (PPL), by when do I have to use the leave?'),
dict(kind='names_doc', layer='handbook', file=WS, quote='GSA allows all 5 types of flexible schedules.', question='According to Work schedules, which types of flexible schedules does GSA allow?'),
dict(kind='names_doc', layer='handbook', file=OT, quote='Travel comp time is for “temporary duty” aka “TDY” travel, *not* local travel or commuting.', question='In Compensation for working extra hours, which trips count for travel comp time?'),
dict(kind='names_doc', layer='handbook', file=VLTP, quote='Have an anticipated negative leave balance of at least 24 hours', question='What leave balance do I need to receive donated hours under the Voluntary Leave Transfer Program?'),
dict(kind='names_doc', layer='handbook', file=FMLA, quote='To be eligible for FMLA, you must have at least one year of federal service.', question='Who is eligible, according to the Family Medical Leave Act (FMLA) page?'),
dict(kind='names_doc', layer='handbook', file=LV, quote='You are also able to receive 4 hours of Administrative Leave per leave year to serve as a non-partisan poll worker', question='What does Leave types allow for someone volunteering as a poll worker?'),
dict(kind='missing_section', layer='handbook', question='What does section 4 of the Requirements for Passwords page require?', section_ref='section 4', doc=PW, note='the page numbers three requirements, 1-3'),
dict(kind='missing_section', layer='handbook', question='What does section 8 of the Intro to GitHub training cover?', section_ref='section 8', doc='pages/training-and-development/intro-to-github.md', note='Intro to GitHub has numbered parts 1-7'),
dict(kind='missing_section', layer='handbook', question='What happens in section 7 of the TS/SCI clearance upgrade process?', section_ref='section 7', doc='pages/general-information-and-resources/business-and-ops-policies/top-secret.md', note='the clearance upgrade process has steps 1-6'),
dict(kind='missing_section', layer='handbook', question='In PRA for user research, what does section 6 of the step-by-step instructions for Fast Track PRA clearance say?', section_ref='section 6', doc='pages/training-and-development/pra-for-user-research.md', note='the step-by-step instructions have steps 1-5'),
dict(kind='missing_section', layer='handbook', question='What does section 5 of Get access to Concur ask me to do?', section_ref='section 5', doc='pages/travel-and-leave/travel-and-leave-policies/first-time-travel-get-in-concur.md', note='the page has numbered steps 1-4'),
]
def nm(q, note):
    return dict(kind='near_miss', layer='handbook', question=q, note=note)
HQ += [
nm('What percentage of each paycheck does GSA withhold for FERS?', 'the benefits page says a percentage is withheld, not how much'),
nm("What is this year's annual TSP contribution limit in dollars?", 'the benefits page only links to the TSP annual limit'),
nm('How much money is loaded onto the TRANServe card each month?', 'the San Francisco page says the card loads Clipper each month; no amount anywhere'),
nm('What is the current POV mileage rate for driving my own car on official travel?', 'the travel pages link to the GSA POV mileage rates; no rate given'),
nm('How many weeks of paid parental leave does the Department of Defense give its civilian employees?', "another agency's rule; the handbook gives GSA's paid parental leave"),
nm('How many hours of annual leave does a part-time employee earn per pay period?', 'accrual is given by years of service only, nothing for part-time employees'),
nm('Can employees working overseas carry over more than 240 hours of annual leave?', 'the 240-hour carry-over cap is given with no rule for overseas employees'),
nm('What is the maximum salary at GSA for 2025?', 'only the 2024 maximum ($191,900) is given'),
nm('What is the per diem rate for meals in San Francisco?', 'no per diem rates are given; the travel pages point to GSA per diem'),
nm('How much is the biweekly premium for a self plus one dental plan?', 'the benefits page names dental plans but gives no premiums'),
nm('How much can I contribute each year to a Health Care Flexible Spending Account?', 'the FSA section describes the accounts but gives no contribution limit'),
nm('How long is the probationary period for new TTS employees?', 'the onboarding page mentions the probationary period but not its length'),
nm('How many days of jury service must employers pay for under New York State law?', "another jurisdiction's rule; the handbook gives federal court leave only"),
nm('Can I bring my dog to the Chicago office?', 'the Chicago page says nothing about pets or dogs'),
nm('What is the dollar amount of a TTS Special Act Award?', 'Special Act Awards are mentioned for award leave; no monetary amount'),
nm('How many hours of annual leave do SES members accrue per pay period?', 'accrual is given by years of service; nothing specific to the SES'),
nm('What is the FY26 deadline for employees to complete their mid-year self-assessment?', 'the dates page gives the FY25 mid-year dates; FY26 only for establishing plans'),
nm('What is the most annual leave I can donate to a colleague through VLTP in one leave year?', 'the VLTP page explains how to donate, with no limit'),
nm('What is the locality pay percentage for employees in Chicago?', 'locality pay is mentioned, no percentages for any city'),
nm('How many comp time hours can a GS-14 accrue per pay period?', 'the overtime page points to the Bi-weekly Comp Time Cap Calculator'),
nm('Does GSA pay for home internet service for distributed employees?', 'the distributed page says nothing of paying for internet; only travel data plans are covered'),
nm('What is the maximum lodging rate for a TDY in Washington, D.C.?', 'no lodging rates are given; per diem limits are looked up in Concur'),
nm('What share of FEHB premiums does GSA contribute for a self-only plan?', 'the benefits page explains FEHB enrolment, not the government share of premiums'),
nm('How many hours of donated leave can one employee receive through the Emergency Leave Transfer Program?', 'the leave page describes ELTP and links to InSite; no limit on hours'),
nm('What is the dollar limit on gifts an employee may accept from a conference organizer?', 'the speaking playbook discusses gift rules for waived fees, not a dollar limit'),
nm('How many business days does it take to get a replacement PIV card after I report it lost?', 'the PIV and equipment pages say what to do when a card is lost, not how long a replacement takes'),
nm('How much does a licensed Zoom user account cost TTS per year?', 'the Zoom page explains licensed users, not their price'),
]

# ---- peps: documents named by number; near misses in the PEPs' words
def nd(layer, f, quote, q):
    return dict(kind='names_doc', layer=layer, question=q, file=f, quote=quote)
PQ = [
nd('peps', 'pep-0204.rst', 'The new syntax and its intentions were deemed not obvious enough.', 'Why was PEP 204 rejected?'),
nd('peps', 'pep-0245.rst', 'it would be naive to expect it to resemble the syntax in this PEP', 'Why did Guido reject PEP 245?'),
nd('peps', 'pep-0347.rst', 'This PEP proposes to move it to a Subversion repository on svn.python.org.', 'Where does PEP 347 want the Python source code moved?'),
nd('peps', 'pep-0380.rst', 'the subgenerator is allowed to return with a value, and the value is made available to the delegating generator', 'In PEP 380, what happens to a value the subgenerator returns?'),
nd('peps', 'pep-0659.rst', 'A specializing, adaptive interpreter is one that speculatively specializes on the types or values it is currently operating on', 'How does PEP 659 define a specializing, adaptive interpreter?'),
nd('peps', 'pep-8016.rst', 'The council has broad authority, which they seek to exercise as rarely as possible', 'How much authority does the steering council have under PEP 8016?'),
nd('peps', 'pep-3148.rst', 'Calls to ``Executor.submit`` and ``Executor.map`` and made after shutdown will raise ``RuntimeError``.', 'In PEP 3148, what happens if I call Executor.submit after shutdown?'),
nd('peps', 'pep-3148.rst', 'If *max_workers* is ``None`` or not given then as many worker processes will be created as the machine has processors.', 'In PEP 3148, how many worker processes does a ProcessPoolExecutor create when max_workers is not given?'),
nd('peps', 'pep-0324.rst', 'A ``communicate()`` method, which makes it easy to send stdin data and read stdout and stderr data, without risking deadlocks.', 'What is the communicate() method for, according to PEP 324?'),
nd('peps', 'pep-0678.rst', '``.__notes__`` attribute holding a list of notes so added', 'Where does PEP 678 store the notes added to an exception?'),
nd('peps', 'pep-0442.rst', 'The goal is to be able to define and run finalizers for any object, regardless of their position in the object graph.', 'What is the goal of PEP 442?'),
nd('peps', 'pep-0237.rst', 'Short int operations that currently raise ``OverflowError`` return a long int value instead.', 'What is the first phase of the transition in PEP 237?'),
nd('peps', 'pep-8012.rst', "Most importantly, just like with a Dictator, we don't need a Council.", 'Does PEP 8012 want a council to lead Python?'),
nd('peps', 'pep-0385.rst', 'After having decided to switch to the Mercurial DVCS, the actual migration still has to be performed.', 'What is PEP 385 about, given the decision to switch to Mercurial?'),
nd('peps', 'pep-3110.rst', 'whereby the target name is deleted at the end of the', 'In PEP 3110, what happens to the name bound by except ... as at the end of the except block?'),
]
def pn(q, note):
    return dict(kind='near_miss', layer='peps', question=q, note=note)
PQ += [
pn('What does PEP 246 propose for object adaptation?', 'PEP 246 is only cited by PEP 245; it is not in the collection'),
pn('How does PEP 342 add a send() method to generators?', 'PEP 342 is cited by PEPs 325 and 3109 but is not in the collection'),
pn('How many votes did each candidate receive in the 2021 term Steering Council election?', 'the collection has the 2020 and 2023 term elections, not 2021'),
pn('What maximum line length does PEP 8 recommend?', 'PEP 8 is cited but not in the collection'),
pn('Which PEP moved CPython from Mercurial to Git and GitHub?', 'the collection has CVS to Subversion (PEP 347) and Subversion to Mercurial (PEP 385), not the move to Git'),
pn('What does PEP 572 say about assignment expressions inside comprehensions?', 'PEP 572 is cited by PEP 614 but is not in the collection'),
pn('Which Python release made the free-threaded build the default?', 'PEP 779 gives criteria for supported status; no document says the free-threaded build became the default'),
pn('In which release was the cgi module removed from the standard library?', 'the cgi module is only mentioned in passing; no PEP of the collection removes it'),
pn('How does PEP 435 define the functional API of the Enum class?', 'PEP 435 is cited by PEP 354 (rejected in its favour) but is not in the collection'),
]
# ---- goblog
GQ = [
nd('goblog', '11years.md', 'delivered the first officially “production-ready” implementation of Go modules', 'In Eleven Years of Go, which release delivered the first production-ready implementation of Go modules?'),
nd('goblog', '5years.md', 'a lovely shade of yellow, we were calling Go a "systems language"', 'What was Go like before launch, according to Half a decade with Go?'),
nd('goblog', 'go1.24.md', 'Go 1.24 now fully supports [generic type aliases](/issue/46477): a type alias may be parameterized like a defined type.', "What does the post 'Go 1.24 is released!' say about generic type aliases?"),
nd('goblog', 'ports.md', 'included support for two operating systems (Linux and Mac OS X) and three architectures', 'According to Go on ARM and Beyond, which systems did the initial open source release support?'),
nd('goblog', 'package-names.md', "A package's name provides context for its contents", "Why do names matter, according to the post 'Package names'?"),
nd('goblog', 'h2push.md', 'which allows the server to push resources to the browser before they are explicitly requested', 'What does HTTP/2 Server Push allow a server to do?'),
]
def gn(q, note):
    return dict(kind='near_miss', layer='goblog', question=q, note=note)
GQ += [
gn('What CMVP certificate number was the Go Cryptographic Module v1.0.0 awarded?', 'the FIPS post gives only the CAVP certificate; the module was on the Modules In Process list'),
gn('How many people attended GopherCon in San Diego?', 'GopherCon in San Diego is mentioned, with no attendance'),
gn('Does net/http support server push over HTTP/3?', 'the server push post covers HTTP/2 only'),
gn("Does Go 1.25's container-aware GOMAXPROCS also respect CPU limits on Windows?", 'the GOMAXPROCS post describes Linux cgroup limits, nothing about Windows'),
gn('Does Go support the WASI preview 2 component model?', 'the Wasm post covers the WASI preview 1 port only'),
gn('What did the Go team write when Go turned 14?', 'the collection has the 1, 5, 9, 10, 11 and 12 year posts, not 14'),
gn('How do I iterate over a map in sorted order with the maps package iterators?', 'no post in the collection covers iterators over maps'),
gn('What memory limit should a Go server running in a Docker container set?', 'the Docker post covers deploying, not memory limits'),
gn('How much faster is the Green Tea garbage collector in Go 1.26?', 'the Go 1.26 post says Green Tea is enabled by default and links to the release notes; no speed-up figure'),
]

# ---- contracts: near misses and numbered clauses past the end
CANO = 'CANOPETROLEUM,INC_12_13_2007-EX-10.1-Sponsorship Agreement.txt'
LOGAN = 'LOGANSROADHOUSEINC_03_27_1998-EX-10.17-SPONSORSHIP AGREEMENT.txt'
IMGW = 'IMAGEWARESYSTEMSINC_12_20_1999-EX-10.22-MAINTENANCE AGREEMENT.txt'
SPRK = 'SPARKLINGSPRINGWATERHOLDINGSLTD_07_03_2002-EX-10.13-SOFTWARE LICENSE AND MAINTENANCE AGREEMENT.txt'
OAKT = 'OAKTREECAPITALGROUP,LLC_03_02_2020-EX-10.8-Services Agreement.txt'
HRTZ = 'HERTZGLOBALHOLDINGS,INC_07_07_2016-EX-10.4-INTELLECTUAL PROPERTY AGREEMENT.txt'
GOCL = 'GOCALLINC_03_30_2000-EX-10.7-Promotion Agreement.txt'
def cn(q, note):
    return dict(kind='near_miss', layer='contracts', question=q, note=note)
def ms(layer, q, ref, doc, note):
    return dict(kind='missing_section', layer=layer, question=q, section_ref=ref, doc=doc, note=note)
CQ = [
cn('How much are the liquidated damages for late delivery under the Dragon Systems outsourcing agreement with Modus Media?', 'the Dragon Systems–Modus Media agreement has no liquidated damages clause'),
cn('Does the Sparkling Spring–Garman software license give Sparkling Spring most favored customer pricing?', 'no most-favoured pricing clause in that licence'),
cn('What royalty rate does Lucent receive under its co-branding agreement with mPhase?', 'the mPhase–Lucent co-branding agreement sets no royalty rate'),
cn('Which law governs the co-branding agreement between Lucent and Time Life?', 'Lucent and Time Life are parties to different contracts; there is no contract between them'),
cn('Under the content license agreement between Phoenix Satellite TV and Baidu, who owns the licensed content?', 'Phoenix Satellite TV and Baidu are in different contracts; no agreement between them'),
cn('Does the distributor agreement between Cisco and Comware restrict assignment?', 'Cisco and Comware are in different distributor agreements; none between them'),
cn('Under English law, what notice period applies to terminating the Cano Petroleum–Boyd sponsorship agreement?', "another jurisdiction's law: the agreement is governed by Texas law and gives no English-law rule"),
cn('What does the Texas Business and Commerce Code require for notices under the Mercata–Football Northwest sponsorship agreement?', "another jurisdiction's law: the Mercata agreement is governed by Washington law"),
cn('How many miles does the non-compete in the Union Dental–Dr. Green affiliate agreement extend?', 'the Union Dental agreement has no non-compete at all'),
cn('Can Movado terminate the endorsement agreement if the endorser is involved in a public scandal?', 'the Movado document is a split-dollar insurance agreement with no morals clause'),
cn('What is the minimum annual purchase commitment under the Cisco–Tech Data distributor agreement?', 'Tech Data is not a party to any contract of the collection'),
]
CQ += [
ms('contracts', 'What does section 22 of the Cano Petroleum–Boyd sponsorship agreement provide?', 'section 22', CANO, 'the agreement has sections 1-21'),
ms('contracts', "What does section 24 of the Logan's Roadhouse sponsorship agreement with Southern Racing Promotions say?", 'section 24', LOGAN, 'the agreement ends with section 23, Entire Agreement'),
ms('contracts', 'What does section 21 of the Sagem Morpho–Ximage maintenance agreement cover?', 'section 21', IMGW, 'the agreement has sections 1-20'),
ms('contracts', 'What does section 21 of the software license and maintenance agreement between Sparkling Spring and Garman say?', 'section 21', SPRK, 'the agreement ends with section 20, General Matters'),
ms('contracts', 'What does clause 13.8 of the services agreement between Oaktree US and Oaktree International provide?', 'clause 13.8', OAKT, 'clause 13 has 13.1-13.7'),
ms('contracts', 'Under clause 10.3 of the Oaktree US–Oaktree International services agreement, when can the agreement be terminated?', 'clause 10.3', OAKT, 'clause 10 has 10.1 Basic Term and 10.2 Early Termination only'),
ms('contracts', 'What does section 12.14 of the Hertz–Herc Rentals intellectual property agreement say?', 'section 12.14', HRTZ, 'section 12 runs 12.1-12.13'),
ms('contracts', 'What does section 20 of the Go Call–PageMaster promotion agreement require?', 'section 20', GOCL, 'the agreement has sections 1-19'),
]
# ---- standards
def sn(q, note):
    return dict(kind='near_miss', layer='standards', question=q, note=note)
SQ = [
sn('What carrier frequency does V.29 modulation use for Group 3 facsimile?', 'T.4 only points to Recommendation V.29 for modulation; the carrier frequency is in V.29, not in the collection'),
sn('What is the maximum transmission speed of a Group 4 facsimile terminal over ISDN?', 'T.6 defines the coding scheme only, not transmission speeds'),
sn('What is the minimum transmission time per coded scan line for Group 4 terminals in T.6?', 'the minimum scan line time is a Group 3 rule of T.4; T.6 gives none'),
sn('What paper widths must a Group 4 terminal accept under T.6?', 'terminal dimensions are given for Group 3 in T.4, not in T.6'),
sn('What does Annex J of T.30 specify?', 'T.30 is only referred to by T.4; it is not in the collection'),
sn('Which predictor does JPEG-LS use for near-lossless coding?', 'JPEG-LS (T.87) is not in the collection'),
sn('How many lines per mm of vertical resolution must a Group 4 terminal support under T.6?', 'resolutions are given for Group 3 in T.4; T.6 gives none'),
]
SQ += [
ms('standards', 'What does Annex N of T.81 specify?', 'Annex N', 'itu-t81.pdf', 'T.81 has annexes A-M'),
ms('standards', 'What does Annex I of T.81 cover?', 'Annex I', 'itu-t81.pdf', 'T.81 skips the letter I: its annexes run A-H, J-M'),
ms('standards', 'What does clause 2.2.6 of T.6 say?', 'clause 2.2.6', 'T6.pdf', 'clause 2.2 has 2.2.1-2.2.5'),
ms('standards', 'What is specified in clause 5 of T.6?', 'clause 5', 'T6.pdf', 'T.6 has clauses 1-4'),
ms('standards', 'What does clause 2.4.1.4 of T.6 define?', 'clause 2.4.1.4', 'T6.pdf', 'clause 2.4.1 has 2.4.1.1-2.4.1.3'),
ms('standards', 'What does clause 4.1.5 of T.4 say about one-dimensional coding?', 'clause 4.1.5', 'T4.pdf', 'clause 4.1 has 4.1.1-4.1.4'),
ms('standards', 'What does Annex J of T.4 specify?', 'Annex J', 'T4.pdf', 'T.4 has annexes A-I (it cites Annex J of T.30)'),
ms('standards', 'What does clause 4.12 of T.81 say about the modes of operation?', 'clause 4.12', 'itu-t81.pdf', 'clause 4 of T.81 runs 4.1-4.11'),
ms('standards', 'How does T.81 define the term in clause 3.1.133?', 'clause 3.1.133', 'itu-t81.pdf', 'the definitions of clause 3.1 run 3.1.1-3.1.132'),
]

QUESTIONS = HQ + PQ + GQ + CQ + SQ
