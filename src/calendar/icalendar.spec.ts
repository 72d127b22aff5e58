import { escapeText, foldLine, serialize } from './icalendar';

const octets = (line: string) => Buffer.byteLength(line, 'utf8');

describe('iCalendar text', () => {
  it('escapes backslash, semicolon, comma and line breaks', () => {
    expect(escapeText('a\\b;c,d\ne\r\nf\rg')).toBe('a\\\\b\\;c\\,d\\ne\\nf\\ng');
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
    for (const part of folded.slice(1)) expect(part.startsWith(' ')).toBe(true);
    // Unfolding (drop CRLF + one space) gives the line back, so no character was cut.
    expect(folded.map((part, index) => (index === 0 ? part : part.slice(1))).join('')).toBe(line);
    expect(folded.some((part) => octets(part) < 73)).toBe(true);
  });

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
