// JSON schemas shared by the routes. Every body, query and params schema rejects unknown fields
// (additionalProperties: false; app.ts turns off Ajv's removeAdditional and type coercion, so nothing is
// silently dropped or converted). A route's request and reply types are read from these schemas by the
// json-schema-to-ts type provider (TypedRoutes), so the schemas are written `as const` and no route spells its
// types again.
import type {
  FastifyPluginAsyncJsonSchemaToTs,
  JsonSchemaToTsProvider,
} from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyPluginOptions } from 'fastify';

/** A plugin of routes whose body, query, params and answers are typed from their JSON schemas. */
export type TypedRoutes<Options extends FastifyPluginOptions> = FastifyPluginAsyncJsonSchemaToTs<{ Options: Options }>;

/**
 * The answer a response schema describes, read as the routes' type provider reads it: the type a route returns
 * for that status, and what a client (or a test) decodes from the body. Routes export their answers' schemas
 * and these types, so no caller spells them again.
 */
export type Answer<Schema> = (JsonSchemaToTsProvider & { schema: Schema })['serializer'];

/**
 * An answer already encoded (JSON text, a file's bytes) where the route's schema describes what it decodes to:
 * Fastify sends a string or Buffer as it is, never through the schema's serializer, so the answer's type is
 * the schema's while its value is the encoding.
 */
export function encoded<Answer>(body: string | Buffer): Answer {
  return body as unknown as Answer;
}

export const HASH_PATTERN = '^[0-9a-fA-F]{64}$';
export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
/** One line of text: no control characters at all. */
export const SINGLE_LINE = '^[^\\u0000-\\u001f\\u007f]*$';
/** Free text: tab, line feed and carriage return allowed, other control characters not. */
export const MULTI_LINE = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';

/** Every error body's `message`: the text of `error` again (error-message.ts; docs/API.md, "Errors"). */
const MESSAGE = { type: 'string', description: 'the same text as error, for clients that show message' } as const;

export const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, message: MESSAGE },
  required: ['error'],
} as const;

/** The body of an error answer: `{ error, message? }`. */
export type ErrorAnswer = Answer<typeof errorSchema>;

export const okErrorSchema = {
  type: 'object',
  properties: { ok: { type: 'boolean', const: false }, error: { type: 'string' }, message: MESSAGE },
  required: ['ok', 'error'],
} as const;

export const betaErrorSchema = {
  type: 'object',
  properties: {
    success: { type: 'boolean', const: false },
    error: { type: 'string' },
    message: MESSAGE,
    example: { type: 'object', properties: { hash: { type: 'string' } }, required: ['hash'] },
  },
  required: ['success', 'error', 'example'],
} as const;

/** Error answers of a route whose errors are `{error}`. */
export const plainErrors = { '4xx': errorSchema, '5xx': errorSchema } as const;

export const noQuery = { type: 'object', properties: {}, additionalProperties: false } as const;

export const hashParams = {
  type: 'object',
  properties: { hash: { type: 'string', pattern: HASH_PATTERN } },
  required: ['hash'],
  additionalProperties: false,
} as const;
