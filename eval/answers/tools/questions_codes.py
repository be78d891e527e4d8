# Questions on the isocodes layer (the ISO 4217 currency, ISO 3166 country
# and ISO 639 language lists under code-lists/; the IANA port registry is
# left out of the layer, see README.md). Quotes are exact substrings of the
# stored text, where each row is "column: value | column: value | ..." and
# empty values are left out. build.py reads QUESTIONS.
CUR = 'currency-codes.csv'
CTY = 'country-codes.csv'
LNG = 'language-codes-full.csv'

QUESTIONS = [
# ---- code: asks what a code stands for
dict(kind='code', layer='isocodes', file=CUR, question='Which currency has the code XOF?',
     quote='Currency: CFA Franc BCEAO | AlphabeticCode: XOF | NumericCode: 952'),
dict(kind='code', layer='isocodes', file=CUR, question='What currency is CHE? I thought Switzerland was CHF.',
     quote='Currency: WIR Euro | AlphabeticCode: CHE | NumericCode: 947'),
dict(kind='code', layer='isocodes', file=CUR, question='We got a payment file with currency XAD, what is that?',
     quote='Currency: Arab Accounting Dinar | AlphabeticCode: XAD'),
dict(kind='code', layer='isocodes', file=CUR, question='Which currency has the numeric code 960?',
     quote='Currency: SDR (Special Drawing Right) | AlphabeticCode: XDR | NumericCode: 960'),
dict(kind='code', layer='isocodes', file=LNG, question='What language is tlh?',
     quote='alpha3-b: tlh | English: Klingon; tlhIngan-Hol'),
dict(kind='code', layer='isocodes', file=LNG, question='Which language does the code cym stand for?',
     quote='alpha3-t: cym | alpha2: cy | English: Welsh'),
dict(kind='code', layer='isocodes', file=CTY, question='Which country is BTN?',
     quote='ISO3166-1-Alpha-3: BTN'),

# ---- table: a cell of a row found by its other cells
dict(kind='table', layer='isocodes', file=CUR, question='What is the numeric code of the Norwegian krone?',
     quote='Currency: Norwegian Krone | AlphabeticCode: NOK | NumericCode: 578'),
dict(kind='table', layer='isocodes', file=CUR, question='How many decimal places does the Kuwaiti dinar have?',
     quote='Currency: Kuwaiti Dinar | AlphabeticCode: KWD | NumericCode: 414 | MinorUnit: 3'),
dict(kind='table', layer='isocodes', file=CUR, question='When was the French franc code withdrawn?',
     quote='Currency: French Franc | AlphabeticCode: FRF | NumericCode: 250 | WithdrawalDate: 2002-03'),
dict(kind='table', layer='isocodes', file=CTY, question="What is Norway's international dialling code?",
     quote='FIFA: NOR | Dial: 47 | ISO3166-1-Alpha-3: NOR'),
dict(kind='table', layer='isocodes', file=CTY, question='What is the capital of Bhutan?',
     quote='Capital: Thimphu'),
dict(kind='table', layer='isocodes', file=CTY, question='Which top-level domain belongs to Tuvalu?',
     quote='TLD: .tv'),
dict(kind='table', layer='isocodes', file=CTY, question="What's the phone prefix for the Holy See?",
     quote='Dial: 39-06'),
dict(kind='table', layer='isocodes', file=LNG, question='What is German called in French, and what are its codes?',
     quote='alpha3-b: ger | alpha3-t: deu | alpha2: de | English: German | French: allemand'),

# ---- near_miss: in the lists' own words, but no row carries the answer
dict(kind='near_miss', layer='isocodes', question='What is the capital of Antarctica?',
     note="Antarctica's row has no Capital"),
dict(kind='near_miss', layer='isocodes', question='What is the Sub-region Name of Antarctica?',
     note="Antarctica's row has no region"),
dict(kind='near_miss', layer='isocodes', question='What is the UNTERM English Formal name of Antarctica?',
     note="Antarctica's row has no UNTERM names"),
dict(kind='near_miss', layer='isocodes', question='What is the FIFA code of Bouvet Island?',
     note="Bouvet Island's row has no FIFA code"),
dict(kind='near_miss', layer='isocodes', question='Which Languages does Bouvet Island have?',
     note="Bouvet Island's row has no Languages"),
dict(kind='near_miss', layer='isocodes', question='What is the alpha2 code of Achinese?',
     note='Achinese has only an alpha3-b code'),
dict(kind='near_miss', layer='isocodes', question='Which alpha2 code does Ancient Greek have?',
     note='Ancient Greek (grc) has no alpha2 code'),
dict(kind='near_miss', layer='isocodes', question='When was the Euro withdrawn?',
     note='the euro has no WithdrawalDate'),
dict(kind='near_miss', layer='isocodes', question='How many minor units did the French Franc have?',
     note='withdrawn codes carry no MinorUnit'),
dict(kind='near_miss', layer='isocodes', question='Which currency did Norway use before the Norwegian Krone?',
     note='no withdrawn code is listed for Norway'),
dict(kind='near_miss', layer='isocodes', question='What is the French name of the Kuwaiti Dinar?',
     note='currency names are given in English only'),
dict(kind='near_miss', layer='isocodes', question='What is the Arabic name of the Klingon language?',
     note='languages have English and French names only'),
dict(kind='near_miss', layer='isocodes', question='What is the capital of the European Union?',
     note='the European Union is a currency entity, not a row of the country list'),
dict(kind='near_miss', layer='isocodes', question='What is the Dial code of the International Monetary Fund?',
     note='the IMF is a currency entity only'),
dict(kind='near_miss', layer='isocodes', question='Which TLD does the Arab Monetary Fund use?',
     note='the Arab Monetary Fund is a currency entity only'),
dict(kind='near_miss', layer='isocodes', question='What is the wikidata ID of the CFA Franc BCEAO?',
     note='wikidata IDs are given for countries, not currencies'),
]
