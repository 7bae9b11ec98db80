import fc from 'fast-check';

/** The first and the last normalised time (years 0000–9999), in ms. */
export const MIN_TIME_MS = Date.parse('0000-01-01T00:00:00.000Z');
export const MAX_TIME_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** A location as a client may send it: the required keys, any of the optional ones, any time. */
export const sentLocation = fc.record(
  {
    longitude: fc.double({ min: -180, max: 180, noNaN: true }),
    latitude: fc.double({ min: -90, max: 90, noNaN: true }),
    altitude: fc.double({ noNaN: true, noDefaultInfinity: true }),
    speed: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
    heading: fc.double({ min: 0, max: 360, noNaN: true }),
    accuracy: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
    altitudeAccuracy: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
    time: fc.integer({ min: MIN_TIME_MS, max: MAX_TIME_MS }).map((ms) => new Date(ms).toISOString()),
  },
  { requiredKeys: ['longitude', 'latitude'] },
);
