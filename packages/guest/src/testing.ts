/**
 * `@berm/guest/testing`: a built image run in a test by bermd's own runtime, with its limits, validators
 * and host calls, as a deploy would admit it and `/mcp` would call it. It is bermd's runtime entry's
 * helper, named here so that a harness's one dependency, this package, brings it.
 */
export { load, CallRefused, type CallAnswer, type ImageSource, type LoadOptions, type LoadedHarness } from 'bermd/runtime';
