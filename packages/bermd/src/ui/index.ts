export { contentSecurityPolicy, uiPlugin, type PageConfig, type UiOptions } from './plugin.js';
