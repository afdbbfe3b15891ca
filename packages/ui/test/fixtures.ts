// The harnesses the page is tested with, built from readable manifests by the shared WAT builders.
import type { ManifestData } from '@berm/manifest';
import { harnessImage } from '../../../test/helpers/harness.js';
import { sampleManifest } from '../../../test/helpers/wat.js';

export const OUTLOOK_ERROR = 'no outlook for that city';

const FORECAST_ARGUMENTS = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'Where to forecast.', minLength: 1 },
    days: { type: 'integer', minimum: 1, maximum: 14, description: 'How many days ahead.' },
    units: { type: 'string', enum: ['metric', 'imperial'] },
    hourly: { type: 'boolean', description: 'Hour by hour rather than daily.' },
    stations: { type: 'array', items: { type: 'string' }, description: 'Stations to prefer.' },
    near: {
      type: 'object',
      title: 'Point',
      properties: { lat: { type: 'number', minimum: -90, maximum: 90 }, lon: { type: 'number', minimum: -180, maximum: 180 } },
      required: ['lat', 'lon'],
    },
    tags: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'One tag or several.' },
  },
  required: ['city', 'days'],
};

/**
 * `weather`: `forecast` answers its arguments (a rich schema: strings, ranged numbers, an enum, a
 * boolean, an array, a nested object, and a union only JSON can say), `outlook` fails with
 * OUTLOOK_ERROR. Version 2 makes `units` required, which breaks a caller of `forecast`.
 */
export function weatherManifest(version: 1 | 2 = 1): ManifestData {
  return sampleManifest({
    version: version === 1 ? '1.4.0' : '2.0.0',
    description: 'Forecasts from the stations of the national weather service.',
    homepage: 'https://weather.example.com/',
    usage: [
      '## Choosing a tool',
      '',
      '- **forecast** for the days ahead; give `days` from 1 to 14.',
      '- **outlook** for the season; it fails for cities without a station.',
      '',
      'Units are metric unless you say `imperial`. See [the service](https://weather.example.com/docs).',
    ].join('\n'),
    readme: '# weather\n\nA berm program over the weather service.\n\n```sh\ncrab deploy weather weather.wasm\n```\n',
    tools: [
      {
        name: 'forecast',
        description: 'Forecasts the weather for a city.',
        arguments: version === 1 ? FORECAST_ARGUMENTS : { ...FORECAST_ARGUMENTS, required: ['city', 'days', 'units'] },
        query: true,
      },
      {
        name: 'outlook',
        description: 'The outlook for the season.',
        arguments: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        deprecated: true,
      },
    ],
    events: [
      {
        name: 'alert',
        description: 'A weather alert was issued.',
        fields: { type: 'object', properties: { level: { type: 'string' } }, required: ['level'] },
      },
    ],
    deps: { programs: ['geocoder'], syscalls: {}, secrets: [] },
  });
}

export function weatherImage(version: 1 | 2 = 1): Promise<Uint8Array> {
  return harnessImage(weatherManifest(version), { tools: { outlook: { kind: 'const', envelope: { error: OUTLOOK_ERROR } } } });
}

/** A page-level flag any of these payloads would set if it ever ran. */
export const PWNED = '__pwned';

const IMG = `<img src=x onerror="window.${PWNED}='img'">`;
const SCRIPT = `<script>window.${PWNED}='script'</script>`;
const LINK = `[click me](javascript:window.${PWNED}='link')`;
const REMOTE_IMAGE = '![tracker](http://192.0.2.1/pixel.png)';

/** A manifest whose every text a page shows carries HTML, script and `javascript:` links. */
export function hostileManifest(): ManifestData {
  return sampleManifest({
    description: `Looks harmless ${IMG} ${SCRIPT}`,
    homepage: `javascript:window.${PWNED}='homepage'`,
    repository: `javascript:window.${PWNED}='repository'`,
    usage: `# Usage ${IMG}\n\n${SCRIPT}\n\n${LINK}\n\n${REMOTE_IMAGE}\n\n<a href="javascript:window.${PWNED}='a'">raw link</a>`,
    readme: `${IMG}\n\n<iframe src="javascript:window.${PWNED}='iframe'"></iframe>`,
    tools: [
      {
        name: 'echo',
        description: `Echoes ${IMG}`,
        arguments: {
          type: 'object',
          properties: { [IMG]: { type: 'string', description: SCRIPT }, choice: { enum: [IMG, 'plain'] } },
        },
      },
    ],
    events: [{ name: 'seen', description: IMG, fields: { type: 'object', properties: { [SCRIPT]: { type: 'string' } } } }],
  });
}

export { IMG as HOSTILE_IMG, SCRIPT as HOSTILE_SCRIPT };
