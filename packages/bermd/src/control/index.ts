export { MAX_EVENT_STREAMS } from './event-stream.js';
export { FIGURES_INTERVAL_MS, type FiguresSource } from './figures.js';
export { controlPlugin, type ControlOptions } from './plugin.js';
