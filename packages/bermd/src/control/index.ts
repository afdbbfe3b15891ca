export { MAX_EVENT_STREAMS } from './events.js';
export { controlPlugin, type ControlOptions } from './plugin.js';
