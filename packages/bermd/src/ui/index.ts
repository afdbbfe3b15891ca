export { uiPlugin } from './plugin.js';
