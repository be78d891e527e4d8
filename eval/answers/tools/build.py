#!/usr/bin/env python3
"""Writes eval/answers/questions.jsonl from questions_src.py (hand-written)
and the CUAD labels (contract questions). Run from the repository root:
    python3 eval/answers/tools/build.py ../shared/corpora
Each quote is located in its file with whitespace allowed to differ and the
file's exact text kept; the split is SplitOf's (check.go): within a kind,
ids ordered by FNV-1a 64 take test, train, test, ... in turn. The Go test
(check_test.go) checks the result; this script only prepares it.
"""
import ast, csv, json, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from questions_src import Q  # noqa: E402
from parties import parties  # noqa: E402

corp = sys.argv[1]
evaldir = os.path.dirname(here)
layers = {l['name']: l for l in json.load(open(os.path.join(evaldir, 'layers.json')))}
dump = os.environ.get('DUMP_DIR', '/tmp/aw/dump')  # parsed PDF text and sections from TestDumpSections


def text_of(layer, f):
    l = layers[layer]
    if f.lower().endswith('.pdf') or f.endswith('.csv'):
        p = os.path.join(dump, f + '.text')
        if not os.path.exists(p):
            p = os.path.join('/tmp/aw/dump2', f + '.text')
        return open(p, encoding='utf-8').read()
    root = os.path.join(evaldir, l['root']) if l['base'] == 'eval' else os.path.join(corp, l['root'])
    return open(os.path.join(root, f), encoding='utf-8').read()


def sections_of(f):
    p = os.path.join(dump, f + '.sections')
    if not os.path.exists(p):
        return []
    out = []
    for line in open(p, encoding='utf-8'):
        s, h, e, path = line.rstrip('\n').split('\t')
        out.append((int(s), int(e), path))
    return out


def locate(text, frag):
    if frag in text:
        i = text.index(frag)
        return i, frag
    pat = r'\s+'.join(re.escape(w) for w in frag.split())
    m = re.search(pat, text)
    if not m:
        return -1, None
    return m.start(), m.group(0)


def section_at(f, start, end):
    best, depth = '', -1
    for s, e, path in sections_of(f):
        d = path.count(' > ')
        if s <= start and end <= e and d > depth:
            best, depth = path, d
    return best


FNV_OFF, FNV_PRIME = 0xcbf29ce484222325, 0x100000001b3


def fnv(s):
    h = FNV_OFF
    for b in s.encode('utf-8'):
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


out = []
missing = []
n = {}
for e in Q:
    kind, layer, f, quote, question = e[:5]
    terms = e[5] if len(e) > 5 else None
    note = e[6] if len(e) > 6 else None
    n[kind] = n.get(kind, 0) + 1
    q = {'id': '%s-%03d' % (kind, n[kind]), 'kind': kind, 'layer': layer, 'question': question, 'gold': []}
    if f:
        text = text_of(layer, f)
        at, exact = locate(text, quote)
        if at < 0:
            missing.append((q['id'], f, quote))
            continue
        g = {'file': f, 'quote': exact}
        if kind == 'exact' and f.lower().endswith('.pdf') or kind == 'exact' and layer == 'contracts':
            bat = len(text[:at].encode('utf-8'))
            sec = section_at(f, bat, bat + len(exact.encode('utf-8')))
            if sec:
                g['section'] = sec
        q['gold'].append(g)
    if terms:
        q['terms'] = terms
    if note:
        q['note'] = note
    out.append(q)

