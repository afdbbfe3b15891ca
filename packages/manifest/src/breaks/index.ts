export { BREAK_CODES, isBreakCode, type Break, type BreakCode } from './codes.js';
export { breaks } from './tools.js';
