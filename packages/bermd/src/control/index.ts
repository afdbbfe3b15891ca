export { controlPlugin, type ControlOptions } from './plugin.js';
