/**
 * The control API's route schemas, from the wire contract (`@berm/protocol`): a harness name in the
 * path, a deploy's query. They are compiled with type coercion to arrays (a single `grant` is a list of
 * one) and never remove what they do not name: an unknown parameter is refused, so a misspelt grant
 * never deploys with everything granted (fastify's own compiler would drop it silently).
 */
import type { FastifySchemaCompiler } from 'fastify';
import Ajv2020Module from 'ajv';
import {
  DEPLOY_QUERY_SCHEMA,
  HARNESS_NAME,
  repeatedParameterMessage,
  type RollbackRequest,
  settingByFlag,
  unknownParameterMessage,
  type ParsedQuery,
} from '@berm/protocol';
import { MAX_HISTORY_PAGE, MAX_RECEIPTS_PAGE, RECEIPTS_PAGE } from '../deploy/index.js';
import { BermdError } from '../errors.js';

type AjvClass = typeof Ajv2020Module.default;
// ajv is CommonJS with a `default` member; under NodeNext the default import is the whole module object.
const Ajv: AjvClass = (Ajv2020Module as unknown as { default?: AjvClass }).default ?? (Ajv2020Module as unknown as AjvClass);

/** The most images back a rollback can ask for: what `--keep-images` can keep, and the undeploy's. */
const MAX_KEEP_IMAGES = settingByFlag('keep-images')!.max!;

const ajv = new Ajv({ coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema }) =>
  ajv.compile(schema) as ReturnType<FastifySchemaCompiler<object>>;

const NAME_PARAMS = {
  type: 'object',
  properties: { name: { type: 'string', pattern: HARNESS_NAME.source } },
  required: ['name'],
} as const;

export const HARNESS_SCHEMA = { params: NAME_PARAMS };

/** An image's digest as the store names it: the form a deploy's answer and history give. */
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

export const IMAGE_SCHEMA = {
  params: {
    type: 'object',
    properties: { ...NAME_PARAMS.properties, digest: { type: 'string', pattern: DIGEST.source } },
    required: ['name', 'digest'],
  },
} as const;

export const HISTORY_SCHEMA = {
  params: NAME_PARAMS,
  querystring: {
    type: 'object',
    // A description is what a refusal of the parameter says it takes (see queryError).
    properties: {
      cursor: { type: 'string', maxLength: 64, description: "the next_cursor of the history's previous page, as given" },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_HISTORY_PAGE,
        description: `a whole number of entries from 1 to ${MAX_HISTORY_PAGE}`,
      },
    },
    additionalProperties: false,
  },
} as const;

export const RECEIPTS_SCHEMA = {
  params: NAME_PARAMS,
  querystring: {
    type: 'object',
    properties: {
      key: { type: 'string', minLength: 1, description: 'the idempotency key of the receipts to show, as the call sent it' },
      bodies: { type: 'boolean', default: false, description: 'true to show each receipt with its recorded answer, else false' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_RECEIPTS_PAGE,
        default: RECEIPTS_PAGE,
        description: `a whole number of receipts from 1 to ${MAX_RECEIPTS_PAGE}`,
      },
    },
    additionalProperties: false,
  },
} as const;

export const ROLLBACK_SCHEMA = {
  params: NAME_PARAMS,
  querystring: {
    type: 'object',
    properties: { force: { type: 'string' }, 'dry-run': { type: 'string' } },
    additionalProperties: false,
  },
} as const;

/** A rollback's body: a digest, or a number of images back; not both. */
const ROLLBACK_BODY = {
  type: 'object',
  properties: { to: { type: 'string', pattern: DIGEST.source }, steps: { type: 'integer', minimum: 1, maximum: MAX_KEEP_IMAGES + 1 } },
  additionalProperties: false,
  maxProperties: 1,
} as const;
// A body is JSON with its own types: the routes' compiler would coerce `"2"` to 2 and fill defaults in.
const strictAjv = new Ajv({ allErrors: false, strict: true });
const validRollback = strictAjv.compile<RollbackRequest>(ROLLBACK_BODY);

/** What a rollback's refusal says to send. */
const SEND = 'send {"to": "sha256:..."}, {"steps": N}, or nothing for one step';

/** A rollback's body read: empty means `{}`; otherwise a JSON object of `to` or `steps`. Throws 400 `bad-request` saying what is wrong. */
export function readRollbackBody(body: Buffer): RollbackRequest {
  if (body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BermdError('bad-request', `the rollback body is not JSON: ${SEND}`);
  }
  if (validRollback(value)) return value;
  const issue = validRollback.errors?.[0];
  const member = issue?.instancePath.slice(1) ?? '';
  // Said in the body's terms, not the schema's: what was sent, and what to send instead.
  const why =
    member === 'to'
      ? "the rollback body's to is not a digest (sha256: and 64 hex digits, as berm history shows)"
      : member === 'steps'
        ? `the rollback body's steps is not a whole number from 1 to ${MAX_KEEP_IMAGES + 1}: how many images back, 1 being the one served before`
        : issue?.keyword === 'maxProperties'
          ? 'the rollback body gives both to and steps; give one'
          : issue?.keyword === 'additionalProperties'
            ? `the rollback body has an unknown member ${String(issue.params.additionalProperty)}; it takes to or steps`
            : `the rollback body is not a JSON object: ${SEND}`;
  throw new BermdError('bad-request', why);
}
export const DEPLOY_SCHEMA = { params: NAME_PARAMS, querystring: DEPLOY_QUERY_SCHEMA };

interface Issue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** A route as a refusal of its query names it: its method, path and query schema. */
export interface QueryRoute {
  method: string;
  url?: string;
  querystring?: { properties?: Record<string, { description?: string }> };
}

/** The 400 `bad-request` a query the schema refused gets, saying which parameter and why, and what the route takes. */
export function queryError(issues: readonly Issue[], query: ParsedQuery, route: QueryRoute): BermdError {
  const issue = issues[0];
  const properties = route.querystring?.properties ?? {};
  const extra = issue?.params.additionalProperty;
  if (typeof extra === 'string') {
    // A deploy's words are the protocol's, shared with the client that encodes its query.
    if (route.querystring === DEPLOY_QUERY_SCHEMA) return new BermdError('bad-request', unknownParameterMessage(extra));
    const path = (route.url ?? '').replace(/:(\w+)/g, '{$1}');
    const takes = Object.keys(properties);
    return new BermdError(
      'bad-request',
      `unknown query parameter ${extra}; ${route.method} ${path} takes ${takes.length === 0 ? 'none' : takes.join(', ')}`,
    );
  }
  const key = issue?.instancePath.replace(/^\//, '') ?? '';
  const value = query[key];
  if (Array.isArray(value)) return new BermdError('bad-request', repeatedParameterMessage(key, value.length));
  const takes = properties[key]?.description;
  return new BermdError(
    'bad-request',
    takes === undefined ? `query parameter ${key} is not valid here` : `query parameter ${key} takes ${takes}`,
  );
}
