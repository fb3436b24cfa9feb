import fc from 'fast-check';

/** Runs of decimal digits. */
export const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/**
 * Arbitrary decimal texts for the decimal parsers' property tests: a sign or none, leading zeros, a point anywhere or
 * none, an exponent or none, from no digits at all to well past 19 significant ones.
 */
export const decimalStrings = fc
  .tuple(fc.constantFrom('', '-', '+'), digits(0, 24), digits(0, 24), fc.boolean(), fc.option(fc.integer({ min: -130, max: 130 })))
  .map(([sign, a, b, point, exp]) => `${sign}${a}${point ? '.' : ''}${b}${exp === null ? '' : `e${exp}`}`);
