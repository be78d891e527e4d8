#!/usr/bin/env python3
"""Lists the CUAD expert labels of the picked contracts, each located in the
contract's own text (the labels' whitespace and quotes may differ: the quote
kept is the file's exact text). Output: JSON lines {file, category, quote,
parties}; the questions are then written from them (parties as people name
them). Usage: contracts.py CORPORA FILES_JSON
"""
import ast, csv, json, os, re, sys

corp, files = sys.argv[1], json.load(open(sys.argv[2]))['contracts']
CATS = ['Governing Law', 'Termination For Convenience', 'Non-Compete', 'Exclusivity', 'Anti-Assignment',
        'Cap On Liability', 'Audit Rights', 'Insurance', 'Renewal Term', 'Change Of Control', 'License Grant',
        'Warranty Duration', 'Notice Period To Terminate Renewal', 'Expiration Date', 'Minimum Commitment',
        'No-Solicit Of Employees', 'Revenue/Profit Sharing', 'Liquidated Damages', 'Post-Termination Services',
        'Ip Ownership Assignment', 'Most Favored Nation', 'Non-Disparagement', 'Third Party Beneficiary']
csv.field_size_limit(10**9)
rows = {os.path.splitext(r['Filename'])[0] + '.txt': r for r in
        csv.DictReader(open(os.path.join(corp, 'contracts-cuad-labels', 'master_clauses_subset.csv'), encoding='utf-8'))}


def locate(text, label):
    words = re.findall(r'\w+', label)
    if len(words) < 6:
        return None
    pat = r'\W+'.join(re.escape(w) for w in words)
    m = re.search(pat, text)
    return text[m.start():m.end()] if m else None


for f in files:
    text = open(os.path.join(corp, 'contracts-cuad', f), encoding='utf-8').read()
    r = rows[f]
    for c in CATS:
        try:
            spans = ast.literal_eval(r[c])
        except Exception:
            continue
        for s in spans:
            q = locate(text, s)
            if q and 40 <= len(q) <= 900:
                print(json.dumps({'file': f, 'category': c, 'quote': q, 'parties': r['Parties']}, ensure_ascii=False))
                break
