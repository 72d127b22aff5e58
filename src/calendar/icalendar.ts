/**
 * The small part of RFC 5545 the calendar feed writes: TEXT escaping (3.3.11), content lines folded at 75
 * octets without splitting a UTF-8 character (3.1), CRLF line ends.
 */

const CRLF = '\r\n';
const MAX_LINE_OCTETS = 75;
/** What a TEXT value escapes: backslash, semicolon, comma, and line breaks (CRLF as one). */
const TEXT_SPECIAL = /[\\;,]|\r\n|\r|\n/g;
/**
 * Control characters TEXT does not allow (all but the tab and the line breaks, which are escaped), and the C1
 * ones, which no title means either. One in a title made strict clients refuse the whole calendar.
 */
const CONTROL_CHARACTERS = /[\0-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

/** A TEXT value: control characters dropped, backslash, semicolon and comma escaped, any line break as `\n`. */
export function escapeText(value: string): string {
  return value
    .replace(CONTROL_CHARACTERS, '')
    .replace(TEXT_SPECIAL, (special) =>
      special === '\\' || special === ';' || special === ',' ? `\\${special}` : '\\n',
    );
}

/**
 * One content line, folded: no line longer than 75 octets; each continuation starts with a space, which
 * counts towards its 75. Whole code points only, so a multi-byte character never straddles a fold.
 */
export function foldLine(line: string): string {
  // Most lines are short: no walk through their characters. A UTF-16 code unit is at most 3 UTF-8 octets.
  if (line.length * 3 <= MAX_LINE_OCTETS || Buffer.byteLength(line, 'utf8') <= MAX_LINE_OCTETS) return line;
  const lines: string[] = [];
  let current = '';
  let octets = 0;
  for (const character of line) {
    const size = utf8Octets(character.codePointAt(0)!);
    if (octets + size > MAX_LINE_OCTETS) {
      lines.push(current);
      current = ' ';
      octets = 1;
    }
    current += character;
    octets += size;
  }
  lines.push(current);
  return lines.join(CRLF);
}

/** The UTF-8 length of a code point. */
const utf8Octets = (codePoint: number): number =>
  codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;

/** A property as `[name, value]`; the value is written as given (escape TEXT values with `escapeText`). */
export type Property = readonly [name: string, value: string];

/** A component (`VCALENDAR`, `VEVENT`) with its properties and sub-components. */
export interface Component {
  name: string;
  properties: Property[];
  components?: Component[];
}

function lines(component: Component): string[] {
  return [
    `BEGIN:${component.name}`,
    ...component.properties.map(([name, value]) => foldLine(`${name}:${value}`)),
    ...(component.components ?? []).flatMap(lines),
    `END:${component.name}`,
  ];
}

/** The iCalendar object: every line CRLF-terminated. */
export function serialize(calendar: Component): string {
  return lines(calendar).join(CRLF) + CRLF;
}
