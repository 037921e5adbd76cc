"""Human-written dates and their ISO forms, and the tokenizer the translator reads them with.

Every example is drawn from a seeded random.Random: a day between 1900-01-01 and 2099-12-31,
one of the written forms below (only forms where the month is a word, so day and month can
never be swapped), and a case (as written, lower case or upper case). The target is the ISO
date, "2021-03-03".

The tokenizer is a byte-level BPE in the form of BART's tokenizer.json (<s> <pad> </s> <unk>
first, RobertaProcessing's "<s> ... </s>", <mask> last). Its merges are made from the words of
the data: a Lowercase normalizer folds case (as uncased BERT's does), then every word piece the
forms can write ("Ġmarch", "Ġthird", "rd") is merged into one token, and a digit after a space joins the space ("Ġ2"); no two digits ever merge. So a source
reads word by word and digit by digit, and the ISO target is one token per digit or hyphen:
cross-attention from an output digit to a source word is then one cell.
"""
import datetime
import random

import bpe

MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October',
          'November', 'December']
MONTH_ABBREVIATIONS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']
ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth',
            'eleventh', 'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth',
            'eighteenth', 'nineteenth', 'twentieth']
ORDINALS += ['twenty-' + o for o in ORDINALS[:9]] + ['thirtieth', 'thirty-first']
FIRST_DAY, LAST_DAY = datetime.date(1900, 1, 1).toordinal(), datetime.date(2099, 12, 31).toordinal()
SPECIAL = ['<s>', '<pad>', '</s>', '<unk>']
MASK = '<mask>'


def suffixed(day):
    """3 -> "3rd", 11 -> "11th", 22 -> "22nd"."""
    if 10 <= day % 100 <= 20:
        return f'{day}th'
    return f"{day}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


def written(date, rng):
    """One human way of writing date, and which field each character belongs to."""
    day, year = date.day, str(date.year)
    month = rng.choice([MONTHS[date.month - 1]] * 3 + [MONTH_ABBREVIATIONS[date.month - 1]]
                       + ([f'{MONTH_ABBREVIATIONS[date.month - 1]}.'] if date.month != 5 else []))
    weekday = rng.choice([WEEKDAYS[date.weekday()]] * 3 + [WEEKDAYS[date.weekday()][:3]])
    number = rng.choice([str(day), suffixed(day)] + ([f'{day:02d}'] if day < 10 else []))
    ordinal = rng.choice([suffixed(day), ORDINALS[day - 1], ORDINALS[day - 1].replace('-', ' ')])
    comma = rng.choice([',', ''])
    forms = [
        f'{number} {month} {year}',                     # 3 March 2021
        f'{month} {number}{comma} {year}',               # March 3rd 2021
        f'the {ordinal} of {month}{comma} {year}',       # the third of March, 2021
        f'{weekday}, {number} {month} {year}',           # Tuesday, 3 March 2021
        f'{weekday}, {month} {number}, {year}',          # Tuesday, March 3, 2021
        f'{year}, {month} the {ordinal}',                # 2021, March the 3rd
        f'{year} {month} {number}',                      # 2021 March 3
        f'{month} the {ordinal}{comma} {year}',          # March the third, 2021
        f'{ordinal} of {month} {year}',                  # 3rd of March 2021
    ]
    text = rng.choice(forms)
    if rng.random() < 0.2:
        text = 'on ' + text
    case = rng.random()
    return text.lower() if case < 0.25 else text.upper() if case < 0.4 else text


def iso(date):
    return date.isoformat()


def examples(seed, count, exclude=frozenset()):
    """count (source, target) pairs from seed, none of whose sources is in exclude."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        date = datetime.date.fromordinal(rng.randint(FIRST_DAY, LAST_DAY))
        source = written(date, rng)
        if source not in exclude:
            out.append((source, iso(date)))
    return out


# ---------------------------------------------------------------- the tokenizer
def vocabulary(merges):
    """BART's id order: <s> <pad> </s> <unk>, the 256 byte characters, the merges, <mask>."""
    vocab = {s: i for i, s in enumerate(SPECIAL)}
    for c in bpe.BYTE_CHARS.values():
        vocab[c] = len(vocab)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab[MASK] = len(vocab)
    return vocab


def word_merges(texts):
    """Merges that make every non-digit pre-token of texts one token and every digit after a
    space one token ("Ġ2"), learnt by merging the first two pieces of a word until it is one.
    Words are taken most frequent first (ties alphabetical), so the result is deterministic."""
    counts = {}
    for text in texts:
        for piece in bpe.pieces(text.lower()):
            counts[piece] = counts.get(piece, 0) + 1
    merges = [('Ġ', d) for d in '0123456789']
    words = sorted((p for p in counts if not any(c.isdigit() for c in p) and len(p) > 1), key=lambda p: (-counts[p], p))
    for word in words:
        while True:
            encoder = bpe.Encoder(merges)
            parts = [encoder.inverse[i] for i in encoder.bpe(word)]
            if len(parts) == 1:
                break
            merges.append((parts[0], parts[1]))
    return merges


class Tokenizer:
    """Encodes as the exported tokenizer.json does: lower case, <s> + BPE pieces + </s>."""

    def __init__(self, merges):
        self.merges = merges
        self.encoder = bpe.Encoder(merges)
        self.vocab = vocabulary(merges)
        bpe_vocab = self.encoder.vocab
        self.from_bpe = {i: self.vocab[s] for s, i in bpe_vocab.items() if s in self.vocab}
        self.tokens = {i: s for s, i in self.vocab.items()}

    def encode(self, text):
        return [0] + [self.from_bpe[i] for i in self.encoder.encode(text.lower())] + [2]

    def decode(self, ids):
        """The text of ids (lower case: the normalizer's case folding does not come back)."""
        pieces = ''.join(self.tokens[i] for i in ids if i >= len(SPECIAL) and self.tokens[i] != MASK)
        return bytes(self.encoder.byte_of[c] for c in pieces).decode('utf-8', errors='replace')

    def json(self):
        """tokenizer.json in the form of facebook/bart-base's."""
        added = [{'id': self.vocab[s], 'content': s, 'single_word': False, 'lstrip': s == MASK, 'rstrip': False,
                  'normalized': s == MASK, 'special': True} for s in SPECIAL + [MASK]]
        return {
            'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added,
            'normalizer': {'type': 'Lowercase'},
            'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
            'post_processor': {'type': 'RobertaProcessing', 'sep': ['</s>', 2], 'cls': ['<s>', 0],
                               'trim_offsets': True, 'add_prefix_space': False},
            'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
            'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                      'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False,
                      'vocab': self.vocab, 'merges': [f'{a} {b}' for a, b in self.merges]},
        }
