#!/usr/bin/env python3
"""What each ranking term adds or costs on the relevance replay (../shared/relevance-dev).

Writes the replay's stores once through this project's bazinga-db (the replay's own loader), then
runs the assembler over all of them once as configured and once per ranking term with that term's
weight set to 0 (context_engineering.ranking.weights.<term>, merged over the replay's own budget
configs), and prints recall on the main labels, plain / crowded, at 5 packages and at 400 and 800
tokens, with each variant's difference to the full ranking.

Usage: python3 bench/relevance-ablation.py RELEVANCE_DEV_DIR [--terms a,b,...] [--jobs N] [--sample N]
  RELEVANCE_DEV_DIR  the folder holding replay.py and corpus/ (../shared/relevance-dev)
  --terms            the weights to zero, one variant each (default: every ranking weight)
  --jobs             assembler processes at once (default 2)
  --sample           a stratified sample of N cases (default 0: all)
Run from the project root after npm ci and npm run build. Nothing is written inside the project.
"""
import argparse, collections, concurrent.futures, json, os, shutil, sys, tempfile

TERMS = ['relevance', 'match', 'paths', 'priority', 'type_affinity', 'recency', 'designated', 'scope', 'same_group']
BUDGETS = [('5 items', 'items', 5), ('400 tok', 'tokens', 400), ('800 tok', 'tokens', 800)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('replay_dir')
    ap.add_argument('--terms', default=','.join(TERMS))
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--sample', type=int, default=0)
    a = ap.parse_args()
    replay_py = os.path.join(a.replay_dir, 'replay.py')
    if not os.path.isfile(replay_py):
        print(f'{replay_py}: no such file (give the folder holding replay.py)', file=sys.stderr)
        sys.exit(2)
    terms = [t for t in a.terms.split(',') if t]
    unknown = [t for t in terms if t not in TERMS]
    if unknown:
        print(f'--terms: unknown {", ".join(unknown)} (allowed: {", ".join(TERMS)})', file=sys.stderr)
        sys.exit(2)
    sys.path.insert(0, os.path.abspath(a.replay_dir))
    sys.dont_write_bytecode = True
    import replay as R  # noqa: E402  (the replay's own stores, runs and scores)

    project = os.getcwd()
    if not os.path.isfile(os.path.join(project, 'skills', 'context-assembler', 'bin', 'context-assembler.mjs')):
        print('run from the project root (skills/context-assembler/bin/context-assembler.mjs not found)', file=sys.stderr)
        sys.exit(2)
    items, cases = R.load_corpus(os.path.join(a.replay_dir, 'corpus'))
    by_case = {c['case']: c for c in cases}
    chosen = R.select_cases(cases, 'dev', a.sample)
    scratch = '/dev/shm' if os.path.isdir('/dev/shm') and os.access('/dev/shm', os.W_OK) else None
    root = tempfile.mkdtemp(prefix='relevance-ablation-', dir=scratch)
    try:
        per_store, stores = [], {}
        for c in chosen:
            for v in R.VARIANTS:
                store = R.store_items(c, v, by_case, items)
                sid, pdir, cmds = R.prepare_store(root, c, v, store)
                stores[(c['case'], v)] = (sid, pdir, store)
                per_store.append(cmds)
        results, _ = R.load_stores(project, per_store, a.jobs, False)
        if any(r['rc'] != 0 for r in results):
            print('bazinga-db refused a write while loading the stores', file=sys.stderr)
            sys.exit(1)
        rows = {key: R.finish_store(pdir, sid, store) for key, (sid, pdir, store) in stores.items()}
        base = R.write_configs(root)
        figures = {}
        for variant in [None] + terms:
            cfgs = {}
            for k, path in base.items():
                cfg = json.load(open(path))
                if variant is not None:
                    cfg['context_engineering'].setdefault('ranking', {}).setdefault('weights', {})[variant] = 0
                out = os.path.join(root, f'config-{variant or "full"}-{k[0]}-{k[1]}.json')
                json.dump(cfg, open(out, 'w'))
                cfgs[k] = out
            jobs = [(key, (stores[key][1], stores[key][0], by_case[key[0]], kind, b, cfgs[(kind, b)]), label)
                    for key in stores for label, kind, b in BUDGETS]
            docs = {}
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
                futs = {ex.submit(R.run_s1, project, job): (key, label) for key, job, label in jobs}
                for f in concurrent.futures.as_completed(futs):
                    docs[futs[f]] = f.result()
            recall = collections.defaultdict(list)
            for key, rws in rows.items():
                pid2key = {r['id']: r['key'] for r in rws}
                for label, _, _ in BUDGETS:
                    doc = docs[(key, label)]
                    keys = [pid2key[p['id']] for p in doc.get('packages', [])] if 'packages' in doc else []
                    recall[(key[1], label)].append(R.score_emission((keys, 0), by_case[key[0]], 'main')['recall'])
            figures[variant] = {k: sum(v) / len(v) for k, v in recall.items()}
            print(f'{"full ranking" if variant is None else "without " + variant}: done', file=sys.stderr)
        print(f'relevance ablation: {len(chosen)} cases; recall on the main labels, plain / crowded (difference to the full ranking)')
        print('| ranking | ' + ' | '.join(label for label, _, _ in BUDGETS) + ' |')
        print('|---|' + '---|' * len(BUDGETS))
        full = figures[None]
        for variant in [None] + terms:
            f = figures[variant]
            cells = []
            for label, _, _ in BUDGETS:
                p, h = f[('plain', label)], f[('haystack', label)]
                cell = f'{p:.3f} / {h:.3f}'
                if variant is not None:
                    cell += f' ({p - full[("plain", label)]:+.3f} / {h - full[("haystack", label)]:+.3f})'
                cells.append(cell)
            name = 'full (as configured)' if variant is None else f'weights.{variant} = 0'
            print(f'| {name} | ' + ' | '.join(cells) + ' |')
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    main()
