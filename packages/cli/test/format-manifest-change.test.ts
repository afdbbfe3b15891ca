// What crab dev says a build changes in the served manifest: tools added, removed and changed (each
// with its breaks, compatible when none), a change of code only, and a first deploy.
import { describe, expect, it } from 'vitest';
import { manifestChange, renderManifestChange } from '@berm/format/manifest-change';
import type { ManifestData, ToolSpec } from '@berm/manifest';
import { sampleManifest } from '../../../test/helpers/wat.js';
import { FORECAST_TOOL, tagged } from './helpers/cli.js';

const RESET: ToolSpec = { name: 'reset', description: 'Resets.', arguments: { type: 'object', properties: {} } };

/** A manifest of `tools` (and `events`), the rest as the shared sample has it. */
function manifest(tools: ToolSpec[], events: ManifestData['events'] = []): ManifestData {
  return sampleManifest({ tools, events });
}

describe('manifestChange and renderManifestChange', () => {
  it('names the tools of a first deploy', () => {
    const change = manifestChange(undefined, manifest([FORECAST_TOOL, RESET]));
    expect(renderManifestChange(change, tagged)).toBe('<dim>tools:</dim> new: forecast, reset');
  });

  it('says so when the tools are as served, whatever the order of their keys', () => {
    const reordered = Object.fromEntries(Object.entries(FORECAST_TOOL).reverse()) as unknown as ToolSpec;
    const change = manifestChange(manifest([FORECAST_TOOL]), manifest([reordered]));
    expect(change).toMatchObject({ added: [], removed: [], changed: [] });
    expect(renderManifestChange(change, tagged)).toBe('<dim>tools:</dim> no change');
  });

  it('lists tools added, removed, and changed with their breaks or as compatible', () => {
    const widened: ToolSpec = {
      ...FORECAST_TOOL,
      returns: {
        ...(FORECAST_TOOL.returns as object),
        properties: { high: { type: 'number' }, low: { type: 'number' }, wind: { type: 'number' } },
      },
    };
    const stricter: ToolSpec = { ...FORECAST_TOOL, arguments: { ...(FORECAST_TOOL.arguments as object), required: ['city', 'days'] } };
    const added: ToolSpec = { ...RESET, name: 'alerts' };
    const compatible = manifestChange(manifest([FORECAST_TOOL, RESET]), manifest([widened, added]));
    expect(renderManifestChange(compatible, tagged)).toBe(
      '<dim>tools:</dim> <green>added</green> alerts; <red>removed</red> reset; <yellow>changed</yellow> forecast (compatible)',
    );
    const breaking = manifestChange(manifest([FORECAST_TOOL]), manifest([stricter]));
    const lines = renderManifestChange(breaking, tagged).split('\n');
    expect(lines[0]).toBe('<dim>tools:</dim> <yellow>changed</yellow> forecast (<yellow>1 break</yellow>)');
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^ {2}<dim>argument-newly-required<\/dim> argument `days` of tool `forecast`/)]);
  });

  it('makes what the project named printable', () => {
    const change = manifestChange(undefined, manifest([{ ...RESET, name: 'bad\u001b[2Jname' }]));
    expect(renderManifestChange(change, tagged)).not.toContain('\u001b');
  });
});
