/**
 * The control API's route schemas, from the wire contract (`@berm/protocol`): a harness name in the
 * path, a deploy's query. They are compiled with type coercion to arrays (a single `grant` is a list of
 * one) and never remove what they do not name: an unknown parameter is refused, so a misspelt grant
 * never deploys with everything granted (fastify's own compiler would drop it silently).
 */
import type { FastifySchemaCompiler } from 'fastify';
import Ajv2020Module from 'ajv';
import { DEPLOY_QUERY_SCHEMA, HARNESS_NAME, repeatedParameterMessage, unknownParameterMessage, type ParsedQuery } from '@berm/protocol';
import { BermdError } from '../errors.js';

type AjvClass = typeof Ajv2020Module.default;
// ajv is CommonJS with a `default` member; under NodeNext the default import is the whole module object.
const Ajv: AjvClass = (Ajv2020Module as unknown as { default?: AjvClass }).default ?? (Ajv2020Module as unknown as AjvClass);

const ajv = new Ajv({ coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema }) =>
  ajv.compile(schema) as ReturnType<FastifySchemaCompiler<object>>;

const NAME_PARAMS = {
  type: 'object',
  properties: { name: { type: 'string', pattern: HARNESS_NAME.source } },
  required: ['name'],
} as const;

export const HARNESS_SCHEMA = { params: NAME_PARAMS };
export const DEPLOY_SCHEMA = { params: NAME_PARAMS, querystring: DEPLOY_QUERY_SCHEMA };

interface Issue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** The 400 `bad-request` a query the schema refused gets, saying which parameter and why. */
export function queryError(issues: readonly Issue[], query: ParsedQuery): BermdError {
  const issue = issues[0];
  const extra = issue?.params.additionalProperty;
  if (typeof extra === 'string') return new BermdError('bad-request', unknownParameterMessage(extra));
  const key = issue?.instancePath.replace(/^\//, '') ?? '';
  const value = query[key];
  if (Array.isArray(value)) return new BermdError('bad-request', repeatedParameterMessage(key, value.length));
  return new BermdError('bad-request', `query parameter ${key} is not valid here`);
}
