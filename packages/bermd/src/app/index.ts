export { buildApp, type AppOptions } from './app.js';
export { apiErrorOf, replyWithError } from './errors.js';
export { drainRejectedBody } from './body.js';
