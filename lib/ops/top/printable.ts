// Text that reaches an operator's terminal from elsewhere (a key from a request, a region's name, kind or detail, a
// switch's target in shared memory, another user's output): one place escapes it (docs/guide/trust.md), so that
// nothing printed can set the window title, move the cursor, clear the screen, or reorder or hide text.

// C0 and C1 controls and DEL; line and paragraph separators; format characters (bidirectional overrides, marks and
// isolates, zero-width spaces and joiners, the soft hyphen, tags); the other characters a terminal does not show
// (variation selectors, fillers); lone surrogates.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu
// The same but the line feed, for text of several lines.
const UNSAFE_BUT_NEWLINE = /(?!\n)[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu

/** Each UTF-16 unit of `c` as `\uXXXX` (valid in JSON and in JavaScript strings alike). */
function escapeUnits(c: string): string {
  let escaped = ''
  for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`
  return escaped
}

/** `text` with every character that would act on the terminal or hide in it written as an escape (ESC: `\u001b`). */
export function printable(text: string): string {
  return String(text).replace(UNSAFE, escapeUnits)
}

/** As printable, keeping line breaks: a whole message or another program's output. */
export function printableLines(text: string): string {
  return String(text).replace(UNSAFE_BUT_NEWLINE, escapeUnits)
}

/**
 * `value` as JSON for a terminal: JSON.stringify escapes C0 controls only, so the others (C1, bidirectional and
 * zero-width characters) become `\uXXXX` escapes too; the JSON parses to the same value.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE, escapeUnits)
}

/**
 * A time (Date.now() ms) read from shared memory, as ISO 8601 to the second; `unknown (<value>)` when it is no time
 * (NaN, or beyond the dates JavaScript holds): a number any process of the user can write must never throw.
 */
export function printableTime(ms: number): string {
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? `unknown (${ms})` : date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}
