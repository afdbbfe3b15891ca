export { uiPlugin, CONTENT_SECURITY_POLICY, type UiOptions } from './plugin.js';
