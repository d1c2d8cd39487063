/** Each unit and how many of it make the next one up. */
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 7],
  ['week', 4.345],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/**
 * "3 minutes ago", "yesterday", in the format's locale: the largest unit in which the distance
 * is at least one (under a minute is "now" with `numeric: 'auto'`).
 */
export function relativeTime(then: number, now: number, format: Intl.RelativeTimeFormat): string {
  let value = (then - now) / 1000;
  for (const [unit, size] of UNITS) {
    const rounded = Math.round(value);
    if (Math.abs(rounded) < size)
      return format.format(unit === 'second' && Math.abs(rounded) < 45 ? 0 : rounded, unit);
    value /= size;
  }
  return format.format(Math.round(value), 'year');
}
