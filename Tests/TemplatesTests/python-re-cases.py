#!/usr/bin/env python3
"""Writes Golden/python-re.json: what CPython's re answers for each pattern × text × filter that
PythonReTests replays through LiveBridge's own matcher (the filters as Home Assistant defines them:
regex_findall = re.findall, regex_replace = re.sub, regex_match = re.match, regex_search = re.search).
Patterns are the kinds people write in templates (numbers, words, times, look-around, backreferences,
lazy, possessive, flags); run it with the Python Home Assistant runs to refresh the file."""
import itertools, json, os, re, sys

PATTERNS = [r'\d+', r'(\w+)\s(\w+)', r'^a.*z$', r'(?i)hello', r'[^a-c]+', r'(a|ab)(c|bcd)(d*)', r'(?P<x>\d)(?P=x)', r'a{2,3}',
            r'a{,2}b', r'a{2,}?', r'(?=ab)a', r'(?!ab)a', r'(?<=a)b', r'(?<!a)b', r'\bfoo\b', r'\Bo', r'(a*)+', r'(a|)+b', r'x*',
            r'(?s).+', r'.+', r'(?m)^\w+$', r'\s+$', r'^\s*(\d+)\s*min', r'[\w.-]+@[\w-]+\.\w+', r'(\d{1,2}):(\d{2})', r'[A-Z][a-z]+',
            r'(?:ab)+', r'a|b|c', r'(a)|(b)', r'[\d,]+', r'\$\d+\.\d\d', r'[-+]?\d*\.?\d+', r'(?x) a b  c # x', r'\\', r'[\]]',
            r'[a\-z]', r'\x41\u00e9', r'(a)(?:b)(c)?', r'(?i)[a-c]+', r'(?i)É', r'é', r'\W+', r'\D', r'\S+', r'a++', r'(?>a+)b',
            r'.*?x', r'(\w)\1', r'(?a)\w+', r'\Aab', r'ab\Z', r'ab$', r'^$', r'()', r'(?:)', r'[^\n]*', r'a**', r'(?<=a+)b', r'a(?i)b',
            r'[z-a]', r'(', r'\q']
TEXTS = ['', 'a', 'ab', 'abc', 'aaab', 'hello Hello HELLO', 'foo bar foobar', 'abcd', 'x1 y22 z333', '12:30 and 7:05',
         'aa bb cc\n dd', 'Ünïcode éÉ ß 123', 'john.doe@example.com, x@y.z', '$12.50 -3.5 +7 .5', 'line1\nline2\n', 'a-b-c',
         'ababab', 'zzz', ' 45 min left', 'aXbXc', 'abab', 'xx']

def answer(pattern, text, function):
    try:
        if function == 'regex_findall':
            return [list(x) if isinstance(x, tuple) else x for x in re.findall(pattern, text)]
        if function == 'regex_replace':
            return re.sub(pattern, '<\\g<0>>', text)
        return bool((re.match if function == 'regex_match' else re.search)(pattern, text))
    except re.error:
        return None

cases = [[p, t, f, answer(p, t, f)] for p, t in itertools.product(PATTERNS, TEXTS)
         for f in ('regex_findall', 'regex_replace', 'regex_match', 'regex_search')]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'Golden', 'python-re.json')
with open(path, 'w') as out:
    out.write('{"source": %s, "cases": [\n' % json.dumps('CPython %s re' % sys.version.split()[0]))
    out.write(',\n'.join(json.dumps(case, ensure_ascii=False) for case in cases))
    out.write('\n]}\n')
