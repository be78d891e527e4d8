#!/usr/bin/env python3
"""Picks the eval corpus (deterministic) and prints candidate sentences.

Used once to build eval/answers/layers.json and to show passages a question
writer reads; the questions themselves are written by hand. Run from the
repository root with the corpora folder as the argument:
    python3 eval/answers/tools/pick.py ../shared/corpora files|sentences LAYER
"""
import csv, json, os, random, re, sys

corp = sys.argv[1]
mode = sys.argv[2]


def peps():
    d = os.path.join(corp, 'python-peps')
    mid = sorted(f for f in os.listdir(d) if 6000 <= os.path.getsize(os.path.join(d, f)) <= 20000)
    return sorted(random.Random(12).sample(mid, 60))


def blog():
    d = os.path.join(corp, 'go-blog-markdown')
    out = []
    for f in sorted(os.listdir(d)):
        t = open(os.path.join(d, f), encoding='utf-8').read()
        if 'redirect:' in t[:300]:
            continue
        if 4000 <= len(t) <= 14000:
            out.append(f)
    return sorted(random.Random(12).sample(out, 40))


def contracts():
    csv.field_size_limit(10**9)
    d = os.path.join(corp, 'contracts-cuad')
    rows = list(csv.DictReader(open(os.path.join(corp, 'contracts-cuad-labels', 'master_clauses_subset.csv'), encoding='utf-8')))
    out = []
    for r in rows:
        f = os.path.splitext(r['Filename'])[0] + '.txt'
        p = os.path.join(d, f)
        if os.path.exists(p) and 8000 <= os.path.getsize(p) <= 45000:
            out.append(f)
    return sorted(random.Random(12).sample(sorted(out), 40))


if mode == 'files':
    print(json.dumps({'peps': peps(), 'blog': blog(), 'contracts': contracts()}, indent=1))
elif mode == 'sentences':
    layer = sys.argv[3]
    folder, files = {'peps': ('python-peps', peps), 'blog': ('go-blog-markdown', blog)}[layer]
    for f in files():
        t = open(os.path.join(corp, folder, f), encoding='utf-8').read()
        body = t.split('\n\n', 1)[1] if layer == 'peps' else t.split('---', 2)[-1]
        paras = [re.sub(r'\s+', ' ', p) for p in body.split('\n\n')]
        paras = [p for p in paras if 120 < len(p) < 600 and not p.startswith(('..', '    ', '```', '|', '-', '*', '#'))]
        rnd = random.Random(f)
        for p in rnd.sample(paras, min(3, len(paras))):
            print(f, '|', p)
