export { Telemetry, otlpTarget, telemetryDisabled, type TelemetryOptions } from './telemetry.js';
export { BermdMetrics, type DeployAction, type GaugeSources } from './metrics.js';
export { outcomeOf, type CallOutcomeLabel } from './outcomes.js';
export { methodLabel } from './mcp-methods.js';
export { telemetryRoutes, type TelemetryRoutesOptions } from './routes.js';
export { Tracing, CallSpans, UnsampledCall, HostSpan, recordedUrl, type McpRequestTrace, type ControlRequestTrace } from './tracing.js';
export { traceConfig, TraceConfigError, resourceAttributes, type TraceConfig, type TraceFlags } from './trace-config.js';
export { LiveFigures, type Clock } from './live-figures.js';
