import { escapeText, foldLine, serialize } from './icalendar';

const octets = (line: string) => Buffer.byteLength(line, 'utf8');
/**
 * Whether `text` is whole UTF-16: a surrogate pair cut in two turns into U+FFFD on its way through UTF-8.
 * Unfolding would join the halves again, and a lone surrogate still counts 3 octets: neither sees the cut.
 */
const isWholeText = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text;

describe('iCalendar text', () => {
  it('escapes backslash, semicolon, comma and line breaks', () => {
    expect(escapeText('a\\b;c,d\ne\r\nf\rg')).toBe('a\\\\b\\;c\\,d\\ne\\nf\\ng');
  });

  it('drops control characters TEXT does not allow, keeping tabs and line breaks', () => {
    expect(escapeText('a\u0000b\u0007c\u001bd\u007fe\u0085f\tg\nh\u000bi\u000cj')).toBe('abcdef\tg\\nhij');
  });

  it('leaves a line of 75 octets whole and folds one of 76', () => {
    expect(foldLine('x'.repeat(75))).toBe('x'.repeat(75));
    expect(foldLine('x'.repeat(76))).toBe(`${'x'.repeat(75)}\r\n x`);
  });

  it('folds UTF-8 text at 75 octets without splitting a character', () => {
    // 3-octet characters and a 4-octet one (a surrogate pair in JavaScript).
    const line = `SUMMARY:${'漢字'.repeat(40)}😀${'é'.repeat(30)}`;
    const folded = foldLine(line).split('\r\n');
    for (const part of folded) expect(octets(part)).toBeLessThanOrEqual(75);
    for (const part of folded) expect(isWholeText(part)).toBe(true);
    for (const part of folded.slice(1)) expect(part.startsWith(' ')).toBe(true);
    // Unfolding (drop CRLF + one space) gives the line back, so no character was cut.
    expect(folded.map((part, index) => (index === 0 ? part : part.slice(1))).join('')).toBe(line);
    expect(folded.some((part) => octets(part) < 73)).toBe(true);
  });

  it.each([70, 71, 72, 73, 74, 75])(
    'never cuts a surrogate pair: a 4-octet character after %i octets',
    (before) => {
      const line = `${'x'.repeat(before)}${'😀'.repeat(40)}`;
      const folded = foldLine(line).split('\r\n');
      expect(folded.length).toBeGreaterThan(1);
      for (const part of folded) {
        expect(isWholeText(part)).toBe(true);
        expect(octets(part)).toBeLessThanOrEqual(75);
      }
      expect(folded[0]).toBe(`${'x'.repeat(before)}${'😀'.repeat(Math.floor((75 - before) / 4))}`);
    },
  );

  it('writes components with CRLF after every line', () => {
    const text = serialize({
      name: 'VCALENDAR',
      properties: [['VERSION', '2.0']],
      components: [{ name: 'VEVENT', properties: [['UID', 'a@b']] }],
    });
    expect(text).toBe(
      'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a@b\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
    );
  });
});
