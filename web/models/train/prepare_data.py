"""Extract English text from Debian's WordNet and fortunes packages, dedupe it and
split it deterministically into train and held-out documents.

Output (in --out): train.jsonl and heldout.jsonl, one JSON string (a document) per line,
and data-stats.json. A document is one WordNet synset written as
"lemma, lemma: gloss; "example"", or one fortune.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import unicodedata

WORDNET = '/usr/share/wordnet'
FORTUNES = '/usr/share/games/fortunes'
# Skipped fortune files: pictures rather than sentences (art, ascii-art); quotations of
# recent copyrighted fiction, comics and lyrics (pratchett, startrek, zippy, songs-poems);
# jokes about groups of people, kept out of a model meant for classrooms (ethnic, men-women).
# Debian ships the offensive fortunes in a separate package, fortunes-off (under off/):
# it is not installed and anything under an off/ directory is skipped as well.
SKIP_FORTUNES = {'art', 'ascii-art', 'pratchett', 'startrek', 'zippy', 'songs-poems', 'ethnic', 'men-women'}
HELDOUT_PERCENT = 2


def clean(text):
    """NFC, tabs to spaces, no control characters (old fortunes underline with backspaces)."""
    text = unicodedata.normalize('NFC', text).expandtabs(8)
    text = re.sub(r'.\x08', '', text)
    text = ''.join(c for c in text if c == '\n' or unicodedata.category(c)[0] != 'C')
    lines = [line.rstrip() for line in text.split('\n')]
    return '\n'.join(lines).strip('\n')


def wordnet_documents():
    for pos in ('noun', 'verb', 'adj', 'adv'):
        with open(f'{WORDNET}/data.{pos}', encoding='utf-8') as f:
            for line in f:
                if line.startswith('  '):  # the license header
                    continue
                fields, _, gloss = line.partition(' | ')
                parts = fields.split()
                count = int(parts[3], 16)
                lemmas = [re.sub(r'\(.*\)$', '', parts[4 + 2 * i]).replace('_', ' ') for i in range(count)]
                gloss = gloss.strip()
                if gloss:
                    yield f'{", ".join(lemmas)}: {gloss}'


def fortune_documents():
    for path in sorted(glob.glob(f'{FORTUNES}/**/*', recursive=True)):
        name = os.path.relpath(path, FORTUNES)
        if (os.path.isdir(path) or os.path.islink(path) or '.' in os.path.basename(name)
                or name.split(os.sep)[0] == 'off' or os.path.basename(name) in SKIP_FORTUNES):
            continue
        raw = open(path, 'rb').read()
        try:
            text = raw.decode('utf-8')
        except UnicodeDecodeError:
            text = raw.decode('latin-1')
        for doc in re.split(r'\n%\n', text):
            yield name, doc


def key(doc):
    """Documents equal up to case and whitespace are duplicates."""
    return ' '.join(doc.lower().split())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    seen, docs, stats = set(), [], {'wordnet': 0, 'fortunes': 0, 'duplicates': 0, 'fortune_files': []}
    sources = [('wordnet', d) for d in wordnet_documents()]
    files = set()
    for name, d in fortune_documents():
        files.add(name)
        sources.append(('fortunes', d))
    stats['fortune_files'] = sorted(files)
    for source, doc in sources:
        doc = clean(doc)
        if len(doc) < 8:
            continue
        k = key(doc)
        if k in seen:
            stats['duplicates'] += 1
            continue
        seen.add(k)
        stats[source] += 1
        docs.append(doc)
    # Held-out: a fixed share of documents chosen by a hash of their text, so the split
    # does not depend on file order or on the other documents.
    train, heldout = [], []
    for doc in docs:
        h = int(hashlib.sha256(key(doc).encode()).hexdigest()[:8], 16)
        (heldout if h % 100 < HELDOUT_PERCENT else train).append(doc)
    for name, part in (('train', train), ('heldout', heldout)):
        with open(f'{args.out}/{name}.jsonl', 'w', encoding='utf-8') as f:
            for doc in part:
                f.write(json.dumps(doc, ensure_ascii=False) + '\n')
    stats.update(train_documents=len(train), heldout_documents=len(heldout),
                 train_chars=sum(map(len, train)), heldout_chars=sum(map(len, heldout)))
    json.dump(stats, open(f'{args.out}/data-stats.json', 'w'), indent=1)
    print(json.dumps({k: v for k, v in stats.items() if k != 'fortune_files'}))


if __name__ == '__main__':
    main()
