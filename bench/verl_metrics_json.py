"""The baseline of bench/metrics.bench.ts: a plain Python regex loop over a verl console log that writes what
`medrl metrics FILE --json` writes (one {"step":N,"metrics":{...}} per line, numbers as JavaScript prints them, NaN and
infinities as strings). Steps are written as they are read: the benchmark logs log each step once, in order."""
import json
import math
import re
import sys

LINE_RE = re.compile(r'step:(\d+) - (.*)')
KV_RE = re.compile(r'([^ :][^:]*?):(?:np\.[a-z0-9]+\(([^)]*)\)|([^ ]+))(?: - |$)')


def js_number(v):
    """A float as JavaScript's Number#toString prints it (JSON.stringify's numbers)."""
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    if v == int(v) and abs(v) < 1e21:
        return str(int(v))
    r = repr(v)
    if 'e' not in r:
        return r
    # Python writes an exponent below 1e-4 and from 1e16; JavaScript below 1e-6 and from 1e21.
    mant, exp = r.split('e')
    sign = '-' if mant.startswith('-') else ''
    mant = mant.lstrip('-')
    digits = mant.replace('.', '')
    point = (mant.index('.') if '.' in mant else len(mant)) + int(exp)
    if -6 < point <= 0:
        return sign + '0.' + '0' * -point + digits
    if 0 < point <= 21:
        return sign + digits[:point] + '.' + digits[point:] if point < len(digits) else sign + digits + '0' * (point - len(digits))
    e = point - 1
    return sign + digits[0] + ('.' + digits[1:] if len(digits) > 1 else '') + 'e' + ('+' if e > 0 else '-') + str(abs(e))


def main():
    out = sys.stdout
    with open(sys.argv[1], encoding='utf-8', errors='replace') as f:
        for line in f:
            if 'step:' not in line:
                continue
            m = LINE_RE.search(line.rstrip('\n'))
            if not m:
                continue
            parts = []
            for k, inner, raw in KV_RE.findall(m.group(2)):
                try:
                    v = float(inner or raw)
                except ValueError:
                    continue
                parts.append(json.dumps(k, ensure_ascii=False) + ':' + js_number(v))
            out.write('{"step":' + m.group(1) + ',"metrics":{' + ','.join(parts) + '}}\n')


main()