# ---- contract questions from the CUAD labels
TEMPLATES = {
    'Governing Law': ['Which law governs the {kind} between {a} and {b}?',
                      'Under the {a}–{b} {kind}, what jurisdiction\'s law applies?',
                      'What governing law did {a} and {b} choose for their {kind}?'],
    'Termination For Convenience': ['Can either {a} or {b} terminate their {kind} for convenience, without cause?',
                                    'Under the {kind} between {a} and {b}, may a party end it early without a breach, and on what notice?'],
    'Anti-Assignment': ['Can {b} assign the {kind} with {a} to a third party without consent?',
                        'Does the {a}/{b} {kind} restrict assignment?',
                        'May {a} transfer its rights under its {kind} with {b}?'],
    'Cap On Liability': ['Is there a cap on liability in the {kind} between {a} and {b}?',
                         'What is the most {a} or {b} can be liable for under their {kind}?'],
    'Expiration Date': ['When does the {kind} between {a} and {b} expire?',
                        'How long is the initial term of the {a}–{b} {kind}?'],
    'Renewal Term': ['Does the {a}–{b} {kind} renew automatically, and for how long?',
                     'What are the renewal terms of the {kind} between {a} and {b}?'],
    'Notice Period To Terminate Renewal': ['How much notice must be given to stop the {a}–{b} {kind} from renewing?'],
    'Audit Rights': ['Can {a} audit the books and records of {b} under their {kind}?',
                     'What audit rights does the {a}–{b} {kind} give?'],
    'Insurance': ['What insurance must be maintained under the {kind} between {a} and {b}?'],
    'Exclusivity': ['Is the relationship under the {a}–{b} {kind} exclusive?',
                    'Does the {kind} between {a} and {b} grant exclusive rights?'],
    'License Grant': ['What licence is granted under the {kind} between {a} and {b}?'],
    'Non-Compete': ['Does the {a}–{b} {kind} contain a non-compete restriction?'],
    'Ip Ownership Assignment': ['Who owns the intellectual property created under the {a}–{b} {kind}?'],
    'Minimum Commitment': ['Is there a minimum purchase or volume commitment in the {kind} between {a} and {b}?'],
    'Revenue/Profit Sharing': ['How are revenues shared between {a} and {b} under their {kind}?'],
    'Post-Termination Services': ['What obligations continue after the {a}–{b} {kind} ends?'],
    'Change Of Control': ['What happens to the {kind} between {a} and {b} on a change of control?'],
    'No-Solicit Of Employees': ['May {a} hire employees of {b} under their {kind}?'],
    'Warranty Duration': ['How long is the warranty period under the {a}–{b} {kind}?'],
}
CAP = {'Governing Law': 16, 'Anti-Assignment': 10, 'Expiration Date': 8, 'Termination For Convenience': 9,
       'Cap On Liability': 7, 'License Grant': 4, 'Renewal Term': 5, 'Audit Rights': 4, 'Insurance': 3,
       'Exclusivity': 3, 'Notice Period To Terminate Renewal': 3, 'Ip Ownership Assignment': 2, 'Non-Compete': 2,
       'Minimum Commitment': 2, 'Revenue/Profit Sharing': 2, 'Post-Termination Services': 2, 'Change Of Control': 1,
       'No-Solicit Of Employees': 1, 'Warranty Duration': 1}
csv.field_size_limit(10**9)
files = [l for l in layers['contracts']['include']]
rows = {os.path.splitext(r['Filename'])[0] + '.txt': r for r in
        csv.DictReader(open(os.path.join(corp, 'contracts-cuad-labels', 'master_clauses_subset.csv'), encoding='utf-8'))}


def locate_label(text, label):
    words = re.findall(r'\w+', label)
    if len(words) < 5:
        return None
    m = re.search(r'\W+'.join(re.escape(w) for w in words), text)
    return text[m.start():m.end()] if m else None


cands = {c: [] for c in TEMPLATES}
for f in sorted(files, key=fnv):
    text = open(os.path.join(corp, 'contracts-cuad', f), encoding='utf-8').read()
    for c in TEMPLATES:
        try:
            spans = ast.literal_eval(rows[f][c])
        except (ValueError, SyntaxError):
            continue
        gold = []
        for s in spans:
            qt = locate_label(text, s)
            if qt and 30 <= len(qt) <= 3000 and all(g['quote'] != qt for g in gold):
                gold.append({'file': f, 'quote': qt})
        if gold:
            cands[c].append((f, gold))
per_file = {}
k = 0
for c, lst in cands.items():
    taken = 0
    for f, gold in lst:
        if taken >= CAP[c] or per_file.get(f, 0) >= 3:
            continue
        a, b, kind = parties(f)
        tpl = TEMPLATES[c][taken % len(TEMPLATES[c])]
        k += 1
        out.append({'id': 'contract-%03d' % k, 'kind': 'contract', 'layer': 'contracts',
                    'question': tpl.format(a=a, b=b, kind=kind), 'gold': gold[:4],
                    'note': 'CUAD label: ' + c})
        taken += 1
        per_file[f] = per_file.get(f, 0) + 1

# ---- split (SplitOf in check.go)
by_kind = {}
for q in out:
    by_kind.setdefault(q['kind'], []).append(q['id'])
split = {}
for ids in by_kind.values():
    for i, qid in enumerate(sorted(ids, key=lambda s: (fnv(s), s))):
        split[qid] = ('test', 'train')[i % 2]
with open(os.path.join(evaldir, 'questions.jsonl'), 'w', encoding='utf-8') as w:
    for q in out:
        q = {'id': q['id'], 'kind': q['kind'], 'split': split[q['id']], **{k: v for k, v in q.items() if k not in ('id', 'kind')}}
        w.write(json.dumps(q, ensure_ascii=False) + '\n')
for m in missing:
    print('NOT FOUND', m, file=sys.stderr)
print({k: len(v) for k, v in by_kind.items()}, len(out), file=sys.stderr)
