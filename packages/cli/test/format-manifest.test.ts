import { describe, expect, it } from 'vitest';
import { renderManifest } from '@berm/cli';
import { sampleManifest } from '../../../test/helpers/wat.js';
import { FORECAST_TOOL, tagged } from './helpers/cli.js';

const forecast = sampleManifest({
  version: '0.3.1',
  description: 'Weather for a city.',
  homepage: 'https://example.com',
  usage: 'Ask forecast for a city.\nDays default to 3.',
  readme: '# Weather\n\nLong text.\n',
  tools: [FORECAST_TOOL, { name: 'reset', description: '', arguments: { type: 'object' }, deprecated: true }],
  events: [
    {
      name: 'alert',
      description: 'Severe weather.',
      fields: {
        type: 'object',
        properties: { level: { enum: ['low', 'high'] }, message: { type: 'string' } },
        required: ['level', 'message'],
      },
    },
  ],
  deps: {
    programs: ['geo', 'units'],
    syscalls: { 'berm.http.fetch': ['api.example.com', 'backup.example.com'], 'berm.get': [] },
    secrets: ['example'],
  },
});

describe('renderManifest', () => {
  it('prints name and version, description, usage, one line per tool and event, and deps', () => {
    const text = renderManifest(forecast, { name: 'weather.wasm' });
    expect(text.split('\n')).toEqual([
      'weather.wasm 0.3.1',
      'Weather for a city.',
      'homepage  https://example.com',
      'readme    3 lines (--json has it)',
      '',
      'Usage',
      '  Ask forecast for a city.',
      '  Days default to 3.',
      '',
      'Tools (2)',
      '  forecast(city: string, days?: integer ≥0) -> Forecast{high: number, low: number}  query',
      '      Forecasts the weather.',
      '  reset()  deprecated  effect undeclared',
      '',
      'Events (1)',
      '  alert{level: "low"|"high", message: string}',
      '      Severe weather.',
      '',
      'Deps',
      '  programs  geo, units',
      '  syscalls  berm.http.fetch -> api.example.com, backup.example.com',
      '            berm.get',
      '  secrets   example',
    ]);
  });

  it('says when there are no tools, events or deps', () => {
    const text = renderManifest(sampleManifest({ tools: [], usage: '', description: '' }), { name: 'empty.wasm' });
    expect(text).toContain('Tools: none');
    expect(text).toContain('Events: none');
    expect(text.endsWith('Deps\n  none')).toBe(true);
    expect(text).not.toContain('Usage');
  });

  it('warns on a line of its own when abi_version is not 1', () => {
    const lines = renderManifest(sampleManifest({ abi_version: 2 }), { name: 'future.wasm' }).split('\n');
    expect(lines[1]).toBe('warning: abi_version is 2, not 1: deploy will refuse this image');
    expect(renderManifest(sampleManifest(), { name: 'now.wasm' })).not.toContain('warning');
  });

  it('marks declared programs that are not deployed, only when the deployed set is known', () => {
    const marked = renderManifest(forecast, { name: 'weather.wasm', deployed: new Set(['geo']) });
    expect(marked).toContain('  programs  geo, units (not deployed)');
    expect(renderManifest(forecast, { name: 'weather.wasm' })).not.toContain('not deployed');
  });

  it('styles through the paint it is given', () => {
    const text = renderManifest(forecast, { name: 'weather.wasm', paint: tagged });
    expect(text).toContain('<b>weather.wasm</b> 0.3.1');
    expect(text).toContain('<b>forecast</b>(city: string');
    expect(text).toContain('<green>query</green>');
    expect(text).toContain('<yellow>deprecated</yellow>');
    const warned = renderManifest(sampleManifest({ abi_version: 7 }), { name: 'x', paint: tagged });
    expect(warned).toContain('<yellow>warning: abi_version is 7');
  });
});
